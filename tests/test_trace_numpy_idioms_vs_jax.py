"""Optional: the NumPy idioms of ``test_trace_numpy_idioms.py`` against JAX (run when ``jax``
is installed; JAX is not a dependency of symdiff).

Each loss is written once with NumPy: symdiff traces it, and JAX runs the same function with
``np`` rebound to ``jax.numpy`` (in float64), also in the module's helpers it calls (``_decay``,
``_rows``); gradients must agree to 1e-9.
"""

from __future__ import annotations

import importlib.util
import types

import numpy as np
import pytest

import symdiff as sd

from . import test_trace_numpy_idioms as idioms

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("jax") is None,
    reason="optional comparison with JAX: jax is not installed (pip install jax)",
)


@pytest.fixture(scope="module")
def jax():
    import jax

    jax.config.update("jax_enable_x64", True)
    return jax


def _with_jax(fn, jax):
    """``fn`` with ``np`` rebound to ``jax.numpy`` in its globals and in the module's helpers."""
    namespace = {**fn.__globals__, "np": jax.numpy}
    for key, value in fn.__globals__.items():
        if isinstance(value, types.FunctionType) and value.__module__ == idioms.__name__:
            namespace[key] = types.FunctionType(value.__code__, namespace, value.__name__,
                                                value.__defaults__, value.__closure__)
    return types.FunctionType(fn.__code__, namespace, fn.__name__, fn.__defaults__,
                              fn.__closure__)


#: Cases JAX cannot run, with why (marked, not dropped).
_JAX_LACKS = {
    "power.outer 2-d": "jnp.power is a plain function in JAX, with no .outer",
    "greater.outer as a condition": "jnp.greater is a plain function in JAX, with no .outer",
}
_CASES = [pytest.param(*case, id=case[0], marks=[pytest.mark.skip(reason=_JAX_LACKS[case[0]])]
                       if case[0] in _JAX_LACKS else []) for case in idioms.CASES]


@pytest.mark.parametrize(("name", "fn", "declared", "shape"), _CASES)
def test_gradient_against_jax(jax, name, fn, declared, shape):
    x0 = np.random.default_rng(3).normal(size=shape) + 0.3
    mine = sd.grad(fn, wrt="x", shapes={"x": declared})(x=x0)
    theirs = jax.grad(_with_jax(fn, jax))(jax.numpy.asarray(x0))
    np.testing.assert_allclose(mine, np.asarray(theirs), rtol=1e-9, atol=1e-11, err_msg=name)
