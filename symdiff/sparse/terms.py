"""Structured tangents: a forward-mode tangent (an array of shape ``R + (D,)``, ``D`` the
flattened variable) as a sum of :class:`Term`\\ s, each a lattice of entries.

A term has a grid of local indices ``t`` (``counts``); its entry at ``t`` sits at the row
multi-index ``row0 + row_steps @ t`` (one row of ``row_steps`` per axis of ``R``) and at the
column ``col0 + col_steps . t``, and its value is ``values[t]`` (a tensor node whose shape
broadcasts to ``counts``, of the same rank). The identity seed is one term; a slice restricts
the grid, a scatter moves the rows, a sum over a row axis drops it (its entries then share a
row), an elementwise factor multiplies the values by the factor gathered at the term's rows.
Every size and offset is a SymPy expression in the named dimensions, so the terms, like the
code made from them, do not depend on the sizes. :class:`Sizes` decides comparisons of such
expressions where it can (``n - 1 < n``; ``n >= 2`` where a literal index needs it).

An operation that cannot keep this form raises :class:`NotStructured` with the reason; the
walk (:mod:`symdiff.sparse.structure`) then keeps that part dense.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import sympy as sp

from ..errors import ShapeError
from ..tensor.ir import Node, arg_symbol
from ..tensor.ops import Builder
from ..tensor.shapes import Shape, as_dim

Size = sp.Expr
ZERO, ONE = sp.Integer(0), sp.Integer(1)


class NotStructured(Exception):
    """An operation whose result has no term form here; ``str()`` says why."""


def size(value: object) -> Size:
    """A dimension, offset or count as a SymPy expression, expanded."""
    return sp.expand(sp.sympify(value))


class Sizes:
    """Comparisons of sizes: named dimensions are positive integers, each at least the size the
    expression's literal indices need (``needs``, the builder's: the generated function checks
    them when called). Where a comparison the structure needs holds from some size of one
    dimension on (``n >= 2``), that size is added to ``needs``."""

    def __init__(self, needs: dict[sp.Symbol, int]):
        self.needs = needs

    def _shifted(self, expr: Size) -> Size:
        shift = {}
        for d in expr.free_symbols:
            extra = sp.Symbol(f"{d.name}_extra", integer=True, nonnegative=True)
            shift[d] = extra + max(self.needs.get(d, 1), 1)
        return sp.expand(expr.xreplace(shift))

    def at_least(self, a: object, b: object) -> bool | None:
        """Whether ``a >= b`` for every size (None: it depends)."""
        d = size(a) - size(b)
        if d.is_number:
            return bool(d >= 0)
        d = self._shifted(d)
        if d.is_nonnegative:
            return True
        return False if d.is_negative else None

    def eventually(self, a: object, b: object) -> bool:
        """Whether ``a >= b`` once every named dimension is large (the sizes the structure is
        for; at the least sizes a band may be empty)."""
        d = size(a) - size(b)
        return bool(d.xreplace({s: sp.Integer(10**9) for s in d.free_symbols}) >= 0)

    def decide(self, a: object, b: object, why: str) -> bool:
        """``a >= b``, or :class:`NotStructured` when it depends on the sizes."""
        found = self.at_least(a, b)
        if found is None:
            found = self._required(size(a) - size(b))
        if found is None:
            raise NotStructured(f"{why}: {sp.sstr(size(a))} >= {sp.sstr(size(b))} depends on "
                                "the sizes")
        return found

    def _required(self, difference: Size) -> bool | None:
        """True, with a least size added to ``needs``, when ``difference >= 0`` is
        ``k*d + c >= 0`` for one named dimension ``d`` and a number ``k > 0``."""
        if len(difference.free_symbols) != 1:
            return None
        (d,) = difference.free_symbols
        k, c = difference.coeff(d), difference.subs(d, 0)
        if not (k.is_number and c.is_number and k > 0 and size(difference - k * d - c) == 0):
            return None
        least = int(sp.ceiling(-c / k))
        if least > self.needs.get(d, 1):
            self.needs[d] = least
        return True

    def maximum(self, a: object, b: object, why: str) -> Size:
        return size(a) if self.decide(a, b, why) else size(b)

    def minimum(self, a: object, b: object, why: str) -> Size:
        return size(b) if self.decide(a, b, why) else size(a)


@dataclass(frozen=True)
class Term:
    """Entries at rows ``row0 + row_steps @ t`` and columns ``col0 + col_steps . t`` with
    values ``values[t]``, for ``t`` in the grid ``counts``."""

    counts: tuple[Size, ...]
    row0: tuple[Size, ...]
    row_steps: tuple[tuple[Size, ...], ...]
    col0: Size
    col_steps: tuple[Size, ...]
    values: Node

    def key(self) -> tuple:
        """What two terms must share for their values to add up entry by entry."""
        return (self.counts, self.row0, self.row_steps, self.col0, self.col_steps)

    def depending(self, local: int) -> list[int]:
        """The row axes whose index moves along local axis ``local``."""
        return [k for k, steps in enumerate(self.row_steps) if steps[local] != 0]

    def single(self, axis: int) -> tuple[int, Size] | None:
        """``(local axis, step)`` when row axis ``axis`` moves along one local axis only, None
        when it is constant; :class:`NotStructured` when it moves along several."""
        moving = [(k, s) for k, s in enumerate(self.row_steps[axis]) if s != 0]
        if len(moving) > 1:
            raise NotStructured("a slice of a row axis that mixes several grid axes (after a "
                                "reshape that merged them)")
        return moving[0] if moving else None


def identity(b: Builder, shape: Shape) -> Term:
    """The seed ``eye(size(shape)).reshape(shape + (size,))`` of a variable of ``shape``."""
    counts = tuple(size(d) for d in shape)
    strides = []
    stride = ONE
    for count in reversed(counts):
        strides.append(stride)
        stride = size(stride * count)
    rank = len(shape)
    eye = tuple(tuple(ONE if i == j else ZERO for j in range(rank)) for i in range(rank))
    return Term(counts, (ZERO,) * len(shape), eye, ZERO, tuple(reversed(strides)),
                b.fill(1, (1,) * len(shape)))


def dense(node: Node) -> Term:
    """``node`` (of shape ``R + (D,)``) as one term: every column of every row."""
    rank = node.ndim - 1
    counts = tuple(size(d) for d in node.shape)
    steps = tuple(tuple(ONE if i == j else ZERO for j in range(rank + 1)) for i in range(rank))
    return Term(counts, (ZERO,) * rank, steps, ZERO, (ZERO,) * rank + (ONE,), node)


# -- values ------------------------------------------------------------------------------------
def view(b: Builder, a: Node, items: tuple, shape: Shape) -> Node:
    """``a[items]`` (basic index items), of the given result ``shape``: through the builder's
    simplifications where it can check the bounds, else as the node itself."""
    try:
        return b.index(a, items)
    except ShapeError:
        return b.node("index", (a,), (items,), shape)


def bounds(lo: Size, hi: Size, length: Size) -> tuple[int | None, int | None]:
    """``[lo, hi)`` of an axis of ``length`` as a slice's ints (negative: from the end)."""
    def end(value: Size, last: bool) -> int | None:
        if value.is_number:
            return int(value)
        back = size(value - length)
        if back.is_number:
            return None if (last and back == 0) else int(back)
        raise NotStructured(f"a slice bound {sp.sstr(value)} that is neither from the start nor "
                            f"from the end of {sp.sstr(length)}")

    start, stop = end(size(lo), False), end(size(hi), True)
    return (None if start == 0 else start), stop


