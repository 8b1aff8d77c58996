"""The two walks over a tensor graph: backward (reverse mode, gradients) and forward (tangents).

``backward`` visits the nodes from the output down, asks :data:`~symdiff.tensor.vjp.TENSOR_VJPS`
for each node's contributions to its operands, sums every contribution back to its operand's
shape (``unbroadcast``, the only place broadcasting is undone) and adds up the contributions of
a node used more than once (the seeds' "branch" rule). ``forward`` pushes a batch of tangents
(trailing axis) from one variable up through :data:`~symdiff.tensor.jvp.TENSOR_JVPS`.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from ..errors import ShapeError
from .ir import Node, arg_symbol, topological
from .jvp import TENSOR_JVPS
from .ops import Builder
from .shapes import format_shape, same_shape
from .vjp import TENSOR_VJPS


def _active(order: Sequence[Node], names: set[str]) -> set[int]:
    """Ids of the nodes that depend on a variable in ``names``."""
    active: set[int] = set()
    for node in order:
        if (node.op == "var" and node.name in names) or any(id(a) in active for a in node.args):
            active.add(id(node))
    return active


def backward(
    b: Builder, root: Node, wrt: Sequence[Node], simplify: bool = True
) -> list[Node]:
    """The gradient of the scalar ``root`` with respect to each ``var`` node in ``wrt``."""
    if root.shape != ():
        raise ShapeError(
            f"the gradient needs a scalar expression, but this one has shape "
            f"{format_shape(root.shape)}; sum it, or use jacobian"
        )
    order = topological([root])
    active = _active(order, {v.name for v in wrt})
    contributions: dict[int, list[Node]] = {id(root): [b.fill(1, ())]}
    for node in reversed(order):
        if node.op == "var" or id(node) not in active or id(node) not in contributions:
            continue
        g = _total(b, node, contributions.pop(id(node)))
        for arg, contribution in zip(node.args, TENSOR_VJPS[node.op](b, node, g, simplify),
                                     strict=True):
            if contribution is not None and id(arg) in active:
                contributions.setdefault(id(arg), []).append(contribution)
    return [
        _total(b, v, contributions[id(v)]) if id(v) in contributions else b.fill(0, v.shape)
        for v in wrt
    ]


def _total(b: Builder, node: Node, items: list[Node]) -> Node:
    """The gradient of ``node``: its contributions added up (fan-out), those of one broadcast
    shape first, each sum then reduced to the node's shape by ``unbroadcast``."""
    groups: list[list[Node]] = []
    for item in items:
        group = next((g for g in groups if same_shape(g[0].shape, item.shape)), None)
        if group is None:
            groups.append([item])
        else:
            group.append(item)
    return _add(b, [b.unbroadcast(_add(b, group), node.shape) for group in groups])


def _add(b: Builder, items: list[Node]) -> Node:
    if len(items) == 1:
        return items[0]
    return b.map(sp.Add(*(arg_symbol(i) for i in range(len(items)))), items)


def forward(
    b: Builder, roots: Sequence[Node], var: Node, simplify: bool = True
) -> list[Node]:
    """Tangents of ``roots`` with ``var`` seeded by the identity: each of shape
    ``root.shape + (size(var.shape),)``, the Jacobian of the root with ``var`` flattened."""
    seed = b.eye(var.shape)
    tangents: dict[int, Node] = {id(var): seed}
    for node in topological(roots):
        if node.op in ("var", "fill", "eye"):
            continue
        incoming = [tangents.get(id(a)) for a in node.args]
        if all(t is None for t in incoming):
            continue
        tangent = TENSOR_JVPS[node.op](b, node, incoming, simplify)
        if tangent is not None:
            tangents[id(node)] = tangent
    width = seed.shape[-1]
    return [tangents.get(id(r)) or b.fill(0, (*r.shape, width)) for r in roots]
