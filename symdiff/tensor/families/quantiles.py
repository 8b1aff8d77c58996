"""Order statistics: ``quantile``, ``percentile``, ``median`` (from a sort), and ``argmax`` /
``argmin`` used as an index into an array.

* ``quantile(a, q, axis)`` with NumPy's default ``method='linear'``: the sorted values ``s``
  (:func:`~symdiff.tensor.families.sorting.sort`) at the virtual position ``h = (n - 1) q``,
  interpolated as NumPy does (``s[j] + (s[j+1] - s[j]) t`` for ``t = h - floor(h) < 1/2``,
  ``s[j+1] - (s[j+1] - s[j]) (1 - t)`` above), so the gradient is ``1 - t`` for the element
  sorted to position ``j`` and ``t`` for the one at ``j + 1``. ``percentile(a, q)`` is
  ``quantile(a, q / 100)``; ``median`` the middle element (odd ``n``) or the mean of the two
  middle ones (even ``n``), as NumPy computes it.
* **Ties**: the gradient goes to the elements ``np.argsort`` puts at those positions, one of the
  tied elements (a one-sided derivative), not split evenly as ``max`` splits it: NumPy's
  definition reads sorted positions, and any element of a tie is a valid subgradient.
* ``argmax(a, axis=None)`` / ``argmin``: an integer node (``_np.argmax``) with no derivative (a
  small change of ``a`` keeps the index, ties aside). Used as an index, ``y[np.argmax(x)]``,
  ``Y[:, np.argmax(x)]``, ``Y[np.arange(m), np.argmax(X, axis=1)]`` or
  ``np.take_along_axis(Y, np.argmax(X, axis=1, keepdims=True), axis=1)``, it is a ``pick``
  node (``_np.take_along_axis``); its adjoint an ``unpick`` (``G`` put into zeros at the index,
  ``_np.put_along_axis``), and each is the other's adjoint, so Hessians and forward mode go
  through them. The element picked gets the gradient, as ``y[k]`` for a constant ``k``.

The axis reduced must have a fixed length (the positions are computed when tracing).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...errors import ShapeError, UnsupportedError
from ..codetext import shape_code
from ..ir import Node, arg_symbol
from ..oprow import OpRow, Param, Spelling, call_latex
from ..ops import Builder
from ..shapes import Shape, format_shape, normalize_axes, same_dim
from .building import stack
from .sorting import sort

_X0, _X1 = arg_symbol(0), arg_symbol(1)


# -- quantiles ---------------------------------------------------------------------------------
def _levels(name: str, q: Any, scale: float, where: str) -> tuple[np.ndarray, tuple[int, ...]]:
    try:
        values = np.asarray(q, dtype=float) / scale
    except (TypeError, ValueError):
        raise UnsupportedError(f"{name}: q must be a constant number or a list of numbers, not "
                               f"{type(q).__name__}{where}") from None
    if values.ndim > 1 or not np.all((values >= 0) & (values <= 1)):
        raise UnsupportedError(f"{name}: q must be a number or a 1-D list of numbers in "
                               f"[0, {scale:g}], got {q!r}{where}")
    return values.reshape(-1), values.shape


def _sorted(b: Builder, a: Node, axis: Any, name: str, where: str) -> tuple[Node, int]:
    if isinstance(axis, tuple | list):
        raise UnsupportedError(f"{name}: axis must be an int or None (a tuple of axes is not "
                               f"supported){where}")
    if axis is None:
        a, axis = b.reshape(a, (-1,), where), 0
    elif a.ndim == 0:
        raise ShapeError(f"{name}: needs at least one dimension{where}")
    (axis,) = normalize_axes(name, axis, a.ndim, where)
    if not isinstance(a.shape[axis], int) or not a.shape[axis]:
        raise ShapeError(f"{name}: the axis must have a fixed, nonzero length, got shape "
                         f"{format_shape(a.shape)}{where}")
    return sort(b, a, axis, where=where), axis


def _at(b: Builder, s: Node, axis: int, k: int, where: str) -> Node:
    return b.index(s, (*((None, None, None),) * axis, k), where)


def _level(b: Builder, s: Node, axis: int, q: float, where: str) -> Node:
    """NumPy's linear interpolation of sorted ``s`` at level ``q`` along ``axis``."""
    n = s.shape[axis]
    h = (n - 1) * q
    j = min(math.floor(h), n - 1)
    t = h - j
    low = _at(b, s, axis, j, where)
    if t == 0 or j == n - 1:
        return low
    high = _at(b, s, axis, j + 1, where)
    expr = _X0 + (_X1 - _X0) * t if t < 0.5 else _X1 - (_X1 - _X0) * (1 - t)
    return b.map(expr, [low, high], "quantile", where)


