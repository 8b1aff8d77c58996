"""Scans and reversals: ``cumsum``, ``diff`` and ``flip`` (the model family: copy its shape to
add one; ``cumprod`` is in :mod:`.products`).

* ``cumsum(a, axis)``: ``A_bar = flip(cumsum(flip(G)))`` along the axis (each element feeds
  every later partial sum); its tangent is the cumsum of the operand's tangent.
* ``flip(a, axis)``: ``A_bar = flip(G)``; linear, so the tangent is flipped too.
* ``diff(a, n, axis, prepend, append)``: ``a[1:] - a[:-1]`` along the axis, ``n`` times
  (slices: their rules), after concatenating ``prepend`` and ``append``.

``axis=None`` flattens first, as NumPy does (``np.cumsum(x)`` of a matrix is a vector).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...errors import ShapeError
from ..ir import Node, arg_symbol
from ..oprow import OpRow, Param, Spelling, call_latex
from ..ops import Builder
from ..shapes import normalize_axes
from .building import concatenate

_X0, _X1 = arg_symbol(0), arg_symbol(1)


# -- constructors ------------------------------------------------------------------------------
def cumsum(b: Builder, a: Node, axis: int | None = None, *, where: str = "") -> Node:
    """``np.cumsum(a, axis)``: running sums along ``axis`` (None: of the flattened array)."""
    if axis is None:
        a = b.reshape(a, (-1,), where)
        axis = 0
    (axis,) = normalize_axes("cumsum", axis, a.ndim, where)
    if a.op == "fill" and a.attrs[0] == 0:
        return a
    return b.node("cumsum", (a,), (axis,), a.shape)


def flip(b: Builder, a: Node, axis: int | tuple[int, ...] | None = None, *,
         where: str = "") -> Node:
    """``np.flip(a, axis)``: the order of elements reversed along ``axis`` (None: every axis)."""
    axes = normalize_axes("flip", axis, a.ndim, where)
    if not axes or a.op == "fill":
        return a
    if a.op == "flip" and a.attrs[0] == axes:
        return a.args[0]
    return b.node("flip", (a,), (axes,), a.shape)


def diff(b: Builder, a: Node, n: int = 1, axis: int = -1, prepend: Node | None = None,
         append: Node | None = None, *, where: str = "") -> Node:
    """``np.diff(a, n, axis, prepend, append)``: ``n``-th differences along ``axis``, by slices
    (of ``a`` with ``prepend`` and ``append`` concatenated, a scalar as one slice)."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ShapeError(f"diff: the order n must be a non-negative int, not {n!r}{where}")
    if a.ndim == 0:
        raise ShapeError(f"diff: needs at least 1 dimension{where}")
    (axis,) = normalize_axes("diff", axis, a.ndim, where)
    if n and (prepend is not None or append is not None):
        one = (*a.shape[:axis], 1, *a.shape[axis + 1:])
        edges = [b.broadcast(e, one) if e.ndim == 0 else e for e in (prepend, append)
                 if e is not None]
        parts = (edges[0], a) if append is None else (a, edges[0]) if prepend is None else (
            edges[0], a, edges[1])
        a = concatenate(b, parts, axis, where=where)
    before = ((None, None, None),) * axis
    for _ in range(n):
        if isinstance(a.shape[axis], int) and a.shape[axis] < 2:
            raise ShapeError(f"diff: axis {axis} of shape {a.shape} is too short for order {n}"
                             f"{where}")
        upper = b.index(a, (*before, (1, None, None)), where)
        lower = b.index(a, (*before, (None, -1, None)), where)
        a = b.map(_X0 - _X1, [upper, lower], "diff", where)
    return a


# -- rules -------------------------------------------------------------------------------------
def _cumsum_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    (axis,) = node.attrs
    return (flip(b, cumsum(b, flip(b, g, axis), axis), axis),)


def _cumsum_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
                ) -> Node | None:
    return cumsum(b, tangents[0], node.attrs[0])


def _flip_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    return (flip(b, g, node.attrs[0]),)


def _flip_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
              ) -> Node | None:
    return flip(b, tangents[0], node.attrs[0])


def _axis_keyword(axes: tuple[int, ...]) -> str:
    return str(axes[0]) if len(axes) == 1 else str(axes)


OPS = (
    OpRow(
        op="cumsum",
        rule="cumsum (reversed cumsum)",
        identity="A_bar = flip(cumsum(flip(G))) along the axis",
        vjp=_cumsum_vjp,
        jvp=_cumsum_jvp,
        emit=lambda n, c, t: [(t, f"_np.cumsum({c[0]}, axis={n.attrs[0]})")],
        text=lambda n, a, r: f"cumsum({r[0]}, axis={n.attrs[0]})",
        latex=lambda n, a, r: call_latex("cumsum", r[0], rf"\text{{axis}}={n.attrs[0]}"),
        numpy_names=frozenset({"cumsum"}),
    ),
    OpRow(
        op="flip",
        rule="flip",
        identity="A_bar = flip(G) along the same axes",
        vjp=_flip_vjp,
        jvp=_flip_jvp,
        emit=lambda n, c, t: [(t, f"_np.flip({c[0]}, axis={_axis_keyword(n.attrs[0])})")],
        text=lambda n, a, r: f"flip({r[0]}, axis={_axis_keyword(n.attrs[0])})",
        latex=lambda n, a, r: call_latex("flip", r[0],
                                          rf"\text{{axis}}={_axis_keyword(n.attrs[0])}"),
        numpy_names=frozenset({"flip"}),
    ),
)

SPELLINGS = (
    Spelling("cumsum", cumsum, "cumsum(a, axis=None)", {"a": Param.ARRAY},
             numpy=(np.cumsum,), methods=("cumsum",)),
    Spelling("", cumsum, "cumulative_sum(x, axis=None)", {"a": Param.ARRAY},  # NumPy >= 2.1
             numpy=(np.cumulative_sum,) if hasattr(np, "cumulative_sum") else ()),
    Spelling("diff", diff, "diff(a, n=1, axis=-1, prepend=None, append=None)",
             {"a": Param.ARRAY, "prepend": Param.ARRAY, "append": Param.ARRAY},
             numpy=(np.diff,)),
    Spelling("flip", flip, "flip(a, axis=None)", {"a": Param.ARRAY},
             numpy=(np.flip,)),
)

__all__ = ["OPS", "SPELLINGS", "cumsum", "diff", "flip"]
