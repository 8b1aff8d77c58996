"""Linear algebra: ``det``, ``logdet`` (``slogdet``'s ``logabsdet``), ``inv``, ``solve`` and
``norm``, with the Matrix Cookbook's closed forms (``A`` square, or a stack of square matrices
over leading axes; ``A^-T`` is ``inv(A)`` with its last two axes swapped):

* ``det``: ``A_bar = G * det(A) * A^-T``; tangent ``det(A) * tr(A^-1 dA)``.
* ``logdet`` (``log|det A|``): ``A_bar = G * A^-T``; tangent ``tr(A^-1 dA)``.
* ``inv``: ``A_bar = -A^-T @ G @ A^-T``; tangent ``-A^-1 @ dA @ A^-1``.
* ``solve(A, b)`` (``x = A^-1 b``, never the inverse): ``b_bar = solve(A.T, G)``,
  ``A_bar = -b_bar @ x.T`` (an outer product for a vector ``b``); tangent
  ``solve(A, db - dA @ x)``.
* ``norm`` (the 2-norm of vectors, Frobenius of matrices): ``x_bar = G * x / norm`` and, like
  ``hypot`` at the origin, **0 where the norm is 0** (any subgradient would do; 0 is the one of
  least norm). ``ord=1``, ``inf``, ``-inf`` (and the induced 1- and inf-norms of matrices) are
  sums and maxima of ``abs``, differentiated as those.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
import sympy as sp

from ...errors import ShapeError, SymdiffError
from ..ir import Node, arg_symbol
from ..oprow import OpRow, Param, Spelling
from ..ops import Builder
from ..shapes import broadcast, format_shape, normalize_axes, same_dim, same_shape
from .contractions import LETTERS, contract

_X, _Y, _Z = arg_symbol(0), arg_symbol(1), arg_symbol(2)


def _square(name: str, a: Node, where: str) -> None:
    if a.ndim < 2 or not same_dim(a.shape[-1], a.shape[-2]):
        raise ShapeError(f"{name}: needs a square matrix (or a stack of them), got shape "
                         f"{format_shape(a.shape)}{where}")


def _swap(b: Builder, a: Node) -> Node:
    """``a`` with its last two axes exchanged (``.T`` of a matrix)."""
    return b.transpose(a, (*range(a.ndim - 2), a.ndim - 1, a.ndim - 2))


def _matrix_axes(a: Node) -> tuple[int, int]:
    return a.ndim - 2, a.ndim - 1


# -- constructors ------------------------------------------------------------------------------
def det(b: Builder, a: Node, *, where: str = "") -> Node:
    """``np.linalg.det(a)``."""
    _square("det", a, where)
    return b.node("det", (a,), (), a.shape[:-2])


def logdet(b: Builder, a: Node, *, where: str = "") -> Node:
    """``log|det(a)|`` (``np.linalg.slogdet(a)[1]``)."""
    _square("logdet", a, where)
    return b.node("logdet", (a,), (), a.shape[:-2])


def inv(b: Builder, a: Node, *, where: str = "") -> Node:
    """``np.linalg.inv(a)``."""
    _square("inv", a, where)
    if a.op == "inv":
        return a.args[0]
    return b.node("inv", (a,), (), a.shape)


def solve(b: Builder, a: Node, c: Node, *, where: str = "") -> Node:
    """``np.linalg.solve(a, b)``: ``b`` a vector (``c.ndim == 1``) or a (stack of) matrices."""
    _square("solve", a, where)
    n = a.shape[-1]
    if c.ndim == 1:
        if not same_dim(c.shape[0], n):
            raise ShapeError(f"solve: a of shape {format_shape(a.shape)} and b of shape "
                             f"{format_shape(c.shape)} do not match{where}")
        if a.ndim > 2:  # a stack of systems with one right-hand side: as a column
            column = solve(b, a, b.expand(c, (1,)), where=where)
            return b.reshape(column, column.shape[:-1])
        return b.node("solve", (a, c), (), (n,))
    if c.ndim < 2 or not same_dim(c.shape[-2], n):
        raise ShapeError(f"solve: a of shape {format_shape(a.shape)} and b of shape "
                         f"{format_shape(c.shape)} do not match{where}")
    lead_a, lead_c = a.shape[:-2], c.shape[:-2]
    if lead_a and lead_c and not same_shape(lead_a, lead_c):
        raise ShapeError(f"solve: the stacks of a {format_shape(a.shape)} and b "
                         f"{format_shape(c.shape)} must have the same leading shape{where}")
    shape = (*broadcast("solve", lead_a, lead_c, where=where), n, c.shape[-1])
    return b.node("solve", (a, c), (), shape)


class Slogdet(NamedTuple):
    """``np.linalg.slogdet``'s result when traced: the sign (piecewise constant: no gradient)
    and ``log|det|``."""

    sign: Any
    logabsdet: Any


def slogdet(b: Builder, a: Node, *, where: str = "") -> Slogdet:
    """``np.linalg.slogdet(a)``: ``(sign, logabsdet)``."""
    return Slogdet(b.map(sp.sign(_X), [det(b, a, where=where)]), logdet(b, a, where=where))


# -- rules -------------------------------------------------------------------------------------
def _last(b: Builder, a: Node) -> Node:
    return b.expand(a, (a.ndim,))


def _matrix(b: Builder, a: Node) -> Node:
    """A stack of scalars lined up with a stack of matrices (two size-1 axes added)."""
    return b.expand(a, (a.ndim, a.ndim + 1))


def _trace_inv(b: Builder, a: Node, t: Node) -> Node:
    """``tr(A^-1 dA)`` for a batch of tangents ``t`` (``A``'s shape plus ``D``)."""
    product = b.map(_X * _Y, [_last(b, _swap(b, inv(b, a))), t])
    return b.reduce_axes("sum", product, _matrix_axes(a), False)


def _det_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    (a,) = node.args
    return (b.map(_X * _Y * _Z, [_matrix(b, g), _matrix(b, node), _swap(b, inv(b, a))]),)


def _det_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
             ) -> Node | None:
    (t,) = tangents
    return b.map(_X * _Y, [_last(b, node), _trace_inv(b, node.args[0], t)])


