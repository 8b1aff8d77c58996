"""Building arrays from traced values: ``concatenate`` (``concat``), ``stack``, ``hstack``,
``vstack``, ``dstack``, ``column_stack``, ``append`` and ``atleast_1d``/``atleast_2d``.

* ``concatenate(arrays, axis)``: one node; ``A_i_bar = G[..., start_i:stop_i]`` (the slice of
  the adjoint each operand filled), its tangent the concatenation of the operands' tangents.
* ``stack(arrays, axis)``: one node; ``A_i_bar = G[..., i]`` along the new axis.
* ``hstack``/``vstack``/``column_stack``: NumPy's promotions (``atleast_1d``/``atleast_2d``,
  columns) then a ``concatenate``, so they need no rules of their own.

NumPy's ``np.array([x, 2 * x])`` cannot be traced: ``np.array`` is not dispatched to traced
values (``__array_function__`` does not cover it, unlike ``np.stack``), so a list of traced
arrays reaches ``__array__``, whose error points to ``np.stack``. JAX and autograd solve this with
their own ``numpy`` modules (``jnp.array``); with plain NumPy, write ``np.stack([x, 2 * x])``.

Named dimensions: operands may have named dimensions on the other axes (they must agree);
along the concatenation axis every size must be a number, since the adjoint is split there by
literal slices.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import sympy as sp

from ...errors import ShapeError
from ..ir import Node
from ..oprow import OpRow, Param, Spelling
from ..ops import Builder
from ..shapes import format_shape, normalize_axes, same_dim


def _call_latex(name: str, parts: Sequence[str], axis: int) -> str:
    return (rf"\operatorname{{{name}}}\left({', '.join(parts)}, "
            rf"\text{{axis}}={axis}\right)")


# -- constructors ------------------------------------------------------------------------------
def concatenate(b: Builder, arrays: tuple[Node, ...], axis: int | None = 0, *,
                where: str = "") -> Node:
    """``np.concatenate(arrays, axis)`` (None: of the flattened arrays)."""
    if axis is None:
        arrays = tuple(b.reshape(a, (-1,), where) for a in arrays)
        axis = 0
    first = arrays[0]
    if any(a.ndim == 0 for a in arrays):
        raise ShapeError(f"concatenate: zero-dimensional arrays cannot be concatenated (use "
                         f"stack){where}")
    if any(a.ndim != first.ndim for a in arrays):
        raise ShapeError(f"concatenate: all arrays need the same number of dimensions, not "
                         f"{', '.join(format_shape(a.shape) for a in arrays)}{where}")
    (axis,) = normalize_axes("concatenate", axis, first.ndim, where)
    for a in arrays:
        if any(i != axis and not same_dim(d, e) for i, (d, e) in
               enumerate(zip(a.shape, first.shape, strict=True))):
            raise ShapeError(f"concatenate: shapes {format_shape(first.shape)} and "
                             f"{format_shape(a.shape)} differ off the axis {axis}{where}")
        if not isinstance(a.shape[axis], int):
            raise ShapeError(f"concatenate: the named dimension {a.shape[axis]} cannot be along "
                             f"the concatenation axis {axis} (give it a number in shapes=)"
                             f"{where}")
    if len(arrays) == 1:
        return first
    total = sum(a.shape[axis] for a in arrays)
    shape = (*first.shape[:axis], total, *first.shape[axis + 1:])
    return b.node("concatenate", arrays, (axis,), shape)


def _concatenate_index(b: Builder, a: Node, index: tuple) -> Node | None:
    """A slice of a concatenation that lies within one operand: a slice of that operand (the
    operand itself when it covers it), so the concatenation need not be formed."""
    (axis,) = a.attrs
    if len(index) <= axis or any(item != (None, None, None) for item in index[:axis]):
        return None
    item = index[axis]
    if isinstance(item, int) or item[2] not in (None, 1):
        return None
    start, stop, _ = slice(*item).indices(a.shape[axis])
    offset = 0
    for part in a.args:
        length = part.shape[axis]
        if offset <= start and stop <= offset + length and start < stop:
            inner = (start - offset, stop - offset, None)
            if inner == (0, length, None):
                inner = (None, None, None)
            return b.index(part, (*index[:axis], inner, *index[axis + 1:]))
        offset += length
    return None


def stack(b: Builder, arrays: tuple[Node, ...], axis: int = 0, *, where: str = "") -> Node:
    """``np.stack(arrays, axis)``: same-shaped arrays along a new axis."""
    first = arrays[0]
    for a in arrays[1:]:
        if a.ndim != first.ndim or not all(
                same_dim(d, e) for d, e in zip(a.shape, first.shape, strict=True)):
            raise ShapeError(f"stack: all arrays need the same shape, not "
                             f"{format_shape(first.shape)} and {format_shape(a.shape)}{where}")
    (axis,) = normalize_axes("stack", axis, first.ndim + 1, where)
    if len(arrays) == 1:
        return b.expand(first, (axis,))
    shape = (*first.shape[:axis], len(arrays), *first.shape[axis:])
    return b.node("stacked", arrays, (axis,), shape)


def _atleast(b: Builder, a: Node, ndim: int, where: str) -> Node:
    """``np.atleast_1d`` / ``np.atleast_2d`` (a vector becomes a row)."""
    return a if a.ndim >= ndim else b.expand(a, tuple(range(ndim - a.ndim)))


def hstack(b: Builder, tup: tuple[Node, ...], *, where: str = "") -> Node:
    """``np.hstack(tup)``: along the first axis for vectors, else the second."""
    arrays = tuple(_atleast(b, a, 1, where) for a in tup)
    return concatenate(b, arrays, 0 if arrays[0].ndim == 1 else 1, where=where)


def vstack(b: Builder, tup: tuple[Node, ...], *, where: str = "") -> Node:
    """``np.vstack(tup)``: rows (vectors become rows) along the first axis."""
    return concatenate(b, tuple(_atleast(b, a, 2, where) for a in tup), 0, where=where)


def dstack(b: Builder, tup: tuple[Node, ...], *, where: str = "") -> Node:
    """``np.dstack(tup)``: along the third axis (``atleast_3d``: a vector ``(n,)`` becomes
    ``(1, n, 1)``, a matrix ``(m, n)`` becomes ``(m, n, 1)``)."""
    def depth(a: Node) -> Node:
        if a.ndim >= 3:
            return a
        return b.expand(a, {0: (0, 1, 2), 1: (0, 2), 2: (2,)}[a.ndim])

    return concatenate(b, tuple(depth(a) for a in tup), 2, where=where)


def column_stack(b: Builder, tup: tuple[Node, ...], *, where: str = "") -> Node:
    """``np.column_stack(tup)``: vectors as columns, along the second axis."""
    arrays = tuple(b.reshape(a, (-1, 1), where) if a.ndim < 2 else a for a in tup)
    return concatenate(b, arrays, 1, where=where)


def append(b: Builder, arr: Node, values: Node, axis: int | None = None, *,
           where: str = "") -> Node:
    """``np.append(arr, values, axis)``: both flattened and joined when ``axis`` is None."""
    return concatenate(b, (arr, values), axis, where=where)


def atleast_1d(b: Builder, a: Node, *, where: str = "") -> Node:
    """``np.atleast_1d(a)`` of one array: a scalar becomes a vector of one element."""
    return _atleast(b, a, 1, where)


def atleast_2d(b: Builder, a: Node, *, where: str = "") -> Node:
    """``np.atleast_2d(a)`` of one array: a vector becomes a row."""
    return _atleast(b, a, 2, where)


def atleast_3d(b: Builder, a: Node, *, where: str = "") -> Node:
    """``np.atleast_3d(a)`` of one array: ``(N,)`` becomes ``(1, N, 1)``, ``(M, N)`` becomes
    ``(M, N, 1)``."""
    axes = {0: (0, 1, 2), 1: (0, 2), 2: (2,)}.get(a.ndim, ())
    return b.expand(a, axes)


def split(b: Builder, a: Node, indices_or_sections: int | Sequence[int], axis: int = 0, *,
          where: str = "", even: bool = True) -> tuple[Node, ...]:
    """``np.split(a, n_or_indices, axis)``: the pieces, each a slice of ``a`` (``even``: ``n``
    must divide the axis, as ``np.split`` requires; ``np.array_split`` lets the first pieces be
    one longer)."""
    (axis,) = normalize_axes("split", axis, a.ndim, where)
    length = a.shape[axis]
    if not isinstance(length, int):
        raise ShapeError(f"split: the axis needs an integer length, not {length}{where}")
    if isinstance(indices_or_sections, int):
        n = indices_or_sections
        if n < 1 or (even and length % n):
            raise ShapeError(f"split: {n} sections do not divide an axis of length {length}"
                             f"{where}")
        size, extra = divmod(length, n)
        cuts, start = [], 0
        for i in range(n - 1):
            start += size + (i < extra)
            cuts.append(start)
    else:
        cuts = [min(max(c + length if c < 0 else c, 0), length) for c in indices_or_sections]
    bounds = list(zip([0, *cuts], [*cuts, length], strict=True))
    if any(stop <= start for start, stop in bounds):
        raise ShapeError(f"split: an empty piece at {indices_or_sections} is not supported"
                         f"{where}")
    return tuple(b.index(a, _along(axis, (start, stop, None)), where) for start, stop in bounds)


def array_split(b: Builder, a: Node, indices_or_sections: int | Sequence[int], axis: int = 0,
                *, where: str = "") -> tuple[Node, ...]:
    """``np.array_split``: as :func:`split`, sections need not divide the axis."""
    return split(b, a, indices_or_sections, axis, where=where, even=False)


# -- rules -------------------------------------------------------------------------------------
def _along(axis: int, item: int | tuple[int | None, int | None, None]) -> tuple:
    return ((None, None, None),) * axis + (item,)


def _concatenate_vjp(b: Builder, node: Node, g: Node, simplify: bool
                     ) -> tuple[Node | None, ...]:
    (axis,) = node.attrs
    out, start = [], 0
    for a in node.args:
        stop = start + a.shape[axis]
        out.append(b.index(g, _along(axis, (start, stop, None))))
        start = stop
    return tuple(out)


def _stacked_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    (axis,) = node.attrs
    return tuple(b.index(g, _along(axis, i)) for i in range(len(node.args)))


def _tangents(b: Builder, node: Node, tangents: Sequence[Node | None]) -> tuple[Node, ...] | None:
    """The operands' tangents, zeros (of the batch size) for those that have none."""
    given = [t for t in tangents if t is not None]
    if not given:
        return None
    batch = given[0].shape[-1]
    return tuple(t if t is not None else b.fill(sp.Integer(0), (*a.shape, batch))
                 for a, t in zip(node.args, tangents, strict=True))


