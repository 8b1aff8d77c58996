"""Optional: the NumPy functions of the families npmisc, matrices, quantiles, signals and qr
against JAX (run when ``jax`` is installed; JAX is not a dependency of symdiff).

Each loss is written once with NumPy: symdiff traces it, and JAX runs the same function with
``np`` rebound to ``jax.numpy`` (in float64); gradients must agree to 1e-9.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import symdiff as sd

from .jax_peers import traced, with_jax

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("jax") is None,
    reason="optional comparison with JAX: jax is not installed (pip install jax)",
)

_RNG = np.random.default_rng(1)
_A = _RNG.normal(size=(3, 3)) + 3 * np.eye(3)
_TALL = _RNG.normal(size=(5, 3))
_V, _W = _RNG.normal(size=3), _RNG.normal(size=7)
_XP = np.array([-1.5, -0.5, 0.2, 1.5])

CASES = [
    ("median", lambda x: np.median(x ** 3), [_W]),
    ("quantile", lambda x: np.sum(np.quantile(x, np.array([0.1, 0.45, 0.9])) ** 2), [_W]),
    ("percentile", lambda x: np.percentile(np.sin(x), 30.0), [_W]),
    ("average", lambda x, w: np.average(x, weights=np.exp(w)), [_V, _V[::-1]]),
    ("trapezoid", lambda y: np.trapezoid(y ** 2, dx=0.5), [_W]),
    ("polyval", lambda p, x: np.sum(np.polyval(p, x) ** 2), [_V, _W]),
    ("interp", lambda x, fp: np.sum(np.interp(x, _XP, fp) ** 2), [_W, _W[:4]]),
    ("convolve", lambda a, v: np.sum(np.convolve(a, v) ** 2), [_W, _V]),
    ("correlate same", lambda a, v: np.sum(np.correlate(a, v, "same") ** 3), [_W, _V]),
    ("kron", lambda a, b: np.sum(np.sin(np.kron(a, b))), [_A, _TALL]),
    ("cross", lambda a, b: np.sum(np.cross(a, b) ** 2), [_V, _V ** 2]),
    ("vdot", lambda a, b: np.vdot(a, b) ** 2, [_A, _A.T]),
    ("ptp", lambda x: np.ptp(x) ** 2, [_W]),
    ("nansum", lambda x: np.nansum(x ** 2) * np.nanmean(x), [_W]),
    ("multi_dot", lambda a, b: np.sum(np.linalg.multi_dot([b, a, a, b.T])), [_A, _TALL]),
    ("matrix_power", lambda a: np.sum(np.linalg.matrix_power(a, 3)), [_A]),
    ("pinv", lambda a: np.sum(np.linalg.pinv(a) ** 2), [_TALL]),
    ("lstsq", lambda a, y: np.sum(np.linalg.lstsq(a, y)[0] ** 2), [_TALL, _W[:5]]),
    ("cond", lambda a: np.linalg.cond(a), [_A]),
    ("qr", lambda a: np.sum(np.linalg.qr(a)[0] * _TALL) + np.sum(np.linalg.qr(a)[1] ** 3),
     [_TALL]),
    ("argmax index", lambda x, y: y[np.argmax(x)] ** 2, [_W, _W ** 2]),
]


@pytest.fixture(scope="module")
def jax():
    import jax

    jax.config.update("jax_enable_x64", True)
    return jax


@pytest.mark.parametrize("name, fn, args", CASES, ids=[c[0] for c in CASES])
def test_gradient_against_jax(jax, name, fn, args):
    names = [f"a{i}" for i in range(len(args))]
    g = sd.grad(traced(fn, names), wrt=names,
                shapes={n: a.shape for n, a in zip(names, args, strict=True)})
    theirs = jax.grad(with_jax(fn, jax), argnums=tuple(range(len(args))))(
        *(jax.numpy.asarray(a) for a in args))
    for mine, other in zip(g(*args), theirs, strict=True):
        np.testing.assert_allclose(mine, np.asarray(other), rtol=1e-9, atol=1e-11,
                                   err_msg=name)
