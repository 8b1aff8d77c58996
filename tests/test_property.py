"""Property tests over random expressions: every supported function, nested up to 5 deep.

Arguments are wrapped so that each function stays on its valid domain (``log(2 + sin(u))``,
``asin(tanh(u)/2)``, ...), and values stay finite. The reference is ``sympy.diff`` evaluated with
mpmath at 30 digits; symdiff's generated NumPy gradient must agree to 1e-9 relative (with an
absolute floor of 1e-9 for values near zero).
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import symdiff as sd
from symdiff import registry
from symdiff.engine.forward import differentiate

from .conftest import (
    X,
    Y,
    Z,
    drop_step_derivatives,
    mpmath_met_complex,
    sympy_cannot_print,
    to_reference,
)


def _into_domain(row: registry.Fn, *args: sp.Expr) -> list[sp.Expr]:
    """The arguments mapped into the row's domain (``mid + half*tanh(u)``; a number where the
    domain fixes one), so that every function stays finite however deep it is nested."""
    args_iter = iter(args)
    mapped = []
    for lo, hi in row.domain.args:
        if lo == hi:
            mapped.append(sp.nsimplify(lo))
        else:
            mid, half = sp.nsimplify((lo + hi) / 2), sp.nsimplify((hi - lo) / 2)
            mapped.append(mid + half * sp.tanh(next(args_iter)))
    return mapped


def _free(row: registry.Fn) -> int:
    return sum(lo != hi for lo, hi in row.domain.args)


def _of_row(row: registry.Fn):
    build = registry.build_fn(row)

    def call(*args):
        if row.names[0] == "mod" and not any(a.free_symbols for a in args):
            # SymPy's Mod evaluates constant arguments through evalf, which does not end on
            # nested logaddexp (a CI run hung there); the tests differentiate in variables
            return sum(args)
        return build(*_into_domain(row, *args))

    return call


#: Every public function of the registry, its arguments kept in its domain; then shapes that
#: are not one function (powers, quotients, ``log`` to a base).
_PUBLIC = [row for row in registry.ROWS if row.names]
UNARY = [_of_row(row) for row in _PUBLIC if _free(row) == 1] + [
    lambda u: sp.log(1 + u**2, 2),
    lambda u: sp.sin(u) ** 3,
    lambda u: 1 / (1 + u**2),
    lambda u: (2 + sp.sin(u)) ** sp.Rational(1, 3),
    lambda u: 3 ** sp.tanh(u),
]

BINARY = [_of_row(row) for row in _PUBLIC if _free(row) == 2] + [
    lambda u, v: u + v,
    lambda u, v: u - 2 * v,
    lambda u, v: u * v,
    lambda u, v: u / (1 + v**2),
    lambda u, v: sp.Max(u, v),
    lambda u, v: sp.Min(u, v, 0),
    lambda u, v: (2 + sp.sin(u)) ** sp.tanh(v),
]

leaves = st.sampled_from([X, Y, Z, X, Y, Z, sp.Rational(1, 2), sp.Integer(3), sp.pi])


def _built(make, *args: sp.Expr) -> sp.Expr:
    """``make(*args)``, or ``nan`` (which the strategy filters out) where SymPy cannot build it:
    its constructors evaluate constant arguments, and some of those comparisons and roundings
    fail in SymPy itself (``Max`` of two constants it cannot compare, ``int`` of a nested
    constant, asked whether ``tanh`` of it is real)."""
    if any(a.has(sp.nan) for a in args):
        return sp.nan
    try:
        built = make(*args)
        for node in sp.preorder_traversal(built):  # constants whose assumptions SymPy cannot
            if node.is_number and not node.is_Atom:  # answer (the parser refuses them)
                node.is_extended_real  # noqa: B018
        return built
    except (ValueError, TypeError, NotImplementedError, RecursionError):
        return sp.nan


def _extend(children):
    unary = st.tuples(st.sampled_from(range(len(UNARY))), children).map(
        lambda t: _built(UNARY[t[0]], t[1])
    )
    binary = st.tuples(st.sampled_from(range(len(BINARY))), children, children).map(
        lambda t: _built(BINARY[t[0]], t[1], t[2])
    )
    return unary | binary


expressions = st.recursive(leaves, _extend, max_leaves=8).filter(
    # SymPy folds some constant subtrees into complex forms (atan2 of numbers): not our input.
    lambda e: bool(e.free_symbols & {X, Y, Z}) and not e.has(sp.I, sp.zoo, sp.nan, sp.oo)
)
points = st.tuples(*(st.floats(-2, 2, allow_nan=False) for _ in range(3)))


def _heaviside(value, at_zero=0.5):
    """Heaviside step, evaluated (the tests stay away from its jump): SymPy's printer would
    rewrite it as a Piecewise, which fails on some arguments (a ConditionSet) in SymPy itself.
    A complex argument (SymPy's reference may pass through i*tan(i*x)) is compared by its real
    part; the value's own imaginary part is checked at the end."""
    if isinstance(value, mpmath.mpc):
        value = value.real
    return 0 if value < 0 else (at_zero if value == 0 else 1)


def _mp_value(expression, point):
    """``expression`` at ``point`` through mpmath at 30 digits, or at 120 where 30 divide by
    zero: a constant such as ``log(erfc(3 + 6*tanh(3))**2 + 1)`` (about 1e-73) is 0 at 30
    digits. Undefined at 120 digits too: no reference at this point (the example is dropped).
    A complex value whose imaginary part is a rounding residue (SymPy differentiates ``abs``
    through ``re`` and ``im``) is its real part; one with a real imaginary part is dropped, as
    is one that mpmath cannot compare (a complex argument of ``Min``, ``Max`` or ``atan2``)."""
    for digits in (30, 120):
        with mpmath.workdps(digits):
            try:  # (printing rewrites tanh through tan(I*u): Min of such constants fails)
                fn = sp.lambdify((X, Y, Z), expression,
                                 modules=[{"Heaviside": _heaviside}, "mpmath"])
            except ValueError as error:
                assume(not sympy_cannot_print(error))
                raise
            try:
                value = fn(*(mpmath.mpf(v) for v in point))
            except ZeroDivisionError:
                continue
            except (TypeError, AttributeError) as error:
                if mpmath_met_complex(error):
                    break  # complex in earnest: no real reference here
                raise
            if isinstance(value, mpmath.mpc):  # SymPy's derivative of abs goes through re/im
                if abs(value.imag) > mpmath.mpf(10) ** (8 - digits) * max(1, abs(value.real)):
                    break  # complex in earnest: no real reference here
                value = value.real  # a rounding residue of an imaginary part that cancels
            return float(value)
    assume(False)
    raise AssertionError("unreachable")


def _reference(expr, var, point):
    derivative = sp.diff(to_reference(expr), var).replace(sp.DiracDelta, lambda *a: sp.S.Zero)
    derivative = drop_step_derivatives(derivative)  # sign' = floor' = 0, left unevaluated
    return _mp_value(derivative, point)


def _kink_gaps(expr):
    """Expressions that are zero exactly at a kink of ``expr`` (ties of max/min, abs at 0...):
    each registry row's ``domain.kinks``."""
    kinked = {row.head.rpartition(":")[2]: row for row in registry.ROWS
              if row.head and row.domain.kinks}
    for node in sp.preorder_traversal(expr):
        row = kinked.get(type(node).__name__)
        if row is not None:
            yield from row.domain.kinks(*node.args)


def _away_from_kinks(expr, point) -> bool:
    """True unless the point sits on a kink, where the conventions (tested on their own) apply
    and sympy.diff's Heaviside(0) = 1/2 is not our tie-splitting rule. The gaps are evaluated
    with mpmath at 30 digits, like the references: SymPy's ``evalf`` of nested ``logaddexp``
    raises its precision without end (it ran for minutes on one drawn example)."""
    gaps = [to_reference(gap) for gap in _kink_gaps(expr)]
    if not gaps:
        return True
    with mpmath.workdps(30):
        try:
            fn = sp.lambdify((X, Y, Z), gaps, modules=[{"Heaviside": _heaviside}, "mpmath"])
        except ValueError as error:
            if sympy_cannot_print(error):
                return False  # no reference either
            raise
        try:
            values = fn(*(mpmath.mpf(v) for v in point))
        except (ZeroDivisionError, ValueError):  # undefined there: no reference either
            return False
        except (TypeError, AttributeError) as error:
            if mpmath_met_complex(error):
                return False  # no real reference either
            raise
    return all(abs(complex(value)) > 1e-9 for value in values)


def _close(ours: float, reference: float) -> bool:
    return abs(ours - reference) <= 1e-9 * max(1.0, abs(reference))


def _occurring(expr, builder):
    """The variables of ``expr`` among x, y, z (at least one, else the example is skipped).
    Asking for one that does not occur is an error, not a zero gradient."""
    wrt = [v for v in (X, Y, Z) if v in expr.free_symbols]
    assume(wrt)
    if len(wrt) < 3:
        with pytest.raises(sd.ParseError, match="does not occur"):
            builder(expr, wrt=["x", "y", "z"], cache=False)
    return wrt


@settings(max_examples=60)
@given(expr=expressions, point=points)
def test_generated_gradient_matches_sympy_diff(expr, point):
    assume(_away_from_kinks(expr, point))
    wrt = _occurring(expr, sd.grad)
    g = sd.grad(expr, wrt=[v.name for v in wrt], simplify=False, cache=False)
    values = dict(zip(("x", "y", "z"), point, strict=True))
    with np.errstate(all="ignore"):
        ours = g(**{a: values[a] for a in g.args})
    for var, value in zip(wrt, ours, strict=True):
        reference = _reference(expr, var, point)
        assert _close(float(value), reference), (expr, var, float(value), reference)


@settings(max_examples=60)
@given(expr=expressions, point=points)
def test_reverse_mode_matches_sympy_diff(expr, point):
    assume(_away_from_kinks(expr, point))
    wrt = _occurring(expr, sd.value_and_grad)
    vg = sd.value_and_grad(expr, wrt=[v.name for v in wrt], mode="reverse", cache=False)
    values = dict(zip(("x", "y", "z"), point, strict=True))
    with np.errstate(all="ignore"):
        _, ours = vg(**{a: values[a] for a in vg.args})
    for var, value in zip(wrt, ours, strict=True):
        reference = _reference(expr, var, point)
        assert _close(float(value), reference), (expr, var, float(value), reference)


@settings(max_examples=60)
@given(expr=expressions, point=points)
def test_derive_result_matches_sympy_diff_at_points(expr, point):
    assume(_away_from_kinks(expr, point))
    var = sorted(expr.free_symbols, key=str)[0]
    ours = differentiate(expr, var).result
    value = _mp_value(to_reference(ours), point)
    assert _close(value, _reference(expr, var, point))


@settings(max_examples=12)  # simplify_for_people is slow on some draws
@given(expr=expressions)
def test_simplified_derivation_equals_raw_derivation(expr):
    var = sorted(expr.free_symbols, key=str)[0]
    d = sd.derive(expr, wrt=str(var))
    rng = np.random.default_rng(0)
    for point in rng.uniform(-2, 2, (3, 3)):
        subs = dict(zip((X, Y, Z), (sp.Float(v, 30) for v in point), strict=True))
        try:
            a, b = (complex(reference_value_any(e, subs)) for e in (d.result, d.raw))
        except ZeroDivisionError:  # a closed-form reference that is 0/0 there (sinc'(0))
            continue
        assert abs(a - b) <= 1e-9 * max(1.0, abs(b))


def reference_value_any(expr, subs):
    """Value at a point at 30 digits, with derivative-only terms (DiracDelta) removed; through
    mpmath, since SymPy's ``evalf`` of nested ``logaddexp`` raises its precision without end."""
    expr = to_reference(expr).replace(sp.DiracDelta, lambda *a: sp.S.Zero)
    symbols = sorted(subs, key=str)
    with mpmath.workdps(30):
        fn = sp.lambdify(symbols, expr, modules=[{"Heaviside": _heaviside}, "mpmath"])
        return fn(*(mpmath.mpf(str(subs[s])) for s in symbols))