def _logdet_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    return (b.map(_X * _Y, [_matrix(b, g), _swap(b, inv(b, node.args[0]))]),)


def _logdet_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
                ) -> Node | None:
    return _trace_inv(b, node.args[0], tangents[0])


def _inv_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    inv_t = _swap(b, node)
    return (b.map(-_X, [b.matmul(b.matmul(inv_t, g), inv_t)]),)


def _batch_letters(node: Node) -> str:
    return LETTERS[: node.ndim - 2]


def _inv_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
             ) -> Node | None:
    (t,) = tangents
    lead = _batch_letters(node)
    product = contract(b, [lead + "ij", lead + "jkZ", lead + "kl"], [node, t, node],
                       lead + "ilZ")
    return b.map(-_X, [product])


def _solve_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    a, c = node.args
    c_bar = solve(b, _swap(b, a), g)
    if c.ndim == 1:  # A_bar = -outer(b_bar, x)
        return b.map(-_X * _Y, [b.expand(c_bar, (1,)), b.expand(node, (0,))]), c_bar
    return b.map(-_X, [b.matmul(c_bar, _swap(b, node))]), c_bar


def _solve_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
               ) -> Node | None:
    a, c = node.args
    ta, tc = tangents
    parts = []
    if tc is not None:
        parts.append(tc)
    if ta is not None:  # -dA @ x
        lead = _batch_letters(a)
        if c.ndim == 1:
            parts.append(b.map(-_X, [contract(b, ["ijZ", "j"], [ta, node], "iZ")]))
        else:
            lead_x = lead or LETTERS[: node.ndim - 2]
            parts.append(b.map(-_X, [contract(b, [lead + "ijZ", lead_x + "jk"], [ta, node],
                                              lead_x + "ikZ")]))
    rhs = parts[0] if len(parts) == 1 else b.map(_X + _Y, parts)
    if c.ndim == 1:
        return solve(b, a, rhs)  # (n, D): the D directions as columns
    flat = b.reshape(rhs, (*rhs.shape[:-2], -1))  # (.., n, k * D)
    solved = solve(b, a, flat)
    return b.reshape(solved, (*node.shape, rhs.shape[-1]))


def _nonzero(n: sp.Symbol) -> sp.Expr:
    """``n``, or 1 where it is 0 (the numerator is 0 there, so the gradient at the origin is 0;
    NumPy may warn of the division it evaluates in the other branch of ``where``). Written as a
    ``where`` of ``n`` so that float32 stays float32."""
    return sp.Piecewise((1, sp.Eq(n, 0)), (n, True))


def _norm_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    (a,) = node.args
    axes, keepdims = node.attrs
    kept = node if keepdims else b.expand(node, axes)
    grad = g if keepdims else b.expand(g, axes)
    return (b.map(_X * _Y / _nonzero(_Z), [grad, a, kept]),)


