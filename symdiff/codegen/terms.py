"""SymPy's conventional order of a sum's terms (``Expr.as_ordered_terms()``), computed the same
way but quicker: SymPy converts each term's coefficient with ``complex(coeff)``, which evaluates
the number with ``evalf`` (about 0.2 ms a term: most of the time of printing a sum of a few
dozen terms); a rational coefficient converts exactly as ``float``, and here it does.

The steps are SymPy's (1.12-1.14): the special case ``c - d*x`` of ``as_ordered_terms``, then
``as_terms`` and the lexicographic key of ``Expr._parse_order``. The tests compare the result
with ``as_ordered_terms`` itself on generated sums and the golden files check the printed code.
"""

from __future__ import annotations

import sympy as sp
from sympy.core.exprtools import decompose_power
from sympy.core.numbers import Number, NumberSymbol
from sympy.core.sorting import default_sort_key

#: Rationals whose numerator and denominator are below this convert with ``float`` (exactly as
#: ``evalf`` rounds them); larger ones take SymPy's own path.
_FLOAT_SAFE = 2**1000


def _complex(number: sp.Expr) -> complex:
    """``complex(number)`` as SymPy computes it, without ``evalf`` for a moderate rational."""
    if number.is_Rational and abs(number.p) < _FLOAT_SAFE and number.q < _FLOAT_SAFE:
        return complex(float(number))
    return complex(number)


def _key(term: tuple) -> tuple:
    """SymPy's key, the monomial negated (``_as_terms`` stores it negated: its exponents are
    integers)."""
    _, ((re, im), negated, ncpart) = term
    return negated, tuple(e.sort_key() for e in ncpart), ((bool(im), im), (re, im))


def _sorted_gens(gens: set[sp.Expr]) -> list[sp.Expr]:
    """``sorted(gens, key=default_sort_key)``; for plain names that is by name (a name's
    ``sort_key`` is its class key, then ``(1, (name,))``, then constants)."""
    if all(type(g) is sp.Symbol for g in gens):
        return sorted(gens, key=lambda g: g.name)
    return sorted(gens, key=default_sort_key)


def _is_number(arg: sp.Expr) -> bool:
    return isinstance(arg, Number | NumberSymbol)


def _as_terms(expr: sp.Expr) -> list[tuple]:
    """``expr.as_terms()[0]``: each term with its coefficient, monomial (negated) and
    noncommutative part."""
    gens: set[sp.Expr] = set()
    terms = []
    for term in sp.Add.make_args(expr):
        coeff, rest = term.as_coeff_Mul()
        value = _complex(coeff)
        cpart: dict[sp.Expr, int] = {}
        ncpart = []
        if rest is not sp.S.One:
            for factor in sp.Mul.make_args(rest):
                if factor.is_number:
                    try:
                        value *= _complex(factor)
                    except (TypeError, ValueError):
                        pass
                    else:
                        continue
                if factor.is_commutative:
                    base, exp = decompose_power(factor)
                    cpart[base] = exp
                    gens.add(base)
                else:
                    ncpart.append(factor)
        terms.append((term, ((value.real, value.imag), cpart, tuple(ncpart))))
    indices = {g: i for i, g in enumerate(_sorted_gens(gens))}
    result = []
    for term, (coeff, cpart, ncpart) in terms:
        monom = [0] * len(indices)
        for base, exp in cpart.items():
            monom[indices[base]] = -exp  # negated for the key (:func:`_key`)
        result.append((term, (coeff, tuple(monom), ncpart)))
    return result


def ordered_terms(expr: sp.Expr) -> list[sp.Expr]:
    """``expr.as_ordered_terms()`` (``order=None``) of a sum ``expr``."""
    add_args = sorted(sp.Add.make_args(expr), key=lambda a: not _is_number(a))
    if len(add_args) == 2 and _is_number(add_args[0]) and isinstance(add_args[1], sp.Mul):
        mul_args = sorted(sp.Mul.make_args(add_args[1]), key=lambda a: not _is_number(a))
        if (
            len(mul_args) == 2
            and isinstance(mul_args[0], Number)
            and add_args[0].is_positive
            and mul_args[0].is_negative
        ):
            return add_args
    terms = _as_terms(expr)
    if not any(term.is_Order for term, _ in terms):
        ordered = sorted(terms, key=_key)
    else:
        plain = [t for t in terms if not t[0].is_Order]
        orders = [t for t in terms if t[0].is_Order]
        ordered = sorted(plain, key=_key, reverse=True) + sorted(orders, key=_key, reverse=True)
    return [term for term, _ in ordered]
