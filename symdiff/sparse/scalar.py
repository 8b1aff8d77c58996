"""Sparse Jacobians and Hessians of scalar expressions (names ``x0 ... x999``): the structural
nonzeros from the expressions, and a values kernel over those entries only.

An expression is read as a sum of *pieces* (``100*(x1 - x0**2)**2 + (1 - x0)**2 + ...``; a
number times a sum is the sum of its scaled terms). Each piece is differentiated with respect to
its own variables only, by the rule table (:func:`symdiff.engine.forward.differentiate`), so the
work grows with the number of nonzeros, not with the square of the number of names. Pieces that
differ only in their variables (the terms of a sum written by a loop) are differentiated once:
each piece is written in placeholders ``_a0, _a1, ...`` (its variables in ``wrt`` order), its
derivatives are kept by that form, and named back for every piece of that form.

An entry is a structural nonzero when its derivative is not identically zero: kept whatever its
value at a point (``2*x0`` at ``x0 = 0``), so the pattern is the same at every call. A Hessian
computes its lower triangle (``row >= column``) and its module returns the upper one again as
mirrored values.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import sympy as sp

from ..codegen import naming
from ..engine.forward import differentiate
from ..simplify import simplify_for_people
from .pattern import Block, Pattern

Entry = tuple[int, int]


@dataclass(frozen=True)
class Entries:
    """The nonzeros of a sparse Jacobian or Hessian: ``entries[k]`` = ``(row, col)`` of the
    value ``exprs[k]``; ``mirrors`` (a Hessian's strictly upper triangle) lists for each
    further value the entry ``k`` whose value it repeats, in the order the values follow."""

    entries: tuple[Entry, ...]
    exprs: tuple[sp.Expr, ...]
    shape: tuple[int, int]
    mirrors: tuple[int, ...] = ()

    def pattern(self) -> Pattern:
        """The pattern of the values (the computed ones, then the mirrored ones), as runs."""
        placed = list(self.entries) + [self.entries[k][::-1] for k in self.mirrors]
        return Pattern(tuple(runs(placed)), self.shape)


def pieces(expr: sp.Expr) -> list[sp.Expr]:
    """``expr`` as a sum of pieces: the terms of a sum, a number times a sum as its scaled
    terms (recursively); anything else is one piece."""
    if expr.is_Add:
        return [p for term in expr.args for p in pieces(term)]
    if expr.is_Mul:
        coefficient, rest = expr.as_coeff_Mul()
        if coefficient != 1 and rest.is_Add:
            return [coefficient * p for p in pieces(rest)]
    return [expr]


def _placeholder(k: int) -> sp.Symbol:
    """The ``k``-th variable of a piece's form (the placeholders of tensor maps: ``_a0``)."""
    return sp.Symbol(naming.argument(k), real=True)


class _Forms:
    """Derivatives of pieces, computed once per form (a piece in placeholders)."""

    def __init__(self, wrt: Sequence[str], simplify: bool):
        self.symbols = [sp.Symbol(n, real=True) for n in wrt]
        self.position = {s: i for i, s in enumerate(self.symbols)}
        self.simplify = simplify
        self.memo: dict[tuple[sp.Expr, int], dict[tuple[int, ...], sp.Expr]] = {}

    def _finish(self, expr: sp.Expr) -> sp.Expr:
        return simplify_for_people(expr) if self.simplify else expr

    def derivatives(self, piece: sp.Expr, order: int) -> dict[tuple[int, ...], sp.Expr]:
        """The nonzero derivatives of ``piece`` of ``order`` 1 (``{(i,): d/dx_i}``) or 2
        (``{(i, j): d2/dx_i dx_j}`` for ``i >= j``), keyed by ``wrt`` positions."""
        own = sorted((s for s in piece.free_symbols if s in self.position),
                     key=self.position.__getitem__)
        if not own:
            return {}
        to_form = {s: _placeholder(k) for k, s in enumerate(own)}
        form = piece.xreplace(to_form)
        found = self.memo.get((form, order))
        if found is None:
            found = self.memo[(form, order)] = self._of_form(form, len(own), order)
        back = {_placeholder(k): s for k, s in enumerate(own)}
        at = [self.position[s] for s in own]
        return {tuple(at[k] for k in key): d.xreplace(back) for key, d in found.items()}

    def _of_form(self, form: sp.Expr, count: int, order: int) -> dict[tuple[int, ...], sp.Expr]:
        firsts = [differentiate(form, _placeholder(k)).result for k in range(count)]
        if order == 1:
            return {(k,): self._finish(d) for k, d in enumerate(firsts) if d != 0}
        seconds: dict[tuple[int, ...], sp.Expr] = {}
        for k, first in enumerate(firsts):
            if first == 0:
                continue
            for m in range(k + 1):
                if _placeholder(m) in first.free_symbols:
                    second = self._finish(differentiate(first, _placeholder(m)).result)
                    if second != 0:
                        seconds[(k, m)] = second
        return seconds


def _summed(found: dict[Entry, list[sp.Expr]]) -> dict[Entry, sp.Expr]:
    total = {key: sp.Add(*parts) for key, parts in found.items()}
    return {key: value for key, value in total.items() if value != 0}


def jacobian_entries(exprs: Sequence[sp.Expr], wrt: Sequence[str], simplify: bool) -> Entries:
    """The nonzeros of the Jacobian of ``exprs`` (rows) by ``wrt`` (columns), diagonal by
    diagonal (``(col - row, row)`` order, so that bands are runs)."""
    forms = _Forms(wrt, simplify)
    found: dict[Entry, list[sp.Expr]] = {}
    for i, expr in enumerate(exprs):
        for piece in pieces(expr):
            for (j,), d in forms.derivatives(piece, 1).items():
                found.setdefault((i, j), []).append(d)
    ordered = sorted(_summed(found).items(), key=lambda item: (item[0][1] - item[0][0],
                                                                item[0][0]))
    return Entries(tuple(e for e, _ in ordered), tuple(v for _, v in ordered),
                   (len(exprs), len(wrt)))


def hessian_entries(expr: sp.Expr, wrt: Sequence[str], simplify: bool) -> Entries:
    """The nonzeros of the Hessian of ``expr`` by ``wrt``: the lower triangle computed, diagonal
    by diagonal (``(row - col, col)`` order, so that bands are runs), the upper one mirrored."""
    forms = _Forms(wrt, simplify)
    found: dict[Entry, list[sp.Expr]] = {}
    for piece in pieces(expr):
        for (i, j), d in forms.derivatives(piece, 2).items():
            found.setdefault((i, j), []).append(d)
    lower = sorted(_summed(found).items(), key=lambda item: (item[0][0] - item[0][1], item[0][1]))
    entries = tuple(entry for entry, _ in lower)
    mirrors = tuple(k for k, (i, j) in enumerate(entries) if i != j)
    return Entries(entries, tuple(v for _, v in lower), (len(wrt), len(wrt)), mirrors)


def runs(placed: Sequence[Entry]) -> list[Block]:
    """``placed`` (row, col) pairs, in order, as blocks of evenly spaced entries: the longest run
    from each position whose rows and columns advance by the same steps, each by at most 1
    (a diagonal, part of a row or of a column)."""
    blocks: list[Block] = []
    k = 0
    while k < len(placed):
        row, col = placed[k]
        step = (0, 0)
        length = 1
        if k + 1 < len(placed):
            step = (placed[k + 1][0] - row, placed[k + 1][1] - col)
            length = 2 if max(abs(step[0]), abs(step[1])) == 1 else 1
            while length > 1 and k + length < len(placed) and (
                placed[k + length][0] - placed[k + length - 1][0],
                placed[k + length][1] - placed[k + length - 1][1],
            ) == step:
                length += 1
        if length == 1:
            step = (0, 0)
        blocks.append(Block((length,), row, (step[0],), col, (step[1],)))
        k += length
    return blocks


#: The entries of each kind of sparse function.
ENTRIES: dict[str, Callable[[Sequence[sp.Expr], Sequence[str], bool], Entries]] = {
    "jacobian": jacobian_entries,
    "hessian": lambda exprs, wrt, simplify: hessian_entries(exprs[0], wrt, simplify),
}