def _norm_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
              ) -> Node | None:
    (t,) = tangents
    (a,) = node.args
    axes, keepdims = node.attrs
    dot = b.reduce_axes("sum", b.map(_X * _Y, [_last(b, a), t]), axes, keepdims)
    return b.map(_X / _nonzero(_Y), [dot, _last(b, node)])


def _norm_emit(node: Node, code: list[str], target: str) -> list[tuple[str, str]]:
    (a,) = node.args
    axes, keepdims = node.attrs
    keep = ", keepdims=True" if keepdims else ""
    if len(axes) == a.ndim:
        return [(target, f"_np.linalg.norm({code[0]}{keep})")]
    axis = str(axes[0]) if len(axes) == 1 else str(axes)
    if len(axes) <= 2:
        return [(target, f"_np.linalg.norm({code[0]}, axis={axis}{keep})")]
    return [(target, f"_np.sqrt(_np.sum({code[0]} * {code[0]}, axis={axis}{keep}))")]


def _spectral(b: Builder, x: Node, ord: Any, axes: tuple[int, ...], keepdims: bool,
              where: str) -> Node:
    """The matrix norms of singular values: ``'nuc'`` (their sum), ``2`` (the largest) and
    ``-2`` (the smallest), over the matrix axes ``axes`` (the ``svdvals`` node of
    :mod:`.decompositions`)."""
    rows, cols = axes
    others = tuple(i for i in range(x.ndim) if i not in axes)
    moved = b.transpose(x, (*others, rows, cols)) if (rows, cols) != (x.ndim - 2, x.ndim - 1) \
        else x
    m, n = moved.shape[-2:]
    if not same_dim(m, n) and not (isinstance(m, int) and isinstance(n, int)):
        raise ShapeError(f"norm: ord={ord!r} of a non-square matrix needs integer sizes{where}")
    k = m if same_dim(m, n) else min(m, n)
    factors = b.node("svd_factors", (moved,), (), ())  # s = svd(moved)[1]
    values = b.node("svdvals", (moved, factors), (), (*moved.shape[:-2], k))
    kind = "sum" if ord == "nuc" else ("max" if ord > 0 else "min")
    result = b.reduce_axes(kind, values, (values.ndim - 1,), False)
    if not keepdims:
        return result
    return b.reshape(result, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))


# -- norm ----------------------------------------------------------------------------------------
def norm(b: Builder, x: Node, ord: Any = None, axis: Any = None, keepdims: bool = False, *,
         where: str = "") -> Node:
    """``np.linalg.norm(x, ord, axis, keepdims)``: the 2-norm of vectors and Frobenius norm of
    matrices (default), ``ord=1``/``inf``/``-inf`` of vectors and matrices, other ``p`` of
    vectors, and the nuclear (``'nuc'``) and spectral (``2``, ``-2``) norms of matrices."""
    axes = normalize_axes("norm", axis, x.ndim, where) if axis is not None else None
    matrix = (axes is None and x.ndim == 2) or (axes is not None and len(axes) == 2)
    if axes is None:
        axes = tuple(range(x.ndim))
    if ord is None or ord == "fro" or (ord == 2 and not matrix):
        if ord == "fro" and not matrix:
            raise SymdiffError(f"norm: ord='fro' is for matrices{where}")
        return b.node("norm", (x,), (axes, bool(keepdims)),
                      tuple(1 if i in axes else d for i, d in enumerate(x.shape)) if keepdims
                      else tuple(d for i, d in enumerate(x.shape) if i not in axes))
    if matrix and (ord == "nuc" or (not isinstance(ord, str | bool) and ord in (2, -2))):
        return _spectral(b, x, ord, axes, bool(keepdims), where)
    if isinstance(ord, str | bool) or not isinstance(ord, int | float):
        raise SymdiffError(f"norm: ord={ord!r} is not supported (None, 'fro', 1, 2 for "
                           f"vectors, inf, -inf, a number p for vectors){where}")
    magnitude = b.map(sp.Abs(_X), [x])
    if matrix:
        if ord not in (1, -1, np.inf, -np.inf):
            raise SymdiffError(f"norm: the matrix norm ord={ord!r} is not supported (None, "
                               f"'fro', 'nuc', 1, -1, 2, -2, inf, -inf){where}")
        rows, cols = axes
        summed, over = (rows, cols) if abs(ord) == 1 else (cols, rows)
        sums = b.reduce_axes("sum", magnitude, (summed,), True)
        kind = "max" if ord > 0 else "min"
        result = b.reduce_axes(kind, sums, (over,), True)
        return result if keepdims else b.reshape(result, tuple(
            d for i, d in enumerate(result.shape) if i not in axes))
    if len(axes) != 1 and x.ndim != 1:
        raise SymdiffError(f"norm: ord={ord!r} needs a vector or one axis{where}")
    if ord in (np.inf, -np.inf):
        return b.reduce_axes("max" if ord > 0 else "min", magnitude, axes, bool(keepdims))
    if ord == 0:
        raise SymdiffError(f"norm: ord=0 (a count of nonzeros) has no gradient{where}")
    if ord == 1:
        return b.reduce_axes("sum", magnitude, axes, bool(keepdims))
    p = sp.nsimplify(ord)
    total = b.reduce_axes("sum", b.map(_X ** p, [magnitude]), axes, bool(keepdims))
    return b.map(_X ** (1 / p), [total])