def _concatenate_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
                     ) -> Node | None:
    ts = _tangents(b, node, tangents)
    return None if ts is None else concatenate(b, ts, node.attrs[0])


def _stacked_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
                 ) -> Node | None:
    ts = _tangents(b, node, tangents)
    return None if ts is None else stack(b, ts, node.attrs[0])


OPS = (
    OpRow(
        op="concatenate",
        rule="concatenate (slices)",
        identity="A_i_bar = G[start_i:stop_i] along the axis (the part A_i filled)",
        vjp=_concatenate_vjp,
        jvp=_concatenate_jvp,
        emit=lambda n, c, t: [(t, f"_np.concatenate(({', '.join(c)}), axis={n.attrs[0]})")],
        text=lambda n, a, r: f"concatenate([{', '.join(r)}], axis={n.attrs[0]})",
        latex=lambda n, a, r: _call_latex("concatenate", r, n.attrs[0]),
        numpy_names=frozenset({"concatenate"}),
        index=_concatenate_index,
    ),
    OpRow(
        op="stacked",
        rule="stack (slices)",
        identity="A_i_bar = G[i] along the new axis",
        vjp=_stacked_vjp,
        jvp=_stacked_jvp,
        emit=lambda n, c, t: [(t, f"_np.stack(({', '.join(c)}{',' if len(c) == 1 else ''}), "
                                  f"axis={n.attrs[0]})")],
        text=lambda n, a, r: f"stack([{', '.join(r)}], axis={n.attrs[0]})",
        latex=lambda n, a, r: _call_latex("stack", r, n.attrs[0]),
        numpy_names=frozenset({"stack"}),
    ),
)

