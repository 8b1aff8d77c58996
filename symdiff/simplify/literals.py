"""The literals a rewrite may introduce: :func:`keeps_literals`.

Clearing denominators is exact in rationals and ruinous in floating point when it crosses nested
levels: ``x - (x**2 - a)/20`` iterated eight times and brought over one denominator has
coefficients like ``20**256``, which float64 cannot hold (``1e999`` in the code, then ``inf -
inf``). A simplified form is kept only when its numbers have at most
:data:`GROWTH_DIGITS` more digits than those of the form it replaces, and none outside
float64's range (:data:`FLOAT_RANGE`) unless the original had one too.
"""

from __future__ import annotations

import math

import sympy as sp

from .budget import operation_nodes
from .dag import distinct_nodes

#: How many more digits a rewrite may give the numerators and denominators of its numbers.
GROWTH_DIGITS = 4
#: The magnitudes a float64 literal holds with full precision (well inside 1e-308 .. 1.8e308).
FLOAT_RANGE = (1e-300, 1e300)
_LOG10_2 = math.log10(2)


def _digits(n: int) -> int:
    """Decimal digits of ``|n|``, from its bit length (no conversion to a string, which Python
    refuses beyond 4,300 digits)."""
    return int(abs(n).bit_length() * _LOG10_2) + 1


def _magnitude(number: sp.Number) -> float | None:
    """log10 of ``|number|`` (None for 0 and non-finite numbers)."""
    if number.is_zero or not number.is_finite:
        return None
    if number.is_Rational:
        p, q = abs(int(number.p)), int(number.q)
        return (p.bit_length() - q.bit_length()) * _LOG10_2
    return math.log10(abs(float(sp.Float(number, 15)))) if number.is_Float else None


def literal_digits(expr: sp.Basic) -> int:
    """The most digits of a numerator or denominator among the rational numbers of ``expr``."""
    most = 0
    for node in distinct_nodes([expr]):
        if node.is_Rational:
            most = max(most, _digits(int(node.p)), _digits(int(node.q)))
    return most


def in_float_range(expr: sp.Basic) -> bool:
    """Whether every number of ``expr`` is 0 or of a magnitude float64 holds exactly enough
    (:data:`FLOAT_RANGE`)."""
    low, high = (math.log10(v) for v in FLOAT_RANGE)
    for node in distinct_nodes([expr]):
        if node.is_Number:
            size = _magnitude(node)
            if size is not None and not low <= size <= high:
                return False
    return True


def keeps_literals(before: sp.Basic, after: sp.Basic) -> bool:
    """Whether ``after``, a rewrite of ``before``, gives its numbers at most
    :data:`GROWTH_DIGITS` more digits and none outside :data:`FLOAT_RANGE` that ``before`` did
    not have."""
    if literal_digits(after) > literal_digits(before) + GROWTH_DIGITS:
        return False
    return in_float_range(after) or not in_float_range(before)


#: ``factor_terms`` walks the tree: expressions with more operations in their tree are left
#: (the gradient of a sum of 800 terms ``sin(k*x + y/k)/k``, 3,200 operations, spent a fifth
#: of its build there and came out the same).
FACTOR_MAX_OPS = 1_000


def common_factors(expr: sp.Expr) -> sp.Expr:
    """``sympy.factor_terms(expr)`` (``200*a - 200*b`` -> ``200*(a - b)``) where that keeps the
    literals (:func:`keeps_literals`: taking factors out of nested sums clears their
    denominators, whose product grows with the depth), else ``expr``; ``expr`` too when its
    tree has more than :data:`FACTOR_MAX_OPS` operations."""
    if not isinstance(expr, sp.Expr) or operation_nodes(expr, FACTOR_MAX_OPS + 1) > FACTOR_MAX_OPS:
        return expr
    factored = sp.factor_terms(expr)
    return factored if keeps_literals(expr, factored) else expr
