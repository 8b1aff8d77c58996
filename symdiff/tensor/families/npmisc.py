"""NumPy conveniences users write in loss functions, built from existing ops (so their reverse
and forward rules, Hessians and code are those ops'): ``ones_like``/``zeros_like``/
``full_like``, ``meshgrid``, ``ptp``, ``average`` (with ``weights=``), ``trapezoid``,
``polyval``, ``nansum``/``nanmean``/``nanprod``/``nancumsum``/``nancumprod``; two node ops,
``nan_filled`` and ``notnan``.

* ``ones_like(a)`` / ``zeros_like(a)`` / ``full_like(a, v)``: constants of ``a``'s shape (no
  derivative with respect to ``a``; ``full_like``'s ``v`` may be a traced scalar: it is
  broadcast).
* ``meshgrid(*xi, indexing='xy')``: each input given size-1 axes and broadcast (its adjoint a
  sum over the broadcast axes); ``'xy'`` swaps the first two output axes, as NumPy does.
* ``ptp(a)``: ``max(a) - min(a)`` (ties share the gradient evenly, as for ``max``).
* ``average(a, axis, weights)``: ``sum(a * w, axis) / sum(w, axis)`` (``w`` 1-D along ``axis``
  is broadcast there, as NumPy does); ``returned=True`` also gives the sum of the weights.
* ``trapezoid(y, x=None, dx=1.0, axis=-1)``: ``sum(d * (y[1:] + y[:-1]) / 2)`` with
  ``d = diff(x)`` (``x`` 1-D along ``axis`` or of ``y``'s shape) or ``dx``.
* ``polyval(p, x)``: Horner's rule as NumPy runs it (``y = y * x + p[i]``), so the value is
  NumPy's to the last bit and the gradient is exact in ``p`` and ``x``.
* ``nansum``/``nanmean``/``nanprod``/``nancumsum``/``nancumprod``: the reduction or scan of
  ``where(a == a, a, c)`` (NaN is the one value not equal to itself; ``c`` 0 for sums, 1 for
  products: a ``nan_filled`` node, whose adjoint zeroes ``G`` at the NaNs the same way);
  the mean divides by the count of non-NaN elements (a ``notnan`` node: 1 where ``a`` is not
  NaN, else 0, no derivative). The gradient with respect to ``a`` is 0 at its NaNs; a NaN made
  by an earlier operation still reaches that operation's inputs as ``0 * NaN``, as in JAX.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sympy as sp

from ...errors import ShapeError, UnsupportedError
from ..ir import Node, arg_symbol
from ..oprow import OpRow, Param, Spelling, call_latex
from ..ops import Builder
from ..shapes import format_shape, normalize_axes, same_dim
from .products import cumprod
from .scans import cumsum, diff

_X0, _X1, _X2 = arg_symbol(0), arg_symbol(1), arg_symbol(2)


def _refuse(name: str, where: str, **given: tuple[Any, Any]) -> None:
    """A clear error for the first argument given other than its supported value."""
    for key, (value, supported) in given.items():
        if value is not supported and value != supported:
            raise UnsupportedError(f"{name}: {key}={value!r} is not supported when "
                                   f"differentiating (only {key}={supported!r}){where}")


def _float_dtype(name: str, dtype: Any, where: str) -> None:
    if dtype is not None and np.dtype(dtype).kind != "f":
        raise UnsupportedError(f"{name}: dtype={np.dtype(dtype).name} is not supported (only "
                               f"floating dtypes: an integer array has no derivative){where}")


# -- constants shaped like an array ------------------------------------------------------------
def _like(name: str, value: Any) -> Any:
    def build(b: Builder, a: Node, dtype: Any = None, order: str = "K", subok: bool = True,
              shape: Any = None, *, device: Any = None, where: str = "") -> Node:
        _float_dtype(name, dtype, where)
        _refuse(name, where, order=(order, "K"), shape=(shape, None), device=(device, None))
        return b.fill(value, a.shape)

    build.__name__ = build.__qualname__ = name
    build.__doc__ = f"``np.{name}(a)``: {value}s of ``a``'s shape (a constant)."
    return build


ones_like = _like("ones_like", 1)
zeros_like = _like("zeros_like", 0)


def full_like(b: Builder, a: Node, fill_value: Node, dtype: Any = None, order: str = "K",
              subok: bool = True, shape: Any = None, *, device: Any = None,
              where: str = "") -> Node:
    """``np.full_like(a, fill_value)``: ``fill_value`` (a scalar, maybe traced) broadcast to
    ``a``'s shape."""
    _float_dtype("full_like", dtype, where)
    _refuse("full_like", where, order=(order, "K"), shape=(shape, None), device=(device, None))
    if fill_value.ndim:
        raise ShapeError(f"full_like: fill_value must be a scalar, got shape "
                         f"{format_shape(fill_value.shape)}{where}")
    return b.broadcast(fill_value, a.shape)


