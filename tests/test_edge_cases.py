"""Documented values at kinks and outside the domain: NumPy's nan/inf, never an exception."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import symdiff as sd


@pytest.mark.parametrize(
    "expr, point, want",
    [
        ("abs(x)", 0.0, 0.0),  # abs'(0) = 0
        ("sign(x)", 0.0, 0.0),  # sign' = 0 everywhere
        ("sign(x)", 3.0, 0.0),
        ("relu(x)", 0.0, 0.0),  # relu'(0) = 0, as PyTorch and jax.nn.relu
        ("relu(x)", -1.0, 0.0),
        ("relu(x)", 2.0, 1.0),
        ("max(x, 0)", 0.0, 0.5),  # ties split evenly, constants included
        ("min(x, 0)", 0.0, 0.5),
        ("where(x > 0, x**2, -x)", 0.0, -1.0),  # the branch whose condition holds
        ("log(x)", 0.0, np.inf),
        ("sqrt(x)", 0.0, np.inf),
        ("1/x", 0.0, -np.inf),
        ("x*log(x)", -1.0, np.nan),  # log(-1) + 1
        ("sqrt(x)", -1.0, np.nan),
        ("asin(x)", 2.0, np.nan),
        ("exp(x)", 1000.0, np.inf),  # overflow
        ("x*log(x)", 0.0, -np.inf),
    ],
)
def test_derivative_at_kinks_and_out_of_domain(expr, point, want):
    with np.errstate(all="ignore"):
        got = float(sd.grad(expr, wrt="x")(point))
    if np.isnan(want):
        assert np.isnan(got)
    else:
        assert got == want


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_no_python_exception_and_no_warning_escalation(mode):
    g = sd.value_and_grad("log(x) + sqrt(y) + 1/(x - y) + exp(1000*x)", wrt=["x", "y"], mode=mode)
    with np.errstate(all="ignore"):
        value, (d_x, d_y) = g(np.array([-1.0, 0.0, 1.0]), np.array([0.0, 0.0, 1.0]))
    assert value.shape == d_x.shape == d_y.shape == (3,)


@pytest.mark.parametrize("x", [-1000.0, -40.0, 0.0, 40.0, 1000.0])
def test_stable_forms_do_not_overflow(x):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow would raise RuntimeWarning here
        with np.errstate(under="ignore"):
            softplus_value, softplus_grad = sd.value_and_grad("softplus(x)", wrt="x")(x)
            sigmoid_value, sigmoid_grad = sd.value_and_grad("sigmoid(x)", wrt="x")(x)
            log1pexp_value, log1pexp_grad = sd.value_and_grad("log(1 + exp(x))", wrt="x")(x)
            lse_value, lse_grad = sd.value_and_grad("log(exp(x) + exp(-x))", wrt="x")(x)
    s = 1 / (1 + np.exp(-np.clip(x, -700, 700)))
    assert softplus_value == pytest.approx(np.logaddexp(0, x), rel=1e-15)
    assert softplus_grad == pytest.approx(s, rel=1e-15, abs=1e-300)
    assert sigmoid_value == pytest.approx(s, rel=1e-15, abs=1e-300)
    # sigmoid(x)*sigmoid(-x): 1 - s would cancel to 0 at x = 40 (the exact value is 4.2e-18)
    s_minus = 1 / (1 + np.exp(np.clip(x, -700, 700)))
    assert sigmoid_grad == pytest.approx(s * s_minus, rel=1e-12, abs=1e-300)
    assert log1pexp_value == pytest.approx(np.logaddexp(0, x), rel=1e-15)
    assert log1pexp_grad == pytest.approx(s, rel=1e-15, abs=1e-300)
    if abs(x) < 700:  # exp(+-1000) itself overflows: logsumexp needs the tensor layer's form
        assert lse_value == pytest.approx(np.logaddexp(x, -x), rel=1e-15)
        assert lse_grad == pytest.approx(np.tanh(x), rel=1e-12)


def test_derivative_of_zero_to_the_y_is_zero_not_zoo():
    """d/dy 0**y was 0**y*log(0), which holds ``zoo`` (found by the fuzz test) and evaluated to
    nan, as sympy.diff's derivative does; it is 0 for every y > 0 (0**y is 0 there), as autograd
    and JAX return. The printer still prints ``zoo`` as nan."""
    import sympy as sp

    from symdiff.printer import CodePrinter

    g = sd.grad("0**y", wrt="y", cache=False)
    assert "_np.nan" not in g.source
    assert g(0.5) == 0.0 and g(2.0) == 0.0
    assert CodePrinter().doprint(sp.zoo) == "_np.nan"
