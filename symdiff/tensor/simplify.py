"""Peephole rewrites applied as tensor nodes are built (see :mod:`symdiff.tensor.ops`).

Each function gets the builder and the requested operation and returns a simpler equal node,
or None to build the operation as asked. The rules:

* a transpose of a transpose is one transpose (none if the permutations cancel), and the
  transpose of an identity or a constant is itself;
* a reshape of a reshape is one reshape, a reshape to the same shape is nothing, a reshape of a
  transpose that only moves axes of length 1 reshapes the untransposed array;
* a sum (or mean, max, min, logsumexp, prod) of a constant is a constant (a product only
  when small and exact); a sum of a broadcast is the sum of the smaller array times the
  number of copies (so gradients of broadcasts stay small); a reduction of a transpose
  reduces the untransposed array; a sum (or mean) of a product takes out the factors constant
  along its axes (``sum(c * f * X) = c * f * sum(X)``), and a sum of a sum with kept
  dimensions is one sum (the batch-norm backward pass then sums ``G`` and ``G * (x - mean)``
  once each);
* an elementwise operation absorbs broadcasts of its operands (NumPy broadcasts anyway),
  and multiplications by ones vanish when constants are substituted into it;
* ``A @ I`` and ``I @ B`` (the forward-mode seed) are ``A`` and ``B``; a product over a
  contracted axis of length 1 is an elementwise outer product ``a[:, None] * b``; a product
  with a constant is a sum (``ones @ B`` repeats the column sums of ``B``); a constant factor
  of an operand scales the product instead (``A.T @ (2*A)`` is ``2*(A.T @ A)``);
* ``(A @ B).T`` is ``B.T @ A.T`` (no copy of a transposed result).
"""

from __future__ import annotations

from typing import Any

import sympy as sp

from .ir import Node, arg_symbol
from .shapes import Shape, same_dim, same_shape, size

#: :class:`symdiff.tensor.ops.Builder`, which calls these rewrites as it builds nodes; not
#: imported here (that would be an import cycle): the rewrites build through the builder passed.
Builder = Any

#: Rewrites of a slice of a node, by the node's op: ``rule(builder, node, index)`` returns the
#: slice built without the node (a slice of ``concatenate`` that covers one operand is that
#: operand), or None. Filled by the family rows that have one
#: (:attr:`symdiff.tensor.oprow.OpRow.index`).
INDEX_RULES: dict[str, Any] = {}


def index(b: Builder, a: Node, items: tuple) -> Node | None:
    """``a[items]`` without forming ``a`` where a rule of :data:`INDEX_RULES` applies, to ``a``
    or, through an elementwise node whose operands all have its shape, to an operand: the
    gradient of ``sum(concatenate([x, y]) ** 2)`` is then ``2*x`` and ``2*y``, not slices of
    ``2*concatenate([x, y])``."""
    rule = INDEX_RULES.get(a.op)
    if rule is not None:
        return rule(b, a, items)
    if a.op != "map" or not all(same_shape(arg.shape, a.shape) for arg in a.args):
        return None
    if not any(arg.op in INDEX_RULES and INDEX_RULES[arg.op](b, arg, items) is not None
               for arg in a.args):
        return None
    return b.map(a.attrs[0], [b.index(arg, items) for arg in a.args])


def broadcast_free(arg: Node, shape: Shape) -> Node:
    """``arg`` without broadcasts that an elementwise op of result ``shape`` does itself:
    a ``broadcast`` node, or size-1 axes inserted in front."""
    while arg.op == "broadcast" or (
        arg.op == "expand" and arg.attrs[0] == tuple(range(len(arg.attrs[0])))
    ):
        arg = arg.args[0]
    return arg


def _is_identity(node: Node) -> bool:
    return node.op == "eye" and node.ndim == 2