def meshgrid(b: Builder, *xi: Node, copy: bool = True, sparse: bool = False,
             indexing: str = "xy", where: str = "") -> tuple[Node, ...]:
    """``np.meshgrid(*xi, indexing)``: each 1-D input broadcast along the others' axes."""
    if indexing not in ("xy", "ij"):
        raise UnsupportedError(f"meshgrid: indexing must be 'xy' or 'ij', not {indexing!r}"
                               f"{where}")
    _refuse("meshgrid", where, sparse=(sparse, False))
    if not xi:
        return ()
    vectors = [b.reshape(x, (-1,), where) for x in xi]
    shape = [v.shape[0] for v in vectors]
    order = list(range(len(vectors)))
    if indexing == "xy" and len(vectors) > 1:
        order[0], order[1] = 1, 0  # axis of each input in the output
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, v in enumerate(vectors):
        others = tuple(k for k in range(len(vectors)) if k != order[i])
        out.append(b.broadcast(b.expand(v, others), tuple(shape)))
    return tuple(out)


# -- reductions --------------------------------------------------------------------------------
def ptp(b: Builder, a: Node, axis: Any = None, out: Any = None, keepdims: bool = False, *,
        where: str = "") -> Node:
    """``np.ptp(a, axis)``: ``max - min`` (a tie shares the gradient evenly, as in ``max``)."""
    _refuse("ptp", where, out=(out, None))
    high = b.reduce("max", a, axis, bool(keepdims), where)
    low = b.reduce("min", a, axis, bool(keepdims), where)
    return b.map(_X0 - _X1, [high, low], "ptp", where)


def _along(b: Builder, w: Node, a: Node, axes: tuple[int, ...], name: str, where: str
           ) -> Node:
    """Weights ``w`` lined up with ``a``: as they are if shaped like ``a``, else 1-D along the
    one axis of ``axes``, as NumPy broadcasts them."""
    if len(w.shape) == a.ndim and all(same_dim(p, q) for p, q in zip(w.shape, a.shape,
                                                                     strict=True)):
        return w
    if len(axes) != 1 or w.ndim != 1 or not same_dim(w.shape[0], a.shape[axes[0]]):
        raise ShapeError(f"{name}: weights of shape {format_shape(w.shape)} must have a's "
                         f"shape {format_shape(a.shape)}, or be 1-D of the length of the axis "
                         f"given{where}")
    target = [1] * a.ndim
    target[axes[0]] = w.shape[0]
    return b.broadcast(b.reshape(w, tuple(target), where), a.shape)


def average(b: Builder, a: Node, axis: Any = None, weights: Node | None = None,
            returned: bool = False, *, keepdims: bool = False, where: str = "") -> Any:
    """``np.average(a, axis, weights, returned, keepdims=)``: ``sum(a * w) / sum(w)``."""
    keep = bool(keepdims)
    if weights is None:
        avg = b.reduce("mean", a, axis, keep, where)
        if not returned:
            return avg
        axes = normalize_axes("average", axis, a.ndim, where)
        count = sp.Mul(*(a.shape[i] for i in axes))
        return avg, b.fill(count, avg.shape)
    axes = normalize_axes("average", axis, a.ndim, where)
    w = _along(b, weights, a, axes, "average", where)
    scl = b.reduce_axes("sum", w, axes, keep)
    total = b.reduce_axes("sum", b.map(_X0 * _X1, [a, w], "average", where), axes, keep)
    avg = b.map(_X0 / _X1, [total, scl], "average", where)
    return (avg, scl) if returned else avg


