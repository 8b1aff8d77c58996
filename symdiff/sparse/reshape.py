"""A reshape of a structured tangent's rows (:mod:`symdiff.sparse.terms`): the rows read in C
order as another shape.

Flattening always keeps the term form (the flat row is affine in the grid index). Splitting a
flat row back into axes (a vector reshaped to a grid, ``y.reshape(m, m)``) needs each grid axis
to move one of the new axes by whole strides without carrying into the next: a grid axis that
runs over several new axes at once (the seed of ``y`` over all ``m*m`` rows) is split into
one grid axis per new axis first.
"""

from __future__ import annotations

from dataclasses import replace

import sympy as sp

from ..tensor.ops import Builder
from ..tensor.shapes import Shape, as_dim
from .terms import ONE, ZERO, NotStructured, Size, Sizes, Term, size


def strides(shape: Shape) -> list[Size]:
    """The C-order strides of ``shape`` (in elements)."""
    out: list[Size] = []
    stride = ONE
    for dim in reversed(shape):
        out.append(stride)
        stride = size(stride * dim)
    return list(reversed(out))


def reshaped(b: Builder, term: Term, rows: Shape, target: Shape, sizes: Sizes) -> Term:
    """The term with rows of shape ``rows`` read as rows of shape ``target``."""
    rows = tuple(size(d) for d in rows)
    target = tuple(size(d) for d in target)
    if rows == target:
        return term
    if [d for d in rows if d != 1] == [d for d in target if d != 1]:
        return _squeezed(term, rows, target)
    flat0 = size(sum((s * a for s, a in zip(strides(rows), term.row0, strict=True)), ZERO))
    flat = tuple(size(sum((s * row[local] for s, row in
                           zip(strides(rows), term.row_steps, strict=True)), ZERO))
                 for local in range(len(term.counts)))
    term = replace(term, row0=(flat0,), row_steps=(flat,))
    if len(target) == 1:
        return term
    return _unflattened(_split(b, term, target), target, sizes)


def _squeezed(term: Term, rows: Shape, target: Shape) -> Term:
    """Only axes of size 1 removed or inserted."""
    kept = [(a, s) for d, a, s in zip(rows, term.row0, term.row_steps, strict=True) if d != 1]
    zero = (ZERO,) * len(term.counts)
    row0, steps = [], []
    for d in target:
        if d == 1:
            row0.append(ZERO)
            steps.append(zero)
        else:
            a, s = kept.pop(0)
            row0.append(a)
            steps.append(s)
    return replace(term, row0=tuple(row0), row_steps=tuple(steps))


def _split(b: Builder, term: Term, target: Shape) -> Term:
    """The term (one flat row axis) with each grid axis that runs over several axes of
    ``target`` (its step the stride of the innermost, its count their product) split into one
    grid axis each."""
    out_strides = strides(target)
    local = 0
    while local < len(term.counts):
        step, count = term.row_steps[0][local], term.counts[local]
        pieces = _covering(step, count, target, out_strides)
        if pieces is None or len(pieces) == 1:
            local += 1
            continue
        values = term.values
        width = len(pieces)
        if size(values.shape[local]) == 1:
            values = b.expand(values, tuple(range(local + 1, local + width)))
        else:
            values = b.reshape(values, (*values.shape[:local], *(as_dim(p) for p in pieces),
                                        *values.shape[local + 1:]))
        inner = strides(pieces)
        col = term.col_steps[local]
        term = replace(
            term,
            counts=(*term.counts[:local], *pieces, *term.counts[local + 1:]),
            row_steps=((*term.row_steps[0][:local], *(size(step * s) for s in inner),
                        *term.row_steps[0][local + 1:]),),
            col_steps=(*term.col_steps[:local], *(size(col * s) for s in inner),
                       *term.col_steps[local + 1:]),
            values=values,
        )
        local += width
    return term


def _covering(step: Size, count: Size, target: Shape, out_strides: list[Size]
              ) -> list[Size] | None:
    """The sizes of the axes of ``target`` that a grid axis of ``step`` and ``count`` runs
    over, when it runs over whole axes ending at the one whose stride is ``step``."""
    for k, stride in enumerate(out_strides):
        if size(stride - step) != 0:
            continue
        for first in range(k, -1, -1):
            pieces = list(target[first:k + 1])
            if size(sp.Mul(*pieces) - count) == 0:
                return pieces
        return None
    return None


def _unflattened(term: Term, target: Shape, sizes: Sizes) -> Term:
    """The flat row of ``term`` as the row axes of ``target``: each grid axis moving one axis
    by a whole multiple of its stride, the offset's digits and every move within the axis."""
    out_strides = strides(target)
    gens = sorted({s for d in (*target, term.row0[0]) for s in size(d).free_symbols},
                  key=lambda s: s.name)
    steps = [[ZERO] * len(term.counts) for _ in target]
    for local, step in enumerate(term.row_steps[0]):
        if step == 0:
            continue
        for k, stride in enumerate(out_strides):
            ratio = sp.cancel(step / stride)
            if sp.denom(ratio) == 1 and ((ratio.is_number and ratio > 0) or ratio.is_positive):
                steps[k][local] = size(ratio)
                break
        else:
            raise NotStructured("a reshape of rows that do not split into whole strides")
    digits = []
    rest = term.row0[0]
    for k, stride in enumerate(out_strides):
        if k == len(target) - 1:
            digits.append(size(rest))
            break
        if rest.is_number and stride.is_number:
            digit, rest = divmod(int(rest), int(stride))
        elif gens:
            quotient, remainder = sp.div(rest, stride, *gens)
            digit, rest = size(quotient), size(remainder)
        else:
            digit, rest = ZERO, rest
        digits.append(size(digit))
    for k, dim in enumerate(target):
        reach = size(digits[k] + sum((s * (c - 1) for s, c in zip(steps[k], term.counts,
                                                                 strict=True)), ZERO))
        if not (sizes.decide(digits[k], ZERO, "a reshape")
                and sizes.decide(dim, reach + 1, "a reshape")):
            raise NotStructured("a reshape of rows that carry from one axis into the next")
    return replace(term, row0=tuple(digits), row_steps=tuple(tuple(s) for s in steps))
