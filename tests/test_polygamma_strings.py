"""``digamma(x)`` and ``polygamma(n, x)`` in strings: the same node SciPy's ``digamma`` traces
to, values against SciPy, derivatives one order up, and a clear error for a bad order."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import symdiff as sd

special = pytest.importorskip("scipy.special", reason="SciPy is the reference (in the dev extra)")
XS = np.linspace(0.3, 6.0, 25)


def test_digamma_is_polygamma_of_order_zero():
    x = sp.Symbol("x", real=True)
    assert sd.parse("digamma(x)") == sd.parse("polygamma(0, x)") == sp.polygamma(0, x)
    assert sd.parse("digamma(x)") == sd.grad("loggamma(x)").exprs[0]


@pytest.mark.parametrize("n", [0, 1, 2])
def test_values_and_derivatives_match_scipy(n):
    np.testing.assert_allclose(sd.compile(f"polygamma({n}, x)")(XS), special.polygamma(n, XS),
                               rtol=1e-12)
    np.testing.assert_allclose(sd.grad(f"polygamma({n}, x)", wrt="x")(XS),
                               special.polygamma(n + 1, XS), rtol=1e-12)
    np.testing.assert_allclose(sd.grad("digamma(x**2 + 1)", wrt="x")(XS),
                               2 * XS * special.polygamma(1, XS**2 + 1), rtol=1e-12)


def test_a_traced_scipy_digamma_is_the_strings():
    def f(x):
        return special.digamma(x) * x

    assert sd.grad(f).exprs == sd.grad("digamma(x)*x").exprs


@pytest.mark.parametrize("text", ["polygamma(-1, x)", "polygamma(0.5, x)", "polygamma(y, x)"])
def test_the_order_must_be_a_whole_number(text):
    with pytest.raises(sd.ParseError, match="polygamma"):
        sd.parse(text)
