"""Powers at a zero base: ``d/dy 0**y`` is 0 (not ``0*log(0) = nan``), and ``x**y`` at ``x = 0``
follows JAX's convention: ``d/dy x**y = x**y * log(x)`` with ``log(x)`` taken as 0 where ``x**y``
is 0 (so 0 for ``y > 0``, the limit from ``x > 0``), ``d/dx x**y = y*x**(y - 1)``."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import symdiff as sd
from symdiff.simplify import zero_power_logs

from .conftest import X, Y

MODES = ["forward", "reverse"]


@pytest.mark.parametrize("mode", MODES)
def test_derivative_of_zero_to_the_y_is_zero(mode, backend):
    y = np.array([0.5, 1.0, 2.0, 3.7])
    with np.errstate(all="raise"):
        assert np.array_equal(sd.grad("0**y", wrt="y", mode=mode, cache=False)(y), np.zeros(4))
        h = sd.hessian("0**y + y**2", wrt="y", mode=mode, cache=False)(y)
    assert np.array_equal(h, np.full(4, 2.0))


def test_zero_to_a_positive_power_is_zero_and_so_is_its_derivative(backend):
    g = sd.grad("0**(y**2 + 1) + y", wrt="y", cache=False)
    assert np.array_equal(g(np.array([-2.0, 0.0, 3.0])), np.ones(3))


def test_derive_shows_the_zero_base_rule():
    d = sd.derive("0**y", wrt="y")
    assert d.result == 0
    assert d.steps[0].rule == "exponential"
    assert "0^u = 0" in str(d)


@pytest.mark.parametrize("mode", MODES)
def test_x_to_the_y_at_x_zero_follows_jax(mode, backend):
    x = np.zeros(4)
    y = np.array([1.0, 2.0, 3.0, 0.5])
    with np.errstate(divide="ignore"):  # y = 0.5: d/dx is +inf, truly
        dx, dy = sd.grad("x**y", mode=mode, cache=False)(x, y)
    np.testing.assert_array_equal(dx, [1.0, 0.0, 0.0, np.inf])  # y*x**(y - 1)
    np.testing.assert_array_equal(dy, [0.0, 0.0, 0.0, 0.0])  # x**y*log(x) -> 0
    # the limit from x > 0, where the formulas hold as they are
    near = sd.grad("x**y", mode=mode, cache=False)(np.full(3, 1e-200), y[:3])
    np.testing.assert_allclose(near[1], [-4.6e-198, 0.0, 0.0], rtol=1e-2, atol=1e-300)


@pytest.mark.parametrize("mode", MODES)
def test_hessian_of_x_to_the_y_at_x_zero_has_no_nan(mode, backend):
    x, y = np.zeros(3), np.array([2.0, 3.0, 4.5])
    with np.errstate(all="raise"):  # no 1/x evaluated where the guard replaces it
        h = sd.hessian("x**y", mode=mode, cache=False)(x, y)  # (2, 2, 3)
    # exact values at x = 0 (limits from x > 0): d2/dx2 = y(y-1)x**(y-2), the rest -> 0
    np.testing.assert_array_equal(h[0, 0], [2.0, 0.0, 0.0])
    np.testing.assert_array_equal(h[0, 1], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(h[1, 0], [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(h[1, 1], [0.0, 0.0, 0.0])


@pytest.mark.parametrize("mode", MODES)
def test_x_to_the_y_matches_sympy_away_from_zero(mode, backend):
    rng = np.random.default_rng(3)
    x, y = rng.uniform(0.1, 3.0, 20), rng.uniform(-2.0, 3.0, 20)
    dx, dy = sd.grad("x**y", mode=mode, cache=False)(x, y)
    h = sd.hessian("x**y", mode=mode, cache=False)(x, y)
    f = X**Y
    for i, j in ((0, 0), (0, 1), (1, 1)):
        ref = sp.lambdify((X, Y), sp.diff(f, (X, Y)[i], (X, Y)[j]), "numpy")(x, y)
        np.testing.assert_allclose(h[i, j], ref, rtol=1e-12)
    np.testing.assert_allclose(dx, sp.lambdify((X, Y), sp.diff(f, X), "numpy")(x, y), rtol=1e-13)
    np.testing.assert_allclose(dy, sp.lambdify((X, Y), sp.diff(f, Y), "numpy")(x, y), rtol=1e-13)


def test_tensor_layer_zero_base(backend):
    y = np.array([0.5, 2.0, 3.0])
    g = sd.grad("sum(0**y)", wrt="y", shapes={"y": ("n",)}, cache=False)
    np.testing.assert_array_equal(g(y=y), np.zeros(3))
    shapes = {"x": ("n",), "y": ("n",)}
    x = np.array([0.0, 0.0, 2.0])
    gy = sd.grad("sum(x**y)", wrt="y", shapes=shapes, cache=False)(x=x, y=y)
    np.testing.assert_allclose(gy, [0.0, 0.0, 8 * np.log(2.0)], rtol=1e-14)
    gx = sd.grad("sum(x**y)", wrt="x", shapes=shapes, cache=False)(x=x, y=np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(gx, [1.0, 0.0, 12.0], rtol=1e-14)


def test_guard_only_where_the_power_is_zero():
    x, y = X, Y
    guarded = zero_power_logs(x**y * sp.log(x))
    assert guarded != x**y * sp.log(x)
    assert guarded.subs({x: 2, y: 3}) == 8 * sp.log(2)  # unchanged where x**y != 0
    assert zero_power_logs(sp.log(x) + 1) == sp.log(x) + 1  # no power of x: log(0) = -inf stays
    assert zero_power_logs(x**y * sp.sin(sp.log(x))) == x**y * sp.sin(sp.log(x))  # not polynomial
    # y = 1: x**(y - 1)*(y*log(x) + 1) at x = 0 is 1*(-inf), and stays so (x**0 is 1, not 0)
    f = sd.compile("x**(y - 1)*(y*log(x) + 1)", cache=False)
    with np.errstate(divide="ignore"):
        assert f(0.0, 1.0) == -np.inf and f(0.0, 2.0) == 0.0
