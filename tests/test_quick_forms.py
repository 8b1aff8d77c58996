"""The quick SymPy constructions of the build (:mod:`symdiff.simplify.quick`) and the quick
term order of the printer (:mod:`symdiff.codegen.terms`) give exactly what SymPy gives: the same
node (class, arguments in order, flags) and the same order, on seeded random expressions that
include the cases they must leave to SymPy (numbers, ``I``, infinities, coefficients 0 and 1,
noncommutative factors)."""

from __future__ import annotations

import operator
import random

import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from symdiff.codegen.terms import ordered_terms
from symdiff.simplify.quick import addition, power, product, rebuilt, substitute, total

X, Y, Z = sp.symbols("x y z", real=True)
ATOMS = [X, Y, Z, sp.Integer(2), sp.Integer(-3), sp.Rational(1, 2), sp.pi, sp.E, sp.S.One,
         sp.S.Zero, sp.I, sp.oo, sp.Float(1.5)]
EXPONENTS = [sp.Integer(k) for k in (2, 3, -1, -2, 0, 1)] + [sp.S.Half]
COEFFICIENTS = [sp.Integer(2), sp.S.NegativeOne, sp.Rational(3, 4), sp.S.One, sp.S.Zero]


def _random(rng: random.Random, depth: int) -> sp.Expr:
    if depth == 0:
        return rng.choice(ATOMS)
    a, b = _random(rng, depth - 1), _random(rng, depth - 1)
    make = rng.choice([
        lambda: a + b, lambda: a * b, lambda: a - b, lambda: a ** rng.choice(EXPONENTS),
        lambda: rng.choice([sp.sin, sp.exp, sp.log, sp.Abs])(a),
        lambda: a / b if b != 0 else a,
    ])
    try:
        return make()
    except (ArithmeticError, ValueError, TypeError):
        return a


def _same(a: sp.Basic, b: sp.Basic) -> bool:
    return type(a) is type(b) and sp.srepr(a) == sp.srepr(b) and (
        a.is_commutative == b.is_commutative)


def _agree(quick, slow, *args) -> bool:
    """Whether two constructions give the same node, or both raise the same error."""
    try:
        expected = slow(*args)
    except (ArithmeticError, ValueError, TypeError) as error:
        with pytest.raises(type(error)):
            quick(*args)
        return True
    return _same(quick(*args), expected)


def _rebuilt_mul(left: sp.Expr, right: sp.Expr) -> sp.Expr:
    return rebuilt(sp.Mul, (left, right))


def _xreplace(expr: sp.Expr, rule: dict) -> sp.Expr:
    return expr.xreplace(rule)


@pytest.mark.parametrize("seed", range(2))
def test_quick_nodes_are_sympys(seed: int) -> None:
    rng = random.Random(seed)
    quick = 0
    for _ in range(40):
        try:
            base = _random(rng, 2) + _random(rng, 2)
        except (ArithmeticError, ValueError, TypeError):
            continue
        exponent = rng.choice(EXPONENTS)
        assert _agree(power, sp.Pow, base, exponent)
        try:
            expected = sp.Pow(base, exponent)
        except (ArithmeticError, ValueError, TypeError):
            continue
        coefficient = rng.choice(COEFFICIENTS)
        for left, right in ((coefficient, expected), (expected, coefficient)):
            assert _agree(product, operator.mul, left, right), (left, right)
            assert _agree(_rebuilt_mul, sp.Mul, left, right)
            quick += _same(product(left, right), sp.Mul(left, right, evaluate=False))
        expr = _random(rng, 3)
        rule = {X: _random(rng, 2), Y: _random(rng, 1)}
        assert _agree(substitute, _xreplace, expr, rule), (expr, rule)
    assert quick > 0  # the quick path was taken


def test_quick_products_of_names_are_sympys() -> None:
    """Products of names with coefficients, as the parser and the sweeps make them (``c*x*y``),
    with shared names, coefficients that cancel to 1 or make 0, and powers among them."""
    rng = random.Random(5)
    names = sp.symbols("b0:6", real=True)
    pieces = [*names, 2 * names[0], -names[1], sp.Rational(1, 3) * names[2] * names[3],
              names[4] * names[5], sp.S.Half, sp.Integer(2), sp.S.Zero, -sp.S.One,
              names[0] ** 2, 3 * names[1] ** 2 * names[2], sp.Integer(7) * names[5]]
    quick = 0
    for _ in range(300):
        left, right = rng.choice(pieces), rng.choice(pieces)
        made = product(left, right)
        assert _same(made, left * right), (left, right)
        assert _same(rebuilt(sp.Mul, (left, right)), sp.Mul(left, right)), (left, right)
        quick += made is not left * right
    assert quick > 50


