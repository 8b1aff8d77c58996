"""The rule of each tensor op for structured tangents (:data:`RULES`, which
:class:`~symdiff.sparse.structure.Structure` applies): how the terms of an op's result follow
from the terms of its tangent operands. Elementwise ops scale them (linear in the tangents,
each factor gathered at the terms' rows), indexing and scatters move their rows, sums drop a
row axis, matrix products with a constant matrix are a broadcast factor and a sum, and the
building and rearranging families (concatenate, stack, flip, roll, repeat) move rows too.
An op without a rule keeps its tangent dense."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import sympy as sp

from ..engine.forward import differentiate
from ..tensor.ir import Node, arg_symbol
from ..tensor.shapes import Shape
from .slicing import sliced
from .structure import Structure, Terms, natural, rows_of
from .terms import ONE, ZERO, NotStructured, new_local, restrict, size


def _map(s: Structure, node: Node) -> Terms:
    (expr,) = node.attrs
    active = [i for i, a in enumerate(node.args) if s.depends(a)]
    placeholders = {arg_symbol(i) for i in active}
    out: Terms = []
    for i in active:
        coefficient = differentiate(expr, arg_symbol(i)).result
        if coefficient.free_symbols & placeholders:
            raise NotStructured("an elementwise function of the tangents (not linear)")
        factor = coefficient if not coefficient.free_symbols else natural(
            s.b.map(coefficient, node.args))
        arg = node.args[i]
        terms = s.broadcast_rows(s.terms(arg), rows_of(arg), rows_of(node))
        out += s.scaled(terms, factor, node.ndim - 1)
    rest = expr.xreplace({p: 0 for p in placeholders})
    if rest != 0:
        if rest.has(sp.zoo, sp.nan, sp.oo):
            raise NotStructured("an elementwise function of the tangents (not linear)")
        out += s.terms(s.b.map(rest, node.args))  # a part without the seed (A @ I is A)
    return out


def _index(s: Structure, node: Node) -> Terms:
    (items,) = node.attrs
    (arg,) = node.args
    return [t for term in s.terms(arg)
            for t in sliced(s.b, term, items, rows_of(arg), s.sizes)]


def _scatter(s: Structure, node: Node) -> Terms:
    (items,) = node.attrs
    terms = s.terms(node.args[0])
    rows = rows_of(node)
    inserted = []
    for axis, item in enumerate(items):
        extent = size(rows[axis])
        if isinstance(item, int):
            inserted.append((axis, size(item if item >= 0 else extent + item)))
        else:
            start, stop, step = item
            if step is not None and step < 0:  # (an axis of a fixed size)
                begin = size(slice(start, stop, step).indices(int(extent))[0])
            else:
                begin = ZERO if start is None else size(start if start >= 0 else extent + start)
            terms = s.moved_rows(terms, axis - len(inserted), begin, step or 1)
    return s.inserted_rows(terms, inserted) if inserted else terms


def _expand(s: Structure, node: Node) -> Terms:
    (axes,) = node.attrs
    return s.inserted_rows(s.terms(node.args[0]), [(a, ZERO) for a in axes])


def _broadcast(s: Structure, node: Node) -> Terms:
    (arg,) = node.args
    return s.broadcast_rows(s.terms(arg), rows_of(arg), rows_of(node))


def _transpose(s: Structure, node: Node) -> Terms:
    (perm,) = node.attrs
    if perm[-1] != len(perm) - 1:
        raise NotStructured("a transpose that moves the columns")
    order = perm[:-1]
    return [replace(t, row0=tuple(t.row0[k] for k in order),
                    row_steps=tuple(t.row_steps[k] for k in order))
            for t in s.terms(node.args[0])]


def _reshape(s: Structure, node: Node) -> Terms:
    (arg,) = node.args
    if size(arg.shape[-1]) != size(node.shape[-1]):
        raise NotStructured("a reshape that moves the columns")
    return s.reshaped(s.terms(arg), rows_of(arg), rows_of(node))


def _reduction(s: Structure, node: Node) -> Terms:
    axes, keepdims = node.attrs
    (arg,) = node.args
    if node.op not in ("sum", "mean") or arg.ndim - 1 in axes:
        raise NotStructured(f"a {node.op} of tangents")
    terms = s.dropped_rows(s.terms(arg), axes)
    if keepdims:
        terms = s.inserted_rows(terms, [(a, ZERO) for a in axes])
    if node.op == "mean":
        count = sp.Mul(*(size(arg.shape[a]) for a in axes))
        terms = s.scaled(terms, 1 / count, node.ndim - 1)
    return terms


def _matmul(s: Structure, node: Node) -> Terms:
    """``M @ T``: a constant matrix (or vector) times a tangent whose last two axes are a row
    axis and the columns; read as a broadcast factor and a sum over the contracted row axis."""
    m, t = node.args
    if s.depends(m) or not s.depends(t) or t.ndim < 2:
        raise NotStructured("a matrix product with the tangent on the left")
    rows = rows_of(t)
    terms = s.terms(t)
    if m.ndim == 1:  # a factor along the contracted row axis (and a column axis of size 1)
        factor = s.b.expand(m, (1,))
        return s.dropped_rows(s.scaled(terms, factor, len(rows)), [len(rows) - 1])
    # rows (..., k) -> (..., 1, k) -> broadcast (..., m, k), times M (..., m, k), sum over k
    spread = s.inserted_rows(terms, [(len(rows) - 1, ZERO)])
    target = (*_batch(m.shape[:-2], rows[:-1]), m.shape[-2], rows[-1])
    spread = s.broadcast_rows(spread, (*rows[:-1], 1, rows[-1]), target)
    factor = s.b.expand(m, (m.ndim,))
    return s.dropped_rows(s.scaled(spread, factor, len(target)), [len(target) - 1])


def _batch(a: Shape, b: Shape) -> Shape:
    lead = max(len(a), len(b))
    a = (1,) * (lead - len(a)) + tuple(a)
    b = (1,) * (lead - len(b)) + tuple(b)
    return tuple(x if size(y) == 1 else y for x, y in zip(a, b, strict=True))


def _concatenate(s: Structure, node: Node) -> Terms:
    (axis,) = node.attrs
    out: Terms = []
    offset = ZERO
    for arg in node.args:
        out += s.moved_rows(s.terms(arg), axis, offset)
        offset = size(offset + arg.shape[axis])
    return out


def _stacked(s: Structure, node: Node) -> Terms:
    axis = node.attrs[0] if node.attrs else 0
    out: Terms = []
    for i, arg in enumerate(node.args):
        out += s.inserted_rows(s.terms(arg), [(axis, size(i))])
    return out


def _flip(s: Structure, node: Node) -> Terms:
    (axes,) = node.attrs
    terms = s.terms(node.args[0])
    for axis in axes:
        terms = s.moved_rows(terms, axis, size(node.shape[axis] - 1), -ONE)
    return terms


def _roll(s: Structure, node: Node) -> Terms:
    shifts, axes = node.attrs
    terms = s.terms(node.args[0])
    for shift, axis in zip(shifts, axes, strict=True):
        extent = size(node.shape[axis])
        shift = size(shift % int(extent)) if extent.is_number else size(
            shift if shift >= 0 else extent + shift)
        out = []
        for term in terms:
            single = term.single(axis)
            if single is None:
                moved = s.sizes.decide(term.row0[axis] + shift, extent, "a roll")
                out += s.moved_rows([term], axis, shift - (extent if moved else 0))
                continue
            local, step = single
            row = term.row0[axis]
            if step not in (1, -1) and not (step.is_number and size(extent - shift - row)
                                            .is_number):
                raise NotStructured("a roll of a strided row axis at symbolic positions")
            # the grid index where the rows wrap: before it they move by shift (a rising axis)
            # or by shift - extent (a falling one), from it on the other way
            if step > 0:
                cut = size(sp.ceiling((extent - shift - row) / step))
                moves = (shift, size(shift - extent))
            else:
                cut = size(sp.floor((row + shift - extent) / -step) + 1)
                moves = (size(shift - extent), shift)
            count = term.counts[local]
            first = s.sizes.minimum(count, s.sizes.maximum(cut, ZERO, "a roll"), "a roll")
            # (a piece that may be empty at some sizes is kept: its count is then 0)
            if s.sizes.at_least(first, ONE) is not False:
                out += s.moved_rows([restrict(s.b, term, local, ZERO, first)], axis, moves[0])
            if s.sizes.at_least(count, first + 1) is not False:
                out += s.moved_rows([restrict(s.b, term, local, first, count)], axis, moves[1])
        terms = out
    return terms


def _repeat(s: Structure, node: Node) -> Terms:
    repeats, axis = node.attrs
    out = []
    for term in s.moved_rows(s.terms(node.args[0]), axis, ZERO, size(repeats)):
        term = new_local(s.b, term, size(repeats))
        steps = list(term.row_steps)
        steps[axis] = (*steps[axis][:-1], ONE)
        out.append(replace(term, row_steps=tuple(steps)))
    return out


#: The rule of each op a tangent graph is made of.
RULES: dict[str, Callable[[Structure, Node], Terms]] = {
    "map": _map,
    "index": _index,
    "scatter": _scatter,
    "expand": _expand,
    "broadcast": _broadcast,
    "transpose": _transpose,
    "reshape": _reshape,
    "sum": _reduction,
    "mean": _reduction,
    "max": _reduction,
    "min": _reduction,
    "matmul": _matmul,
    "concatenate": _concatenate,
    "stacked": _stacked,
    "stack": _stacked,
    "flip": _flip,
    "roll": _roll,
    "repeat": _repeat,
}
