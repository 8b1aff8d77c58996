"""Values that should be finite stay finite: the binary cross-entropy and its relatives.

``-(t*log(sigmoid(u)) + (1 - t)*log(1 - sigmoid(u)))`` evaluated as written is ``0*log(0)``
(``nan``) once ``sigmoid(u)`` rounds to 1 (``u`` about 37). The generated code uses the exact
rewrites ``log(sigmoid(u)) = -softplus(-u)`` and ``1 - sigmoid(u) = sigmoid(-u)``; references
here are mpmath at 50 digits, independent of SymPy and of symdiff.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy as sp

import symdiff as sd
from symdiff.functions import sigmoid, softplus
from symdiff.simplify import stable_forms

from .conftest import X

BCE = "-(t*log(sigmoid(u)) + (1 - t)*log(1 - sigmoid(u)))"
POINTS = [50.0, -50.0, 500.0, -500.0, 1e4, -1e4, 3.0, -0.5]
TARGETS = [0.0, 1.0, 0.3]
mpmath.mp.dps = 50


# floating-point errors that would mean a wrong value (underflow to 0 is only rounding)
def _strict():
    return np.errstate(divide="raise", over="raise", invalid="raise", under="ignore")


def _sig(u):
    return 1 / (1 + mpmath.exp(-mpmath.mpf(u)))


def _softplus(u):
    u = mpmath.mpf(u)
    return u + mpmath.log1p(mpmath.exp(-u)) if u > 0 else mpmath.log1p(mpmath.exp(u))


def _bce_reference(t, u):
    """Value, d/du and d2/du2 of the cross-entropy, exactly (then rounded to float)."""
    value = t * _softplus(-u) + (1 - t) * _softplus(u)
    grad = (1 - t) * _sig(u) - t * _sig(-u)  # sigmoid(u) - t, without cancellation
    hess = _sig(u) * _sig(-u)
    return float(value), float(grad), float(hess)


def _grid():
    t, u = np.meshgrid(TARGETS, POINTS, indexing="ij")
    return t.ravel(), u.ravel()


def _references(t, u):
    return np.array([_bce_reference(ti, ui) for ti, ui in zip(t, u, strict=True)]).T


def _close(got, want, what):
    # rtol 1e-12 (a few ulp of cancellation-free formulas); values below 1e-300 are 0 in float64
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300, err_msg=what)


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_cross_entropy_value_grad_and_hessian_are_finite_and_accurate(mode, backend):
    t, u = _grid()
    value, grad, hess = _references(t, u)
    with _strict():  # no 0*log(0), no overflow, no inf - inf anywhere
        got_value = sd.compile(BCE, cache=False)(t=t, u=u)
        got_grad = sd.grad(BCE, wrt="u", mode=mode, cache=False)(t=t, u=u)
        got_both = sd.value_and_grad(BCE, wrt="u", mode=mode, cache=False)(t=t, u=u)
        got_hess = sd.hessian(BCE, wrt="u", mode=mode, cache=False)(t=t, u=u)
        got_hvp = sd.hvp(BCE, wrt="u", cache=False)(t=t, u=u, _v=np.ones_like(u))
    _close(got_value, value, "value")
    _close(got_grad, grad, "grad")
    _close(got_both[0], value, "value_and_grad value")
    _close(got_both[1], grad, "value_and_grad grad")
    _close(got_hess, hess, "hessian")
    _close(got_hvp, hess, "hvp")


def _q(u):
    return _sig(u) * _sig(-u)  # sigmoid'(u)


# (value, first derivative, second derivative), exactly, as functions of u
VARIANTS = {
    "log(sigmoid(u))": (lambda u: -_softplus(-u), lambda u: _sig(-u), lambda u: -_q(u)),
    "log(1 - sigmoid(u))": (lambda u: -_softplus(u), lambda u: -_sig(u), lambda u: -_q(u)),
    "log(sigmoid(-u))": (lambda u: -_softplus(u), lambda u: -_sig(u), lambda u: -_q(u)),
    "log(1 + exp(u))": (_softplus, _sig, _q),
    "log(exp(u) + 1)": (_softplus, _sig, _q),
    "log(1 + exp(-u))": (lambda u: _softplus(-u), lambda u: -_sig(-u), _q),
    "log(1/(1 + exp(-u)))": (lambda u: -_softplus(-u), lambda u: _sig(-u), lambda u: -_q(u)),
    "log(exp(u)/(1 + exp(u)))": (lambda u: -_softplus(-u), lambda u: _sig(-u),
                                 lambda u: -_q(u)),
    "1 - sigmoid(u)": (lambda u: _sig(-u), lambda u: -_q(u),
                       lambda u: _q(u) * (_sig(u) - _sig(-u))),
}


@pytest.mark.parametrize("text", sorted(VARIANTS))
def test_variants_are_finite_with_their_derivatives(text, backend):
    u = np.array(POINTS)
    value, first, second = ([float(f(p)) for p in u] for f in VARIANTS[text])
    with _strict():
        _close(sd.compile(text, cache=False)(u), value, f"value of {text}")
        for mode in ("forward", "reverse"):
            _close(sd.grad(text, wrt="u", mode=mode, cache=False)(u), first, f"{mode} grad")
            _close(sd.hessian(text, wrt="u", mode=mode, cache=False)(u), second,
                   f"{mode} hessian of {text}")


def test_stable_forms_rewrites():
    u = X
    assert stable_forms(sp.log(sigmoid(u))) == -softplus(-u)
    assert stable_forms(sp.log(1 - sigmoid(u))) == -softplus(u)
    assert stable_forms(sp.log(sigmoid(-u))) == -softplus(u)
    assert stable_forms(1 - sigmoid(u)) == sigmoid(-u)
    assert stable_forms(sigmoid(u) - 1) == -sigmoid(-u)
    assert stable_forms(2 - sigmoid(u) + u) == 2 - sigmoid(u) + u  # not exactly 1 - sigmoid
    assert stable_forms(sp.log(1 + sp.exp(u))) == softplus(u)
    assert stable_forms(sp.log(1 / (1 + sp.exp(-u)))) == -softplus(-u)
    # every rewrite is an identity: equal at random points (SymPy's own exp/log forms)
    rng = np.random.default_rng(0)
    for expr in (sp.log(sigmoid(u)), sp.log(1 - sigmoid(u)), 1 - sigmoid(u) + u**2):
        rewritten = stable_forms(expr)
        for point in (sp.Rational(int(v), 100) for v in rng.normal(scale=300, size=5)):
            a = expr.rewrite(sp.exp).subs(u, point).evalf(30)
            b = rewritten.rewrite(sp.exp).subs(u, point).evalf(30)
            assert abs(a - b) < 1e-25


def test_derive_shows_the_students_rules_not_the_rewrite():
    d = sd.derive(BCE, wrt="u")
    text = str(d)
    assert "sigmoid" in text and "logarithm" in text  # log(sigmoid(u)) by the rules as written
    assert "softplus" not in text
    t, u = sp.symbols("t u", real=True)
    exact = -(t * sp.log(1 / (1 + sp.exp(-u))) + (1 - t) * sp.log(1 - 1 / (1 + sp.exp(-u))))
    rng = np.random.default_rng(1)
    for tv, uv in (map(sp.Rational, pair) for pair in rng.integers(-400, 400, (5, 2)) / 100):
        want = sp.diff(exact, u).subs({t: tv, u: uv}).evalf(30)
        got = d.result.rewrite(sp.exp).subs({t: tv, u: uv}).evalf(30)
        assert abs(want - got) < 1e-20


def test_tensor_cross_entropy_is_finite_and_accurate(backend):
    shapes = {"t": ("n",), "u": ("n",)}
    expr = f"sum({BCE})"
    t, u = _grid()
    value, grad, hess = _references(t, u)
    with _strict():
        got_value = sd.compile(expr, shapes=shapes, cache=False)(t=t, u=u)
        got_grad = sd.grad(expr, wrt="u", shapes=shapes, cache=False)(t=t, u=u)
        got_hess = sd.hessian(expr, wrt="u", shapes=shapes, cache=False)(t=t, u=u)
    np.testing.assert_allclose(got_value, np.sum(value), rtol=1e-12)
    assert np.all(got_hess == np.diag(np.diag(got_hess)))
    # the tensor code clips sigmoid's exp at 88 (documented in symdiff.tensor.emit): below
    # sigmoid(-88) = 6.1e-39 the error is absolute, under 1e-38
    np.testing.assert_allclose(got_grad, grad, rtol=1e-12, atol=1e-38)
    np.testing.assert_allclose(np.diag(got_hess), hess, rtol=1e-12, atol=1e-38)
