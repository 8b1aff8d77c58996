"""Forward mode over a program: push a tangent (direction) through a list of assignments.

Given assignments ``t = value`` (in evaluation order) and the tangent of each input variable,
:func:`tangent_program` emits ``t_dot = sum(d value / d u * u_dot)`` after each assignment whose
value depends on something with a tangent, using forward mode (:mod:`symdiff.engine.forward`, the
local rules of :mod:`symdiff.engine.local`) for the local derivatives. Applied to a reverse-mode
gradient program it gives Hessian-vector products (forward over reverse) at a cost within a
small factor of the gradient's. Given a list, it records each tangent it writes, with the rule
tree of every local derivative (:class:`~symdiff.engine.adjoints.TangentStep`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import sympy as sp

from ..codegen import naming
from ..simplify import stable_forms, zero_power_logs
from .adjoints import TangentStep
from .forward import Deriver
from .steps import Step

Assignment = tuple[sp.Symbol, sp.Expr]


def _tangent(
    value: sp.Expr,
    dots: Mapping[sp.Symbol, sp.Expr],
    known: Mapping[sp.Expr, sp.Symbol],
    used: list[tuple[sp.Symbol, Step, sp.Expr]] | None = None,
) -> sp.Expr:
    """The directional derivative of ``value`` given the tangents of its symbols.

    A local derivative that repeats an assigned value (``exp(u)`` of ``t = exp(u)``) refers to
    its name instead (``known``), so the tangent does not compute it again. ``used``, if given,
    receives each symbol, the rule tree of its local derivative and its tangent.
    """
    terms = []
    for symbol in sorted(value.free_symbols & dots.keys(), key=lambda s: s.name):
        step = Deriver(symbol)(value)
        # in the code's forms: stable (sigmoid(-u) for 1 - sigmoid(u)), 0*log(0) taken as 0
        local = zero_power_logs(stable_forms(step.result)).xreplace(known)
        if local != 0:
            terms.append(local * dots[symbol])
            if used is not None:
                used.append((symbol, step, dots[symbol]))
    return sp.Add(*terms)


def tangent_program(
    assignments: Sequence[Assignment],
    outputs: Sequence[sp.Expr],
    directions: Mapping[sp.Symbol, sp.Expr],
    column: int | None = None,
    record: list[TangentStep] | None = None,
) -> tuple[list[Assignment], list[sp.Expr]]:
    """``assignments`` interleaved with tangent assignments, and the tangents of ``outputs``.

    Tangents are named :func:`symdiff.codegen.naming.tangent`: ``_t0_dot`` along a direction,
    ``_t0_dot1`` for the Hessian's ``column`` 1. ``record``, if given, receives one
    :class:`~symdiff.engine.adjoints.TangentStep` per tangent."""
    dots: dict[sp.Symbol, sp.Expr] = dict(directions)
    known: dict[sp.Expr, sp.Symbol] = {}
    program: list[Assignment] = []
    for symbol, value in assignments:
        program.append((symbol, value))
        if not value.is_Atom:
            known.setdefault(value, symbol)
        used: list[tuple[sp.Symbol, Step, sp.Expr]] | None = [] if record is not None else None
        dot = _tangent(value, dots, known, used)
        if dot == 0:
            continue
        name = dot
        if not dot.is_Atom:
            name = sp.Symbol(naming.tangent(symbol.name, column), real=True)
            program.append((name, dot))
        if record is not None:
            record.append(TangentStep(symbol, value, dot, name, tuple(used or ())))
        dots[symbol] = name
    tangents = []
    for out in outputs:
        used = [] if record is not None else None
        tangents.append(_tangent(sp.sympify(out), dots, known, used))
        if record is not None:  # an output's tangent is not named: symbol None
            record.append(TangentStep(None, sp.sympify(out), tangents[-1], tangents[-1],
                                      tuple(used or ())))
    return program, tangents
