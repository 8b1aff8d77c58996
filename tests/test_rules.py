"""Every rule-table entry against ``sympy.diff`` on its own domain, and the generated gradient
against central differences. Adding a function to RULES means adding a row to DOMAINS."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from sympy.codegen.cfunctions import expm1, log1p
from sympy.codegen.numpy_nodes import logaddexp

import symdiff as sd
from symdiff.differentiate import differentiate
from symdiff.functions import relu, sigmoid, softplus, tie_share
from symdiff.rules import RULES

from .conftest import X, Y, reference_value, to_reference

# function class -> (expression in x and y that applies it to a non-trivial inner function,
#                    interval of x, interval of y) — the function's valid domain.
DOMAINS = {
    sp.sin: (sp.sin(X**2 + Y), (-2, 2), (-1, 1)),
    sp.cos: (sp.cos(X * Y), (-2, 2), (-2, 2)),
    sp.tan: (sp.tan(X / 2 + Y / 4), (-1, 1), (-1, 1)),
    sp.asin: (sp.asin(X * Y / 2), (-1, 1), (-1, 1)),
    sp.acos: (sp.acos(X - Y / 3), (-0.5, 0.5), (-0.5, 0.5)),
    sp.atan: (sp.atan(X**2 - Y), (-3, 3), (-3, 3)),
    sp.atan2: (sp.atan2(Y**2 + 1, X), (-3, 3), (-3, 3)),
    sp.sinh: (sp.sinh(X * Y), (-2, 2), (-2, 2)),
    sp.cosh: (sp.cosh(X + Y**2), (-2, 2), (-1, 1)),
    sp.tanh: (sp.tanh(2 * X - Y), (-2, 2), (-2, 2)),
    sp.asinh: (sp.asinh(X * Y), (-3, 3), (-3, 3)),
    sp.acosh: (sp.acosh(X**2 + Y**2 + 1.5), (-2, 2), (-2, 2)),
    sp.atanh: (sp.atanh(X / 2 - Y / 3), (-0.9, 0.9), (-0.9, 0.9)),
    sp.exp: (sp.exp(X * Y - X), (-2, 2), (-2, 2)),
    sp.log: (sp.log(X**2 + Y), (0.5, 2), (0.1, 3)),
    log1p: (log1p(X * Y), (-0.5, 0.5), (-0.5, 0.5)),
    expm1: (expm1(X - Y**2), (-1, 1), (-1, 1)),
    logaddexp: (logaddexp(X * Y, X - Y), (-3, 3), (-3, 3)),
    sp.Abs: (sp.Abs(X - Y) * X, (-3, 3), (-3, 3)),
    sp.sign: (sp.sign(X * Y) * X**2, (-3, 3), (-3, 3)),
    sp.Heaviside: (sp.Heaviside(X - Y) * X**2, (-3, 3), (-3, 3)),
    sp.erf: (sp.erf(X * Y), (-2, 2), (-2, 2)),
    sp.gamma: (sp.gamma(X**2 + Y), (0.5, 2), (0.2, 3)),
    sp.loggamma: (sp.loggamma(X * Y + 4), (0.5, 3), (0.5, 3)),
    sp.polygamma: (sp.polygamma(1, X**2 + Y), (0.5, 2), (0.2, 3)),
    sp.Max: (sp.Max(X, Y**2, 1), (-3, 3), (-2, 2)),
    sp.Min: (sp.Min(X * Y, Y), (-3, 3), (-3, 3)),
    relu: (relu(X - Y**2), (-3, 3), (-2, 2)),
    sigmoid: (sigmoid(X * Y), (-4, 4), (-4, 4)),
    softplus: (softplus(X - Y), (-4, 4), (-4, 4)),
    tie_share: (tie_share(X, X, Y, 1) * X**2, (-3, 3), (-3, 3)),
}

RNG_SEED = 20261130


def test_every_rule_has_a_domain_row():
    assert set(DOMAINS) == set(RULES)


def _points(row, n=6):
    rng = np.random.default_rng(RNG_SEED)
    _, (x0, x1), (y0, y1) = row
    return rng.uniform(x0, x1, n), rng.uniform(y0, y1, n)


def _reference_derivative(expr, var):
    """sympy.diff on the rewritten expression; tie_share is piecewise constant (derivative 0
    away from ties, where sympy.diff has no rule for our helper)."""
    stripped = expr.replace(tie_share, lambda *a: sp.Symbol("share_placeholder", real=True))
    if stripped != expr:
        share = expr.atoms(tie_share).pop()
        return sp.diff(stripped, var).subs(sp.Symbol("share_placeholder", real=True), share)
    return sp.diff(to_reference(expr), var)


@pytest.mark.parametrize("func", list(DOMAINS), ids=lambda f: f.__name__)
@pytest.mark.parametrize("var", [X, Y], ids=["x", "y"])
def test_derive_matches_sympy_diff(func, var):
    expr = DOMAINS[func][0]
    ours = differentiate(expr, var).result
    reference = _reference_derivative(expr, var)
    xs, ys = _points(DOMAINS[func])
    for xv, yv in zip(xs, ys, strict=True):
        point = {X: sp.Float(xv, 30), Y: sp.Float(yv, 30)}
        assert reference_value(ours, point) == pytest.approx(
            reference_value(reference, point), rel=1e-12, abs=1e-12
        )


@pytest.mark.parametrize("func", list(DOMAINS), ids=lambda f: f.__name__)
def test_generated_gradient_matches_central_differences(func):
    expr = DOMAINS[func][0]
    xs, ys = _points(DOMAINS[func], n=50)
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


@pytest.mark.parametrize("func", list(DOMAINS), ids=lambda f: f.__name__)
def test_rule_names_and_identities_are_filled(func):
    rule = RULES[func]
    assert rule.name and rule.identity.startswith("d")
