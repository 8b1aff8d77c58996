"""Gathers: indexing by constant integer arrays, lists and boolean masks, and ``np.take``.

* ``gather(a, idx, axis)``: ``np.take(a, idx, axis)`` with ``idx`` a constant array of ints
  (any shape; normalised to ``0 <= i < n``, known at trace time, kept in the node's attributes as
  a nested tuple). Its adjoint scatters ``G`` back with additions (``scatter_add``), its tangent
  is the gather of the operand's tangent.
* ``scatter_add(g, idx)``: zeros with the rows of ``g`` added at ``idx`` along the first axis
  (``_np.add.at``; ``_np.bincount`` for a vector; a plain assignment ``buf[[...]] = g`` when the
  indices are unique). Its adjoint is the gather of ``G``.

Every NumPy advanced index with constant index arrays becomes a basic index (the slices) and
one gather: several index arrays (and the ints among them, which NumPy then broadcasts with the
arrays) are raveled into one flat index over their merged axes, after moving them to the front
when they are not adjacent, which is exactly NumPy's rule for where the broadcast axes go. A
boolean mask is its ``np.nonzero`` (the result shape is known when tracing).

Up to :data:`LITERAL_INDICES` indices are written into the generated source as literals (and
evenly spaced ones become a slice, unique rows an assignment). A traced function's index with
more entries is a *bound constant* (:mod:`symdiff.constants`, kind ``"index"`` or ``"mask"``):
the module takes its flat int64 positions as a parameter (``_np.take(x, _c1, axis=0)``,
``_np.bincount(_c1, ...)``, ``_np.add.at(buf, _c1, ...)``), so it is cached by the index's shape,
not its content, and ``g.bind(idx=new_idx)`` rebinds it. The string language writes literals
only (at most :data:`MAX_INDICES`).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...engine.texnames import latex_name
from ...errors import ShapeError, UnsupportedError
from ..codetext import dim_code, shape_code
from ..ir import Node, arg_symbol
from ..oprow import OpRow, Param, Spelling, call_latex
from ..ops import Builder
from ..shapes import Dim, broadcast, normalize_axes

#: The most indices one gather writes into the generated source (the string language's limit).
MAX_INDICES = 4096
#: A traced index with more entries than this is a bound constant, not literals in the source.
LITERAL_INDICES = 64
_SHOWN = 8  # indices shown in formulas before "..."


# -- reading the user's indices ----------------------------------------------------------------
def is_index_array(item: object) -> bool:
    """Whether ``item`` of an index is an array index (a list or an array with axes)."""
    return isinstance(item, list) or (isinstance(item, np.ndarray) and item.ndim > 0)


def wants_gather(key: object) -> bool:
    """Whether the index ``key`` (of ``x[key]``) has an integer-array, list or mask item."""
    return any(is_index_array(item) for item in (key if isinstance(key, tuple) else (key,)))


def _int_array(value: object, what: str) -> np.ndarray:
    try:
        array = np.asarray(value)
    except Exception as exc:  # a traced array in a list: it has no value
        raise UnsupportedError(f"{what}: indices must be constant ints ({exc})") from None
    if array.dtype == bool and not array.ndim:
        raise UnsupportedError(f"{what}: a boolean scalar (True/False) is not an index here")
    if array.dtype == bool:
        return array
    if array.dtype.kind not in "iu":
        raise UnsupportedError(f"{what}: index arrays must hold constant ints or booleans, "
                               f"not {array.dtype} (a traced array cannot be an index)")
    return array.astype(np.int64)


def _normalize(b: Builder, idx: np.ndarray, dim: Dim, axis: int, where: str) -> np.ndarray:
    """``idx`` along an axis of size ``dim``, negative indices counted from the end; an index out
    of range is a ShapeError; a named dimension must be at least the largest index + 1."""
    if idx.size and not isinstance(dim, int):
        if int(idx.min()) < 0:
            raise UnsupportedError(f"index: negative indices need a fixed size along axis "
                                   f"{axis} (it is {dim}){where}")
        b.needs[dim] = max(b.needs.get(dim, 0), int(idx.max()) + 1)
        return idx
    if idx.size and (int(idx.min()) < -dim or int(idx.max()) >= dim):  # type: ignore[operator]
        bad = int(idx.min()) if int(idx.min()) < -dim else int(idx.max())  # type: ignore[operator]
        raise ShapeError(f"index: {bad} is out of range for axis {axis} of size {dim}{where}")
    return idx % dim if isinstance(dim, int) and dim else idx


def _literal(idx: np.ndarray) -> Any:
    """``idx`` as a nested tuple of ints (hashable, and printed as a Python literal)."""
    def nest(value: Any) -> Any:
        return tuple(nest(v) for v in value) if isinstance(value, list) else int(value)
    return nest(idx.tolist())


@dataclass(frozen=True)
class BoundIndex:
    """The flat int64 positions of a gather or scatter held by the bound constant ``name``
    (``size`` of them), in a node's attributes instead of literal indices."""

    name: str
    size: int


