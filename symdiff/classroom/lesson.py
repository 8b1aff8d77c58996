"""What the classroom page shows for an expression: what was understood, and its derivatives
(up to the 5th, partial ones of several variables) step by step.

Everything comes from the public API (:func:`symdiff.derive`, the parser behind it): a string is
read by the allow-list parser, never evaluated. A derivative of order n in a sequence of
variables (``["x", "x", "y"]``: by x, then x, then y) is n derivations, each of the previous
one's result.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import sympy as sp

from ..engine.inputtext import input_text
from ..errors import SymdiffError
from ..parsing.teaching import parse_as_written
from . import mathml
from .walkthrough import walkthrough

#: The highest derivative the classroom shows.
MAX_ORDER = 5


def variables_of(expr: sp.Basic) -> list[str]:
    """The names of an expression's variables, sorted."""
    return sorted(s.name for s in expr.free_symbols if isinstance(s, sp.Symbol))


def preview(text: str) -> dict[str, Any]:
    """What the parser understood: the expression as written in MathML, its variables and
    its text in the input language (a :class:`~symdiff.ParseError` for anything else)."""
    written, parsed = parse_as_written(text)
    return {
        "html": mathml.expression(written, display=True, label=input_text(parsed)),
        "text": input_text(parsed),
        "variables": variables_of(parsed),
    }


def check_sequence(sequence: Sequence[str], variables: Sequence[str]) -> tuple[str, ...]:
    """The variables to differentiate by, in order: one to :data:`MAX_ORDER` names, each a
    variable of the expression (an error naming the others otherwise)."""
    if not 1 <= len(sequence) <= MAX_ORDER:
        raise SymdiffError(
            f"differentiate 1 to {MAX_ORDER} times; {len(sequence)} variables were given")
    for name in sequence:
        if name not in variables:
            known = ", ".join(variables) or "none"
            raise SymdiffError(f"{name!r} is not a variable of the expression (its variables: "
                               f"{known})")
    return tuple(sequence)


@functools.lru_cache(maxsize=64)
def derivations(text: str, sequence: tuple[str, ...]) -> tuple[Any, ...]:
    """The derivations of ``text`` by each name of ``sequence`` in turn: the first of the text
    as written, each next one of the result before it (those of a shorter sequence are
    shared: the second derivative's first derivation is the first derivative's)."""
    import symdiff as sd

    _, parsed = parse_as_written(text)
    check_sequence(sequence, variables_of(parsed))
    if len(sequence) == 1:
        return (sd.derive(text, wrt=sequence[0]),)
    before = derivations(text, sequence[:-1])
    return (*before, sd.derive(before[-1].result, wrt=sequence[-1]))


def partial_names(text: str, sequence: Sequence[str]) -> frozenset[str]:
    """The variables written with ``∂``: those of ``sequence`` when the expression has
    several variables."""
    _, parsed = parse_as_written(text)
    return frozenset(sequence) if len(variables_of(parsed)) > 1 else frozenset()


def derivative_name(sequence: Sequence[str], partial: bool) -> str:
    """``df/dx``, ``d²f/dx²`` or ``∂²f/∂y∂x`` in MathML (no ``<math>`` around it)."""
    return mathml.operator(sequence, partial, "f")


@functools.lru_cache(maxsize=64)
def _order(text: str, sequence: tuple[str, ...], partial: frozenset[str]) -> dict[str, Any]:
    """The last order of :func:`lesson` for ``sequence`` (kept: a higher derivative's lesson
    shows the lower ones again)."""
    derivation = derivations(text, sequence)[-1]
    name = derivative_name(sequence, bool(partial))
    reveals = walkthrough(derivation.lines(), partial)
    return {
        "title": mathml.math(name),
        "of": mathml.expression(derivation.shown),
        "reveals": [r.as_dict() for r in reveals],
        "result": mathml.math(mathml.equation(name, mathml.element(derivation.result)),
                              display=True),
    }


def lesson(text: str, sequence: Sequence[str]) -> dict[str, Any]:
    """Everything the page reveals for ``text`` differentiated by ``sequence``: per order, its
    title, what is differentiated and the hints and steps (:func:`walkthrough`); then the
    answer in MathML and as text in the input language."""
    found = derivations(text, tuple(sequence))
    partial = partial_names(text, sequence)
    orders = [_order(text, tuple(sequence[: k + 1]), partial) for k in range(len(found))]
    result = found[-1].result
    return {
        "expression": preview(text),
        "sequence": list(sequence),
        "orders": orders,
        "answer": {
            "html": mathml.math(mathml.equation(derivative_name(sequence, bool(partial)),
                                                mathml.element(result)), display=True),
            "text": input_text(result),
        },
    }


def line_of(text: str, sequence: Sequence[str], order: int, line: int) -> Any:
    """Line ``line`` of the derivation of order ``order`` (counted from 0)."""
    found = derivations(text, tuple(sequence))
    if not 0 <= order < len(found):
        raise SymdiffError(f"there is no derivative number {order + 1}")
    lines = found[order].lines()
    if not 0 <= line < len(lines):
        raise SymdiffError(f"the derivation has no line {line + 1}")
    return lines[line]