def _keep(b: Builder, value: Node, ndim: int, axis: Any, keepdims: bool, lead: int) -> Node:
    """``value`` with the reduced axis kept as size 1 (every axis, for ``axis=None``)."""
    if not keepdims:
        return value
    if axis is None:
        return b.reshape(value, (*value.shape[:lead], *(1,) * ndim))
    (k,) = normalize_axes("quantile", axis, ndim)
    return b.expand(value, (lead + k,))


def _quantile(name: str, scale: float, b: Builder, a: Node, q: Any, axis: Any, out: Any,
              overwrite_input: bool, method: str, keepdims: bool, weights: Any,
              interpolation: Any, where: str) -> Node:
    for key, value in (("out", out), ("weights", weights), ("interpolation", interpolation)):
        if value is not None:
            raise UnsupportedError(f"{name}: {key}= is not supported when differentiating"
                                   f"{where}")
    if method != "linear":
        raise UnsupportedError(f"{name}: method={method!r} is not supported (only NumPy's "
                               f"default 'linear'){where}")
    levels, shape = _levels(name, q, scale, where)
    s, k = _sorted(b, a, axis, name, where)
    values = [_level(b, s, k, float(level), where) for level in levels]
    if not shape:
        return _keep(b, values[0], a.ndim, axis, bool(keepdims), 0)
    return _keep(b, stack(b, tuple(values), where=where), a.ndim, axis, bool(keepdims), 1)


def quantile(b: Builder, a: Node, q: Any, axis: Any = None, out: Any = None,
             overwrite_input: bool = False, method: str = "linear", keepdims: bool = False, *,
             weights: Any = None, interpolation: Any = None, where: str = "") -> Node:
    """``np.quantile(a, q, axis)`` (``q`` constant, in [0, 1]; linear interpolation)."""
    return _quantile("quantile", 1.0, b, a, q, axis, out, overwrite_input, method, keepdims,
                     weights, interpolation, where)


def percentile(b: Builder, a: Node, q: Any, axis: Any = None, out: Any = None,
               overwrite_input: bool = False, method: str = "linear", keepdims: bool = False,
               *, weights: Any = None, interpolation: Any = None, where: str = "") -> Node:
    """``np.percentile(a, q, axis)``: ``quantile(a, q / 100)``."""
    return _quantile("percentile", 100.0, b, a, q, axis, out, overwrite_input, method,
                     keepdims, weights, interpolation, where)


