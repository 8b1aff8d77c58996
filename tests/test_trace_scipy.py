"""``scipy.special`` ufuncs of traced values trace to their registry rows (the rows' ``scipy``
names): ``expit`` is ``sigmoid``, ``erf``, ``erfc``, ``gamma``, and ``gammaln`` is ``loggamma``
(equal for x > 0); ``digamma``, ``logit``, ``log_expit`` and ``ndtr`` to compositions of rows
(``symdiff.trace.tables.SCIPY_FORMS``). Gradients are checked against central differences of
SciPy itself, in the scalar tracer and with ``shapes=``. SciPy is a test dependency (the ``dev``
extra), not one of symdiff's: a ufunc is recognised only as the object ``scipy.special`` holds."""

from __future__ import annotations

import numpy as np
import pytest

import symdiff as sd
from symdiff.errors import UnsupportedError

special = pytest.importorskip("scipy.special", reason="SciPy is in the dev extra")

NAMES = ["expit", "erf", "erfc", "gamma", "gammaln", "digamma", "log_expit", "ndtr", "logit"]
X = np.array([0.35, 0.8, 1.5, 2.25, 3.1])
#: Points inside each function's domain, where X is not.
POINTS = {"logit": np.array([0.05, 0.3, 0.5, 0.71, 0.93])}


def _central(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


@pytest.mark.parametrize("name", NAMES)
def test_scalar_trace_matches_scipy(name):
    fn = getattr(special, name)

    def model(x, a):
        return a * fn(x) + fn(a * x)

    a, x = (0.9, POINTS[name]) if name in POINTS else (1.3, X)
    grad = sd.grad(model, wrt="x")
    np.testing.assert_allclose(grad(x, a), _central(lambda t: model(t, a), x), rtol=1e-7,
                               atol=1e-9)  # (central differences of erf near 1 cancel)
    value, _ = sd.value_and_grad(model, wrt="x")(x, a)
    np.testing.assert_allclose(value, model(x, a), rtol=1e-13)


@pytest.mark.parametrize("name", NAMES)
def test_tensor_trace_matches_scipy(name):
    fn = getattr(special, name)
    w = np.array([0.5, -0.25, 1.0, 0.75, 0.2])

    def loss(x):
        return np.sum(w * fn(x))

    x = POINTS.get(name, X)
    got = sd.grad(loss, wrt="x", shapes={"x": (5,)})(x=x)
    np.testing.assert_allclose(got, w * _central(fn, x), rtol=1e-7, atol=1e-9)


def test_an_unlisted_scipy_ufunc_is_refused_by_name():
    with pytest.raises(UnsupportedError, match="'ndtri'"):
        sd.grad(lambda x: special.ndtri(x))
