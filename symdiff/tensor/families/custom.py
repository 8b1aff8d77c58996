"""Functions with their own derivative rule (``@sd.custom_vjp`` and ``defvjp``,
:mod:`symdiff.custom`): the ``custom`` node.

A call of such a function on traced arrays is traced twice over: its body, which gives the
value ``V``, and its rule, which gives each argument's contribution ``C_i`` in terms of a
placeholder ``G`` for the adjoint of the result (and of ``V`` and the arguments). The node
``custom(a_1, ..., a_n, V)`` holds both in a :class:`CustomRule`:

* its value is ``V`` (the generated code computes the body's formula, then names it);
* its vector-Jacobian product is the rule: ``C_i`` with ``G`` replaced by the actual adjoint
  (no gradient flows through the body);
* its tangent (forward mode, and so Hessians, forward over reverse) is the body's.

The rule's formulas are part of the node (its cache key holds their digest), so two rules for
one body are two functions.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from ..ir import Node, rebuild, serialize
from ..oprow import OpRow
from ..ops import Builder


@dataclass(frozen=True, eq=False)
class CustomRule:
    """One traced call of a function with its own derivative rule: the function's name, the
    nodes the rule was traced with (the arguments, the value ``V`` and the adjoint placeholder
    ``G``) and each argument's contribution (None: no gradient)."""

    name: str
    args: tuple[Node, ...]
    value: Node
    adjoint: Node
    contributions: tuple[Node | None, ...]

    @property
    def digest(self) -> str:
        """A digest of the rule's formulas (what the cache key of a function using it holds)."""
        roots = [self.adjoint, self.value, *self.args,
                 *(c for c in self.contributions if c is not None)]
        text = serialize(roots) + "|" + ",".join("-" if c is None else "c"
                                                 for c in self.contributions)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def __repr__(self) -> str:
        return f"CustomRule({self.name}, {self.digest})"


def custom(b: Builder, rule: CustomRule) -> Node:
    """The ``custom`` node of a traced call (see the module docstring)."""
    return b.node("custom", (*rule.args, rule.value), (rule,), rule.value.shape)


def _custom_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    (rule,) = node.attrs
    swap = {id(rule.adjoint): g, id(rule.value): node.args[-1],
            **{id(old): new for old, new in zip(rule.args, node.args[:-1], strict=True)}}
    made = [None if c is None else rebuild(b, [c], lambda n: swap.get(id(n)))[0]
            for c in rule.contributions]
    return (*made, None)


def _custom_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
                ) -> Node | None:
    return tangents[-1]


OPS = (
    OpRow(op="custom", rule="custom VJP",
          identity="a_bar = the rule given with defvjp, applied to G (the value is the body's)",
          vjp=_custom_vjp, jvp=_custom_jvp,
          emit=lambda n, c, t: [(t, c[-1])],
          text=lambda n, a, r: f"{n.attrs[0].name}({', '.join(r[:-1])})",
          latex=lambda n, a, r: rf"\operatorname{{{n.attrs[0].name}}}\left("
                                + ", ".join(r[:-1]) + r"\right)"),
)

SPELLINGS = ()

__all__ = ["OPS", "SPELLINGS", "CustomRule", "custom"]