def matmul(b: Builder, x: Node, y: Node, shape: Shape) -> Node | None:
    """``A @ I -> A``, ``I @ B -> B``, and outer products over a length-1 axis."""
    if _is_identity(y) and x.ndim >= 1:
        return x
    if _is_identity(x) and y.ndim >= 1:
        return y
    if x.ndim >= 2 and y.ndim >= 2 and x.shape[-1] == 1 and y.shape[-2] == 1:
        return b.map(arg_symbol(0) * arg_symbol(1), [x, y], "matmul")
    if x.op == "fill":  # c * ones @ B: column sums of B, repeated
        total = b.reduce_axes("sum", y, (max(y.ndim - 2, 0),), y.ndim >= 2 and x.ndim >= 2)
        return b.broadcast(b.map(x.attrs[0] * arg_symbol(0), [total]), shape)
    if y.op == "fill":  # A @ (c * ones): row sums of A, repeated
        total = b.reduce_axes("sum", x, (x.ndim - 1,), y.ndim >= 2)
        return b.broadcast(b.map(y.attrs[0] * arg_symbol(0), [total]), shape)
    for i, a in enumerate((x, y)):  # A @ (c * B) -> c * (A @ B)
        factor = _constant_factor(a)
        if factor is not None:
            inner = b.matmul(a.args[0], y) if i == 0 else b.matmul(x, a.args[0])
            return b.map(factor * arg_symbol(0), [inner])
    return None


def _constant_factor(a: Node) -> sp.Expr | None:
    """``c`` if ``a`` is ``c * B`` for a number ``c != 1`` (an elementwise node of one operand
    of its own shape), else None. Taken out of a product, ``c`` scales the (usually smaller)
    result, and ``A.T @ A`` stays one symmetric product (BLAS ``syrk``, half the work): the
    Hessian of a least-squares loss is ``2*(A.T @ A)``, not ``A.T @ (2*A)``."""
    if a.op != "map" or len(a.args) != 1 or not same_shape(a.args[0].shape, a.shape):
        return None
    coeff, rest = a.attrs[0].as_coeff_Mul()
    if rest != arg_symbol(0) or coeff == 1 or not coeff.is_finite:
        return None
    return coeff


def transpose(b: Builder, a: Node, perm: tuple[int, ...], shape: Shape) -> Node | None:
    """Transposes compose; identities, constants and identity matrices are their own transpose."""
    if perm == tuple(range(len(perm))):
        return a
    if a.op == "fill":
        return b.fill(a.attrs[0], shape)
    if _is_identity(a):
        return a
    if a.op == "transpose":
        inner = a.attrs[0]
        return b.transpose(a.args[0], tuple(inner[p] for p in perm))
    if a.op == "matmul" and perm == (1, 0) and all(x.ndim == 2 for x in a.args):
        return b.matmul(b.transpose(a.args[1]), b.transpose(a.args[0]))  # (A @ B).T = B.T @ A.T
    return None


def reshape(b: Builder, a: Node, shape: Shape) -> Node | None:
    """Reshapes compose; a reshape to the same shape is nothing; constants stay constants."""
    if same_shape(a.shape, shape):
        return a
    if a.op == "fill":
        return b.fill(a.attrs[0], shape)
    if a.op in ("reshape", "expand"):
        return b.reshape(a.args[0], shape)
    if a.op == "transpose" and _moves_only_ones(a):  # the elements' order is the operand's
        return b.reshape(a.args[0], shape)
    return None


def _moves_only_ones(a: Node) -> bool:
    """Whether the transpose ``a`` keeps the order of its operand's axes longer than 1."""
    (perm,) = a.attrs
    long = [p for p in perm if not same_dim(a.args[0].shape[p], 1)]
    return long == sorted(long)


