"""SymPy's plain-text printing of sums and simple products, the same text, without the SymPy
work it does not need: the code printers (:mod:`symdiff.codegen.printer`) and the input-language
printer (:mod:`symdiff.engine.inputtext`) print a 1,000-name gradient's thousands of terms
``c*x*y`` through these.

SymPy decides a product's sign with ``could_extract_minus_sign``, which builds ``-term`` to
compare it with ``term``, asks its precedence (the same again) for every term of a sum, and
sorts a product's factors by ``sort_key``. Here the sign is read off a rational coefficient
(:func:`minus_sign`), the precedence follows (:func:`precedence_of`), and a product of an
integer and names (or their integer powers) is printed directly (:func:`names_product_text`).
Each is read from SymPy 1.12-1.14 (``Mul.could_extract_minus_sign``, ``precedence_Mul``,
``StrPrinter._print_Add``, ``StrPrinter._print_Mul``, ``CodePrinter._print_Mul``); the tests
(``tests/test_quick_printing.py``) compare them with SymPy's own methods on random sums.
"""

from __future__ import annotations

from typing import Any

import sympy as sp
from sympy.printing.precedence import PRECEDENCE, precedence


def minus_sign(term: sp.Expr) -> bool | None:
    """``term.could_extract_minus_sign()`` for a product, without building ``-term``: False
    when its first factor is not a number, whether it is negative for a nonzero rational first
    with no other number among the factors (then ``-term``, with coefficient ``-c``, never
    equals ``term``, SymPy's one exception); None for anything else (ask SymPy)."""
    if type(term) is not sp.Mul:
        return None
    first = term.args[0]
    if not first.is_Number:
        return False
    if first.is_Rational and first.p != 0 and not any(a.is_Number for a in term.args[1:]):
        return first.p < 0
    return None


def precedence_of(item: sp.Basic) -> int:
    """SymPy's ``precedence(item)``, quicker for a name (an atom) and for a product without
    applied functions (``precedence_Mul``: a sum's precedence when it has a minus sign)."""
    kind = type(item)
    if kind is sp.Symbol:
        return PRECEDENCE["Atom"]
    if kind is sp.Mul and not any(isinstance(a, sp.Function) for a in item.args):
        sign = minus_sign(item)
        if sign is not None:
            return PRECEDENCE["Add"] if sign else PRECEDENCE["Mul"]
    return precedence(item)


def joined_terms(printer: Any, terms: list[sp.Expr]) -> str:
    """SymPy's ``StrPrinter._print_Add`` of a sum whose terms print in this order: each term
    printed by ``printer``, its leading minus sign taken as the operator, parenthesised when it
    binds looser than a sum."""
    parts: list[str] = []
    level = PRECEDENCE["Add"]
    for term in terms:
        text = printer._print(term)
        sign = "+"
        if text.startswith("-") and not term.is_Add:
            sign, text = "-", text[1:]
        if term.is_Add or precedence_of(term) < level:
            text = f"({text})"
        parts += (sign, text)
    sign = parts.pop(0)
    return ("" if sign == "+" else sign) + " ".join(parts)


def _name_factors(expr: sp.Mul, ordered: bool) -> tuple[int, list[sp.Expr]] | None:
    """``(c, factors)`` for a commutative product of an optional integer coefficient ``c``
    (not 0 or 1) and names (``Symbol``) or their powers with integer exponents above 1, no
    name twice; the factors in stored order, or with ``ordered`` in ``as_ordered_factors``'s
    (by ``sort_key``: by name, a power keyed by its base). None for any other product."""
    args = expr.args
    coefficient = 1
    if args[0].is_Integer:
        coefficient, args = args[0].p, args[1:]
        if coefficient in (0, 1):  # (in an unevaluated product only: SymPy prints ``1*x``)
            return None
    keys = []
    for factor in args:
        kind = type(factor)
        if kind is sp.Symbol and factor.is_commutative:
            keys.append((factor.name, factor))
        elif kind is sp.Pow and type(factor.base) is sp.Symbol and factor.exp.is_Integer and (
                factor.exp.p > 1 and factor.base.is_commutative):
            keys.append((factor.base.name, factor))
        else:
            return None
    if not keys or len({name for name, _ in keys}) != len(keys):
        return None
    if ordered:
        keys.sort(key=lambda pair: pair[0])
    return coefficient, [factor for _, factor in keys]


def names_product_text(printer: Any, expr: sp.Expr) -> str | None:
    """What SymPy's ``_print_Mul`` (the code printer's and the plain one's agree here) prints
    for a product of an integer and names or their powers (:func:`_name_factors`): the sign,
    then the coefficient unless it is 1 or -1, then the factors in the printer's order, none
    parenthesised (names and their powers bind tighter than a product); None for any other
    expression."""
    if type(expr) is not sp.Mul:
        return None
    simple = _name_factors(expr, printer.order not in ("old", "none"))
    if simple is None:
        return None
    coefficient, factors = simple
    printed = [printer._print(factor) for factor in factors]
    if abs(coefficient) != 1:
        printed.insert(0, printer._print(sp.Integer(abs(coefficient))))
    return ("-" if coefficient < 0 else "") + "*".join(printed)
