"""Basic indexing of a structured tangent (:mod:`symdiff.sparse.terms`): ``T[items]`` over its
row axes, for each term the part of its grid whose rows the index keeps.

A row axis that moves along one grid axis with step 1 is cut symbolically (``x[1:]`` of a
diagonal of ``n`` entries keeps ``n - 1`` of them); other steps, strides and integer indices
are worked out when the offsets are numbers. A row axis that is constant is kept or dropped
whole.
"""

from __future__ import annotations

import math
from dataclasses import replace

from ..tensor.ops import Builder
from ..tensor.shapes import Shape
from .terms import ONE, ZERO, NotStructured, Size, Sizes, Term, fix, restrict, size, view


def sliced(b: Builder, term: Term, items: tuple, rows: Shape, sizes: Sizes) -> list[Term]:
    """The term's part in ``T[items]`` (a list of one term, or none)."""
    axis = 0  # the term's row axis the next item applies to
    for k, item in enumerate(items):
        extent = size(rows[k])
        if isinstance(item, int):
            found = _pick(b, term, axis, size(item if item >= 0 else extent + item), sizes)
        else:
            found = _sliced(b, term, axis, item, extent, sizes)
            axis += 1
        if found is None:
            return []
        term = found
    return [term]


def _without_row(term: Term, axis: int) -> Term:
    return replace(term, row0=term.row0[:axis] + term.row0[axis + 1:],
                   row_steps=term.row_steps[:axis] + term.row_steps[axis + 1:])


def _pick(b: Builder, term: Term, axis: int, position: Size, sizes: Sizes) -> Term | None:
    """The entries of row ``position`` of row ``axis`` (that axis removed), or None."""
    single = term.single(axis)
    if single is None:
        same = sizes.decide(term.row0[axis], position, "an index") and sizes.decide(
            position, term.row0[axis], "an index")
        return _without_row(term, axis) if same else None
    local, step = single
    offset = size(position - term.row0[axis])
    if step != 1:
        if not (offset.is_number and step.is_number):
            raise NotStructured("an index of a strided row axis")
        if offset % step:
            return None
        offset = size(offset / step)
    inside = sizes.decide(offset, ZERO, "an index") and sizes.decide(
        term.counts[local], offset + 1, "an index")
    return _without_row(fix(b, term, local, offset), axis) if inside else None


def _sliced(b: Builder, term: Term, axis: int, item: tuple, extent: Size,
            sizes: Sizes) -> Term | None:
    """The entries in the slice ``item`` of row ``axis``, that axis counted in the slice."""
    start, stop, step = item
    stride = step or 1
    if stride < 0:  # (on an axis of a fixed size): the same slice of the axis read backwards
        if not extent.is_number:
            raise NotStructured("a reversed slice of a symbolic axis")
        start, stop, _ = slice(start, stop, stride).indices(int(extent))
        mirrored = _moved(term, axis, ZERO, -1)  # row -i: then a slice with a positive step
        return _window(b, mirrored, axis, (-start, -stop, -stride), extent, sizes,
                       mirror=True)
    return _window(b, term, axis, item, extent, sizes)


