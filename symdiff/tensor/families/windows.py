"""Sliding windows: the ``windows`` node op (NumPy's ``sliding_window_view`` with a stride and a
dilation), which pooling reduces and convolution contracts.

* ``windows(a, axes, sizes, strides, dilations)``: every window of ``a`` along ``axes`` (each
  axis replaced by the number of window positions, the window's own axes appended last), a
  read-only view. Window position ``m``, offset ``i`` reads element ``m * stride + i *
  dilation``.
* Its adjoint is the overlap-add ("col2im"): each offset's slice of ``G`` added back where the
  windows read it, ``A_bar[.., i*d : i*d + s*(M-1) + 1 : s] += G[.., i]`` for each offset
  ``i`` of the window, built from scatters and a sum (the emitter adds them into one buffer in
  place). Being linear, its tangent is the windows of the operand's tangent.
* Windows that tile the axes (stride = size, no dilation) are a reshape and a transpose: no
  new op, and their adjoint is a reshape too.

Sizes, strides and dilations are Python ints; the windowed axes must have integer lengths.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import sympy as sp

from ...errors import ShapeError
from ..ir import Node, arg_symbol
from ..oprow import OpRow, call_latex
from ..ops import Builder
from ..shapes import Dim, format_shape

FULL = (None, None, None)
#: The NumPy function that makes the windows view.
SLIDING = "lib.stride_tricks.sliding_window_view"


def ints(name: str, what: str, value: object, count: int, where: str, least: int = 1
         ) -> tuple[int, ...]:
    """``value`` (an int, or a tuple of ``count`` ints) as ``count`` ints ``>= least``."""
    items = value if isinstance(value, tuple | list) else (value,) * count
    if len(items) != count or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= least for v in items
    ):
        raise ShapeError(f"{name}: {what} must be an int >= {least} or a tuple of {count} such "
                         f"ints, not {value!r}{where}")
    return tuple(items)


def counts(name: str, dims: Sequence[Dim], sizes: Sequence[int], strides: Sequence[int],
           dilations: Sequence[int], where: str) -> tuple[int, ...]:
    """The number of window positions along each axis (its length must be an int)."""
    out = []
    for dim, k, s, d in zip(dims, sizes, strides, dilations, strict=True):
        if not isinstance(dim, int):
            raise ShapeError(f"{name}: the windowed axes need integer lengths, not "
                             f"{format_shape(tuple(dims))}{where}")
        span = d * (k - 1) + 1
        if span > dim:
            raise ShapeError(f"{name}: a window spanning {span} does not fit in an axis of "
                             f"{dim}{where}")
        out.append((dim - span) // s + 1)
    return tuple(out)


def windows(b: Builder, a: Node, axes: tuple[int, ...], sizes: tuple[int, ...],
            strides: tuple[int, ...], dilations: tuple[int, ...], name: str = "windows",
            where: str = "") -> Node:
    """Every window of ``a`` along ``axes`` (positive, sorted), the window axes appended."""
    found = counts(name, [a.shape[p] for p in axes], sizes, strides, dilations, where)
    if all(s == k for s, k in zip(strides, sizes, strict=True)) and set(dilations) == {1}:
        return _tiles(b, a, axes, sizes, found)
    shape = list(a.shape)
    for p, m in zip(axes, found, strict=True):
        shape[p] = m
    return b.node("windows", (a,), (axes, sizes, strides, dilations), (*shape, *sizes))


def _tiles(b: Builder, a: Node, axes: tuple[int, ...], sizes: tuple[int, ...],
           found: tuple[int, ...]) -> Node:
    """Non-overlapping windows: the tiled part of each axis, split and the sizes moved last."""
    index = [FULL] * a.ndim
    for p, k, m in zip(axes, sizes, found, strict=True):
        if m * k != a.shape[p]:
            index[p] = (0, m * k, None)
    a = b.index(a, tuple(index))
    split: list[Dim] = []
    first: list[int] = []
    for p, dim in enumerate(a.shape):
        first.append(len(split))
        if p in axes:
            k = sizes[axes.index(p)]
            split += [dim // k, k]
        else:
            split.append(dim)
    kept = [first[p] for p in range(a.ndim)]
    inner = [first[p] + 1 for p in axes]
    return b.transpose(b.reshape(a, tuple(split)), (*kept, *inner))


def overlap_add(b: Builder, g: Node, shape: tuple[Dim, ...], axes: tuple[int, ...],
                sizes: tuple[int, ...], strides: tuple[int, ...], dilations: tuple[int, ...]
                ) -> Node:
    """The adjoint of :func:`windows`: each window offset's slice of ``g`` added back into an
    array of ``shape`` where the windows read it."""
    n = len(shape)
    positions = [g.shape[p] for p in axes]  # the window counts
    parts = []
    for offsets in itertools.product(*(range(k) for k in sizes)):
        piece = b.index(g, (*([FULL] * n), *offsets))
        index = [FULL] * n
        for p, i, s, d, m in zip(axes, offsets, strides, dilations, positions, strict=True):
            index[p] = (i * d, i * d + s * (m - 1) + 1, s if s != 1 else None)
        parts.append(b.scatter(piece, tuple(index), shape))
    if len(parts) == 1:
        return parts[0]
    return b.map(sp.Add(*(arg_symbol(i) for i in range(len(parts)))), parts)


def window_lines(code: str, target: str, ndim: int, axes: tuple[int, ...],
                 sizes: tuple[int, ...], strides: tuple[int, ...], dilations: tuple[int, ...]
                 ) -> list[tuple[str, str]]:
    """The statements that bind ``target`` to the windows view of ``code`` (``ndim`` axes)."""
    spans = tuple(d * (k - 1) + 1 for k, d in zip(sizes, dilations, strict=True))
    lines = [(target, f"_np.{SLIDING}({code}, {spans}, axis={axes})")]
    steps = [":"] * ndim + [":"] * len(axes)
    for j, (p, s, d) in enumerate(zip(axes, strides, dilations, strict=True)):
        steps[p] = f"::{s}" if s != 1 else ":"
        steps[ndim + j] = f"::{d}" if d != 1 else ":"
    if any(step != ":" for step in steps):
        while steps[-1] == ":":
            steps.pop()
        lines.append((target, f"{target}[{', '.join(steps)}]"))
    return lines


# -- rules ---------------------------------------------------------------------------------------
def _vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    (a,) = node.args
    return (overlap_add(b, g, a.shape, *node.attrs),)


def _jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
         ) -> Node | None:
    (t,) = tangents
    axes, sizes = node.attrs[:2]
    n, r = node.args[0].ndim, len(axes)
    spread = b.node("windows", (t,), node.attrs,
                    (*node.shape[:n], t.shape[-1], *sizes))
    return b.transpose(spread, (*range(n), *range(n + 1, n + 1 + r), n))


def _emit(node: Node, c: list[str], target: str) -> list[tuple[str, str]]:
    return window_lines(c[0], target, node.args[0].ndim, *node.attrs)


def _text(node: Node, r: list[str]) -> str:
    axes, sizes, strides, dilations = node.attrs
    extra = f", dilation={dilations}" if set(dilations) != {1} else ""
    return f"windows({r[0]}, axis={axes}, size={sizes}, stride={strides}{extra})"


OPS = (
    OpRow(
        op="windows",
        rule="sliding windows (overlap-add)",
        identity="A_bar = the overlap-add of G: each window's adjoint added back where the "
                 "window read A (col2im)",
        vjp=_vjp,
        jvp=_jvp,
        emit=_emit,
        text=lambda n, a, r: _text(n, r),
        latex=lambda n, a, r: call_latex("windows", r[0], rf"\text{{size}}={n.attrs[1]}",
                                          rf"\text{{stride}}={n.attrs[2]}"),
        numpy_names=frozenset({SLIDING}),
    ),
)
SPELLINGS = ()

__all__ = ["FULL", "OPS", "SPELLINGS", "counts", "ints", "overlap_add", "window_lines",
           "windows"]
