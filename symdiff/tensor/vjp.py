"""``TENSOR_VJPS``: one vector-Jacobian product per tensor operation.

Each row (a :class:`VJPRule`) has the rule's name and identity, which the steps of ``derive``
show (:mod:`symdiff.tensor.steps`), and the function the backward walk applies. It takes the
builder, the node and ``g`` (the gradient of the output with respect to the
node, of the node's shape) and returns one contribution per operand (None: no gradient flows
there). A contribution may have the *broadcast* shape of the node; the backward walk
(:func:`symdiff.tensor.walk.backward`) sums it back to the operand's shape with
``Builder.unbroadcast``, once, for every rule. Fan-out (a node used twice) is summed by the walk.

* elementwise ``f(a, b, ...)``: ``g * df/da`` for each operand, ``df/da`` from the scalar rules
* ``A @ B`` (seed 000): ``dA = G @ B.T``, ``dB = A.T @ G``; vectors as rows/columns, so
  ``A @ b`` gives ``dA = G[:, None] * b`` (an outer product) and ``db = A.T @ G``
* ``sum`` (seed 000): ``g`` broadcast back over the summed axes (the inverse of repeat)
* ``mean``: the same divided by the number of elements averaged
* ``max``/``min`` (seed 001): ``g`` to the elements equal to the result; ties **split evenly**
  (``1/k`` to each of ``k`` tied elements), unlike ``torch.max(x, dim)`` which picks one
* ``prod``: ``g * (product of the other elements)``, the ``prod_others`` node. Never
  ``g * prod(a) / a``, which is nan where an element is 0: with ``c`` the number of zeros among
  the *other* elements along the axes, it is ``prod(nonzero) / a`` where ``c == 0`` (zeros
  replaced by 1, so a lone zero gets the product of the rest) and ``0`` where ``c >= 1``;
  ``prod_others`` itself (Hessians) has ``a_bar_k = sum over i != k of g_i * (product of the
  elements other than i and k)``, zero-safe the same way (:func:`others_dot`)
* ``logsumexp``: ``g * e / sum(e)`` with ``e = exp(a - max(a))`` (``g * softmax``);
  ``softmax``: ``s * (g - sum(g * s, axis))``
* ``transpose`` (seed 001): transpose ``g`` by ``argsort(perm)``
* ``reshape`` / ``expand`` (seed 001): reshape ``g`` back
* indexing / slicing (seed 001): ``g`` scattered into zeros of the operand's shape
* ``repeat`` (seed 000): ``g`` summed over the copies
* ``broadcast``: ``g`` itself (the walk's ``unbroadcast`` sums it back)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sympy as sp

from . import families
from .elementwise import partial
from .families.shifts import shift
from .ir import Node, arg_symbol
from .ops import Builder

Contributions = tuple[Node | None, ...]
VJP = Callable[[Builder, Node, Node, bool], Contributions]

_G = arg_symbol(0)
_X = arg_symbol(1)


def _map(b: Builder, node: Node, g: Node, simplify: bool) -> Contributions:
    (expr,) = node.attrs
    shift = {arg_symbol(j): arg_symbol(j + 1) for j in range(len(node.args))}
    return tuple(
        b.map(_G * partial(expr, i, simplify).xreplace(shift), [g, *node.args])
        for i in range(len(node.args))
    )


def _matmul(b: Builder, node: Node, g: Node, simplify: bool) -> Contributions:
    x, y = node.args
    if x.ndim == 1 and y.ndim == 1:  # a . b: scalar G
        return b.map(_G * _X, [g, y]), b.map(_G * _X, [g, x])
    if x.ndim == 1:  # a @ B -> (..., m): da = B @ G, dB = a[:, None] * G
        dy = b.map(_G * _X, [b.expand(g, (g.ndim - 1,)), b.expand(x, (1,))])
        if y.ndim == 2:
            return b.matmul(y, g), dy
        column = b.matmul(y, b.expand(g, (g.ndim,)))  # a stack: (..., k, 1), summed back later
        return b.reshape(column, column.shape[:-1]), dy
    if y.ndim == 1:  # A @ b -> (..., n): dA = G[..., None] * b, db = A.T @ G
        dx = b.map(_G * _X, [b.expand(g, (g.ndim,)), y])
        if x.ndim == 2:
            return dx, b.matmul(_swap(b, x), g)
        column = b.matmul(_swap(b, x), b.expand(g, (g.ndim,)))  # (..., k, 1)
        return dx, b.reshape(column, column.shape[:-1])
    return b.matmul(g, _swap(b, y)), b.matmul(_swap(b, x), g)


def _swap(b: Builder, a: Node) -> Node:
    """``a`` with its last two axes exchanged (``.T`` of a matrix)."""
    perm = (*range(a.ndim - 2), a.ndim - 1, a.ndim - 2)
    return b.transpose(a, perm)


def _sum(b: Builder, node: Node, g: Node, simplify: bool) -> Contributions:
    (a,) = node.args
    axes, keepdims = node.attrs
    return (b.broadcast(g if keepdims else b.expand(g, axes), a.shape),)


def _mean(b: Builder, node: Node, g: Node, simplify: bool) -> Contributions:
    (a,) = node.args
    axes, keepdims = node.attrs
    count = sp.Mul(*(sp.sympify(a.shape[i]) for i in axes))
    scaled = b.map(_G / count, [g if keepdims else b.expand(g, axes)])
    return (b.broadcast(scaled, a.shape),)


def _extremum(b: Builder, node: Node, g: Node, simplify: bool) -> Contributions:
    (a,) = node.args
    axes, keepdims = node.attrs
    kept = node if keepdims else b.expand(node, axes)
    share = b.share(node.op, a, kept, axes)
    return (b.map(_G * _X, [g if keepdims else b.expand(g, axes), share]),)


def _prod(b: Builder, node: Node, g: Node, simplify: bool) -> Contributions:
    (a,) = node.args
    axes, keepdims = node.attrs
    others = b.prod_others(a, axes)
    return (b.map(_G * _X, [g if keepdims else b.expand(g, axes), others]),)


def _prod_others(b: Builder, node: Node, g: Node, simplify: bool) -> Contributions:
    (a,) = node.args
    (axes,) = node.attrs
    return (others_dot(b, a, axes, g),)


def others_dot(b: Builder, a: Node, axes: tuple[int, ...], t: Node) -> Node:
    """``u_i = sum over k != i of t_k * prod_{j != i, k} a_j`` along ``axes``: the derivative of
    the product of the others (``prod_others``) in direction ``t``, and, the matrix being
    symmetric, its vector-Jacobian product with ``t``. ``t`` has ``a``'s shape, or that shape
    plus a trailing batch axis (forward mode).

    With ``z`` marking the zeros of ``a``, ``a1 = where(a == 0, 1, a)``, ``p = prod(a1)`` and
    ``c = sum(z) - z`` (zeros among the others of each element), all along ``axes``::

        u = p / a1 * where(c == 0, sum(t / a1) - t / a1,      # no zero among the others
                     where(c == 1, sum(z * t) - z * t, 0))     # one: only its t counts

    (``z * t`` as ``where(a == 0, t, 0)``, so float32 stays float32).

    No division by zero, exact at any number of zeros."""
    batched = t.ndim == a.ndim + 1

    def lift(n: Node) -> Node:
        return b.expand(n, (n.ndim,)) if batched else n

    x = arg_symbol(0)
    zero = b.map(sp.Piecewise((1, sp.Eq(x, 0)), (0, True)), [a])  # only compared: ints are fine
    nonzero = b.map(sp.Piecewise((1, sp.Eq(x, 0)), (x, True)), [a])
    count = b.reduce_axes("sum", zero, axes, True)
    p = b.reduce_axes("prod", nonzero, axes, True)
    scaled = b.reduce_axes("sum", b.map(x / _X, [t, lift(nonzero)]), axes, True)
    t_zero = b.map(sp.Piecewise((x, sp.Eq(_X, 0)), (0, True)), [t, lift(a)])  # t's dtype
    at_zeros = b.reduce_axes("sum", t_zero, axes, True)
    p_, a1, s, tt, c, z, tz, tzi = (arg_symbol(i) for i in range(8))
    others = c - z
    expr = p_ / a1 * sp.Piecewise((s - tt / a1, sp.Eq(others, 0)),
                                  (tz - tzi, sp.Eq(others, 1)), (0, True))
    return b.map(expr, [lift(p), lift(nonzero), scaled, t, lift(count), lift(zero), at_zeros,
                        t_zero])


def _logsumexp(b: Builder, node: Node, g: Node, simplify: bool) -> Contributions:
    (a,) = node.args
    axes, keepdims = node.attrs
    weights, total = lse_parts(b, node)
    grad = g if keepdims or len(axes) == a.ndim else b.expand(g, axes)
    return (b.map(_G * _X / arg_symbol(2), [grad, weights, total]),)


def lse_parts(b: Builder, node: Node) -> tuple[Node, Node]:
    """``e = exp(A - max(A))`` and ``sum(e)`` over the axes of the logsumexp ``node``: its
    gradient is ``G * e / sum(e)`` (one ``exp``, never overflowing), and the emitter computes
    the value as ``log(sum(e)) + max(A)`` from the same nodes when both are needed. The
    ``max`` is a ``shift`` node (:mod:`symdiff.tensor.families.shifts`): it cancels, so
    Hessians and Hessian-vector products do not differentiate it. The
    reductions keep their axes unless they reduce everything (scalars broadcast anyway)."""
    (a,) = node.args
    axes, keepdims = node.attrs
    keep = keepdims or len(axes) < a.ndim
    peak = shift(b, a, axes, keep)  # a constant to derivatives: it cancels
    weights = b.map(sp.exp(_G - _X), [a, peak])
    return weights, b.reduce_axes("sum", weights, axes, keep)


def _softmax(b: Builder, node: Node, g: Node, simplify: bool) -> Contributions:
    (axis,) = node.attrs
    weighted = b.reduce_axes("sum", b.map(_G * _X, [g, node]), (axis,), True)
    return (b.map(_X * (_G - arg_symbol(2)), [g, node, weighted]),)


def _transpose(b: Builder, node: Node, g: Node, simplify: bool) -> Contributions:
    (perm,) = node.attrs
    inverse = tuple(sorted(range(len(perm)), key=perm.__getitem__))  # argsort(perm)
    return (b.transpose(g, inverse),)


def _reshape(b: Builder, node: Node, g: Node, simplify: bool) -> Contributions:
    return (b.reshape(g, node.args[0].shape),)


def _index(b: Builder, node: Node, g: Node, simplify: bool) -> Contributions:
    (index,) = node.attrs
    return (b.scatter(g, index, node.args[0].shape),)


def _scatter(b: Builder, node: Node, g: Node, simplify: bool) -> Contributions:
    (index,) = node.attrs
    return (b.index(g, index),)


def _repeat(b: Builder, node: Node, g: Node, simplify: bool) -> Contributions:
    (a,) = node.args
    repeats, axis = node.attrs
    split = (*a.shape[:axis], a.shape[axis], repeats, *a.shape[axis + 1 :])
    return (b.reduce_axes("sum", b.reshape(g, split), (axis + 1,), False),)


def _broadcast(b: Builder, node: Node, g: Node, simplify: bool) -> Contributions:
    return (g,)


def _none(b: Builder, node: Node, g: Node, simplify: bool) -> Contributions:
    return tuple(None for _ in node.args)


@dataclass(frozen=True)
class VJPRule:
    """One row of the table: the rule's name as the steps show it, its identity (``G`` is the
    gradient of the output with respect to the node, ``A``, ``B`` its operands) and the
    function that builds the contributions."""

    name: str
    identity: str
    apply: VJP


TENSOR_VJPS: dict[str, VJPRule] = {
    "map": VJPRule("elementwise chain", "A_bar = G * df/dA, f' by the scalar rules", _map),
    "matmul": VJPRule("matmul", "d(A @ B): A_bar = G @ B.T, B_bar = A.T @ G", _matmul),
    "sum": VJPRule("sum (broadcast back)", "A_bar = G broadcast back over the summed axes",
                   _sum),
    "mean": VJPRule("mean (broadcast back)",
                    "A_bar = G / (number averaged), broadcast back over the averaged axes",
                    _mean),
    "max": VJPRule("max with ties split",
                   "A_bar = G where A equals the max, split evenly among ties", _extremum),
    "min": VJPRule("min with ties split",
                   "A_bar = G where A equals the min, split evenly among ties", _extremum),
    "logsumexp": VJPRule("logsumexp",
                         "A_bar = G * e / sum(e) with e = exp(A - max(A)) (= G * softmax(A))",
                         _logsumexp),
    "prod": VJPRule("prod (product of the others)",
                    "A_bar = G * (product of the other elements along the axes): prod(A)/A "
                    "without dividing by zero (a lone zero gets the product of the rest, the "
                    "elements beside it 0; two or more zeros: all 0)", _prod),
    "prod_others": VJPRule("product of the others",
                           "A_bar_k = sum over i != k of G_i * (product of the elements other "
                           "than i and k), zero-safe", _prod_others),
    "softmax": VJPRule("softmax", "A_bar = s * (G - sum(G * s, axis)) with s = softmax(A)",
                       _softmax),
    "share": VJPRule("tie share", "piecewise constant: no gradient", _none),
    "transpose": VJPRule("transpose", "A_bar = transpose(G, argsort(perm))", _transpose),
    "reshape": VJPRule("reshape", "A_bar = reshape(G, A.shape)", _reshape),
    "expand": VJPRule("reshape", "A_bar = reshape(G, A.shape) (the added axes dropped)",
                      _reshape),
    "index": VJPRule("slice (scatter)", "A_bar = zeros of A's shape with G at the index",
                     _index),
    "scatter": VJPRule("scatter (slice)", "A_bar = G at the index (A placed inside a zero "
                                          "border, as padding does: G with the border cut off)",
                       _scatter),
    "repeat": VJPRule("repeat (sum back)", "A_bar = G summed over the copies", _repeat),
    "broadcast": VJPRule("broadcast", "A_bar = G (unbroadcast sums it back)", _broadcast),
}
#: The family rows (:mod:`symdiff.tensor.families`).
TENSOR_VJPS.update(
    {op: VJPRule(row.rule, row.identity, row.vjp) for op, row in families.OPS.items()}
)
