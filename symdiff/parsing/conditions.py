"""The condition of ``where(cond, a, b)`` in the input language: comparisons (``<``, ``<=``,
``>``, ``>=``, chained as in Python: ``0 < x < 1``) joined by ``and``/``or``/``not`` or by
NumPy's ``&``/``|``/``~`` (``(x > 0) & (y < 1)``, what the derivations print). A condition is a
:class:`sympy.And` / :class:`sympy.Or` / :class:`sympy.Not` of relationals; NumPy evaluates
``&`` and ``and`` alike on booleans, so both spellings mean the same.

:func:`read_condition` walks the joins and hands every comparison to the parser that asked (the
scalar parser, the teaching parser); :func:`condition_pattern` gives the tensor parser the same
condition with its compared values replaced by placeholders ``a0, a1, ...``.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import NoReturn

import sympy as sp

from .syntax import COMPARISONS

#: What a condition may be, for messages.
CONDITION_FORMS = (
    "comparisons (< <= > >=), alone, chained (0 < x < 1) or joined by and, or, not "
    "(or &, |, ~)"
)
#: The joins: Python's keywords and NumPy's operators on booleans.
_JOINS: dict[type, Callable[..., sp.Basic]] = {
    ast.And: sp.And, ast.Or: sp.Or, ast.BitAnd: sp.And, ast.BitOr: sp.Or,
}
_JOIN_TEXT = {sp.And: "&", sp.Or: "|"}


def _parts(node: ast.AST) -> tuple[Callable[..., sp.Basic], list[ast.AST]] | None:
    """``(join, operands)`` when ``node`` joins conditions, else None."""
    if isinstance(node, ast.BoolOp):
        return _JOINS[type(node.op)], list(node.values)
    if isinstance(node, ast.BinOp) and type(node.op) in _JOINS:
        return _JOINS[type(node.op)], [node.left, node.right]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.Invert):
        return sp.Not, [node.operand]
    return None


def chain(node: ast.Compare, values: list[sp.Expr]) -> sp.Basic:
    """The comparison ``node`` of its compared ``values`` (built once each, left to right, as
    Python evaluates them): a chained one (``0 < x < 1``) is the ``And`` of its links. Its
    operators have been checked to be ``<``, ``<=``, ``>`` or ``>=``."""
    links = [COMPARISONS[type(op)][1](a, b)  # type: ignore[misc]
             for op, a, b in zip(node.ops, values, values[1:], strict=False)]
    return links[0] if len(links) == 1 else sp.And(*links)


def read_condition(node: ast.AST, compare: Callable[[ast.Compare], sp.Basic],
                   fail: Callable[[str, ast.AST], NoReturn]) -> sp.Basic:
    """The SymPy condition ``node`` stands for: ``compare`` builds each comparison (a chained
    one included), the joins are built here; anything else is ``fail``-ed."""
    if isinstance(node, ast.Compare):
        return compare(node)
    parts = _parts(node)
    if parts is None:
        fail(f"the condition of where() must be {CONDITION_FORMS}", node)
    join, operands = parts
    return join(*(read_condition(item, compare, fail) for item in operands))


def condition_pattern(node: ast.AST, symbols: dict[type, str],
                      fail: Callable[[str, ast.AST], NoReturn]) -> tuple[str, list[ast.AST]]:
    """``(text, sides)``: the condition in the input language with its compared values
    replaced by ``a0, a1, ...`` in order, and those values' nodes. ``symbols`` spells the
    allowed comparison operators; any other is ``fail``-ed, as is anything but a condition."""
    sides: list[ast.AST] = []

    def side(item: ast.AST) -> str:
        sides.append(item)
        return f"a{len(sides) - 1}"

    def text(item: ast.AST) -> str:
        if isinstance(item, ast.Compare):
            out = side(item.left)
            for op, right in zip(item.ops, item.comparators, strict=True):
                symbol = symbols.get(type(op))
                if symbol is None:
                    fail(f"the condition of where() must be {CONDITION_FORMS}", item)
                out += f" {symbol} {side(right)}"
            return f"({out})"
        parts = _parts(item)
        if parts is None:
            fail(f"the condition of where() must be {CONDITION_FORMS}", item)
        join, operands = parts
        if join is sp.Not:
            return f"(~{text(operands[0])})"
        return "(" + f" {_JOIN_TEXT[join]} ".join(text(o) for o in operands) + ")"

    return text(node), sides
