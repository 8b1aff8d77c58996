"""Sums of structured tangent terms (:mod:`symdiff.sparse.terms`): terms of one lattice added
into one, and terms that continue or contain each other joined into one grid, so that a band
stays one vector (the chained Rosenbrock Hessian's diagonal gets contributions on ``[0, n-1)``
and on ``[1, n)``: one term on ``[0, n)``, its values padded with zeros where a contribution
does not reach)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import sympy as sp

from ..tensor.ir import Node, arg_symbol
from ..tensor.ops import Builder
from ..tensor.shapes import as_dim
from .terms import ONE, ZERO, NotStructured, Size, Sizes, Term, bounds, full, size


def merged(b: Builder, terms: Sequence[Term], sizes: Sizes) -> list[Term]:
    """``terms`` with those of one lattice added into one (their values summed), and those that
    continue each other along one grid axis joined (``[0, n-1)`` and ``[1, n)`` of the same
    diagonal: one term over ``[0, n)``, values padded with zeros)."""
    groups: dict[tuple, list[Term]] = {}
    for term in terms:
        groups.setdefault(term.key(), []).append(term)
    summed = []
    for group in groups.values():
        if len(group) == 1:
            summed.append(group[0])
            continue
        total = b.map(sp.Add(*(arg_symbol(i) for i in range(len(group)))),
                      [t.values for t in group])
        summed.append(replace(group[0], values=total))
    joined = True
    while joined:
        joined = False
        for i in range(len(summed)):
            for j in range(i + 1, len(summed)):
                union = _joined(b, summed[i], summed[j], sizes)
                if union is not None:
                    summed[i] = union
                    del summed[j]
                    joined = True
                    break
            if joined:
                break
    return summed


def _joined(b: Builder, first: Term, second: Term, sizes: Sizes) -> Term | None:
    """One term for two that differ only by a shift along one grid axis and together cover a
    contiguous range of it, or one of which lies within the other, else None."""
    for outer, inner in ((first, second), (second, first)):
        aligned = _aligned(b, outer, inner)
        within = None if aligned is None else _within(b, outer, aligned, sizes)
        if within is not None:
            return within
    if (len(first.counts) != len(second.counts) or first.row_steps != second.row_steps
            or first.col_steps != second.col_steps):
        return None
    differing = [k for k, (p, q) in enumerate(zip(first.counts, second.counts, strict=True))
                 if p != q]
    candidates = differing if differing else range(len(first.counts))
    for local in candidates:
        if any(p != q for k, (p, q) in enumerate(zip(first.counts, second.counts, strict=True))
               if k != local):
            continue
        shift = _shift(first, second, local)
        if shift is None:
            continue
        ahead = sizes.at_least(shift, 0)
        if ahead is None:
            continue
        low, high = (first, second) if ahead else (second, first)
        shift = shift if ahead else size(-shift)
        if sizes.at_least(low.counts[local], shift) is False or not sizes.eventually(
                low.counts[local], shift):
            continue  # a gap between them
        try:
            union = size(low.counts[local] if sizes.eventually(
                low.counts[local], shift + high.counts[local]) else shift + high.counts[local])
            parts = [_padded(b, t, local, offset, union)
                     for t, offset in ((low, ZERO), (high, shift))]
        except NotStructured:
            continue
        counts = list(low.counts)
        counts[local] = union
        return replace(low, counts=tuple(counts),
                       values=b.map(arg_symbol(0) + arg_symbol(1), parts))
    return None


def _aligned(b: Builder, outer: Term, inner: Term) -> Term | None:
    """``inner`` with the grid axes of ``outer`` (each of the same steps), those it lacks of
    one entry, or None when a grid axis of ``inner`` has steps ``outer`` lacks."""
    if len(inner.counts) > len(outer.counts):
        return None
    steps = [(tuple(row[k] for row in t.row_steps), t.col_steps[k])
             for t in (outer, inner) for k in range(len(t.counts))]
    outer_steps, inner_steps = steps[:len(outer.counts)], steps[len(outer.counts):]
    order: list[int | None] = []
    for wanted in outer_steps:
        found = next((k for k, s in enumerate(inner_steps) if s == wanted and k not in order),
                     None)
        order.append(found)
    if sorted(k for k in order if k is not None) != list(range(len(inner.counts))):
        return None
    if order == list(range(len(inner.counts))):
        return inner
    kept = [k for k in order if k is not None]
    values = b.transpose(inner.values, tuple(kept)) if kept != sorted(kept) else inner.values
    missing = tuple(p for p, k in enumerate(order) if k is None)
    values = b.expand(values, missing) if missing else values
    counts = tuple(ONE if k is None else inner.counts[k] for k in order)
    return Term(counts, inner.row0, outer.row_steps, inner.col0, outer.col_steps, values)


def _within(b: Builder, outer: Term, inner: Term, sizes: Sizes) -> Term | None:
    """``outer`` with ``inner`` added into it, when the grid of ``inner`` is a part of the grid
    of ``outer`` (a boundary row's entries on the whole grid's diagonal), else None."""
    shifts = _shifts(outer, inner)
    if shifts is None:
        return None
    for shift, whole, part in zip(shifts, outer.counts, inner.counts, strict=True):
        if sizes.at_least(shift, 0) is not True or sizes.at_least(whole, shift + part) is not True:
            return None
    values = full(b, inner)
    items = []
    for shift, whole, part in zip(shifts, outer.counts, inner.counts, strict=True):
        try:
            start, stop = bounds(shift, shift + part, whole)
        except NotStructured:
            return None
        items.append((start, stop, None))
    shape = tuple(as_dim(c) for c in outer.counts)
    padded = b.scatter(values, tuple(items), shape)
    return replace(outer, values=b.map(arg_symbol(0) + arg_symbol(1), [outer.values, padded]))


def _shifts(outer: Term, inner: Term) -> list[Size] | None:
    """The grid position of ``inner``'s origin in ``outer``'s grid (same steps), when each grid
    axis moves a row axis no other grid axis moves, else None."""
    shifts = []
    for local in range(len(outer.counts)):
        movers = [k for k, steps in enumerate(outer.row_steps) if steps[local] != 0 and all(
            steps[other] == 0 for other in range(len(outer.counts)) if other != local)]
        if not movers:
            return None
        k = movers[0]
        found = size((inner.row0[k] - outer.row0[k]) / outer.row_steps[k][local])
        if not found.is_integer:
            return None
        shifts.append(found)
    rows = [size(a + sum((s * steps[k] for k, s in enumerate(shifts)), ZERO))
            for a, steps in zip(outer.row0, outer.row_steps, strict=True)]
    col = size(outer.col0 + sum((s * c for s, c in zip(shifts, outer.col_steps, strict=True)),
                                ZERO))
    if any(size(r - q) != 0 for r, q in zip(rows, inner.row0, strict=True)) or \
            size(col - inner.col0) != 0:
        return None
    return shifts


def _shift(first: Term, second: Term, local: int) -> Size | None:
    """``s`` with ``second`` = ``first`` moved by ``s`` along ``local`` (rows and column)."""
    steps = [row[local] for row in first.row_steps] + [first.col_steps[local]]
    gaps = [size(q - p) for p, q in zip((*first.row0, first.col0),
                                         (*second.row0, second.col0), strict=True)]
    shift = None
    for step, gap in zip(steps, gaps, strict=True):
        if step == 0:
            if gap != 0:
                return None
            continue
        found = size(gap / step)
        if not found.is_integer and not (found.is_number and found == int(found)):
            return None
        if shift is not None and size(found - shift) != 0:
            return None
        shift = found
    return shift if shift is not None and shift != 0 else None


def _padded(b: Builder, term: Term, local: int, offset: Size, union: Size) -> Node:
    """The term's values placed at ``offset`` along ``local`` in zeros of ``union``."""
    values = full(b, term)
    start, stop = bounds(offset, offset + term.counts[local], union)
    items = ((None, None, None),) * local + ((start, stop, None),)
    shape = (*values.shape[:local], as_dim(union), *values.shape[local + 1:])
    return b.scatter(values, items, shape)