def trapezoid(b: Builder, y: Node, x: Node | None = None, dx: Node | float = 1.0,
              axis: int = -1, *, where: str = "") -> Node:
    """``np.trapezoid(y, x=None, dx=1.0, axis=-1)``: the trapezoidal rule along ``axis``."""
    if y.ndim == 0:
        raise ShapeError(f"trapezoid: y needs at least one dimension{where}")
    (axis,) = normalize_axes("trapezoid", axis, y.ndim, where)
    if x is not None:
        if x.ndim == 1:
            d = diff(b, x, where=where)
            target = [1] * y.ndim
            target[axis] = d.shape[0]
            d = b.reshape(d, tuple(target), where)
        else:
            d = diff(b, x, axis=axis, where=where)
    else:
        d = dx if isinstance(dx, Node) else b.fill(dx, ())
        if d.ndim:
            raise ShapeError(f"trapezoid: dx must be a scalar{where}")
    before = ((None, None, None),) * axis
    upper = b.index(y, (*before, (1, None, None)), where)
    lower = b.index(y, (*before, (None, -1, None)), where)
    area = b.map(_X0 * (_X1 + _X2) / 2, [d, upper, lower], "trapezoid", where)
    return b.reduce_axes("sum", area, (axis,), False)


def polyval(b: Builder, p: Node, x: Node, *, where: str = "") -> Node:
    """``np.polyval(p, x)``: ``p[0] * x**(n-1) + ... + p[n-1]`` by Horner's rule."""
    if p.ndim != 1 or not isinstance(p.shape[0], int):
        raise ShapeError(f"polyval: p must be 1-D of a fixed length, got shape "
                         f"{format_shape(p.shape)}{where}")
    if not p.shape[0]:
        return b.fill(0, x.shape)
    y = b.broadcast(b.index(p, (0,), where), x.shape)  # NumPy's first step: 0 * x + p[0]
    for i in range(1, p.shape[0]):
        y = b.map(_X0 * _X1 + _X2, [y, x, b.index(p, (i,), where)], "polyval", where)
    return y


# -- NaN-ignoring reductions -------------------------------------------------------------------
def notnan(b: Builder, a: Node) -> Node:
    """``1`` where ``a`` is not NaN, ``0`` where it is (no derivative)."""
    if a.op == "fill":
        return b.fill(1, a.shape)
    return b.node("notnan", (a,), (), a.shape)


def _nan_args(name: str, dtype: Any, out: Any, where: str) -> None:
    _float_dtype(name, dtype, where)
    _refuse(name, where, out=(out, None))


def nan_filled(b: Builder, g: Node, a: Node, value: int = 0) -> Node:
    """``where(a == a, g, value)``: ``g`` with ``value`` (0 or 1) where ``a`` is NaN (its
    derivative in ``g`` is ``where(a == a, 1, 0)``; the mask of ``a`` has no derivative)."""
    if g.op == "fill" and g.attrs[0] == value:
        return g
    return b.node("nan_filled", (g, a), (value,), g.shape)


def _nan_parts(b: Builder, a: Node) -> tuple[Node, Node]:
    return nan_filled(b, a, a), notnan(b, a)


def nansum(b: Builder, a: Node, axis: Any = None, dtype: Any = None, out: Any = None,
           keepdims: bool = False, initial: Any = None, *,
           where: str = "") -> Node:
    """``np.nansum(a, axis)``: the sum with NaNs counted as 0 (their gradient 0)."""
    _nan_args("nansum", dtype, out, where)
    _refuse("nansum", where, initial=(initial, None))
    return b.reduce("sum", _nan_parts(b, a)[0], axis, bool(keepdims), where)


def nanmean(b: Builder, a: Node, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, *, where: str = "") -> Node:
    """``np.nanmean(a, axis)``: the mean of the elements that are not NaN."""
    _nan_args("nanmean", dtype, out, where)
    kept, mask = _nan_parts(b, a)
    total = b.reduce("sum", kept, axis, bool(keepdims), where)
    count = b.reduce("sum", mask, axis, bool(keepdims), where)
    return b.map(_X0 / _X1, [total, count], "nanmean", where)


def nanprod(b: Builder, a: Node, axis: Any = None, dtype: Any = None, out: Any = None,
            keepdims: bool = False, initial: Any = None, *, where: str = "") -> Node:
    """``np.nanprod(a, axis)``: the product with NaNs counted as 1 (their gradient 0)."""
    _nan_args("nanprod", dtype, out, where)
    _refuse("nanprod", where, initial=(initial, None))
    return b.reduce("prod", nan_filled(b, a, a, 1), axis, bool(keepdims), where)


def nancumsum(b: Builder, a: Node, axis: int | None = None, dtype: Any = None, out: Any = None,
              *, where: str = "") -> Node:
    """``np.nancumsum(a, axis)``: running sums with NaNs counted as 0."""
    _nan_args("nancumsum", dtype, out, where)
    return cumsum(b, nan_filled(b, a, a), axis, where=where)


