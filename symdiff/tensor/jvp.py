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

from . import families
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
    """``dx @ y + x @ dy`` with the batch axis ``D`` of each tangent moved out of the way of
    ``@``: in front of the matrix axes when both operands are matrices (stacks of them too,
    broadcasting their leading axes), or behind the contracted axis when one is a vector::

        x (.., n, k), y (.., k, m):  tx as (.., D, n, k) @ y[.., None, :, :] -> (.., n, m, D)
        x (k,),       y (.., k, m):  swap(y) (.., m, k) @ tx (k, D)          -> (.., m, D)
        x (.., n, k), y (k,):        y @ tx (.., n, k, D)                    -> (.., n, D)
    """
    x, y = node.args
    tx, ty = tangents
    terms = []
    if tx is not None:
        if x.ndim == 1:  # (k, D): y.T @ tx, y's last two axes swapped
            terms.append(b.matmul(y if y.ndim == 1 else _swap_last(b, y, 0), tx))
        elif y.ndim == 1:  # (.., n, k, D) -> (.., n, D): y contracts axis -2
            terms.append(b.matmul(y, tx))
        else:
            terms.append(_batched(b, tx, y, left=True))
    if ty is not None:
        if y.ndim == 1:  # (k, D) -> (.., n, D)
            terms.append(b.matmul(x, ty))
        elif x.ndim == 1:  # (.., k, m, D) -> (.., m, k, D), contracted over k -> (.., m, D)
            terms.append(b.matmul(x, _swap_last(b, ty, 1)))
        else:
            terms.append(_batched(b, ty, x, left=False))
    return _add(b, terms)


def _swap_last(b: Builder, a: Node, skip: int) -> Node:
    """``a`` with the two axes before its last ``skip`` axes swapped (``skip=0``: ``.T`` of a
    stack of matrices)."""
    perm = list(range(a.ndim))
    i, j = a.ndim - 2 - skip, a.ndim - 1 - skip
    perm[i], perm[j] = perm[j], perm[i]
    return b.transpose(a, tuple(perm))


def _batched(b: Builder, t: Node, other: Node, left: bool) -> Node:
    """The tangent ``t`` (a matrix operand's shape plus ``D``) times the other matrix operand:
    ``D`` moved in front of the matrix axes, the other operand given a size-1 axis there when
    it is a stack (so its batch axes line up), the product's ``D`` moved back last."""
    n = t.ndim
    front = b.transpose(t, (*range(n - 3), n - 1, n - 3, n - 2))  # (.., D, r, c)
    if other.ndim > 2:
        other = b.expand(other, (other.ndim - 2,))
    product = b.matmul(front, other) if left else b.matmul(other, front)
    m = product.ndim
    return b.transpose(product, (*range(m - 3), m - 2, m - 1, m - 3))


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
TENSOR_JVPS.update({op: row.jvp for op, row in families.OPS.items()})  # the family rows
