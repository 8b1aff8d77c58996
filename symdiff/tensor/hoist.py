"""Small factors first: the parts of an elementwise expression that broadcast (a per-channel
scale, a statistic with kept dimensions, a number over a dimension) computed on their own
small shape, before they meet the large arrays.

NumPy evaluates ``1/16*_t1*_t4/(_n_dim*_t6**1.5)`` left to right: with ``_t1`` of the batch's
shape and ``_t4``, ``_t6`` of one value per channel, that is four passes over the batch where
one will do, ``_s0*_t1`` with ``_s0 = 1/16*_t4/(_n_dim*_t6**1.5)`` computed per channel. The
batch-norm backward pass is such sums of products of per-channel factors with the batch's
arrays, and so is any gradient that a broadcast operand scales. :func:`hoist` takes those
parts out as shared subexpressions (printed just before their first use, like the ones of
CSE): in a product two or more factors of smaller shapes than the product's (one is a single
operation anyway: ``X/s``, ``X*s**1.5``), in a sum two or more terms of smaller shapes; a small
factor of a sum whose large terms each have a small factor already is distributed over them
(``g*(a*X + b*Y + c)`` is ``(g*a)*X + (g*b)*Y + g*c``: one pass fewer).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

import sympy as sp

from ..codegen import naming
from .shapes import Shape

#: Axes (counted from the end, as broadcasting aligns them) where an operand is longer than 1;
#: None when its shape is unknown.
Footprint = frozenset[int] | None


class _Hoister:
    def __init__(self, shapes: Mapping[str, Shape], names: Iterator[sp.Symbol]) -> None:
        self.shapes = shapes
        self.names = names
        self.known: dict[sp.Symbol, Footprint] = {}
        self.made: dict[sp.Expr, sp.Symbol] = {}
        self.out: list[tuple[sp.Symbol, sp.Expr]] = []

    def footprint(self, expr: sp.Expr) -> Footprint:
        axes: set[int] = set()
        for s in expr.free_symbols:
            if s in self.known:
                mine = self.known[s]
            elif naming.is_dimension(s.name):
                mine = frozenset()
            else:
                shape = self.shapes.get(s.name)
                mine = None if shape is None else frozenset(
                    i - len(shape) for i, d in enumerate(shape) if d != 1)
            if mine is None:
                return None
            axes |= mine
        return frozenset(axes)

    def define(self, symbol: sp.Symbol, expr: sp.Expr) -> sp.Expr:
        """``expr`` rewritten, to be assigned to ``symbol`` (a shared subexpression)."""
        expr = self.rewrite(expr)
        self.known[symbol] = self.footprint(expr)
        return expr

    def rewrite(self, expr: sp.Expr) -> sp.Expr:
        if expr.is_Atom or not isinstance(expr, sp.Expr):
            return expr
        args = [self.rewrite(a) for a in expr.args]
        # rebuilt only if changed: SymPy would distribute a number over a sum again
        same = expr if all(a is b for a, b in zip(args, expr.args, strict=True)) else None
        if not (expr.is_Mul or expr.is_Add):
            return same or expr.func(*args)
        whole = self.footprint(expr)
        if whole is None:
            return same or expr.func(*args)
        small = [a for a in args if self._small(a, whole)]
        large = [a for a in args if not self._small(a, whole)]
        if not large:
            return same or expr.func(*args)
        if expr.is_Mul and len(large) == 1 and large[0].is_Add and small:
            terms = sp.Add.make_args(large[0])
            if all(self._small(t, whole) or any(not f.is_Number and self._small(f, whole)
                                                for f in sp.Mul.make_args(t))
                   for t in terms):  # distributed, no term costs a pass more: one less
                scale = sp.Mul(*small)
                return self.rewrite(sp.Add(*(scale * t for t in terms)))
        # one small factor or term is printed as one operation anyway; numbers and dimensions
        # alone (``2.0/_np.sqrt(_np.pi)``) are scalars, left where they read best
        if len(small) < 2 or all(naming.is_dimension(s.name) for a in small
                                 for s in a.free_symbols):
            return same or expr.func(*args)
        return expr.func(self._name(expr.func(*small)), *large)

    def _small(self, expr: sp.Expr, whole: frozenset[int]) -> bool:
        mine = self.footprint(expr)
        return mine is not None and mine < whole

    def _name(self, part: sp.Expr) -> sp.Symbol:
        if part in self.made:
            return self.made[part]
        symbol = next(self.names)
        self.made[part] = symbol
        self.known[symbol] = self.footprint(part)
        self.out.append((symbol, part))
        return symbol


def hoist(shared: list[tuple[sp.Symbol, sp.Expr]], forms: list[sp.Expr],
          shapes: Mapping[str, Shape], names: Iterator[sp.Symbol]
          ) -> tuple[list[tuple[sp.Symbol, sp.Expr]], list[sp.Expr]]:
    """The shared subexpressions (in evaluation order) and the expressions of the lines, with
    the small parts of their products and sums taken out as new shared subexpressions named
    from ``names``. ``shapes`` gives the shape of each array the expressions name (an
    operand of unknown shape keeps its expression as it is)."""
    hoister = _Hoister(shapes, names)
    result: list[tuple[sp.Symbol, sp.Expr]] = []
    for symbol, expr in shared:
        expr = hoister.define(symbol, expr)
        result += hoister.out
        hoister.out = []
        result.append((symbol, expr))
    forms = [hoister.rewrite(form) for form in forms]
    return result + hoister.out, forms


__all__ = ["hoist"]
