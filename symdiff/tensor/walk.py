"""The two walks over a tensor graph: backward (reverse mode, gradients) and forward (tangents).

``backward`` visits the nodes from the output down, asks :data:`~symdiff.tensor.vjp.TENSOR_VJPS`
for each node's contributions to its operands, sums every contribution back to its operand's
shape (``unbroadcast``, the only place broadcasting is undone) and adds up the contributions of
a node used more than once (the "branch" rule). ``forward`` pushes a batch of tangents
(trailing axis) from one variable up through :data:`~symdiff.tensor.jvp.TENSOR_JVPS`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import sympy as sp

from ..errors import ShapeError
from .ir import Node, arg_symbol, topological
from .jvp import TENSOR_JVPS
from .ops import Builder
from .shapes import format_shape, same_shape
from .vjp import TENSOR_VJPS, VJPRule


def _active(order: Sequence[Node], names: set[str], ids: frozenset[int] = frozenset()
            ) -> set[int]:
    """Ids of the nodes that depend on a variable in ``names`` or on a node in ``ids``."""
    active: set[int] = set()
    for node in order:
        if ((node.op == "var" and node.name in names) or id(node) in ids
                or any(id(a) in active for a in node.args)):
            active.add(id(node))
    return active


class Recorder(Protocol):
    """What :func:`backward` reports as it applies the table (the teaching view's raw data,
    :mod:`symdiff.tensor.steps`): every rule applied, every fan-out summed, every unbroadcast."""

    def vjp(self, rule: VJPRule, node: Node, g: Node,
            contributions: list[tuple[Node, Node]]) -> None:
        """``rule`` turned ``g`` (the gradient of ``node``) into one contribution per operand."""

    def branch(self, node: Node, items: list[Node], total: Node) -> None:
        """The contributions of a node used more than once were added up to ``total``."""

    def unbroadcast(self, node: Node, summed: Node, reduced: Node) -> None:
        """A contribution of a broadcast shape was summed back to the node's shape."""


def backward(
    b: Builder, root: Node, wrt: Sequence[Node], simplify: bool = True,
    record: Recorder | None = None,
) -> list[Node]:
    """The gradient of the scalar ``root`` with respect to each ``var`` node in ``wrt``;
    ``record`` (if given) is told each rule as it is applied. A node of ``wrt`` that is not a
    ``var`` (an intermediate such as ``X @ W``) counts as an independent input: the walk
    stops there."""
    if root.shape != ():
        raise ShapeError(
            f"the gradient needs a scalar expression, but this one has shape "
            f"{format_shape(root.shape)}; sum it, or use jacobian"
        )
    order = topological([root])
    inner = frozenset(id(v) for v in wrt if v.op != "var")
    active = _active(order, {v.name for v in wrt if v.op == "var"}, inner)
    contributions: dict[int, list[Node]] = {id(root): [b.fill(1, ())]}
    for node in reversed(order):
        if (node.op == "var" or id(node) in inner or id(node) not in active
                or id(node) not in contributions):
            continue
        g = _total(b, node, contributions.pop(id(node)), record)
        rule = TENSOR_VJPS[node.op]
        applied = []
        for arg, contribution in zip(node.args, rule.apply(b, node, g, simplify), strict=True):
            if contribution is not None and id(arg) in active:
                contributions.setdefault(id(arg), []).append(contribution)
                applied.append((arg, contribution))
        if record is not None:
            record.vjp(rule, node, g, applied)
    return [
        _total(b, v, contributions[id(v)], record) if id(v) in contributions
        else b.fill(0, v.shape)
        for v in wrt
    ]


def _total(b: Builder, node: Node, items: list[Node], record: Recorder | None = None) -> Node:
    """The gradient of ``node``: its contributions added up (fan-out), those of one broadcast
    shape first, each sum then reduced to the node's shape by ``unbroadcast``."""
    groups: list[list[Node]] = []
    for item in items:
        group = next((g for g in groups if same_shape(g[0].shape, item.shape)), None)
        if group is None:
            groups.append([item])
        else:
            group.append(item)
    parts = []
    for group in groups:
        summed = _add(b, group)
        reduced = b.unbroadcast(summed, node.shape)
        if record is not None and reduced is not summed:
            record.unbroadcast(node, summed, reduced)
        parts.append(reduced)
    total = _add(b, parts)
    if record is not None and len(items) > 1:
        record.branch(node, items, total)
    return total


def _add(b: Builder, items: list[Node]) -> Node:
    if len(items) == 1:
        return items[0]
    return b.map(sp.Add(*(arg_symbol(i) for i in range(len(items)))), items)


def forward(
    b: Builder, roots: Sequence[Node], var: Node, simplify: bool = True,
    seed: Node | None = None,
) -> list[Node]:
    """Tangents of ``roots`` with ``var`` seeded by the identity: each of shape
    ``root.shape + (size(var.shape),)``, the Jacobian of the root with ``var`` flattened.
    ``seed`` (of shape ``var.shape + (D,)``) replaces the identity: the tangents then have
    ``D`` directions, those of the seed. ``var`` may be an intermediate node, taken as an
    independent input (its operands' tangents are not asked for)."""
    seed = b.eye(var.shape) if seed is None else seed
    tangents: dict[int, Node] = {id(var): seed}
    for node in topological(roots):
        if node.op in ("var", "fill", "eye") or node is var:
            continue
        incoming = [tangents.get(id(a)) for a in node.args]
        if all(t is None for t in incoming):
            continue
        tangent = TENSOR_JVPS[node.op](b, node, incoming, simplify)
        if tangent is not None:
            tangents[id(node)] = tangent
    width = seed.shape[-1]
    return [tangents.get(id(r)) or b.fill(0, (*r.shape, width)) for r in roots]