# -- constructors ------------------------------------------------------------------------------
def gather(b: Builder, a: Node, idx: np.ndarray | BoundIndex, axis: int, where: str = "",
           given: Any = None, kind: str = "index", involved: tuple[Any, ...] = ()) -> Node:
    """``np.take(a, idx, axis)`` for normalised indices ``idx`` (an int array of any shape, or
    the positions of a bound constant). A traced index of more than :data:`LITERAL_INDICES`
    entries becomes a bound constant (``b.bind_index``, set by the tracer), labelled by the
    user's array ``given`` (an index array or, ``kind="mask"``, a boolean mask; None when the
    index combines the ``involved`` arrays)."""
    if isinstance(idx, BoundIndex):
        shape = (*a.shape[:axis], idx.size, *a.shape[axis + 1:])
        return (b.fill(a.attrs[0], shape) if a.op == "fill"
                else b.node("gather", (a,), (axis, idx), shape))
    if idx.size > LITERAL_INDICES and b.bind_index is not None:
        size = a.shape[axis] if isinstance(a.shape[axis], int) else 0
        name = b.bind_index(idx.reshape(-1), given, kind, size, involved)
        flat = gather(b, a, BoundIndex(name, idx.size), axis, where)
        if idx.ndim == 1:
            return flat
        return b.reshape(flat, (*a.shape[:axis], *idx.shape, *a.shape[axis + 1:]), where)
    if idx.size > MAX_INDICES:
        raise UnsupportedError(
            f"index: {idx.size} indices in one operation is more than {MAX_INDICES}, which is a "
            f"current limit (indices are written into the generated code){where}")
    if idx.size == 0:
        raise UnsupportedError(f"index: an empty index array selects nothing{where}")
    shape = (*a.shape[:axis], *idx.shape, *a.shape[axis + 1:])
    if a.op == "fill":
        return b.fill(a.attrs[0], shape)
    step = int(idx[1] - idx[0]) if idx.ndim == 1 and idx.size > 1 else 0
    if step and isinstance(a.shape[axis], int) and (np.diff(idx) == step).all():
        stop = int(idx[0]) + step * idx.size  # evenly spaced: a slice (a view, basic indexing)
        part = (int(idx[0]), None if stop < 0 else stop, None if step == 1 else step)
        return b.index(a, (*[(None, None, None)] * axis, part), where)
    return b.node("gather", (a,), (axis, _literal(idx)), shape)


def scatter_add(b: Builder, g: Node, flat: tuple[int, ...] | BoundIndex,
                shape: tuple[Dim, ...]) -> Node:
    """Zeros of ``shape`` with ``g[k]`` added at row ``flat[k]`` (repeated rows add up; the rows
    of a bound constant may repeat once rebound, so they are always added)."""
    if g.op == "fill" and g.attrs[0] == 0:
        return b.fill(0, shape)
    unique = not isinstance(flat, BoundIndex) and len(set(flat)) == len(flat)
    return b.node("scatter_add", (g,), (flat, unique), shape)


