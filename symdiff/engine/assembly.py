"""How a rule puts its parts together, written as a textbook writes it.

A step's ``result`` is what the engine computed (a SymPy expression, in SymPy's order of terms:
``x**2*cos(x) + 2*x*sin(x)``). A student reads the product rule ``(f g)' = f' g + f g'`` and
expects ``2*x*sin(x) + x**2*cos(x)``: :func:`shown_result` is the same value with its terms in
the order of the rule's identity, as unevaluated nodes of :mod:`symdiff.parsing.written` (they
print in the order they hold; :func:`~symdiff.parsing.written.canonical` is the value again).

:func:`assembly` is the line a textbook writes after a chain, product or quotient rule's parts:
the identity's right-hand side with every part put in, unevaluated and in the identity's order
(``f'(u) u' = exp(-x**2/2)*(-x)``, with ``u`` put back), which the views print before the
result. Both are only shown: the steps, and the code built from them, are unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sympy as sp

from ..parsing.written import (
    Negation,
    Power,
    Product,
    Quotient,
    SignedSum,
    Written,
    canonical,
)
from ..simplify import fraction, quick


def _value(expr: sp.Expr) -> sp.Expr:
    return canonical(expr) if expr.has(Written) else expr


def _signed(terms: Sequence[sp.Expr]) -> sp.Expr:
    """The sum of ``terms`` in their order, each with its sign pulled out (``a - b``, not
    ``a + (-b)``); a written sum among them is spliced in; zeros are left out."""
    signs: list[int] = []
    kept: list[sp.Expr] = []
    for term in terms:
        if isinstance(term, SignedSum):
            for sign, inner in zip(term.signs, term.terms, strict=True):
                signs.append(sign)
                kept.append(inner)
            continue
        if term == 0:
            continue
        negative = term.could_extract_minus_sign() if not isinstance(term, Written) else False
        signs.append(-1 if negative else 1)
        kept.append(quick.negative(term) if negative else term)
    if not kept:
        return sp.S.Zero
    if len(kept) == 1:
        return kept[0] if signs[0] > 0 else quick.negative(kept[0])
    if signs[0] < 0:  # a leading minus is part of the first term
        signs[0], kept[0] = 1, quick.negative(kept[0])
    return SignedSum.of(signs, kept)


def over(expr: sp.Expr) -> sp.Expr:
    """A lone power with a negative exponent as one over the power (``1/x**2``, which SymPy
    prints ``x**(-2)`` on its own), as a textbook writes it; anything else as it is."""
    if expr.is_Pow and expr.exp.is_negative and expr.exp.is_number:
        power = expr.base if expr.exp == -1 else sp.Pow(expr.base, -expr.exp, evaluate=False)
        return Quotient(sp.S.One, power)
    return expr


class Grouped(Written):
    """A fraction standing as a factor before others, bracketed in text (``(1/x)*x``, not the
    ``1/x*x`` a reader may misread); LaTeX's ``\\frac`` needs no brackets."""

    def value(self, args: list[sp.Expr]) -> sp.Expr:
        return args[0]

    def _sympystr(self, printer) -> str:
        return f"({printer._print(self.args[0])})"

    def _latex(self, printer) -> str:
        return printer._print(self.args[0])


def _factors(*factors: sp.Expr) -> Product:
    """The product of ``factors`` in their order, unevaluated, each fraction but the last
    bracketed (:class:`Grouped`)."""
    shown = [over(f) for f in factors]
    return Product(*(Grouped(f) if i < len(shown) - 1 and _fraction(f) else f
                     for i, f in enumerate(shown)))


def _fraction(expr: sp.Expr) -> bool:
    if isinstance(expr, Quotient):
        return True
    if isinstance(expr, Written) or expr.is_Number:
        return False
    return fraction(expr, exact=True)[1] != 1


def _in_order(terms: Sequence[sp.Expr], result: sp.Expr) -> sp.Expr:
    """The sum of ``terms`` in their order (:func:`_signed`), or SymPy's ``result`` when
    SymPy's sum combines them (``2*x + 1`` for ``(x + 1) + x``, ``0`` for ``a - a``): the
    order of the identity is kept only where each term stays a term of the sum."""
    shown = _signed(terms)
    count = len(shown.terms) if isinstance(shown, SignedSum) else 1
    if isinstance(shown, SignedSum) and any(t.is_Add for t in shown.terms):
        return result
    return shown if count == len(sp.Add.make_args(result)) else result


def _times(c: sp.Expr, shown: sp.Expr) -> sp.Expr:
    """``c`` times a shown result: into every term of a written sum, else one product."""
    if isinstance(shown, SignedSum):
        return _signed([quick.product(quick.product(sp.Integer(sign), c), term)
                        for sign, term in zip(shown.signs, shown.terms, strict=True)])
    return quick.product(c, _value(shown))