def test_quick_sums_are_sympys() -> None:
    """Long sums as the parser builds them (terms, then a rational constant), with like terms,
    numbers, sums, powers of numbers and of sums among the terms."""
    rng = random.Random(3)
    names = sp.symbols("a0:12", real=True)
    quick = 0
    for _ in range(60):
        terms = []
        for _ in range(rng.randrange(1, 14)):
            v, w = rng.choice(names), rng.choice(names)
            staying = [v, 3 * v, -v, v * w, -2 * v * w, v**2, 5 * v**3, (v - w**2) ** 2,
                       100 * (v - w**2) ** 2, (1 - v) ** 2, sp.S.Half * v]
            other = [sp.sqrt(2) * v, sp.sin(v), 2 * sp.exp(v), sp.Rational(1, 2) * (v + w),
                     sp.Integer(2) ** v, sp.Float(0.5) * v, (v + w) ** sp.S.Half]
            terms.append(rng.choice(staying if rng.random() < 0.9 else other))
        constant = rng.choice([sp.S.Zero, sp.Integer(3), sp.Rational(-1, 7)])
        expected = sp.Add(*terms, constant)
        made = total(terms, constant)
        assert _same(made, expected), (terms, constant)
        mixed = [*terms, constant, *(rng.choice([sp.Integer(2), sp.pi]) for _ in range(
            rng.randrange(2)))]
        rng.shuffle(mixed)
        assert _same(addition(mixed), sp.Add(*mixed)), mixed
        assert _same(rebuilt(sp.Add, tuple(mixed)), sp.Add(*mixed)), mixed
        quick += made is not expected
    assert quick > 5


def test_ordered_terms_are_sympys() -> None:
    rng = random.Random(7)
    a, b = sp.symbols("A B", commutative=False)
    numbers = [sp.Integer(2), sp.Integer(-3), sp.Rational(-7, 3), sp.pi, sp.sqrt(2),
               sp.Float(1.5), sp.Integer(10) ** 400, sp.Rational(1, 10**500), sp.I, 1 + 3 * sp.I]

    def term() -> sp.Expr:
        c, v = rng.choice(numbers), rng.choice([X, Y, Z])
        return rng.choice([
            c, c * v ** rng.choice([1, 2, -1, sp.S.Half]), c * X * v, c * sp.sin(v),
            c * (v + 1) ** 2, v ** Z, a * b * v, sp.exp(c * v),
        ])

    checked = 0
    for _ in range(120):
        expr = sp.Add(*(term() for _ in range(rng.randrange(2, 10))))
        if expr.is_Add:
            checked += 1
            assert ordered_terms(expr) == expr.as_ordered_terms(), expr
    assert checked > 90
    assert ordered_terms(3 - 2 * X) == (3 - 2 * X).as_ordered_terms()  # SymPy's special case


# -- products of monomials, integer powers of names and sums (hypothesis) ---------------------
_NAMES = [*sp.symbols("p0:4", real=True), sp.Symbol("q"), sp.Dummy("d"),
          sp.Symbol("n", commutative=False)]
_RATIONALS = [sp.S.One, sp.S.NegativeOne, sp.S.Zero, sp.Integer(2), sp.Integer(-200),
              sp.Rational(1, 3), sp.Rational(-5, 2)]
_OTHERS = [sp.Float(1.5), sp.pi, sp.I, sp.oo, sp.zoo, sp.nan, sp.sqrt(2)]
_EXPONENTS = [sp.Integer(k) for k in (-3, -2, -1, 0, 1, 2, 3)] + [sp.S.Half, sp.Symbol("k")]


def _factor(draw) -> sp.Expr:
    name = draw(st.sampled_from(_NAMES))
    return name ** draw(st.sampled_from(_EXPONENTS)) if draw(st.booleans()) else name


@st.composite
def _operands(draw) -> sp.Expr:
    """A number, a name, an integer power of one, a monomial ``c*x**a*y``, a sum of such, or a
    function of a name: the operands reverse mode multiplies (and some it must leave to SymPy)."""
    kind = draw(st.integers(0, 5))
    if kind == 0:
        return draw(st.sampled_from(_RATIONALS + _OTHERS))
    if kind == 1:
        return _factor(draw)
    monomial = sp.Mul(draw(st.sampled_from(_RATIONALS + _OTHERS[:2])),
                      *(_factor(draw) for _ in range(draw(st.integers(1, 3)))))
    if kind in (2, 3):
        return monomial
    if kind == 4:
        return monomial + draw(_operands()) + draw(st.sampled_from(_RATIONALS))
    return sp.exp(draw(st.sampled_from(_NAMES[:5])))