def reduction(
    b: Builder, kind: str, a: Node, axes: tuple[int, ...], keepdims: bool, shape: Shape
) -> Node | None:
    """Reductions of constants and sums of broadcasts."""
    count = size(a.shape[i] for i in axes)
    if a.op == "fill":
        value = a.attrs[0]
        if kind == "sum":
            return b.fill(value * count, shape)
        if kind == "logsumexp":
            return b.fill(value + sp.log(count), shape)
        if kind == "prod":
            return _prod_of_fill(b, value, count, shape)
        return b.fill(value, shape)
    if a.op == "broadcast" and kind in ("sum", "mean"):
        return _sum_of_broadcast(b, kind, a, axes, keepdims, shape)
    if kind == "sum":
        picked = _sum_against_identity(b, a, axes)
        if picked is not None:
            return picked if keepdims else b.reshape(picked, shape)
    if a.op == "map" and kind in ("sum", "mean"):
        found = _factor_out(b, kind, a, axes, keepdims, shape)
        if found is not None:
            return found
    if kind == "sum" and a.op == "sum" and a.attrs[1]:  # sum(sum(x, A, keepdims), B)
        merged = b.reduce_axes("sum", a.args[0], tuple(sorted({*a.attrs[0], *axes})), True)
        return merged if keepdims else b.reshape(merged, shape)
    if a.op == "transpose":  # reduce the untransposed array, transpose what is left
        (perm,) = a.attrs
        inner = b.reduce_axes(kind, a.args[0], tuple(sorted(perm[i] for i in axes)), keepdims)
        if keepdims:
            return b.transpose(inner, perm)
        left = [p for p in perm if p not in {perm[i] for i in axes}]
        return b.transpose(inner, tuple(sorted(left).index(p) for p in left))
    return None


def _factor_out(
    b: Builder, kind: str, a: Node, axes: tuple[int, ...], keepdims: bool, shape: Shape
) -> Node | None:
    """``sum(c * f * X, axes) = c * f * sum(X, axes)`` for a number ``c`` and operands ``f``
    constant along ``axes`` (of length 1 there, or broadcast in front), looking through
    products of products. The sum then reads only the rest, and the factors scale its
    (small) result: the batch-norm backward pass sums ``G`` and ``G * (x - mean)`` once each,
    the scale, shift, mean and variance gradients sharing them, instead of one sum per
    gradient of ``G`` times a different per-channel factor (the remaining factors are put in
    the order the graph made them, so equal products are one node)."""
    found = _product(a)
    if found is None:
        return None
    coeff, powers = found
    off = a.ndim
    outside, inside = [], []
    for node, power in powers.values():
        lead = off - node.ndim
        flat = all(i < lead or same_dim(node.shape[i - lead], 1) for i in axes)
        (outside if flat else inside).append((node, power))
    if not inside or (not outside and coeff == 1):
        return None
    inside.sort(key=lambda item: b.serial(item[0]))
    rest = b.map(sp.Mul(*(arg_symbol(i) ** p for i, (_, p) in enumerate(inside))),
                 [node for node, _ in inside])
    if rest.ndim < a.ndim:  # the reduced axes are a's (the missing ones have length 1 in a)
        rest = b.expand(rest, tuple(range(a.ndim - rest.ndim)))
    total = b.reduce_axes(kind, rest, axes, keepdims)
    scales = []
    for node, _ in outside:
        lead = off - node.ndim
        if not keepdims:
            node = b.reshape(node, tuple(d for i, d in enumerate(node.shape)
                                         if i + lead not in axes))
        scales.append(node)
    expr = coeff * sp.Mul(*(arg_symbol(i) ** p for i, (_, p) in enumerate(outside)))
    result = b.map(expr * arg_symbol(len(scales)), [*scales, total])
    return result if same_shape(result.shape, shape) else None


def _product(a: Node) -> tuple[sp.Expr, dict[int, tuple[Node, sp.Expr]]] | None:
    """``a`` (an elementwise node) as ``c * prod(f_i ** p_i)``: the number ``c`` and the
    operands with their powers (by ``id``), operands that are products themselves (to the
    first power) taken apart; None if ``a`` is not a product of its operands."""
    coeff, rest = a.attrs[0].as_coeff_Mul()
    if not coeff.is_finite:
        return None
    powers: dict[int, tuple[Node, sp.Expr]] = {}
    symbols = {arg_symbol(i): arg for i, arg in enumerate(a.args)}
    for base, power in rest.as_powers_dict().items():
        arg = symbols.get(base)
        if arg is None or not power.is_number:
            return None
        inner = _product(arg) if power == 1 and arg.op == "map" else None
        if inner is None:
            inner = (sp.Integer(1), {id(arg): (arg, power)})
        coeff *= inner[0]
        for key, (node, p) in inner[1].items():
            powers[key] = (node, powers[key][1] + p if key in powers else p)
    return coeff, powers