def _window(b: Builder, term: Term, axis: int, item: tuple, extent: Size, sizes: Sizes,
            mirror: bool = False) -> Term | None:
    """The slice ``item`` (a positive step) of row ``axis``; ``mirror``: the rows are negated
    (``start``, ``stop`` the negated bounds, which a plain slice would read from the end)."""
    start, stop, step = item
    stride = step or 1
    if mirror:
        first, end = size(start), size(stop)
    else:
        first = ZERO if start is None else size(start if start >= 0 else extent + start)
        end = extent if stop is None else size(stop if stop >= 0 else extent + stop)
    single = term.single(axis)
    if single is None:
        row = term.row0[axis]
        inside = sizes.decide(row, first, "a slice") and sizes.decide(end, row + 1, "a slice")
        if not inside:
            return None
        offset = size(row - first)
        if stride != 1:
            if not offset.is_number:
                raise NotStructured("a strided slice of a row at a symbolic position")
            if offset % stride:
                return None
        return _moved(term, axis, first, stride)
    local, grid_step = single
    if grid_step == 1 and stride == 1:
        row = term.row0[axis]
        lo = sizes.maximum(ZERO, first - row, "a slice")
        hi = sizes.minimum(term.counts[local], end - row, "a slice")
        if sizes.at_least(lo, hi):
            return None  # nothing left (where it depends on the sizes, kept: maybe empty)
        return _moved(restrict(b, term, local, lo, hi), axis, first, ONE)
    if grid_step == -1 and stride == 1:  # a reversed axis (flip): rows row - t
        row = term.row0[axis]
        lo = sizes.maximum(ZERO, row - end + 1, "a slice")
        hi = sizes.minimum(term.counts[local], row - first + 1, "a slice")
        if sizes.at_least(lo, hi):
            return None
        return _moved(restrict(b, term, local, lo, hi), axis, first, ONE)
    return _strided(b, term, axis, local, grid_step, first, end, stride)


def _moved(term: Term, axis: int, first: Size, stride: int) -> Term:
    """Row ``axis`` counted from ``first`` in steps of ``stride``."""
    row0 = list(term.row0)
    steps = list(term.row_steps)
    row0[axis] = size((row0[axis] - first) / stride)
    steps[axis] = tuple(size(s / stride) for s in steps[axis])
    return replace(term, row0=tuple(row0), row_steps=tuple(steps))


def _strided(b: Builder, term: Term, axis: int, local: int, grid_step: Size, first: Size,
             end: Size, stride: int) -> Term | None:
    """A slice with a step, or of a row axis with a step, all offsets numbers: the grid
    indices ``t`` whose row ``row0 + grid_step*t`` falls on the slice, an arithmetic
    progression ``t1 + period*u``."""
    numbers = (term.row0[axis], grid_step, first, end, term.counts[local])
    if not all(size(v).is_number for v in numbers):
        raise NotStructured("a strided slice with symbolic bounds")
    row, beta, lo, hi, count = (int(size(v)) for v in numbers)
    t0 = next((t for t in range(stride) if (row + beta * t - lo) % stride == 0), None)
    if t0 is None:
        return None
    period = stride // math.gcd(beta, stride)
    # the grid range whose rows lie in [lo, hi)
    if beta > 0:
        low, high = -(-(lo - row) // beta), -(-(hi - row) // beta)
    else:
        low, high = (row - hi) // -beta + 1, (row - lo) // -beta + 1
    low, high = max(low, 0), min(high, count)
    t1 = low + (t0 - low) % period
    kept = max(0, -(-(high - t1) // period))
    if kept == 0:
        return None
    term = _resampled(b, term, local, t1, period, kept)
    return _moved(term, axis, size(lo), stride)


def _resampled(b: Builder, term: Term, local: int, start: int, period: int, kept: int) -> Term:
    """The term on the grid indices ``start + period*u`` of ``local``, ``0 <= u < kept``."""
    values = term.values
    if size(values.shape[local]) != 1:
        items = ((None, None, None),) * local + ((start or None, start + period * (kept - 1) + 1,
                                                  None if period == 1 else period),)
        shape = (*values.shape[:local], kept, *values.shape[local + 1:])
        values = view(b, values, items, shape)
    counts = list(term.counts)
    counts[local] = size(kept)
    row0 = tuple(size(a + s[local] * start) for a, s in zip(term.row0, term.row_steps,
                                                            strict=True))
    steps = tuple(tuple(size(v * period) if i == local else v for i, v in enumerate(s))
                  for s in term.row_steps)
    cols = tuple(size(v * period) if i == local else v for i, v in enumerate(term.col_steps))
    return Term(tuple(counts), row0, steps, size(term.col0 + term.col_steps[local] * start),
                cols, values)
