"""The n-ary products, negations and powers of :mod:`symdiff.simplify.quick`, the predicates of
:mod:`symdiff.simplify.staying` and the measure of :mod:`symdiff.simplify.measure` give exactly
what SymPy gives (the same node, flags included; the same number), on seeded random
expressions that include the cases they must leave to SymPy (numbers, ``I``, infinities,
floats, functions with their own powers such as ``exp`` and ``Abs``, noncommutative names)."""

from __future__ import annotations

import random

import pytest
import sympy as sp

from symdiff.simplify.measure import count_ops, fraction
from symdiff.simplify.quick import multiplication, negative, power, product
from symdiff.simplify.staying import compare, is_number

from .test_quick_forms import _agree, _random, _same

X, Y, Z = sp.symbols("x y z", real=True)
N = sp.Symbol("n", commutative=False)
F = sp.Function("f")


def _factor(rng: random.Random) -> sp.Expr:
    """A factor as derivatives hold them: names, sums, calls (plain ones and those with their
    own powers), integer powers of all of these, numbers, and some SymPy must handle."""
    base = rng.choice([
        X, Y, Z, X + 1, X * Y + Z, sp.sin(X), sp.cos(Y + Z), F(X), sp.exp(X), sp.Abs(Y),
        sp.log(1 + X**2), sp.Piecewise((X, X < 1), (Y, True)), sp.sqrt(X + 2), 1 + sp.I * X,
        _random(rng, 2),
    ])
    kind = rng.randrange(6)
    if kind == 0:
        return rng.choice([sp.Integer(2), sp.Rational(-3, 4), sp.S.NegativeOne, sp.S.One,
                           sp.S.Zero, sp.Float(1.5), sp.pi, sp.oo, N])
    if kind == 1:
        return base
    exponent = rng.choice([2, 3, -1, -2, -3, sp.S.Half])
    try:
        return base ** exponent
    except (ArithmeticError, ValueError, TypeError):
        return base


@pytest.mark.parametrize("seed", range(3))
def test_products_and_powers_are_sympys(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(150):
        factors = [_factor(rng) for _ in range(rng.randrange(1, 6))]
        assert _agree(multiplication, lambda a: sp.Mul(*a), factors), factors
        left, right = factors[0], _factor(rng)
        assert _agree(product, lambda a, b: a * b, left, right), (left, right)
        base = rng.choice(factors)
        for k in (2, -1, -2, 3):
            assert _agree(power, sp.Pow, base, sp.Integer(k)), (base, k)
        expr = multiplication(factors)
        assert _same(negative(expr), -expr), expr


def test_products_combine_and_cancel_equal_bases() -> None:
    """What the deriver builds most: powers of one sum meeting in a product (a quotient rule's
    ``(f' g - f g')/g**2`` times ``g``) combine, and cancel to 1, exactly as SymPy's."""
    g = 1 + X**2 / (1 + X**2) ** 2
    for factors in ([g**-2, g], [g**-2, g**2], [sp.Integer(2), g**-1, X, g**3], [sp.sin(X) ** 2,
                                                                    sp.sin(X) ** -2, Y]):
        assert _same(multiplication(factors), sp.Mul(*factors)), factors


@pytest.mark.parametrize("seed", range(2))
def test_order_and_number_tests_are_sympys(seed: int) -> None:
    rng = random.Random(seed)
    exprs = []
    while len(exprs) < 150:
        try:
            exprs.append(_random(rng, rng.randrange(0, 4)))
        except (ArithmeticError, ValueError, TypeError):
            continue
    exprs += [sp.FiniteSet(1, 2), sp.Symbol("x", positive=True), sp.sin(1), F(X), sp.I * X]
    for a in exprs:
        assert is_number(a) == a.is_number, a
        for b in rng.sample(exprs, 20):
            assert compare(a, b) == a.compare(b), (a, b)


@pytest.mark.parametrize("seed", range(2))
def test_count_ops_and_fraction_are_sympys(seed: int) -> None:
    rng = random.Random(seed + 10)
    special = [sp.Piecewise((X, X < 1), (Y, True)), sp.Max(X, Y, 2), -X - Y, X / 2, -X / 2,
               2 / X, sp.exp(-X) * Y, sp.sqrt(X) / Y**3, F(X), X**Y / Z, sp.exp(X) ** -2]
    for expr in special:
        assert count_ops(expr) == sp.count_ops(expr), expr
    for _ in range(400):
        try:
            expr = _random(rng, rng.randrange(1, 5))
        except (ArithmeticError, ValueError, TypeError):
            continue
        assert count_ops(expr) == sp.count_ops(expr), expr
        for exact in (False, True):
            assert _same_pair(fraction(expr, exact), sp.fraction(expr, exact)), (expr, exact)


def _same_pair(a: tuple[sp.Expr, sp.Expr], b: tuple[sp.Expr, sp.Expr]) -> bool:
    return all(_same(x, y) for x, y in zip(a, b, strict=True))