OPS = (
    OpRow(
        op="det",
        rule="determinant",
        identity="d det(A) = det(A) tr(A^-1 dA): A_bar = G * det(A) * inv(A).T",
        vjp=_det_vjp,
        jvp=_det_jvp,
        emit=lambda n, c, t: [(t, f"_np.linalg.det({c[0]})")],
        text=lambda n, a, r: f"det({r[0]})",
        latex=lambda n, a, r: rf"\det\left({r[0]}\right)",
        numpy_names=frozenset({"linalg.det"}),
    ),
    OpRow(
        op="logdet",
        rule="log determinant",
        identity="d log|det A| = tr(A^-1 dA): A_bar = G * inv(A).T",
        vjp=_logdet_vjp,
        jvp=_logdet_jvp,
        emit=lambda n, c, t: [(t, f"_np.linalg.slogdet({c[0]})"), (t, f"{t}[1]")],
        text=lambda n, a, r: f"logdet({r[0]})",
        latex=lambda n, a, r: rf"\log\left|\det\left({r[0]}\right)\right|",
        numpy_names=frozenset({"linalg.slogdet"}),
    ),
    OpRow(
        op="inv",
        rule="inverse",
        identity="d A^-1 = -A^-1 dA A^-1: A_bar = -inv(A).T @ G @ inv(A).T",
        vjp=_inv_vjp,
        jvp=_inv_jvp,
        emit=lambda n, c, t: [(t, f"_np.linalg.inv({c[0]})")],
        text=lambda n, a, r: f"inv({r[0]})",
        latex=lambda n, a, r: rf"{a[0]}^{{-1}}",
        numpy_names=frozenset({"linalg.inv"}),
    ),
    OpRow(
        op="solve",
        rule="solve",
        identity="x = A^-1 b, dx = A^-1 (db - dA x): B_bar = solve(A.T, G), A_bar = -B_bar @ x.T",
        vjp=_solve_vjp,
        jvp=_solve_jvp,
        emit=lambda n, c, t: [(t, f"_np.linalg.solve({c[0]}, {c[1]})")],
        text=lambda n, a, r: f"solve({r[0]}, {r[1]})",
        latex=lambda n, a, r: rf"{a[0]}^{{-1}} {a[1]}",
        numpy_names=frozenset({"linalg.solve"}),
    ),
    OpRow(
        op="norm",
        rule="norm",
        identity="d|x| = x . dx / |x|: A_bar = G * A / norm(A), 0 where the norm is 0",
        vjp=_norm_vjp,
        jvp=_norm_jvp,
        emit=_norm_emit,
        text=lambda n, a, r: f"norm({r[0]}, axis={n.attrs[0]})",
        latex=lambda n, a, r: rf"\left\|{r[0]}\right\|",
        numpy_names=frozenset({"linalg.norm", "sqrt", "sum"}),
    ),
)

SPELLINGS = (
    Spelling("det", det, "det(a)", {"a": Param.ARRAY}, numpy=(np.linalg.det,)),
    Spelling("logdet", logdet, "logdet(a)", {"a": Param.ARRAY}),
    Spelling("", slogdet, "slogdet(a)", {"a": Param.ARRAY}, numpy=(np.linalg.slogdet,)),
    Spelling("inv", inv, "inv(a)", {"a": Param.ARRAY}, numpy=(np.linalg.inv,)),
    Spelling("solve", solve, "solve(a, b)", {"a": Param.ARRAY, "c": Param.ARRAY},
             numpy=(np.linalg.solve,)),
    Spelling("norm", norm, "norm(x, ord=None, axis=None, keepdims=False)",
             {"x": Param.ARRAY}, numpy=(np.linalg.norm,)),
)

__all__ = ["OPS", "SPELLINGS", "Slogdet", "det", "inv", "logdet", "norm", "slogdet", "solve"]
