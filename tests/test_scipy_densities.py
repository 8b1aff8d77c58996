"""SciPy's densities and special functions in traced functions (``scipy.stats.norm.logpdf``,
``multivariate_normal.logpdf``, ``t``, ``gamma``, ``beta``, ``poisson``, ``bernoulli``,
``scipy.special.logsumexp`` with ``axis`` and ``b``, ``expit``, ``log_ndtr``) trace to their
formulas: the value against SciPy itself, the gradient against central differences and against
``jax.scipy`` where JAX is installed. autograd's wrappers (``autograd.scipy.stats.norm``) trace
the same way. The generated modules import NumPy only."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import symdiff as sd

from .numeric import central

scipy_stats = pytest.importorskip("scipy.stats", reason="SciPy is in the dev extra")
special = pytest.importorskip("scipy.special", reason="SciPy is in the dev extra")
norm, mvn, t_dist = scipy_stats.norm, scipy_stats.multivariate_normal, scipy_stats.t

_RNG = np.random.default_rng(11)
_X = _RNG.normal(size=6)
_DATA = _RNG.normal(size=(8, 2))
_COUNTS = np.array([0.0, 1.0, 3.0, 2.0, 5.0, 1.0])
_FLIPS = np.array([1.0, 0.0, 0.0, 1.0, 1.0, 0.0])


def _cov(p):
    A = np.reshape(p[:4], (2, 2))
    return A @ A.T + np.eye(2)


# (name, function of one parameter vector p, its point, what jax.scipy computes the same with)
CASES = [
    ("norm.logpdf", lambda p: np.sum(norm.logpdf(_X, p[0], np.exp(p[1]))), [0.3, -0.2],
     lambda js, jnp, p: jnp.sum(js.stats.norm.logpdf(_X, p[0], jnp.exp(p[1])))),
    ("norm.pdf", lambda p: np.sum(norm.pdf(p * 2.0, 0.5, 1.5)), [0.3, -0.2, 1.1],
     lambda js, jnp, p: jnp.sum(js.stats.norm.pdf(p * 2.0, 0.5, 1.5))),
    ("norm.cdf", lambda p: np.sum(norm.cdf(p, loc=0.1)), [0.3, -2.5, 4.0],
     lambda js, jnp, p: jnp.sum(js.stats.norm.cdf(p, loc=0.1))),
    ("norm.logcdf tails", lambda p: np.sum(norm.logcdf(p * 10.0)), [0.3, -3.5, 4.0, -1.2],
     lambda js, jnp, p: jnp.sum(js.stats.norm.logcdf(p * 10.0))),
    ("frozen norm", lambda p: np.sum(norm(p[0], 2.0).logpdf(_X)), [0.4],
     lambda js, jnp, p: jnp.sum(js.stats.norm.logpdf(_X, p[0], 2.0))),
    ("multivariate_normal.logpdf", lambda p: np.sum(mvn.logpdf(_DATA, p[4:], _cov(p))),
     [0.9, 0.1, -0.3, 0.7, 0.2, -0.1],
     lambda js, jnp, p: jnp.sum(js.stats.multivariate_normal.logpdf(
         _DATA, p[4:], jnp.reshape(p[:4], (2, 2)) @ jnp.reshape(p[:4], (2, 2)).T + jnp.eye(2)))),
    ("multivariate_normal one point", lambda p: mvn.logpdf(_DATA[0], mean=p[4:], cov=_cov(p)),
     [0.9, 0.1, -0.3, 0.7, 0.2, -0.1],
     lambda js, jnp, p: js.stats.multivariate_normal.logpdf(
         _DATA[0], p[4:], jnp.reshape(p[:4], (2, 2)) @ jnp.reshape(p[:4], (2, 2)).T + jnp.eye(2))),
    ("t.logpdf", lambda p: np.sum(t_dist.logpdf(_X, np.exp(p[0]), p[1], 1.5)), [1.2, 0.3],
     lambda js, jnp, p: jnp.sum(js.stats.t.logpdf(_X, jnp.exp(p[0]), p[1], 1.5))),
    ("gamma.logpdf", lambda p: np.sum(scipy_stats.gamma.logpdf(np.exp(p), 2.5, scale=0.7)),
     [0.2, -0.4, 1.0],
     lambda js, jnp, p: jnp.sum(js.stats.gamma.logpdf(jnp.exp(p), 2.5, scale=0.7))),
    ("beta.logpdf", lambda p: np.sum(scipy_stats.beta.logpdf(0.3, np.exp(p[0]), np.exp(p[1]))),
     [0.2, 0.6], lambda js, jnp, p: js.stats.beta.logpdf(0.3, jnp.exp(p[0]), jnp.exp(p[1]))),
    ("poisson.logpmf", lambda p: np.sum(scipy_stats.poisson.logpmf(_COUNTS, np.exp(p))),
     [0.2, -0.1, 0.9, 0.5, 1.3, 0.0],
     lambda js, jnp, p: jnp.sum(js.stats.poisson.logpmf(_COUNTS, jnp.exp(p)))),
    ("bernoulli.logpmf", lambda p: np.sum(scipy_stats.bernoulli.logpmf(_FLIPS, special.expit(p))),
     [0.2, -0.1, 0.9, 0.5, -1.3, 0.0],
     lambda js, jnp, p: jnp.sum(js.stats.bernoulli.logpmf(_FLIPS, js.special.expit(p)))),
    ("logsumexp axis", lambda p: np.sum(special.logsumexp(np.reshape(p, (2, 3)), axis=1)),
     [0.2, -0.1, 0.9, 0.5, -1.3, 0.0],
     lambda js, jnp, p: jnp.sum(js.special.logsumexp(jnp.reshape(p, (2, 3)), axis=1))),
    ("logsumexp b keepdims", lambda p: np.sum(special.logsumexp(
        np.reshape(p, (2, 3)), axis=0, b=np.array([[0.25], [2.0]]), keepdims=True)),
     [0.2, -0.1, 0.9, 0.5, -1.3, 0.0],
     lambda js, jnp, p: jnp.sum(js.special.logsumexp(
         jnp.reshape(p, (2, 3)), axis=0, b=jnp.array([[0.25], [2.0]]), keepdims=True))),
    ("expit and log_ndtr", lambda p: np.sum(special.expit(p) * special.log_ndtr(3 * p)),
     [0.2, -4.1, 0.9, 12.5, -13.0, 0.0],
     lambda js, jnp, p: jnp.sum(js.special.expit(p) * js.special.log_ndtr(3 * p))),
]


@pytest.mark.parametrize(("name", "fn", "point", "peer"), CASES, ids=[c[0] for c in CASES])
def test_value_and_gradient_against_scipy_and_central_differences(name, fn, point, peer, backend):
    p = np.array(point, dtype=float)
    shapes = {"p": p.shape}
    value, gradient = sd.value_and_grad(fn, wrt="p", shapes=shapes)(p)
    np.testing.assert_allclose(value, fn(p), rtol=1e-12, atol=1e-13)  # fn(p) runs SciPy
    np.testing.assert_allclose(gradient, central(fn, p), rtol=1e-6, atol=1e-8)
    source = sd.grad(fn, wrt="p", shapes=shapes).source
    assert "import scipy" not in source and "from scipy" not in source


@pytest.mark.skipif(importlib.util.find_spec("jax") is None,
                    reason="optional comparison with jax.scipy: jax is not installed")
@pytest.mark.parametrize(("name", "fn", "point", "peer"), CASES, ids=[c[0] for c in CASES])
def test_gradient_against_jax_scipy(name, fn, point, peer):
    import jax
    import jax.scipy

    jax.config.update("jax_enable_x64", True)
    p = np.array(point, dtype=float)
    theirs = jax.grad(lambda q: peer(jax.scipy, jax.numpy, q))(jax.numpy.asarray(p))
    mine = sd.grad(fn, wrt="p", shapes={"p": p.shape})(p)
    np.testing.assert_allclose(mine, np.asarray(theirs), rtol=1e-9, atol=1e-12, err_msg=name)


def test_log_ndtr_is_accurate_far_in_both_tails():
    x = np.array([-1e4, -200.0, -38.0, -30.5, -29.5, -5.0, -0.6, 0.0, 0.7, 5.0, 30.0, 1e4])
    got = sd.math.log_ndtr(x)
    np.testing.assert_allclose(got, special.log_ndtr(x), rtol=5e-14)
    g = sd.grad(lambda u: sd.math.log_ndtr(u))(x)[0]  # phi(x) / Phi(x), also where both are 0
    mpmath = pytest.importorskip("mpmath", reason="mpmath comes with SymPy")
    mpmath.mp.dps = 40
    expected = [float(mpmath.npdf(v) / mpmath.ncdf(v)) for v in x]
    # exp(-x^2/2 - log_ndtr(x)) cancels digits where x^2 is large: ~1e-8 relative at -1e4
    np.testing.assert_allclose(g, expected, rtol=1e-7)
    np.testing.assert_allclose(g[1:], expected[1:], rtol=1e-11)


@pytest.mark.skipif(importlib.util.find_spec("autograd") is None,
                    reason="optional: autograd's SciPy wrappers; autograd is not installed")
def test_autograd_wrappers_of_scipy_trace_the_same():
    import autograd.scipy.stats.multivariate_normal as amvn
    import autograd.scipy.stats.norm as anorm
    from autograd.scipy.special import logsumexp

    def loss(p):
        lp = np.stack([anorm.logpdf(_X, p[0], 1.0), anorm.logpdf(_X, p[1], 2.0)])
        return np.sum(logsumexp(lp, axis=0)) + amvn.logpdf(_DATA[0], p, np.eye(2))

    p = np.array([0.3, -0.5])
    np.testing.assert_allclose(sd.grad(loss, wrt="p", shapes={"p": (2,)})(p), central(loss, p),
                               rtol=1e-7)


def test_what_is_not_followed_is_refused_by_name():
    def quantile(p):
        return np.sum(norm.ppf(special.expit(p)))

    with pytest.raises(sd.UnsupportedError, match=r"scipy.stats.norm.ppf .*logpdf, pdf"):
        sd.grad(quantile, wrt="p", shapes={"p": (3,)})

    def cauchy(p):
        return np.sum(scipy_stats.cauchy.logpdf(p))

    with pytest.raises(sd.UnsupportedError, match="cauchy"):
        sd.grad(cauchy, wrt="p", shapes={"p": (3,)})
    with pytest.raises(sd.UnsupportedError, match="return_sign"):
        sd.grad(lambda p: special.logsumexp(p, return_sign=True)[0], wrt="p",
                shapes={"p": (3,)})