def _sum_against_identity(b: Builder, a: Node, axes: tuple[int, ...]) -> Node | None:
    """``sum(o * I, axis=-2)`` with ``I`` an identity on the last two axes and ``o`` of size 1
    on the last: ``o`` with its last two axes swapped (``sum_i o[.., i, 0] I[i, j]`` is
    ``o[.., j, 0]``), and the same along ``axis=-1``; kept dimensions. Forward mode makes these
    wherever a tangent seeded with the identity is reduced (a softmax's Hessian)."""
    product = arg_symbol(0) * arg_symbol(1)
    if a.op != "map" or a.ndim < 2 or len(a.args) != 2 or a.attrs[0] != product:
        return None
    eye = [x for x in a.args if _is_identity(x)]
    if len(eye) != 1 or axes not in ((a.ndim - 2,), (a.ndim - 1,)):
        return None
    (other,) = [x for x in a.args if x is not eye[0]]
    (summed,) = axes
    single = 2 * a.ndim - 3 - summed  # the other one of the last two axes
    m = a.shape[summed]
    if (other.ndim != a.ndim or not same_dim(other.shape[single], 1)
            or not same_dim(other.shape[summed], m)
            # the identity spans both last axes (a 1x1 one broadcast against o is not I_m)
            or eye[0].ndim < 2 or not all(same_dim(d, m) for d in eye[0].shape[-2:])
            or not same_dim(a.shape[single], m)
            or not all(same_dim(d, e) for d, e in zip(other.shape[:-2], a.shape[:-2],
                                                       strict=True))):
        return None
    perm = (*range(a.ndim - 2), a.ndim - 1, a.ndim - 2)
    return b.transpose(other, perm)


def _prod_of_fill(b: Builder, value: sp.Basic, count: object, shape: Shape) -> Node | None:
    """``value ** count`` when it is small and exact (ones, zeros over named dimensions, a
    power of a few factors); otherwise None (``prod`` of the constant array is emitted)."""
    if value == 1:
        return b.fill(1, shape)
    if isinstance(count, int) and count <= 64:
        power = sp.sympify(value) ** count
        small = not power.is_Rational or max(len(str(abs(power.p))), len(str(power.q))) <= 30
        if small:
            return b.fill(power, shape)
    if value == 0 and sp.sympify(count).is_positive:
        return b.fill(0, shape)
    return None


def _sum_of_broadcast(
    b: Builder, kind: str, a: Node, axes: tuple[int, ...], keepdims: bool, shape: Shape
) -> Node | None:
    """``sum(broadcast(x, S))``: sum ``x`` over the axes it has, times the copies made."""
    x = a.args[0]
    lead = a.ndim - x.ndim
    stretched = {
        lead + i
        for i, d in enumerate(x.shape)
        if isinstance(d, int) and d == 1 and not same_dim(a.shape[lead + i], 1)
    }
    copies = [i for i in axes if i < lead or i in stretched]
    if not copies:
        return None
    factor = size(a.shape[i] for i in copies) if kind == "sum" else 1
    inner_axes = tuple(i - lead for i in axes if i >= lead and i not in stretched)
    inner = b.reduce_axes(kind, x, inner_axes, True) if inner_axes else x
    scaled = b.map(arg_symbol(0) * factor, [inner])
    # ``scaled`` has x's rank, with 1s where x was stretched or reduced: drop the reduced axes
    # unless kept, then broadcast back over the axes that were not reduced.
    if not keepdims:
        squeezed = tuple(d for i, d in enumerate(scaled.shape) if (lead + i) not in axes)
        if len(squeezed) != scaled.ndim:
            scaled = b.reshape(scaled, squeezed)
    return b.broadcast(scaled, shape)
