"""The recorded sweeps of reverse mode and of forward over reverse, for ``explain()``.

A reverse-mode function's code is written by :func:`symdiff.engine.reverse.reverse_program`; a
Hessian
or Hessian-vector product in mode "forward over reverse" by that program followed by
:func:`symdiff.engine.tangents.tangent_program` (one tangent sweep per column, or one along
``_v``), as
:mod:`symdiff.build` plans them. The functions here run those same engines, with the same
arguments, and keep what they record: the steps of the engine that wrote the code, never the
rule tree of another engine. Tests check that the steps' results equal the compiled functions'.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import sympy as sp

from ..codegen import naming
from .adjoints import ReverseSteps, TangentStep
from .reverse import reverse_program
from .tangents import tangent_program


@dataclass
class Recorded:
    """The reverse sweep (:class:`~symdiff.engine.adjoints.ReverseSteps`) and, for second
    derivatives, the tangent sweeps over its gradient program (one list per sweep)."""

    reverse: ReverseSteps
    tangents: list[list[TangentStep]] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)

    def output_tangents(self, sweep: int) -> list[sp.Expr]:
        """The tangents of the gradient outputs in tangent sweep ``sweep`` (a Hessian's
        column, or its product with ``_v``), written in the variables (and the direction's
        components, ``_x_dir``)."""
        env = self.reverse.names()
        result = []
        for step in self.tangents[sweep]:
            if step.symbol is None:
                result.append(step.dot.xreplace(env))
            elif isinstance(step.name, sp.Symbol):
                env[step.name] = step.dot.xreplace(env)
        return result

    def lines(self, outputs: Sequence[str] = (), verbose: str = "key") -> list[str]:
        """The forward and backward passes, then each tangent sweep, as text lines."""
        rows = self.reverse.lines(outputs)
        for label, sweep in zip(self.labels, self.tangents, strict=True):
            rows.append(f"tangent sweep {label} (forward mode over the gradient program: each "
                        "assignment's tangent is the sum of local derivative times tangent):")
            for number, step in enumerate(sweep, 1):
                head, *rest = step.lines(verbose)
                rows.append(f"  {number}. {head}")
                rows += [f"    {line}" for line in rest]
        return rows


def symbols(names: Sequence[str]) -> list[sp.Symbol]:
    """The real symbols of variable names (as the build makes them)."""
    return [sp.Symbol(n, real=True) for n in names]


def gradient_sweep(exprs: Sequence[sp.Expr], wrt: Sequence[str]) -> Recorded:
    """Reverse mode's recorded sweep for the gradients (a Jacobian's rows) of ``exprs``."""
    record = ReverseSteps()
    reverse_program(list(exprs), symbols(wrt), record=record)
    return Recorded(record)


def second_order_sweeps(expr: sp.Expr, wrt: Sequence[str], kind: str) -> Recorded:
    """Forward over reverse: the reverse sweep of ``expr``'s gradient, then the tangent sweeps
    of its program: one per variable (``kind="hessian"``, column ``j`` seeded with ``x_j`` and
    suffix ``_dot{j}``) or one along the direction ``_v`` (``kind="hvp"``)."""
    record = ReverseSteps()
    variables = symbols(wrt)
    gradient, _, (grads,) = reverse_program([expr], variables, inline=False, record=record)
    recorded = Recorded(record)
    if kind == "hvp":
        directions = dict(zip(variables, symbols([naming.direction(n) for n in wrt]),
                              strict=True))
        sweep: list[TangentStep] = []
        tangent_program(gradient, grads, directions, record=sweep)
        recorded.tangents.append(sweep)
        recorded.labels.append(f"along the direction {naming.DIRECTION}")
        return recorded
    for j, var in enumerate(variables):
        sweep = []
        tangent_program(gradient, grads, {var: sp.S.One}, j, record=sweep)
        recorded.tangents.append(sweep)
        recorded.labels.append(f"for column {j} (d/d{var})")
    return recorded


def recorded(kind: str, exprs: Sequence[sp.Expr], wrt: Sequence[str]) -> Recorded:
    """The recorded sweeps of a function of ``kind`` built in reverse mode (``grad``,
    ``value_and_grad``, ``jacobian``) or forward over reverse (``hessian``, ``hvp``)."""
    if kind in ("hessian", "hvp"):
        (expr,) = exprs
        return second_order_sweeps(expr, wrt, kind)
    return gradient_sweep(exprs, wrt)