def median(b: Builder, a: Node, axis: Any = None, out: Any = None,
           overwrite_input: bool = False, keepdims: bool = False, *, where: str = "") -> Node:
    """``np.median(a, axis)``: the middle element, or the mean of the two middle ones."""
    if out is not None:
        raise UnsupportedError(f"median: out= is not supported when differentiating{where}")
    s, k = _sorted(b, a, axis, "median", where)
    n = s.shape[k]
    value = _at(b, s, k, n // 2, where)
    if n % 2 == 0:
        value = b.map((_X0 + _X1) / 2, [_at(b, s, k, n // 2 - 1, where), value], "median",
                      where)
    return _keep(b, value, a.ndim, axis, bool(keepdims), 0)


# -- argmax / argmin as an index ---------------------------------------------------------------
def _argext(kind: str) -> Any:
    def build(b: Builder, a: Node, axis: int | None = None, out: Any = None, *,
              keepdims: bool = False, where: str = "") -> Node:
        if out is not None:
            raise UnsupportedError(f"{kind}: out= is not supported when tracing{where}")
        if axis is None:
            shape: Shape = (1,) * a.ndim if keepdims else ()
            return b.node("argext", (a,), (kind, None, bool(keepdims)), shape)
        (k,) = normalize_axes(kind, axis, a.ndim, where)
        shape = tuple(1 if i == k else d for i, d in enumerate(a.shape) if keepdims or i != k)
        return b.node("argext", (a,), (kind, k, bool(keepdims)), shape)

    build.__name__ = build.__qualname__ = kind
    build.__doc__ = (f"``np.{kind}(a, axis)``: the index of the {kind[3:]} (an integer array "
                     "with no derivative; use it to index another array).")
    return build


argmax = _argext("argmax")
argmin = _argext("argmin")


def is_argext(node: Node) -> bool:
    """Whether ``node`` is an ``argmax``/``argmin`` (an integer index)."""
    return node.op == "argext"


def pick(b: Builder, y: Node, idx: Node, axis: int, where: str = "") -> Node:
    """``np.take_along_axis(y, idx, axis)`` for ``idx`` of ``y``'s rank with one index per
    slice along ``axis`` (size 1 there; other axes of size 1 broadcast)."""
    if idx.ndim != y.ndim or idx.shape[axis] != 1:
        raise ShapeError(f"take_along_axis: the indices of shape {format_shape(idx.shape)} "
                         f"must have the rank of the array {format_shape(y.shape)} and length "
                         f"1 along axis {axis}{where}")
    for i, (d, e) in enumerate(zip(idx.shape, y.shape, strict=True)):
        if i != axis and d != 1 and not same_dim(d, e):
            raise ShapeError(f"take_along_axis: indices of shape {format_shape(idx.shape)} do "
                             f"not match the array's {format_shape(y.shape)}{where}")
    if y.op == "fill":
        return b.fill(y.attrs[0], (*y.shape[:axis], 1, *y.shape[axis + 1:]))
    return b.node("pick", (y, idx), (axis,), (*y.shape[:axis], 1, *y.shape[axis + 1:]))


def unpick(b: Builder, g: Node, idx: Node, axis: int, shape: Shape) -> Node:
    """Zeros of ``shape`` with ``g`` put at ``idx`` along ``axis`` (the adjoint of a pick)."""
    if g.op == "fill" and g.attrs[0] == 0:
        return b.fill(0, shape)
    return b.node("unpick", (g, idx), (axis,), shape)


def index_by(b: Builder, y: Node, key: tuple[Any, ...], where: str = "") -> Node:
    """``y[key]`` where ``key`` has an ``argmax``/``argmin`` node: ``y[i]``, ``y[:, i]`` (``i``
    a scalar index, the others full slices) or ``Y[np.arange(m), i]`` (``i`` of ``(m,)``)."""
    nodes = [k for k, item in enumerate(key) if isinstance(item, Node)]
    usage = ("an argmax/argmin index is supported as y[i], y[:, i] (the other items full "
             "slices) and Y[np.arange(m), i]")
    if len(nodes) != 1 or len(key) > y.ndim:
        raise UnsupportedError(f"{usage}{where}")
    k = nodes[0]
    idx = key[k]
    rest = [item for j, item in enumerate(key) if j != k]
    if idx.ndim == 0 and all(item == slice(None) for item in rest):
        picked = pick(b, y, b.reshape(idx, (1,) * y.ndim, where), k, where)
        return b.reshape(picked, (*y.shape[:k], *y.shape[k + 1:]), where)
    rows = rest[0] if len(rest) == 1 else None
    if (k == 1 and idx.ndim == 1 and isinstance(rows, np.ndarray) and rows.ndim == 1
            and isinstance(y.shape[0], int) and same_dim(idx.shape[0], y.shape[0])
            and np.array_equal(rows, np.arange(y.shape[0]))):
        column = b.reshape(idx, (idx.shape[0], *(1,) * (y.ndim - 1)), where)
        picked = pick(b, y, column, 1, where)
        return b.reshape(picked, (y.shape[0], *y.shape[2:]), where)
    raise UnsupportedError(f"{usage}{where}")


def take_along_axis(b: Builder, arr: Node, indices: Node, axis: int | None, *,
                    where: str = "") -> Node:
    """``np.take_along_axis(arr, indices, axis)`` for ``indices`` an ``argmax``/``argmin``
    with ``keepdims=True``."""
    if not is_argext(indices) or axis is None:
        raise UnsupportedError(f"take_along_axis: indices must be np.argmax/np.argmin(..., "
                               f"axis=k, keepdims=True) of a traced array, and axis an int; for "
                               f"constant indices index with them (y[idx]){where}")
    (k,) = normalize_axes("take_along_axis", axis, arr.ndim, where)
    return pick(b, arr, indices, k, where)


# -- rules -------------------------------------------------------------------------------------
def _none_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    return (None,)


def _none_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
              ) -> Node | None:
    return None


def _pick_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    y, idx = node.args
    return (unpick(b, g, idx, node.attrs[0], y.shape), None)


def _unpick_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    return (pick(b, g, node.args[1], node.attrs[0]), None)


def _pick_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
              ) -> Node | None:
    t = tangents[0]
    if t is None:
        return None
    return pick(b, t, b.expand(node.args[1], (node.ndim,)), node.attrs[0])


def _unpick_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
                ) -> Node | None:
    t = tangents[0]
    if t is None:
        return None
    return unpick(b, t, b.expand(node.args[1], (node.ndim,)), node.attrs[0],
                  (*node.shape, t.shape[-1]))


