"""Rearranging arrays: ``roll``, ``triu``/``tril`` (node ops) and compositions of the builder's
views (``fliplr``, ``flipud``, ``rot90``, ``ravel``/``flatten``, ``squeeze``, ``expand_dims``,
``moveaxis``, ``swapaxes``, ``broadcast_to``, ``tile``), whose rules are those of the views.

* ``roll(a, shift, axis)``: ``A_bar = roll(G, -shift)``; linear, its tangent rolled the same way.
* ``triu(a, k)`` / ``tril(a, k)``: ``A_bar = triu(G, k)`` (the mask is its own adjoint); the
  tangent's batch axis is moved in front first, since NumPy masks the last two axes.
* ``tile(a, reps)``: ``a`` given a size-1 axis before each of its axes, broadcast to the
  repetitions and reshaped, so its adjoint sums the copies (``reshape`` then ``sum``).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...errors import ShapeError
from ..ir import Node
from ..oprow import OpRow, Param, Spelling, call_latex
from ..ops import Builder
from ..shapes import format_shape, normalize_axes
from .scans import flip


def _ints(value: Any) -> tuple[int, ...]:
    items = value if isinstance(value, tuple | list) else (value,)
    return tuple(operator.index(v) for v in items)


# -- node ops ----------------------------------------------------------------------------------
def roll(b: Builder, a: Node, shift: int | tuple[int, ...], axis: int | tuple[int, ...] | None
         = None, *, where: str = "") -> Node:
    """``np.roll(a, shift, axis)``: elements shifted cyclically (None: of the flattened array)."""
    if axis is None:
        shape = a.shape
        flat = b.reshape(a, (-1,), where)
        return b.reshape(roll(b, flat, sum(_ints(shift)), 0, where=where), shape, where)
    shifts, axes = _ints(shift), _ints(axis)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ShapeError(f"roll: {len(shifts)} shifts for {len(axes)} axes{where}")
    total: dict[int, int] = {}
    for s, ax in zip(shifts, axes, strict=True):
        (ax,) = normalize_axes("roll", ax, a.ndim, where)
        total[ax] = total.get(ax, 0) + s
    for ax in total:
        if isinstance(a.shape[ax], int):
            total[ax] %= max(a.shape[ax], 1)
    kept = {ax: s for ax, s in sorted(total.items()) if s}
    if not kept or a.op == "fill":
        return a
    return b.node("roll", (a,), (tuple(kept.values()), tuple(kept)), a.shape)


def _tri(b: Builder, a: Node, k: int, lower: bool, where: str) -> Node:
    name = "tril" if lower else "triu"
    if a.ndim < 2:
        raise ShapeError(f"{name}: needs an array of at least 2 dimensions, not "
                         f"{format_shape(a.shape)}{where}")
    k = operator.index(k)
    if a.op == "fill" and a.attrs[0] == 0:
        return a
    return b.node("tri", (a,), (k, lower), a.shape)


def triu(b: Builder, m: Node, k: int = 0, *, where: str = "") -> Node:
    """``np.triu(m, k)``: the elements below the ``k``-th diagonal zeroed (last two axes)."""
    return _tri(b, m, k, False, where)


def tril(b: Builder, m: Node, k: int = 0, *, where: str = "") -> Node:
    """``np.tril(m, k)``: the elements above the ``k``-th diagonal zeroed (last two axes)."""
    return _tri(b, m, k, True, where)


def _roll_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    shifts, axes = node.attrs
    return (roll(b, g, tuple(-s for s in shifts), axes),)


def _roll_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
              ) -> Node | None:
    shifts, axes = node.attrs
    return roll(b, tangents[0], shifts, axes)


def _tri_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    k, lower = node.attrs
    return (_tri(b, g, k, lower, ""),)


def _tri_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
             ) -> Node | None:
    (t,) = tangents
    k, lower = node.attrs
    n = t.ndim
    front = b.transpose(t, (n - 1, *range(n - 1)))  # the batch axis first
    return b.transpose(_tri(b, front, k, lower, ""), (*range(1, n), 0))


def _tri_code(node: Node, c: list[str], t: str) -> list[tuple[str, str]]:
    k, lower = node.attrs
    return [(t, f"_np.{'tril' if lower else 'triu'}({c[0]}, {k})")]


def _tri_text(node: Node, r: list[str]) -> str:
    k, lower = node.attrs
    return f"{'tril' if lower else 'triu'}({r[0]}, {k})"


OPS = (
    OpRow(
        op="roll",
        rule="roll (roll back)",
        identity="A_bar = roll(G, -shift) along the same axes",
        vjp=_roll_vjp,
        jvp=_roll_jvp,
        emit=lambda n, c, t: [(t, f"_np.roll({c[0]}, {_one(n.attrs[0])}, "
                                  f"axis={_one(n.attrs[1])})")],
        text=lambda n, a, r: f"roll({r[0]}, {_one(n.attrs[0])}, axis={_one(n.attrs[1])})",
        latex=lambda n, a, r: call_latex("roll", r[0], _one(n.attrs[0]),
                                          rf"\text{{axis}}={_one(n.attrs[1])}"),
        numpy_names=frozenset({"roll"}),
    ),
    OpRow(
        op="tri",
        rule="triangle (mask)",
        identity="A_bar = triu(G, k) (tril for tril): the mask is its own adjoint",
        vjp=_tri_vjp,
        jvp=_tri_jvp,
        emit=_tri_code,
        text=lambda n, a, r: _tri_text(n, r),
        latex=lambda n, a, r: call_latex("tril" if n.attrs[1] else "triu", r[0],
                                          str(n.attrs[0])),
        numpy_names=frozenset({"triu", "tril"}),
    ),
)


def _one(values: tuple[int, ...]) -> str:
    return str(values[0]) if len(values) == 1 else str(values)


# -- compositions of views ---------------------------------------------------------------------
def fliplr(b: Builder, m: Node, *, where: str = "") -> Node:
    """``np.fliplr(m)``: columns reversed (axis 1)."""
    if m.ndim < 2:
        raise ShapeError(f"fliplr: needs at least 2 dimensions, not {format_shape(m.shape)}"
                         f"{where}")
    return flip(b, m, 1, where=where)


def flipud(b: Builder, m: Node, *, where: str = "") -> Node:
    """``np.flipud(m)``: rows reversed (axis 0)."""
    if m.ndim < 1:
        raise ShapeError(f"flipud: needs at least 1 dimension{where}")
    return flip(b, m, 0, where=where)


def rot90(b: Builder, m: Node, k: int = 1, axes: tuple[int, int] = (0, 1), *,
          where: str = "") -> Node:
    """``np.rot90(m, k, axes)``: rotated by 90 degrees ``k`` times (NumPy's own composition of
    flips and a transpose)."""
    axes = _ints(axes)
    if len(axes) != 2 or m.ndim < 2:
        raise ShapeError(f"rot90: needs two axes of an array of at least 2 dimensions{where}")
    first, second = (normalize_axes("rot90", a, m.ndim, where)[0] for a in axes)
    if first == second:
        raise ShapeError(f"rot90: the axes must differ, not {axes}{where}")
    k = operator.index(k) % 4
    if k == 0:
        return m
    if k == 2:
        return flip(b, flip(b, m, first, where=where), second, where=where)
    perm = list(range(m.ndim))
    perm[first], perm[second] = perm[second], perm[first]
    if k == 1:
        return b.transpose(flip(b, m, second, where=where), tuple(perm), where)
    return flip(b, b.transpose(m, tuple(perm), where), second, where=where)


def ravel(b: Builder, a: Node, order: str = "C", *, where: str = "") -> Node:
    """``np.ravel(a)`` / ``a.flatten()``: the elements as a vector (C order)."""
    if order != "C":
        raise ShapeError(f"ravel: only order='C' is supported{where}")
    return b.reshape(a, (-1,), where)


def squeeze(b: Builder, a: Node, axis: int | tuple[int, ...] | None = None, *,
            where: str = "") -> Node:
    """``np.squeeze(a, axis)``: axes of size 1 removed (None: every such axis)."""
    ones = [i for i, d in enumerate(a.shape) if isinstance(d, int) and d == 1]
    axes = ones if axis is None else list(normalize_axes("squeeze", axis, a.ndim, where))
    if any(i not in ones for i in axes):
        raise ShapeError(f"squeeze: cannot remove an axis of shape {format_shape(a.shape)} "
                         f"that is not 1{where}")
    return b.reshape(a, tuple(d for i, d in enumerate(a.shape) if i not in axes), where)


def expand_dims(b: Builder, a: Node, axis: int | tuple[int, ...], *, where: str = "") -> Node:
    """``np.expand_dims(a, axis)``: size-1 axes inserted at ``axis`` (positions in the
    result)."""
    ndim = a.ndim + len(_ints(axis))
    return b.expand(a, normalize_axes("expand_dims", axis, ndim, where))


def moveaxis(b: Builder, a: Node, source: int | tuple[int, ...],
             destination: int | tuple[int, ...], *, where: str = "") -> Node:
    """``np.moveaxis(a, source, destination)``: a transpose."""
    sources, destinations = _ints(source), _ints(destination)
    if len(sources) != len(destinations):
        raise ShapeError(f"moveaxis: source and destination need as many axes{where}")
    src = [normalize_axes("moveaxis", s, a.ndim, where)[0] for s in sources]
    dst = [normalize_axes("moveaxis", d, a.ndim, where)[0] for d in destinations]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ShapeError(f"moveaxis: repeated axis in {source} or {destination}{where}")
    order = [i for i in range(a.ndim) if i not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return b.transpose(a, tuple(order), where)


def swapaxes(b: Builder, a: Node, axis1: int, axis2: int, *, where: str = "") -> Node:
    """``np.swapaxes(a, axis1, axis2)``: a transpose."""
    i, j = (normalize_axes("swapaxes", x, a.ndim, where)[0] for x in (axis1, axis2))
    perm = list(range(a.ndim))
    perm[i], perm[j] = perm[j], perm[i]
    return b.transpose(a, tuple(perm), where)


def broadcast_to(b: Builder, array: Node, shape: int | tuple[int, ...], *,
                 where: str = "") -> Node:
    """``np.broadcast_to(array, shape)``: a read-only view; its adjoint sums back."""
    target = _ints(shape)
    try:
        return b.broadcast(array, target)
    except ShapeError as exc:
        raise ShapeError(f"broadcast_to: cannot broadcast {format_shape(array.shape)} to "
                         f"{format_shape(target)}{where}") from exc


def tile(b: Builder, A: Node, reps: int | tuple[int, ...], *, where: str = "") -> Node:
    """``np.tile(A, reps)``: ``A`` repeated as a whole ``reps[i]`` times along axis ``i``."""
    reps = _ints(reps)
    if any(r < 0 for r in reps):
        raise ShapeError(f"tile: negative repetitions {reps}{where}")
    ndim = max(len(reps), A.ndim)
    reps = (1,) * (ndim - len(reps)) + reps
    pad = ndim - A.ndim
    dims = (1,) * pad + A.shape
    new = [j for i in range(ndim) for j in ((2 * i, 2 * i + 1) if i < pad else (2 * i,))]
    spread = b.expand(A, tuple(new))  # (1, d0, 1, d1, ...)
    shape = tuple(x for r, d in zip(reps, dims, strict=True) for x in (r, d))
    return b.reshape(b.broadcast(spread, shape),
                     tuple(r * d for r, d in zip(reps, dims, strict=True)), where)


_A = {"a": Param.ARRAY}
_M = {"m": Param.ARRAY}

SPELLINGS = (
    Spelling("roll", roll, "roll(a, shift, axis=None)", _A, numpy=(np.roll,)),
    Spelling("triu", triu, "triu(m, k=0)", _M, numpy=(np.triu,)),
    Spelling("tril", tril, "tril(m, k=0)", _M, numpy=(np.tril,)),
    Spelling("fliplr", fliplr, "fliplr(m)", _M, numpy=(np.fliplr,)),
    Spelling("flipud", flipud, "flipud(m)", _M, numpy=(np.flipud,)),
    Spelling("rot90", rot90, "rot90(m, k=1, axes=(0, 1))", _M, numpy=(np.rot90,)),
    Spelling("ravel", ravel, "ravel(a)", _A, numpy=(np.ravel,), methods=("ravel",)),
    Spelling("flatten", ravel, "flatten(a)", _A, methods=("flatten",)),
    Spelling("squeeze", squeeze, "squeeze(a, axis=None)", _A, numpy=(np.squeeze,),
             methods=("squeeze",)),
    Spelling("expand_dims", expand_dims, "expand_dims(a, axis)", _A, numpy=(np.expand_dims,)),
    Spelling("moveaxis", moveaxis, "moveaxis(a, source, destination)", _A,
             numpy=(np.moveaxis,)),
    Spelling("swapaxes", swapaxes, "swapaxes(a, axis1, axis2)", _A, numpy=(np.swapaxes,),
             methods=("swapaxes",)),
    Spelling("broadcast_to", broadcast_to, "broadcast_to(array, shape)", {"array": Param.ARRAY},
             numpy=(np.broadcast_to,)),
    Spelling("tile", tile, "tile(A, reps)", {"A": Param.ARRAY}, numpy=(np.tile,)),
)

__all__ = [
    "OPS", "SPELLINGS", "broadcast_to", "expand_dims", "fliplr", "flipud", "moveaxis", "ravel",
    "roll", "rot90", "squeeze", "swapaxes", "tile", "tril", "triu",
]