def take(b: Builder, values: Node, local: int, lo: Size, hi: Size) -> Node:
    """``values`` restricted to ``[lo, hi)`` along ``local`` (unchanged where it has size 1)."""
    length = size(values.shape[local])
    if length == 1:
        return values
    start, stop = bounds(lo, hi, length)
    items = ((None, None, None),) * local + ((start, stop, None),)
    shape = (*values.shape[:local], as_dim(hi - lo), *values.shape[local + 1:])
    return view(b, values, items, shape)


def at(b: Builder, values: Node, local: int, position: Size) -> Node:
    """``values`` at ``position`` along ``local``, that axis removed."""
    if size(values.shape[local]) == 1:
        position = ZERO
    start, _ = bounds(position, position + 1, size(values.shape[local]))
    items = ((None, None, None),) * local + (start or 0,)
    shape = tuple(values.shape[:local]) + tuple(values.shape[local + 1:])
    return view(b, values, items, shape)


def full(b: Builder, term: Term) -> Node:
    """The term's values broadcast to its whole grid."""
    return b.broadcast(term.values, tuple(as_dim(c) for c in term.counts))


def times(b: Builder, values: Node, factor: Node | sp.Expr) -> Node:
    """``values * factor`` (a node broadcasting against it, or a number)."""
    if not isinstance(factor, Node):
        return b.map(factor * arg_symbol(0), [values])
    return b.map(arg_symbol(0) * arg_symbol(1), [values, factor])


# -- grid surgery --------------------------------------------------------------------------------
def restrict(b: Builder, term: Term, local: int, lo: Size, hi: Size) -> Term:
    """The term on ``lo <= t[local] < hi`` (offsets moved so the grid starts at 0)."""
    counts = list(term.counts)
    counts[local] = size(hi - lo)
    row0 = tuple(size(a + steps[local] * lo) for a, steps in zip(term.row0, term.row_steps,
                                                                   strict=True))
    return replace(term, counts=tuple(counts), row0=row0,
                   col0=size(term.col0 + term.col_steps[local] * lo),
                   values=take(b, term.values, local, lo, hi))


def fix(b: Builder, term: Term, local: int, position: Size) -> Term:
    """The term at ``t[local] = position``, that grid axis removed."""
    row0 = tuple(size(a + steps[local] * position)
                 for a, steps in zip(term.row0, term.row_steps, strict=True))
    return Term(
        _without(term.counts, local), row0,
        tuple(_without(steps, local) for steps in term.row_steps),
        size(term.col0 + term.col_steps[local] * position), _without(term.col_steps, local),
        at(b, term.values, local, position),
    )


def new_local(b: Builder, term: Term, count: Size) -> Term:
    """The term with a new last grid axis of ``count`` that nothing moves along yet."""
    rank = term.values.ndim
    return Term((*term.counts, size(count)), term.row0,
                tuple((*steps, ZERO) for steps in term.row_steps), term.col0,
                (*term.col_steps, ZERO), b.expand(term.values, (rank,)))


def collapse(b: Builder, term: Term) -> Term:
    """The term without grid axes that move neither its rows nor its column (their entries
    coincide: their values are summed) and without grid axes of one entry."""
    for local in range(len(term.counts) - 1, -1, -1):
        still = term.col_steps[local] == 0 and not term.depending(local)
        if term.counts[local] == 1:
            term = fix(b, term, local, ZERO)
        elif still:
            values = term.values
            if size(values.shape[local]) == 1:
                reduced = times(b, at(b, values, local, ZERO), term.counts[local])
            else:
                reduced = b.reduce_axes("sum", values, (local,), False)
            term = Term(_without(term.counts, local), term.row0,
                        tuple(_without(s, local) for s in term.row_steps), term.col0,
                        _without(term.col_steps, local), reduced)
    return term


def _without(items: Sequence[Size], position: int) -> tuple[Size, ...]:
    return tuple(item for i, item in enumerate(items) if i != position)