def _argext_code(node: Node, c: list[str], target: str) -> list[tuple[str, str]]:
    kind, axis, keepdims = node.attrs
    keep = ", keepdims=True" if keepdims else ""
    if axis is None:
        return [(target, f"_np.{kind}({c[0]}{keep})")]
    return [(target, f"_np.{kind}({c[0]}, axis={axis}{keep})")]


def _unpick_code(node: Node, c: list[str], target: str) -> list[tuple[str, str]]:
    return [(target, f"_np.zeros({shape_code(node.shape)}, dtype=_dtype)"),
            ("", f"_np.put_along_axis({target}, {c[1]}, {c[0]}, axis={node.attrs[0]})")]


def _argext_text(node: Node, r: list[str]) -> str:
    kind, axis, keepdims = node.attrs
    parts = [r[0]] + ([] if axis is None else [f"axis={axis}"]) + (
        ["keepdims=True"] if keepdims else [])
    return f"{kind}({', '.join(parts)})"


OPS = (
    OpRow(
        op="argext", rule="argmax or argmin (no derivative)",
        identity="an index: locally constant",
        vjp=_none_vjp, jvp=_none_jvp, emit=_argext_code,
        text=lambda n, a, r: _argext_text(n, r),
        latex=lambda n, a, r: call_latex(n.attrs[0], r[0]),
        numpy_names=frozenset({"argmax", "argmin"}),
    ),
    OpRow(
        op="pick", rule="pick at an index",
        identity="A_bar = G put at the index (zeros elsewhere)",
        vjp=_pick_vjp, jvp=_pick_jvp,
        emit=lambda n, c, t: [(t, f"_np.take_along_axis({c[0]}, {c[1]}, axis={n.attrs[0]})")],
        text=lambda n, a, r: f"take_along_axis({r[0]}, {r[1]}, axis={n.attrs[0]})",
        latex=lambda n, a, r: call_latex("take", r[0], r[1]),
        numpy_names=frozenset({"take_along_axis"}),
    ),
    OpRow(
        op="unpick", rule="put at an index",
        identity="G_bar = take_along_axis(G, index)",
        vjp=_unpick_vjp, jvp=_unpick_jvp, emit=_unpick_code,
        text=lambda n, a, r: f"put_along_axis(zeros, {r[1]}, {r[0]}, axis={n.attrs[0]})",
        latex=lambda n, a, r: call_latex("put", r[0], r[1]),
        numpy_names=frozenset({"put_along_axis"}),
    ),
)

_A = {"a": Param.ARRAY}
SPELLINGS = (
    Spelling("quantile", quantile, "quantile(a, q, axis=None, keepdims=False)", _A,
             numpy=(np.quantile,)),
    Spelling("percentile", percentile, "percentile(a, q, axis=None, keepdims=False)", _A,
             numpy=(np.percentile,)),
    Spelling("median", median, "median(a, axis=None, keepdims=False)", _A,
             numpy=(np.median,)),
    Spelling("", argmax, "argmax(a, axis=None, keepdims=False)", _A, numpy=(np.argmax,),
             methods=("argmax",)),
    Spelling("", argmin, "argmin(a, axis=None, keepdims=False)", _A, numpy=(np.argmin,),
             methods=("argmin",)),
    Spelling("", take_along_axis, "take_along_axis(arr, indices, axis)",
             {"arr": Param.ARRAY, "indices": Param.ARRAY}, numpy=(np.take_along_axis,)),
)

__all__ = [
    "OPS", "SPELLINGS", "argmax", "argmin", "index_by", "is_argext", "median", "percentile",
    "pick", "quantile", "take_along_axis", "unpick",
]