@settings(max_examples=600, deadline=None, derandomize=True)
@given(_operands(), _operands())
def test_quick_products_are_sympys_hypothesis(left: sp.Expr, right: sp.Expr) -> None:
    """``product`` and ``rebuilt(Mul, ...)`` give SymPy's node for every pair: the factor 1,
    products of names and their integer powers (sorted, never combined), a rational distributed
    over a sum, and everything else left to SymPy; ``power`` of a name likewise."""
    assert _agree(product, operator.mul, left, right), (left, right)
    assert _agree(_rebuilt_mul, sp.Mul, left, right), (left, right)
    for exponent in _EXPONENTS:
        assert _agree(power, sp.Pow, left, exponent), (left, exponent)


def test_quick_products_take_the_quick_rules() -> None:
    """The rules the sweeps rely on are taken: each gives SymPy's node without ``Mul.flatten``
    (the evaluation they skip)."""
    from unittest import mock

    from sympy.core.cache import clear_cache

    x, y = _NAMES[:2]
    cases = [(sp.S.One, x * y), (x ** 2, sp.S.One), (sp.Integer(3), x ** 2),
             (2 * x, y ** -2), (sp.Integer(200), y - x ** 2), (-x, sp.Integer(7) * y)]
    for left, right in cases:
        expected = left * right
        clear_cache()
        with mock.patch.object(sp.Mul, "flatten", side_effect=AssertionError("evaluated")):
            made = product(left, right)
        assert _same(made, expected), (left, right)


@st.composite
def _fractions(draw) -> sp.Expr:
    """Products of names, sums and their integer powers, as nested fractions build them
    (``x/(1 + (x/(1 + y**2))**2)``), and numbers and other factors among them."""
    kind = draw(st.integers(0, 4))
    if kind == 0:
        return draw(st.sampled_from(_RATIONALS + _OTHERS[:3]))
    if kind == 1:
        return _factor(draw)
    if kind == 2:
        return draw(_operands()) + draw(st.sampled_from([*_NAMES[:3], sp.S.One]))
    inner = draw(_fractions()) if kind == 3 else draw(_operands())
    term = sp.Mul(draw(st.sampled_from(_RATIONALS)), _factor(draw),
                  (1 + inner ** 2) ** draw(st.sampled_from([-1, -2, 2, 1])))
    return term if draw(st.booleans()) else sp.Mul(term, sp.sin(_NAMES[0]))


@settings(max_examples=500, deadline=None, derandomize=True)
@given(_fractions(), _fractions(), st.sampled_from(_EXPONENTS))
def test_quick_fraction_products_and_powers_are_sympys(left: sp.Expr, right: sp.Expr,
                                                      exponent: sp.Expr) -> None:
    """``product`` of two products of names, sums and their powers, and ``power`` of one,
    give SymPy's node: the factors' powers taken one by one, the bases never combined."""
    assert _agree(product, operator.mul, left, right), (left, right)
    assert _agree(power, sp.Pow, left, exponent), (left, exponent)
    assert _agree(power, sp.Pow, left * right, exponent), (left, right, exponent)


def test_quick_fraction_rules_are_taken() -> None:
    """A nested fraction's power and product are made without ``Mul.flatten`` (whose
    re-evaluated powers of sums ask assumption queries that clear every nested denominator)."""
    from unittest import mock

    from sympy.core.cache import clear_cache

    x, y = _NAMES[:2]
    inner = x * (1 + y**2) ** -1
    cases = [(power, inner, sp.Integer(2)), (power, 3 * inner, sp.Integer(-2)),
             (product, x, (1 + inner**2) ** -1), (product, 2 * x * (x + y), (1 + y) ** -2)]
    for make, left, right in cases:
        expected = (make.__name__ == "power" and left**right) or left * right
        clear_cache()
        with mock.patch.object(sp.Mul, "flatten", side_effect=AssertionError("evaluated")):
            made = make(left, right)
        assert _same(made, expected), (left, right)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(_operands(), min_size=0, max_size=4), st.sampled_from(_RATIONALS))
def test_quick_short_sums_are_sympys_hypothesis(terms: list, constant: sp.Expr) -> None:
    """``total`` and ``addition`` give SymPy's ``Add`` for sums of none, one or a few terms
    (a lone term, a constant 0, a rational and a product: ``AssocOp``'s and ``Add``'s special
    cases), like terms and noncommutative ones included."""
    plain = [t for t in terms if not t.is_Rational]
    assert _agree(lambda *a: total(list(a[:-1]), a[-1]), sp.Add, *plain, constant)
    assert _agree(lambda *a: addition(a), sp.Add, *terms, constant)