def take(b: Builder, a: Node, indices: Any, axis: int | None = None, out: Any = None,
         mode: str = "raise", *, where: str = "") -> Node:
    """``np.take(a, indices, axis)`` with constant ``indices`` (None: of the flattened array)."""
    if out is not None or mode != "raise":
        raise UnsupportedError(f"take: out= and mode= are not supported{where}")
    if isinstance(indices, BoundIndex):  # a formula's take(x, _c0): a bound constant's positions
        if axis is None:
            a, axis = b.reshape(a, (-1,), where), 0
        (axis,) = normalize_axes("take", axis, a.ndim, where)
        return gather(b, a, indices, axis, where)
    idx = _int_array(indices, "take")
    if idx.dtype == bool:
        raise UnsupportedError(f"take: indices must be ints, not booleans (for a mask, "
                               f"index with it: x[mask]){where}")
    if axis is None:
        a, axis = b.reshape(a, (-1,), where), 0
    (axis,) = normalize_axes("take", axis, a.ndim, where)
    given = indices if isinstance(indices, np.ndarray) else None
    return gather(b, a, _normalize(b, idx, a.shape[axis], axis, where), axis, where, given)


def fancy_index(b: Builder, a: Node, key: Any, where: str = "") -> Node:
    """``a[key]`` for an index with integer arrays, lists or boolean masks (NumPy's advanced
    indexing; slices, ints and one ``...`` may be mixed in; ``None`` may not)."""
    given = list(key) if isinstance(key, tuple) else [key]
    involved = tuple(item for item in given if isinstance(item, np.ndarray) and item.ndim)
    picked = [item for item in given if not isinstance(item, slice) and item is not Ellipsis]
    alone = picked[0] if len(picked) == 1 and len(involved) == 1 else None  # x[idx], x[:, mask]
    arrays = [_int_array(item, "index") if is_index_array(item) else None for item in given]
    counts = [_axes_taken(item, array) for item, array in zip(given, arrays, strict=True)]
    items: list[Any] = []
    for k, (item, array) in enumerate(zip(given, arrays, strict=True)):
        if array is None or array.dtype != bool:
            items.append(item if array is None else array)
            continue
        after = any(i is Ellipsis for i in given[:k])  # then count its axes from the end
        at = a.ndim - sum(counts[k:]) if after else sum(counts[:k])
        covered = a.shape[at:at + array.ndim]
        if len(covered) != array.ndim or any(isinstance(d, int) and d != n for d, n in
                                             zip(covered, array.shape, strict=True)):
            raise ShapeError(f"index: a boolean mask of shape {array.shape} does not match "
                             f"the axes {covered} it indexes{where}")
        items.extend(np.nonzero(array))
    if any(item is None for item in items):
        raise UnsupportedError(f"index: None (np.newaxis) together with an index array is not "
                               f"supported; add the axis in a second index: x[idx][:, None]{where}")
    if sum(item is Ellipsis for item in items) > 1:
        raise UnsupportedError(f"an index can have only one '...'{where}")
    if any(item is Ellipsis for item in items):
        at = next(i for i, item in enumerate(items) if item is Ellipsis)
        items[at:at + 1] = [slice(None)] * (a.ndim - len(items) + 1)
    if len(items) > a.ndim:
        raise ShapeError(f"index: {len(items)} indices for an array of {a.ndim} dimensions{where}")
    items += [slice(None)] * (a.ndim - len(items))
    basic = tuple(_slice(item) if isinstance(item, slice) else (None, None, None)
                  for item in items)
    a = b.index(a, basic, where)
    positions = [i for i, item in enumerate(items) if not isinstance(item, slice)]
    arrays = [_normalize(b, _int_array(items[i], "index"), a.shape[i], i, where)
              for i in positions]
    try:
        arrays = list(np.broadcast_arrays(*arrays))
    except ValueError:
        shapes = " and ".join(str(array.shape) for array in arrays)
        raise ShapeError(f"index: index arrays of shapes {shapes} cannot be broadcast "
                         f"together{where}") from None
    if positions != list(range(positions[0], positions[-1] + 1)):  # NumPy: broadcast axes first
        a = b.transpose(a, (*positions, *(i for i in range(a.ndim) if i not in positions)))
        positions = list(range(len(positions)))
    first, dims = positions[0], a.shape[positions[0]:positions[-1] + 1]
    if len(dims) > 1 and not all(isinstance(d, int) for d in dims[1:]):
        raise UnsupportedError(f"index: several index arrays need fixed sizes on the axes they "
                               f"index after the first (they are {dims}){where}")
    flat = arrays[0]
    for array, dim in zip(arrays[1:], dims[1:], strict=True):
        flat = flat * dim + array
    merged = math.prod(dims[1:], start=dims[0])
    a = b.reshape(a, (*a.shape[:first], merged, *a.shape[first + len(dims):]), where)
    kind = "mask" if alone is not None and alone.dtype == bool else "index"
    return gather(b, a, flat, first, where, alone, kind, involved)