_ARRAYS = {"arrays": Param.ARRAYS}
_TUP = {"tup": Param.ARRAYS}

SPELLINGS = (
    Spelling("concatenate", concatenate, "concatenate(arrays, axis=0)", _ARRAYS,
             numpy=(np.concatenate,)),
    Spelling("concat", concatenate, "concat(arrays, axis=0)", _ARRAYS),  # np.concat is the same
    Spelling("stack", stack, "stack(arrays, axis=0)", _ARRAYS, numpy=(np.stack,)),
    Spelling("hstack", hstack, "hstack(tup)", _TUP, numpy=(np.hstack,)),
    Spelling("vstack", vstack, "vstack(tup)", _TUP, numpy=(np.vstack,)),
    Spelling("append", append, "append(arr, values, axis=None)",
             {"arr": Param.ARRAY, "values": Param.ARRAY}, numpy=(np.append,)),
    Spelling("atleast_1d", atleast_1d, "atleast_1d(a)", {"a": Param.ARRAY},
             numpy=(np.atleast_1d,)),
    Spelling("atleast_2d", atleast_2d, "atleast_2d(a)", {"a": Param.ARRAY},
             numpy=(np.atleast_2d,)),
    Spelling("atleast_3d", atleast_3d, "atleast_3d(a)", {"a": Param.ARRAY},
             numpy=(np.atleast_3d,)),
    Spelling("", split, "split(a, indices_or_sections, axis=0)", {"a": Param.ARRAY},
             numpy=(np.split,)),
    Spelling("", array_split, "array_split(a, indices_or_sections, axis=0)", {"a": Param.ARRAY},
             numpy=(np.array_split,)),
    Spelling("dstack", dstack, "dstack(tup)", _TUP, numpy=(np.dstack,)),
    Spelling("column_stack", column_stack, "column_stack(tup)", _TUP,
             numpy=(np.column_stack,)),
)

__all__ = [
    "OPS",
    "SPELLINGS",
    "append",
    "array_split",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "column_stack",
    "concatenate",
    "dstack",
    "hstack",
    "split",
    "stack",
    "vstack",
]
