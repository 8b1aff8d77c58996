"""Forward mode over a program: push a tangent (direction) through a list of assignments.

Given assignments ``t = value`` (in evaluation order) and the tangent of each input variable,
:func:`tangent_program` emits ``t_dot = sum(d value / d u * u_dot)`` after each assignment whose
value depends on something with a tangent, using the rule-table engine for the local
derivatives. Applied to a reverse-mode gradient program it gives Hessian-vector products
(forward over reverse) at a cost within a small factor of the gradient's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import sympy as sp

from .differentiate import Deriver
from .simplify import stable_forms, zero_power_logs

Assignment = tuple[sp.Symbol, sp.Expr]


def _tangent(
    value: sp.Expr, dots: Mapping[sp.Symbol, sp.Expr], known: Mapping[sp.Expr, sp.Symbol]
) -> sp.Expr:
    """The directional derivative of ``value`` given the tangents of its symbols.

    A local derivative that repeats an assigned value (``exp(u)`` of ``t = exp(u)``) refers to
    its name instead (``known``), so the tangent does not compute it again.
    """
    terms = []
    for symbol in sorted(value.free_symbols & dots.keys(), key=lambda s: s.name):
        # in the code's forms: stable (sigmoid(-u) for 1 - sigmoid(u)), 0*log(0) taken as 0
        local = zero_power_logs(stable_forms(Deriver(symbol)(value).result)).xreplace(known)
        if local != 0:
            terms.append(local * dots[symbol])
    return sp.Add(*terms)


def tangent_program(
    assignments: Sequence[Assignment],
    outputs: Sequence[sp.Expr],
    directions: Mapping[sp.Symbol, sp.Expr],
    suffix: str = "_dot",
) -> tuple[list[Assignment], list[sp.Expr]]:
    """``assignments`` interleaved with tangent assignments, and the tangents of ``outputs``."""
    dots: dict[sp.Symbol, sp.Expr] = dict(directions)
    known: dict[sp.Expr, sp.Symbol] = {}
    program: list[Assignment] = []
    for symbol, value in assignments:
        program.append((symbol, value))
        if not value.is_Atom:
            known.setdefault(value, symbol)
        dot = _tangent(value, dots, known)
        if dot == 0:
            continue
        if not dot.is_Atom:
            name = sp.Symbol(f"{symbol.name}{suffix}", real=True)
            program.append((name, dot))
            dot = name
        dots[symbol] = dot
    return program, [_tangent(sp.sympify(out), dots, known) for out in outputs]
