"""Every rule-table entry against ``sympy.diff`` on its function's domain, and the generated
gradient against central differences. The functions and their domains are the rows of
:mod:`symdiff.registry`: adding a row adds its cases here."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import symdiff as sd
from symdiff import registry
from symdiff.engine.forward import differentiate
from symdiff.engine.rules import RULES
from symdiff.functions import tie_share

from .conftest import X, Y, reference_value, to_reference

ROWS = [
    pytest.param(row, id=row.head.rpartition(":")[2]) for row in registry.ROWS if row.partials
]
RNG_SEED = 20261130
#: Polynomials with values in (-1, 1) on the square (-1, 1)^2, a different one per argument.
#: Forward mode's simplification is quick on these and can take a minute on others
#: (``tanh(x + y/2)``, ``x/2 + y/2 + x*y/3`` under cosh), so change them with care.
_SHAPES = ((X + Y**2) / 2, Y * (X - 1) / 2, X * Y)


def _inner(i: int, lo: float, hi: float) -> sp.Expr:
    """A function of x and y taking values in ``(lo, hi)`` (the number itself if lo == hi)."""
    if lo == hi:
        return sp.nsimplify(lo)
    mid, half = sp.nsimplify((lo + hi) / 2), sp.nsimplify((hi - lo) / 2)
    return mid + half * _SHAPES[i]


def rule_case(row: registry.Fn) -> tuple[sp.Expr, tuple[sp.Expr, ...]]:
    """The function applied to inner functions over its domain, times ``x + 2`` (so that a
    piecewise-constant function still has a gradient to compare); and the inner functions."""
    inner = tuple(_inner(i, lo, hi) for i, (lo, hi) in enumerate(row.domain.args))
    return registry.build_fn(row)(*inner) * (X + 2), inner


def rule_points(row, n=6):
    """Points of the square (-1, 1)^2, away from the function's kinks when there are any."""
    rng = np.random.default_rng(RNG_SEED)
    xs, ys = rng.uniform(-1, 1, 4 * n), rng.uniform(-1, 1, 4 * n)
    if row.domain.kinks is not None:
        kinks = sp.lambdify((X, Y), row.domain.kinks(*rule_case(row)[1]), modules="numpy")
        away = np.all(np.abs(np.broadcast_arrays(*kinks(xs, ys), xs)[:-1]) > 1e-4, axis=0)
        xs, ys = xs[away], ys[away]
    return xs[:n], ys[:n]


def test_every_rule_has_a_domain():
    rows = [p.values[0] for p in ROWS]
    assert set(RULES) == {registry.head_class(row) for row in rows}
    assert all(row.domain is not None for row in rows)


def _reference_derivative(expr, var):
    """sympy.diff on the rewritten expression; tie_share is piecewise constant (derivative 0
    away from ties, where sympy.diff has no rule for our helper)."""
    stripped = expr.replace(tie_share, lambda *a: sp.Symbol("share_placeholder", real=True))
    if stripped != expr:
        share = expr.atoms(tie_share).pop()
        return sp.diff(stripped, var).subs(sp.Symbol("share_placeholder", real=True), share)
    return sp.diff(to_reference(expr), var)


@pytest.mark.parametrize("row", ROWS)
@pytest.mark.parametrize("var", [X, Y], ids=["x", "y"])
def test_derive_matches_sympy_diff(row, var):
    expr = rule_case(row)[0]
    ours = differentiate(expr, var).result
    reference = _reference_derivative(expr, var)
    xs, ys = rule_points(row)
    for xv, yv in zip(xs, ys, strict=True):
        point = {X: sp.Float(xv, 30), Y: sp.Float(yv, 30)}
        assert reference_value(ours, point) == pytest.approx(
            reference_value(reference, point), rel=1e-12, abs=1e-12
        )


@pytest.mark.parametrize("row", ROWS)
def test_generated_gradient_matches_central_differences(row):
    expr = rule_case(row)[0]
    xs, ys = rule_points(row, n=50)
    g = sd.grad(expr, wrt=["x", "y"])
    f = sd.compile(expr)
    gx, gy = g(x=xs, y=ys)
    for name, analytic in (("x", gx), ("y", gy)):
        h = 1e-6
        point = {"x": xs, "y": ys}
        plus = f(**{**point, name: point[name] + h})
        minus = f(**{**point, name: point[name] - h})
        numeric = (plus - minus) / (2 * h)
        np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("row", ROWS)
def test_rule_names_and_identities_are_filled(row):
    rule = RULES[registry.head_class(row)]
    assert rule.name and rule.identity.startswith("d")
