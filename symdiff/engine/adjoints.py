"""Reverse-mode steps as data: the sweep :mod:`symdiff.engine.reverse` walked while writing the
code.

Reverse mode names every operation of the expression once (the forward pass, ``_t1 = sin(_t0)``)
and then walks these nodes from the output down (the backward pass). At each node it first adds
up what the node's users sent it, its adjoint ``_t0_bar = df/d_t0`` (a node used more than once
receives one contribution per use: fan-out), then applies the node's local rule
(:mod:`symdiff.engine.local`: product rule, power rule, the trigonometric rule of ``sin``, ...) and
sends each operand ``d(node)/d(operand) * node_bar`` (the chain rule). The gradient of a variable
is the sum of what it received. :class:`ReverseSteps` keeps exactly that, as the walk did it,
and prints it (``str``); :class:`TangentStep` records forward mode over such a program (the
Hessians' forward over reverse, :mod:`symdiff.engine.tangents`), with the rule tree of each local
derivative. ``explain()`` of a reverse-mode function shows these steps, the ones of the engine
that wrote its code.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import sympy as sp

from ..codegen import naming
from .inputtext import input_text
from .steps import Step, render_text

#: Names printed for the sweep's rules beside their identities.
SEED = "seed"
FAN_OUT = "fan-out"


@dataclass(frozen=True)
class Definition:
    """Forward pass: ``symbol = value`` (``_t1 = sin(_t0)``), one operation on named operands,
    differentiated later by ``rule`` (its student-facing name)."""

    symbol: sp.Symbol
    value: sp.Expr
    rule: str

    def text(self) -> str:
        """``_t1 = sin(_t0)``."""
        return f"{self.symbol} = {input_text(self.value)}"


@dataclass(frozen=True)
class Contribution:
    """What a node sends one operand: ``target_bar += partial * node_bar`` (``term``).

    ``partial`` is in the form the code computes; ``rule_partial`` is the rule's own form when
    that differs (the registry's ``sigmoid(u)*(1 - sigmoid(u))`` for the code's stable
    ``sigmoid(u)*sigmoid(-u)``, ``u**v*log(u)`` for the code's ``log`` taken as 0 where
    ``u**v`` is 0), else None."""

    target: sp.Expr
    partial: sp.Expr
    term: sp.Expr
    rule_partial: sp.Expr | None = None

    def text(self) -> str:
        """``_t0_bar += z*_t2_bar``."""
        return f"{bar_name(self.target)} += {input_text(self.term)}"


@dataclass(frozen=True)
class AdjointStep:
    """The backward pass at one node: its adjoint, the sum of the contributions it received
    (``parts``: one per use, several at a fan-out; ``(1,)`` for the output, the seed), named
    ``adjoint`` in the code (a symbol such as ``_t0_bar``; None when the sum is a number or a
    variable, used as it is), then the contribution its rule sends each varying operand."""

    definition: Definition
    identity: str
    parts: tuple[sp.Expr, ...]
    adjoint: sp.Symbol | None
    sends: tuple[Contribution, ...]
    seed: bool = False

    @property
    def rule(self) -> str:
        """The node's rule (``"product"``, ``"power"``, ``"trigonometric"``, ...)."""
        return self.definition.rule

    def lines(self) -> list[str]:
        """The node and its adjoint (the rule's identity, the fan-out sum), then one line per
        contribution with the local partial it multiplies."""
        d = self.definition
        notes = [self.identity] if self.identity else []
        if self.seed:
            notes.append("seed: df/df = 1")
        elif len(self.parts) > 1:
            notes.append(f"{FAN_OUT}: {d.symbol} is used {len(self.parts)} times, its adjoint"
                         " is the sum of their contributions")
        name = str(self.adjoint) if self.adjoint is not None else bar_name(d.symbol)
        head = f"[{self.rule} rule] {d.text()};  {name} = {input_text(sp.Add(*self.parts))}"
        rows = [head + (f"   ({'; '.join(notes)})" if notes else "")]
        for c in self.sends:
            partial = input_text(c.partial if c.rule_partial is None else c.rule_partial)
            code = "" if c.rule_partial is None else f", computed as {input_text(c.partial)}"
            rows.append(f"  {c.text()}   (chain rule: d({d.symbol})/d({c.target}) = {partial}"
                        f"{code}, times {name})")
        return rows