def nancumprod(b: Builder, a: Node, axis: int | None = None, dtype: Any = None,
               out: Any = None, *, where: str = "") -> Node:
    """``np.nancumprod(a, axis)``: running products with NaNs counted as 1."""
    _nan_args("nancumprod", dtype, out, where)
    return cumprod(b, nan_filled(b, a, a, 1), axis, where=where)


def _no_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    return (None,)


def _no_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
            ) -> Node | None:
    return None


def _filled_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    return (nan_filled(b, g, node.args[1]), None)


def _filled_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
                ) -> Node | None:
    t = tangents[0]
    return None if t is None else nan_filled(b, t, b.expand(node.args[1], (node.ndim,)))


OPS = (
    OpRow(
        op="nan_filled",
        rule="NaNs replaced",
        identity="A_bar = where(M == M, G, 0) (the NaN mask of M has no derivative)",
        vjp=_filled_vjp,
        jvp=_filled_jvp,
        emit=lambda n, c, t: [(t, f"_np.where({c[1]} == {c[1]}, {c[0]}, {n.attrs[0]:.1f})")],
        text=lambda n, a, r: f"where({r[1]} == {r[1]}, {r[0]}, {n.attrs[0]})",
        latex=lambda n, a, r: rf"\left[{r[1]} \ne \text{{NaN}}\right] {a[0]}",
        numpy_names=frozenset({"where"}),
    ),
    OpRow(
        op="notnan",
        rule="not-NaN mask (no derivative)",
        identity="1 where A is not NaN, else 0: piecewise constant",
        vjp=_no_vjp,
        jvp=_no_jvp,
        emit=lambda n, c, t: [(t, f"_np.asarray({c[0]} == {c[0]}, dtype=_dtype)")],
        text=lambda n, a, r: f"notnan({r[0]})",
        latex=lambda n, a, r: call_latex("notnan", r[0]),
    ),
)

_A = {"a": Param.ARRAY}
SPELLINGS = (
    Spelling("ones_like", ones_like, "ones_like(a, dtype=None)", _A, numpy=(np.ones_like,)),
    Spelling("zeros_like", zeros_like, "zeros_like(a, dtype=None)", _A,
             numpy=(np.zeros_like,)),
    Spelling("full_like", full_like, "full_like(a, fill_value, dtype=None)",
             {"a": Param.ARRAY, "fill_value": Param.ARRAY}, numpy=(np.full_like,)),
    Spelling("", meshgrid, "meshgrid(*xi, indexing='xy')", {"xi": Param.ARRAYS},
             numpy=(np.meshgrid,)),
    Spelling("ptp", ptp, "ptp(a, axis=None, keepdims=False)", _A, numpy=(np.ptp,)),
    Spelling("average", average, "average(a, axis=None, weights=None, returned=False)",
             {"a": Param.ARRAY, "weights": Param.ARRAY}, numpy=(np.average,)),
    Spelling("trapezoid", trapezoid, "trapezoid(y, x=None, dx=1.0, axis=-1)",
             {"y": Param.ARRAY, "x": Param.ARRAY, "dx": Param.ARRAY},
             numpy=(np.trapezoid,) if hasattr(np, "trapezoid") else ()),
    Spelling("polyval", polyval, "polyval(p, x)", {"p": Param.ARRAY, "x": Param.ARRAY},
             numpy=(np.polyval,)),
    Spelling("nansum", nansum, "nansum(a, axis=None, keepdims=False)", _A,
             numpy=(np.nansum,)),
    Spelling("nanprod", nanprod, "nanprod(a, axis=None, keepdims=False)", _A,
             numpy=(np.nanprod,)),
    Spelling("nancumsum", nancumsum, "nancumsum(a, axis=None)", _A, numpy=(np.nancumsum,)),
    Spelling("nancumprod", nancumprod, "nancumprod(a, axis=None)", _A,
             numpy=(np.nancumprod,)),
    Spelling("nanmean", nanmean, "nanmean(a, axis=None, keepdims=False)", _A,
             numpy=(np.nanmean,)),
)

__all__ = [
    "OPS", "SPELLINGS", "average", "full_like", "meshgrid", "nancumprod", "nancumsum",
    "nanmean", "nanprod", "nansum", "notnan",
    "ones_like", "polyval", "ptp", "trapezoid", "zeros_like",
]