def select(b: Builder, mask: np.ndarray, x: Node, y: Node, where: str = "") -> Node:
    """``np.where(mask, x, y)`` for a constant boolean ``mask``: the entries of ``x`` where it
    holds and of ``y`` elsewhere, each gathered and placed (exact: no ``mask * x`` product, so a
    NaN or inf in the branch not taken stays out)."""
    shape = broadcast("where", mask.shape, x.shape, y.shape, where=where)
    if not all(isinstance(d, int) for d in shape):
        raise UnsupportedError(f"where: a constant condition needs fixed sizes (the result has "
                               f"shape {shape}){where}")
    chosen = np.broadcast_to(mask, shape).reshape(-1)
    parts = []
    for value, rows in ((x, np.flatnonzero(chosen)), (y, np.flatnonzero(~chosen))):
        if rows.size:
            flat = b.reshape(b.broadcast(value, shape), (-1,), where)
            picked = gather(b, flat, rows, 0, where)
            parts.append(scatter_add(b, picked, tuple(int(r) for r in rows), (chosen.size,)))
    total = parts[0] if len(parts) == 1 else b.map(arg_symbol(0) + arg_symbol(1), parts)
    return b.reshape(total, shape, where)


def _axes_taken(item: object, array: np.ndarray | None) -> int:
    """How many axes of the indexed array an item of the index takes."""
    if item is None or item is Ellipsis:
        return 0
    return array.ndim if array is not None and array.dtype == bool else 1


def _slice(item: slice) -> tuple[int | None, int | None, int | None]:
    parts = tuple(None if p is None else operator.index(p)
                  for p in (item.start, item.stop, item.step))
    if parts[2] == 0:
        raise UnsupportedError("slice step cannot be zero")
    return parts  # type: ignore[return-value]


# -- rules -------------------------------------------------------------------------------------
def _gather_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    """Move the index axes of ``G`` to the front, flatten them, scatter-add the rows, move the
    gathered axis back."""
    (a,), (axis, indices) = node.args, node.attrs
    bound = isinstance(indices, BoundIndex)
    idx = None if bound else np.asarray(indices)
    r = 1 if idx is None else idx.ndim
    count = indices.size if bound else idx.size  # type: ignore[union-attr]
    front = (*range(axis, axis + r), *range(axis), *range(axis + r, g.ndim))
    rest = (*a.shape[:axis], *a.shape[axis + 1:])
    rows = b.reshape(b.transpose(g, front), (count, *rest))
    flat = indices if bound else tuple(int(i) for i in idx.ravel())  # type: ignore[union-attr]
    buffer = scatter_add(b, rows, flat, (a.shape[axis], *rest))
    back = (*range(1, axis + 1), 0, *range(axis + 1, a.ndim))
    return (b.transpose(buffer, back),)


def _gather_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
                ) -> Node | None:
    axis, indices = node.attrs
    return gather(b, tangents[0], _positions(indices), axis)  # type: ignore[arg-type]


