"""The structure of a forward-mode tangent graph: each tangent node as a sum of lattice terms
(:mod:`symdiff.sparse.terms`), read from the operations that built it.

Forward mode with a seed (:func:`symdiff.tensor.walk.forward`) builds the tangent of every
node as tensor operations on the seed: slices and scatters of it, elementwise factors times it,
sums, products with constant matrices. :class:`Structure` reads those operations back, one
rule per op (:data:`symdiff.sparse.rules.RULES`), and keeps the seed's structure through them:
the tangent of ``x[1:] - x[:-1]`` is two diagonals, the Rosenbrock Hessian three. The
values of the terms are nodes of the same builder that do not involve the seed, so the emitted
code computes the diagonals (or blocks) as vectors, never the ``R + (D,)`` tangent.

An operation without a rule, or one whose result leaves the term form (a slice of a merged
axis, a factor that varies along the columns), keeps that node dense: one term holding the
node itself, every column of every row; :attr:`Structure.dense` says which op and why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

import sympy as sp

from ..tensor.ir import Node
from ..tensor.ops import Builder
from ..tensor.shapes import Shape, as_dim
from .merge import merged
from .reshape import reshaped
from .terms import (
    ONE,
    ZERO,
    NotStructured,
    Size,
    Sizes,
    Term,
    bounds,
    collapse,
    dense,
    fix,
    identity,
    new_local,
    restrict,
    size,
    times,
    view,
)

Terms = list[Term]
#: The rule of an op: the terms of a node from the terms of its operands
#: (:data:`symdiff.sparse.rules.RULES`).
Rule = Callable[["Structure", Node], Terms]


class Structure:
    """The terms of tangent nodes seeded at ``seed`` (a node of shape ``S + (D,)``)."""

    def __init__(self, b: Builder, seed: Node, var_shape: Shape, rules: Mapping[str, Rule]):
        self.b = b
        self.rules = rules
        self.seed = seed
        self.var_shape = var_shape
        self.width = seed.shape[-1]
        self.sizes = Sizes(b.needs)
        self._terms: dict[int, Terms] = {}
        self._depends: dict[int, bool] = {}
        self._identities: dict[int, frozenset[Node]] = {}
        #: ``(op, reason)`` for each node kept dense.
        self.dense: list[tuple[str, str]] = []

    def depends(self, node: Node) -> bool:
        """Whether ``node`` involves the seed."""
        found = self._depends.get(id(node))
        if found is None:
            found = node is self.seed or any(self.depends(a) for a in node.args)
            self._depends[id(node)] = found
        return found

    def terms(self, node: Node) -> Terms:
        """The terms of the tangent ``node`` (shape ``R + (D,)``)."""
        found = self._terms.get(id(node))
        if found is not None:
            return found
        if node is self.seed:
            found = [identity(self.b, self.var_shape)]
        elif not self.depends(node):
            found = [] if _zero(node) else self.constant(node)
        else:
            rule = self.rules.get(node.op)
            try:
                if rule is None:
                    raise NotStructured("the structure of its derivative is not analysed")
                found = [collapse(self.b, t) for t in rule(self, node)]
                found = merged(self.b, found, self.sizes)
            except NotStructured as why:
                self.dense.append((node.op, str(why)))
                found = [self.dense_term(node)]
        self._terms[id(node)] = found
        return found

    def constant(self, node: Node) -> Terms:
        """A tangent that does not involve the seed (``A @ I`` is ``A``): its own structure
        when it is made of one identity of the columns' width (``diag(v) @ I``), else dense."""
        eyes = self._eyes(node)
        if len(eyes) != 1:
            return [self.dense_term(node)]
        (eye,) = eyes
        inner = Structure(self.b, eye, eye.shape[:-1], self.rules)
        found = inner.terms(node)
        self.dense += inner.dense
        return found

    def _eyes(self, node: Node) -> frozenset[Node]:
        """The identities of the columns' width that ``node`` is made of."""
        found = self._identities.get(id(node))
        if found is None:
            if node.op == "eye" and size(node.shape[-1]) == size(self.width):
                found = frozenset({node})
            else:
                found = frozenset().union(*(self._eyes(a) for a in node.args))
            self._identities[id(node)] = found
        return found

    def dense_term(self, node: Node) -> Term:
        """``node`` as one dense term (its last axis along the columns, possibly of size 1)."""
        term = dense(node)
        counts = (*term.counts[:-1], size(self.width))
        return replace(term, counts=counts)

    # -- shared moves ------------------------------------------------------------------------------
    def broadcast_rows(self, terms: Terms, rows: Shape, target: Shape) -> Terms:
        """Terms over rows ``rows`` broadcast (NumPy's rules) to rows ``target``."""
        lead = len(target) - len(rows)
        out = []
        for term in terms:
            term = replace(term, row0=(ZERO,) * lead + term.row0,
                           row_steps=tuple((ZERO,) * len(term.counts) for _ in range(lead))
                           + term.row_steps)
            for k, dim in enumerate(target):
                was = rows[k - lead] if k >= lead else 1
                if size(dim) == 1 or (k >= lead and size(was) != 1):
                    continue
                term = new_local(self.b, term, size(dim))
                steps = list(term.row_steps)
                steps[k] = (*steps[k][:-1], ONE)
                term = replace(term, row_steps=tuple(steps))
            out.append(term)
        return out

    def gather(self, factor: Node, term: Term, rows: int) -> Node:
        """``factor`` (shape right-aligned to the ``rows`` row axes) at the term's rows, shaped
        to its grid."""
        b = self.b
        skip = rows - factor.ndim
        items: list = []
        locals_: list[int] = []
        shape: list = []
        for axis in range(factor.ndim):
            extent = size(factor.shape[axis])
            if extent == 1:
                items.append(0)
                continue
            k = skip + axis
            single = term.single(k)
            if single is None:
                start, _ = bounds(term.row0[k], term.row0[k] + 1, extent)
                items.append(start or 0)
                continue
            local, step = single
            if not step.is_number:
                raise NotStructured("a factor taken along a symbolic stride")
            if local in locals_:
                raise NotStructured("a factor taken along a diagonal of the rows")
            items.append(_strided_item(term.row0[k], int(step), term.counts[local], extent))
            locals_.append(local)
            shape.append(as_dim(term.counts[local]))
        gathered = view(b, factor, tuple(items), tuple(shape)) if factor.ndim else factor
        order = sorted(range(len(locals_)), key=locals_.__getitem__)
        if order != list(range(len(locals_))):
            gathered = b.transpose(gathered, tuple(order))
        present = sorted(locals_)
        missing = tuple(k for k in range(len(term.counts)) if k not in present)
        return b.expand(gathered, missing) if missing else gathered

    def scaled(self, terms: Terms, factor: Node | sp.Expr, rows: int) -> Terms:
        """Terms times an elementwise ``factor`` (a number, or a node over ``rows`` row axes
        and a last axis of size 1)."""
        if not isinstance(factor, Node):
            return [replace(t, values=times(self.b, t.values, factor)) for t in terms]
        factor = natural(factor)  # a broadcast lines up as its operand does (to the right)
        if factor.op == "fill":
            return self.scaled(terms, factor.attrs[0], rows)
        if factor.ndim and size(factor.shape[-1]) != 1:  # (right-aligned: last is columns)
            # a factor along the columns too (v[None, :] of diag(v)): gathered at the column
            # of each entry as at another row
            return [replace(t, values=times(self.b, t.values, self.gather(
                factor, replace(t, row0=(*t.row0, t.col0), row_steps=(*t.row_steps,
                                                                       t.col_steps)),
                rows + 1))) for t in terms]
        across = factor
        if factor.op == "expand" and factor.attrs[0] == (factor.ndim - 1,):
            across = factor.args[0]  # x[..., None], as forward mode lines factors up
        elif factor.ndim:
            items = ((None, None, None),) * (factor.ndim - 1) + (0,)
            across = view(self.b, factor, items, factor.shape[:-1])
        across = natural(across)
        if across.op == "fill":
            return self.scaled(terms, across.attrs[0], rows)
        if across.op == "eye" and across.attrs == () and across.ndim == 2:
            # the identity an expression makes (diag(v)): zero off the diagonal of two rows
            return [d for t in terms for d in self.on_diagonal(t, rows - 2, rows - 1)]
        return [replace(t, values=times(self.b, t.values, self.gather(across, t, rows)))
                for t in terms]

    def on_diagonal(self, term: Term, p: int, q: int) -> Terms:
        """The term's entries whose rows along axes ``p`` and ``q`` are equal."""
        first, second = term.single(p), term.single(q)
        gap = size(term.row0[p] - term.row0[q])
        if first is None and second is None:
            return [term] if gap == 0 else [] if gap.is_number else _undecided("a diagonal")
        if first is None or second is None:
            local, step = second if first is None else first
            offset = gap if first is None else size(-gap)
            if step != 1:
                raise NotStructured("a diagonal of a strided row axis")
            inside = self.sizes.at_least(offset, ZERO), self.sizes.at_least(
                term.counts[local], offset + 1)
            if False in inside:
                return []
            if None in inside:
                raise NotStructured("a diagonal whose position depends on the sizes")
            return [fix(self.b, term, local, offset)]
        (lp, sp_), (lq, sq) = first, second
        if lp == lq or sp_ != 1 or sq != 1:
            raise NotStructured("a diagonal of rows along one grid axis or with strides")
        if size(term.values.shape[lq]) != 1:
            if size(term.values.shape[lp]) != 1:
                raise NotStructured("a diagonal of values that vary along both rows")
            lp, lq, gap = lq, lp, size(-gap)
        # t[lq] = t[lp] + gap: keep the t[lp] for which t[lq] is on the grid, then drop lq
        lo = self.sizes.maximum(ZERO, -gap, "a diagonal")
        hi = self.sizes.minimum(term.counts[lp], term.counts[lq] - gap, "a diagonal")
        if self.sizes.at_least(lo, hi):
            return []
        term = restrict(self.b, term, lp, lo, hi)
        shift = size(lo + gap)
        row0 = tuple(size(a + steps[lq] * shift) for a, steps in zip(term.row0, term.row_steps,
                                                                     strict=True))
        steps = tuple(tuple(size(v + row[lq]) if k == lp else v for k, v in enumerate(row))
                      for row in term.row_steps)
        cols = tuple(size(v + term.col_steps[lq]) if k == lp else v
                     for k, v in enumerate(term.col_steps))
        term = replace(term, row0=row0, row_steps=steps, col_steps=cols,
                       col0=size(term.col0 + term.col_steps[lq] * shift))
        return [fix(self.b, term, lq, ZERO)]

    def moved_rows(self, terms: Terms, axis: int, offset: Size, scale: Size = ONE) -> Terms:
        """Terms with the index of row ``axis`` mapped to ``offset + scale * index``."""
        out = []
        for t in terms:
            row0 = list(t.row0)
            steps = list(t.row_steps)
            row0[axis] = size(offset + scale * row0[axis])
            steps[axis] = tuple(size(scale * s) for s in steps[axis])
            out.append(replace(t, row0=tuple(row0), row_steps=tuple(steps)))
        return out

    def inserted_rows(self, terms: Terms, positions: Sequence[tuple[int, Size]]) -> Terms:
        """Terms with constant row axes inserted (``(position in the result, index)``)."""
        out = []
        for t in terms:
            row0, steps = list(t.row0), list(t.row_steps)
            for position, index in sorted(positions):
                row0.insert(position, size(index))
                steps.insert(position, (ZERO,) * len(t.counts))
            out.append(replace(t, row0=tuple(row0), row_steps=tuple(steps)))
        return out

    def dropped_rows(self, terms: Terms, axes: Sequence[int]) -> Terms:
        """Terms with row ``axes`` removed (summed over: their entries share rows)."""
        return [replace(t, row0=tuple(a for k, a in enumerate(t.row0) if k not in axes),
                        row_steps=tuple(s for k, s in enumerate(t.row_steps) if k not in axes))
                for t in terms]

    def reshaped(self, terms: Terms, rows: Shape, target: Shape) -> Terms:
        """Terms over rows ``rows`` read as rows ``target`` (C order)."""
        return [reshaped(self.b, t, rows, target, self.sizes) for t in terms]


def _strided_item(first: Size, step: int, count: Size, extent: Size) -> tuple:
    """The slice of an axis of ``extent`` taking ``count`` indices ``first + step*u``."""
    start = bounds(first, first + 1, extent)[0] or 0
    last = size(first + step * (count - 1))  # the last index taken
    if step > 0:
        stop = None if size(last + 1 - extent) == 0 else bounds(ZERO, last + 1, extent)[1]
        return (start or None, stop, None if step == 1 else step)
    before = size(last - 1)  # a reversed slice stops before its last index
    if before.is_number:
        return (start, None if before < 0 else int(before), step)
    back = size(before - extent)
    if not back.is_number:
        raise NotStructured("a factor taken along a reversed axis from a symbolic position")
    return (start, int(back), step)


def _undecided(what: str) -> Terms:
    raise NotStructured(f"{what} whose position depends on the sizes")


def natural(node: Node) -> Node:
    """``node`` without the broadcast an elementwise node gets to its operands' shape."""
    while node.op == "broadcast":
        node = node.args[0]
    return node


def _zero(node: Node) -> bool:
    return node.op == "fill" and node.attrs[0] == 0


def rows_of(node: Node) -> Shape:
    return node.shape[:-1]