def shown_result(step: Any) -> sp.Expr:
    """``step.result`` with its terms in the order of the rule's identity: a product rule's
    ``f' g + f g'`` term by term, a quotient rule's numerator ``f' g - f g'``, a sum's terms in
    the order of its terms (a subtracted term subtracted), a constant multiple's constant
    into each term (a quotient whose numerator SymPy reduced to one term is SymPy's). Other
    rules' results are SymPy's. Equal to ``step.result``."""
    rule, subs = step.rule, step.substeps
    if rule == "product" and len(subs) >= 2:
        factors = [_value(s.expr) for s in subs]
        return _in_order([
            quick.multiplication([*factors[:i], s.result, *factors[i + 1:]])
            for i, s in enumerate(subs)
        ], step.result)
    if rule in ("sum", "difference") and subs:
        signs = getattr(step.expr, "signs", (1,) * len(subs))
        return _in_order([_times(sp.Integer(sign), shown_result(s))
                          for sign, s in zip(signs, subs, strict=True)], step.result)
    if rule == "constant multiple" and len(subs) == 1:
        c = quick.product(_value(step.expr),  # c f / f: SymPy cancels f
                          quick.power(_value(subs[0].expr), sp.S.NegativeOne))
        if step.var in c.free_symbols:
            return step.result
        return _times(c, shown_result(subs[0]))
    parts = _quotient_parts(step)
    if parts is not None and fraction(step.result)[0].is_Add:
        f, g, df, dg = parts
        numerator = _signed([quick.product(df, g), quick.negative(quick.product(f, dg))])
        if numerator == 0:
            return sp.S.Zero
        return Quotient(numerator, quick.power(g, sp.Integer(2)))
    return step.result


def _quotient_parts(step: Any) -> tuple[sp.Expr, ...] | None:
    """``(f, g, f', g')`` of a quotient rule ``f/g`` with a numerator that varies, else None
    (``1/(g_1 g_2)`` writes its own sum of terms)."""
    if step.rule != "quotient" or len(step.substeps) != 2:
        return None
    top, bottom = step.substeps
    f, g = _value(top.expr), _value(bottom.expr)
    if step.var not in f.free_symbols:
        return None
    return f, g, top.result, bottom.result


@dataclass(frozen=True)
class Assembly:
    """A rule's identity with its parts put in: ``pattern`` (``f'(u) u'``, in text and LaTeX)
    and ``parts``, the same right-hand side with the parts' values, unevaluated."""

    pattern: str
    pattern_latex: str
    parts: sp.Expr


def assembly(step: Any, defines: Sequence[tuple[sp.Symbol, sp.Expr]] = ()) -> Assembly | None:
    """The line that puts a chain, product or quotient rule's parts together, or None for
    another rule. ``defines`` are a chain rule's inner functions as shown (default: its own):
    each outer derivative is written with them put back (``u`` replaced by ``-x**2/2``)."""
    if step.rule == "chain" and step.defines:
        shown = list(defines) or list(step.defines)
        back = {symbol: _value(expr) for symbol, expr in step.defines}
        terms = [
            _factors(outer.result.xreplace(back), shown_result(inner))
            for outer, inner in zip(step.outer, step.inner, strict=True)
        ]
        if len(terms) == 1:
            u = shown[0][0]
            return Assembly(f"f'({u}) {u}'", rf"f'({sp.latex(u)})\, {sp.latex(u)}'", terms[0])
        return Assembly("sum of df/du_i u_i'", r"\sum_{i} \frac{\partial f}{\partial u_{i}}\,"
                        r" u_{i}'", SignedSum.of([1] * len(terms), terms))
    if step.rule == "product" and len(step.substeps) >= 2:
        subs = step.substeps
        letters = _letters(len(subs))
        factors = [_value(s.expr) for s in subs]
        terms = [_factors(*factors[:i], shown_result(s), *factors[i + 1:])
                 for i, s in enumerate(subs)]
        pattern = " + ".join(
            " ".join(m + "'" if j == i else m for j, m in enumerate(letters))
            for i in range(len(letters))
        )
        return Assembly(pattern, pattern, SignedSum.of([1] * len(terms), terms))
    parts = _quotient_parts(step)
    if parts is not None:
        f, g, _, _ = parts
        top, bottom = (shown_result(s) for s in step.substeps)
        numerator = SignedSum.of([1, -1], [_factors(top, g), _factors(f, bottom)])
        return Assembly("(f' g - f g')/g^2", r"\frac{f' g - f g'}{g^{2}}",
                        Quotient(numerator, Power(g, sp.Integer(2))))
    if step.rule == "quotient" and len(step.substeps) == 2:  # f = 1
        g = _value(step.substeps[1].expr)
        bottom = shown_result(step.substeps[1])
        return Assembly("-g'/g^2", r"-\frac{g'}{g^{2}}",
                        Negation(Quotient(bottom, Power(g, sp.Integer(2)))))
    return None


def _letters(n: int) -> list[str]:
    """The names of a product's factors in its identity: f g, f g h, f g h k, else f_1 ... f_n
    (as :mod:`symdiff.engine.identities` names them)."""
    return list("fghk"[:n]) if n <= 4 else [f"f_{i}" for i in range(1, n + 1)]