def _positions(indices: Any) -> np.ndarray | BoundIndex:
    """A node's indices as :func:`gather` takes them (literals as an array)."""
    return indices if isinstance(indices, BoundIndex) else np.asarray(indices)


def _scatter_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    return (gather(b, g, _positions(node.attrs[0]), 0),)


def _scatter_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
                 ) -> Node | None:
    t = tangents[0]
    return scatter_add(b, t, node.attrs[0], (*node.shape, t.shape[-1]))  # type: ignore[union-attr]


def _emit_gather(node: Node, c: list[str], target: str) -> list[tuple[str, str]]:
    axis, indices = node.attrs
    listed = indices.name if isinstance(indices, BoundIndex) else repr(indices)
    return [(target, f"_np.take({c[0]}, {listed}, axis={axis})")]


def _emit_scatter(node: Node, c: list[str], target: str) -> list[tuple[str, str]]:
    """``buf[[...]] = g`` (unique rows), ``_np.bincount`` (a vector), else ``_np.add.at``."""
    flat, unique = node.attrs
    bound = isinstance(flat, BoundIndex)
    listed = flat.name if bound else f"[{', '.join(map(str, flat))}]"
    zeros = (target, f"_np.zeros({shape_code(node.shape)}, dtype=_dtype)")
    if unique:
        return [zeros, (f"{target}[{listed}]", c[0])]
    if node.ndim == 1:
        positions = flat.name if bound else repr(flat)
        counts = f"_np.bincount({positions}, weights={c[0]}, minlength={dim_code(node.shape[0])})"
        return [(target, f"_np.asarray({counts}, dtype=_dtype)")]
    return [zeros, ("", f"_np.add.at({target}, {listed}, {c[0]})")]


def _shown(indices: Any) -> str:
    if isinstance(indices, BoundIndex):
        return indices.name
    flat = np.asarray(indices).ravel().tolist()
    more = f", ... ({len(flat)} indices)" if len(flat) > _SHOWN else ""
    shape = np.shape(indices)
    body = ", ".join(map(str, flat[:_SHOWN])) + more
    return f"[{body}]" if len(shape) <= 1 else f"[{body}] of shape {shape}"


def _shown_latex(indices: Any) -> str:
    if isinstance(indices, BoundIndex):
        return latex_name(indices.name)
    return rf"\text{{{_shown(indices)}}}"


OPS = (
    OpRow(
        op="gather",
        rule="gather (scatter-add the adjoint)",
        identity="A_bar = zeros, then A_bar[idx] += G along the axis (repeated indices add up)",
        vjp=_gather_vjp,
        jvp=_gather_jvp,
        emit=_emit_gather,
        text=lambda n, a, r: f"take({r[0]}, {_shown(n.attrs[1])}, axis={n.attrs[0]})",
        latex=lambda n, a, r: call_latex("take", r[0], _shown_latex(n.attrs[1]),
                                          rf"\text{{axis}}={n.attrs[0]}"),
        numpy_names=frozenset({"take"}),
    ),
    OpRow(
        op="scatter_add",
        rule="scatter-add (gather the adjoint)",
        identity="G_bar = take(G, idx, axis=0)",
        vjp=_scatter_vjp,
        jvp=_scatter_jvp,
        emit=_emit_scatter,
        text=lambda n, a, r: f"scatter_add({r[0]}, {_shown(n.attrs[0])}, n={n.shape[0]})",
        latex=lambda n, a, r: call_latex("scatter\\_add", r[0], _shown_latex(n.attrs[0])),
        numpy_names=frozenset({"bincount", "add.at"}),  # and zeros, asarray (structural)
    ),
)

SPELLINGS = (
    Spelling("take", take, "take(a, indices, axis=None)", {"a": Param.ARRAY},
             numpy=(np.take,), methods=("take",)),
)

__all__ = ["LITERAL_INDICES", "MAX_INDICES", "OPS", "SPELLINGS", "BoundIndex", "fancy_index",
           "gather", "is_index_array", "scatter_add", "select", "take", "wants_gather"]