@dataclass(frozen=True)
class GradientStep:
    """The end of a sweep: ``_x_bar``, the gradient by variable ``var``, is the sum of the
    contributions ``var`` received (``parts``; none: it is 0)."""

    var: sp.Symbol
    parts: tuple[sp.Expr, ...]

    @property
    def total(self) -> sp.Expr:
        """The gradient, in the sweep's names."""
        return sp.Add(*self.parts)

    def text(self) -> str:
        """``_x_bar = y*_t0_bar`` (with a fan-out note for several contributions)."""
        note = f"   ({FAN_OUT}: the sum of {len(self.parts)} contributions)" if len(
            self.parts) > 1 else ""
        return f"{bar_name(self.var)} = {input_text(self.total)}{note}"


@dataclass(frozen=True)
class Sweep:
    """One backward pass, from ``output`` (a temporary, a variable or a constant); ``number``
    is the output's number when there are several (its adjoints are ``_t0_bar_1``, ...)."""

    output: sp.Expr
    steps: tuple[AdjointStep, ...]
    gradients: tuple[GradientStep, ...]
    number: int | None = None


@dataclass
class ReverseSteps:
    """Everything reverse mode did for some outputs: the forward pass (:class:`Definition`,
    evaluation order) and one :class:`Sweep` per output. ``wrt`` are the variables."""

    wrt: tuple[sp.Symbol, ...] = ()
    definitions: list[Definition] = field(default_factory=list)
    sweeps: list[Sweep] = field(default_factory=list)

    def names(self) -> dict[sp.Symbol, sp.Expr]:
        """Every name of the sweep (temporaries and named adjoints) as an expression in the
        variables."""
        env: dict[sp.Symbol, sp.Expr] = {}
        for d in self.definitions:
            env[d.symbol] = d.value.xreplace(env)
        for sweep in self.sweeps:
            for step in sweep.steps:
                if step.adjoint is not None:
                    env[step.adjoint] = sp.Add(*step.parts).xreplace(env)
        return env

    def gradient(self, output: int, index: int) -> sp.Expr:
        """d(output)/d(wrt[index]) as the sweep computed it, written in the variables."""
        return self.sweeps[output].gradients[index].total.xreplace(self.names())

    def value(self, output: int) -> sp.Expr:
        """The output's value, written in the variables."""
        return sp.sympify(self.sweeps[output].output).xreplace(self.names())

    def lines(self, outputs: Sequence[str] = ()) -> list[str]:
        """The forward pass, then each backward pass, numbered, as plain-text lines."""
        rows = ["forward pass (one temporary per operation, operands first):"]
        rows += [f"  {d.text()}" for d in self.definitions] or ["  (no operations)"]
        for k, sweep in enumerate(self.sweeps):
            name = outputs[k] if k < len(outputs) else f"output {k}"
            rows.append(
                f"backward pass for {name} = {input_text(sweep.output)} (from the output down:"
                " each node's adjoint, then local partial times adjoint to each operand, the"
                " chain rule):"
            )
            for number, step in enumerate(sweep.steps, 1):
                head, *rest = step.lines()
                rows.append(f"  {number}. {head}")
                rows += [f"    {line}" for line in rest]
            rows += [f"  {g.text()}" for g in sweep.gradients]
        return rows

    def __str__(self) -> str:
        return "\n".join(self.lines())


@dataclass(frozen=True)
class TangentStep:
    """Forward mode over a program, at one assignment ``symbol = value``: its tangent
    ``dot = sum(d value/d u * u_dot)`` over the operands ``u`` that have a tangent; ``terms``
    hold each operand, the rule tree of its local derivative (:class:`~symdiff.engine.steps.Step`)
    and its tangent's name. ``symbol`` is None for an output's tangent (written, not named)."""

    symbol: sp.Symbol | None
    value: sp.Expr
    dot: sp.Expr
    name: sp.Expr
    terms: tuple[tuple[sp.Symbol, Step, sp.Expr], ...]

    def lines(self, verbose: str = "key") -> list[str]:
        """``_t1_dot = cos(_t0)*_t0_dot`` and the rule tree of each local derivative."""
        value = input_text(self.value)
        if self.symbol is None:
            head = f"tangent of {value} = {input_text(self.dot)}   (an output)"
        elif isinstance(self.name, sp.Symbol) and self.name != self.dot:
            head = f"{self.name} = {input_text(self.dot)}   (tangent of {self.symbol} = {value})"
        else:
            head = f"tangent of {self.symbol} = {value}: {input_text(self.dot)}   (used as it is)"
        steps = [step for _, step, _ in self.terms]
        body = render_text(steps, verbose).splitlines() if steps else []
        return [head, *("  " + ln for ln in body)]


def bar_name(target: sp.Expr) -> str:
    """``_t0_bar``, ``_x_bar``: the adjoint of a name as the sweep writes it, the code's name
    (:func:`symdiff.codegen.naming.adjoint`)."""
    return naming.adjoint(str(target))
