"""``TENSOR_JVPS``: the Jacobian-vector product of every tensor operation, for forward mode.

Forward mode pushes a *batch* of tangents through the graph at once: the tangent of a node of
shape ``S`` has shape ``S + (D,)``, one direction per entry of the trailing axis. Seeding a
variable with the identity (``eye``) gives Jacobians (``out.shape + (D,)``), and applying this
walk to the gradient graph built by :mod:`symdiff.tensor.vjp` gives Hessians (forward over
reverse). Because the batch axis is last, NumPy broadcasting of the operands still lines up,
and reductions, indices and permutations of the operand's axes apply to the tangent unchanged.

Each rule takes the builder, the node, one tangent per operand (None: zero) and returns the
node's tangent (None: zero).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sympy as sp

from ..errors import UnsupportedError
from .elementwise import partial
from .ir import Node, arg_symbol
from .ops import Builder
from .vjp import others_dot

Tangents = Sequence[Node | None]
JVP = Callable[[Builder, Node, Tangents, bool], Node | None]


def _last(b: Builder, a: Node) -> Node:
    """``a[..., None]``: ``a`` lined up with tangents (batch axis last)."""
    return b.expand(a, (a.ndim,))


def _map(b: Builder, node: Node, tangents: Tangents, simplify: bool) -> Node | None:
    """``sum_i df/da_i * t_i``: each partial evaluated once at the node's shape, then lined
    up with its tangent (so ``X.T @ (X * c[:, None])`` for a logistic Hessian)."""
    (expr,) = node.attrs
    terms = []
    for i, t in enumerate(tangents):
        if t is None:
            continue
        scale = b.map(partial(expr, i, simplify), node.args)
        terms.append(b.map(arg_symbol(0) * arg_symbol(1), [_last(b, scale), t]))
    return _add(b, terms)


def _matmul(b: Builder, node: Node, tangents: Tangents, simplify: bool) -> Node | None:
    x, y = node.args
    tx, ty = tangents
    if x.ndim > 2 or y.ndim > 2:
        raise UnsupportedError("forward mode (jacobian, hessian) through a batched matmul "
                               "(more than 2 axes) is not supported yet")
    terms = []
    if tx is not None:
        if x.ndim == 1:  # (k, D): y @ tx or y.T @ tx
            terms.append(b.matmul(y if y.ndim == 1 else b.transpose(y), tx))
        elif y.ndim == 1:  # (n, k, D) -> (n, D)
            terms.append(b.matmul(y, tx))
        else:  # (n, k, D) -> (n, m, D)
            moved = b.matmul(b.transpose(tx, (0, 2, 1)), y)
            terms.append(b.transpose(moved, (0, 2, 1)))
    if ty is not None:
        if y.ndim == 1:  # (k, D) -> x @ ty
            terms.append(b.matmul(x, ty))
        elif x.ndim == 1:  # (k, m, D) -> (m, D)
            terms.append(b.matmul(x, b.transpose(ty, (1, 0, 2))))
        else:  # (k, m, D) -> (n, m, D)
            terms.append(b.transpose(b.matmul(x, b.transpose(ty, (1, 0, 2))), (1, 0, 2)))
    return _add(b, terms)


def _add(b: Builder, terms: list[Node]) -> Node | None:
    if not terms:
        return None
    if len(terms) == 1:
        return terms[0]
    return b.map(sp.Add(*(arg_symbol(i) for i in range(len(terms)))), terms)


def _reduction(b: Builder, node: Node, tangents: Tangents, simplify: bool) -> Node | None:
    (t,) = tangents
    (a,) = node.args
    axes, keepdims = node.attrs
    if node.op == "sum":
        return b.reduce_axes("sum", t, axes, keepdims)
    if node.op == "mean":
        return b.reduce_axes("mean", t, axes, keepdims)
    if node.op == "prod":  # sum(prod_others(a) * t): no division by zero
        others = _last(b, b.prod_others(a, axes))
        return b.reduce_axes("sum", b.map(arg_symbol(0) * arg_symbol(1), [others, t]), axes,
                             keepdims)
    kept = node if keepdims else b.expand(node, axes)
    if node.op == "logsumexp":
        weight = sp.exp(arg_symbol(0) - arg_symbol(1)) * arg_symbol(2)
        weighted = b.map(weight, [_last(b, a), _last(b, kept), t])
    else:
        share = b.share(node.op, a, kept, axes)
        weighted = b.map(arg_symbol(0) * arg_symbol(1), [_last(b, share), t])
    return b.reduce_axes("sum", weighted, axes, keepdims)


def _prod_others(b: Builder, node: Node, tangents: Tangents, simplify: bool) -> Node | None:
    (t,) = tangents
    return others_dot(b, node.args[0], node.attrs[0], t)


def _softmax(b: Builder, node: Node, tangents: Tangents, simplify: bool) -> Node | None:
    (t,) = tangents
    (axis,) = node.attrs
    s = _last(b, node)
    st = b.map(arg_symbol(0) * arg_symbol(1), [s, t])
    total = b.reduce_axes("sum", st, (axis,), True)
    return b.map(arg_symbol(0) - arg_symbol(1) * arg_symbol(2), [st, s, total])


def _transpose(b: Builder, node: Node, tangents: Tangents, simplify: bool) -> Node | None:
    (perm,) = node.attrs
    return b.transpose(tangents[0], (*perm, len(perm)))


def _reshape(b: Builder, node: Node, tangents: Tangents, simplify: bool) -> Node | None:
    (t,) = tangents
    return b.reshape(t, (*node.shape, t.shape[-1]))


def _expand(b: Builder, node: Node, tangents: Tangents, simplify: bool) -> Node | None:
    return b.expand(tangents[0], node.attrs[0])


def _index(b: Builder, node: Node, tangents: Tangents, simplify: bool) -> Node | None:
    return b.index(tangents[0], node.attrs[0])


def _scatter(b: Builder, node: Node, tangents: Tangents, simplify: bool) -> Node | None:
    (t,) = tangents
    return b.scatter(t, node.attrs[0], (*node.shape, t.shape[-1]))


def _repeat(b: Builder, node: Node, tangents: Tangents, simplify: bool) -> Node | None:
    repeats, axis = node.attrs
    return b.repeat(tangents[0], repeats, axis)


def _broadcast(b: Builder, node: Node, tangents: Tangents, simplify: bool) -> Node | None:
    (t,) = tangents
    return b.broadcast(t, (*node.shape, t.shape[-1]))


def _zero(b: Builder, node: Node, tangents: Tangents, simplify: bool) -> Node | None:
    return None


TENSOR_JVPS: dict[str, JVP] = {
    "map": _map,
    "matmul": _matmul,
    "sum": _reduction,
    "mean": _reduction,
    "max": _reduction,
    "min": _reduction,
    "logsumexp": _reduction,
    "prod": _reduction,
    "prod_others": _prod_others,
    "softmax": _softmax,
    "share": _zero,  # piecewise constant
    "transpose": _transpose,
    "reshape": _reshape,
    "expand": _expand,
    "index": _index,
    "scatter": _scatter,
    "repeat": _repeat,
    "broadcast": _broadcast,
}
