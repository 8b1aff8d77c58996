"""Hessian-vector products of tensor expressions (``sd.hvp(..., shapes=)``): the gradient of
``sum(grad * _v)`` (reverse over reverse), checked against the dense Hessian (forward over
reverse) and against central differences of the gradient."""

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

import symdiff as sd
from tests.tensor_cases import LOGISTIC, LOGISTIC_SHAPES, MLP, MLP_SHAPES
from tests.test_tensor_ops import OPS, random_values

RNG = np.random.default_rng(11)

CASES = [
    ("logistic", LOGISTIC, "w", LOGISTIC_SHAPES,
     {"X": RNG.normal(size=(40, 5)), "y": RNG.choice([-1.0, 1.0], 40), "w": RNG.normal(size=5)}),
    ("rosenbrock", "sum(100*(x[1:] - x[:-1]**2)**2 + (1 - x[:-1])**2)", "x", {"x": ("n",)},
     {"x": RNG.normal(size=9)}),
    ("matrix variable", "sum(tanh(A @ B) ** 2) + sum(A * A.T)", "A",
     {"A": ("n", "n"), "B": ("n", "m")},
     {"A": RNG.normal(size=(4, 4)), "B": RNG.normal(size=(4, 3))}),
    ("logsumexp", "logsumexp(W @ x, axis=0) - sum(x * x) / 2", "x", {"W": ("k", "d"), "x": ("d",)},
     {"W": RNG.normal(size=(6, 4)), "x": RNG.normal(size=4)}),
    ("mlp W1", MLP, "W1", MLP_SHAPES,
     {"X": RNG.normal(size=(7, 3)), "Y": np.eye(2)[RNG.integers(0, 2, 7)],
      "W1": RNG.normal(size=(3, 4)), "b1": RNG.normal(size=4), "W2": RNG.normal(size=(4, 2)),
      "b2": RNG.normal(size=2)}),
]


@pytest.mark.parametrize("name, expr, wrt, shapes, values", CASES, ids=[c[0] for c in CASES])
def test_hvp_is_the_hessian_times_the_direction(name, expr, wrt, shapes, values):
    v = np.random.default_rng(3).normal(size=values[wrt].shape)
    product = sd.hvp(expr, wrt=wrt, shapes=shapes)(**values, _v=v)
    hessian = sd.hessian(expr, wrt=wrt, shapes=shapes)(**values)
    size = v.size
    expected = (hessian.reshape(size, size) @ v.reshape(size)).reshape(v.shape)
    assert product.shape == v.shape
    np.testing.assert_allclose(product, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name, expr, wrt, shapes, values", CASES, ids=[c[0] for c in CASES])
def test_hvp_matches_central_differences_of_the_gradient(name, expr, wrt, shapes, values):
    v = np.random.default_rng(4).normal(size=values[wrt].shape)
    grad = sd.grad(expr, wrt=wrt, shapes=shapes)
    h = 1e-5
    ahead = grad(**{**values, wrt: values[wrt] + h * v})
    behind = grad(**{**values, wrt: values[wrt] - h * v})
    numeric = (ahead - behind) / (2 * h)
    product = sd.hvp(expr, wrt=wrt, shapes=shapes)(**values, _v=v)
    np.testing.assert_allclose(product, numeric, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize(("expr", "shapes", "wrt"), [row[1:] for row in OPS],
                         ids=[row[0] for row in OPS])
def test_hvp_of_every_operation_is_the_hessian_times_the_direction(expr, shapes, wrt):
    """Reverse over reverse needs the VJP of every node a gradient graph contains (scatters,
    tie shares, broadcasts, products of the others...): the whole operation table."""
    values = random_values(shapes, np.random.default_rng(9))
    name = wrt[0]
    v = np.random.default_rng(10).normal(size=values[name].shape)
    h = sd.hvp(expr, wrt=name, shapes=shapes)
    product = h(**{k: values[k] for k in h.args if k != "_v"}, _v=v)
    hess = sd.hessian(expr, wrt=name, shapes=shapes)
    dense = hess(**{k: values[k] for k in hess.args})
    expected = (dense.reshape(v.size, v.size) @ v.reshape(-1)).reshape(v.shape)
    np.testing.assert_allclose(product, expected, rtol=1e-9, atol=1e-10)


def test_hvp_reads_like_the_closed_form_and_forms_no_hessian():
    source = sd.hvp(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES).source
    body = source[source.index("def hvp_f") :]
    assert "X.T @" in body and "X @ _v" in body
    assert "_np.eye" not in body and "None]" not in body  # no tangent axis, no identity seed
    assert body.count("@") == 3  # X @ w, X @ _v, X.T @ (...): no d-by-d matrix


def test_hvp_direction_is_the_last_argument_and_is_shape_checked():
    h = sd.hvp(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)
    assert h.args == ("X", "w", "y", "_v")
    X, y, w = RNG.normal(size=(5, 3)), np.ones(5), np.zeros(3)
    with pytest.raises(ValueError, match="_v"):
        h(X, w, y, np.zeros(4))
    positional = h(X, w, y, np.ones(3))
    np.testing.assert_array_equal(positional, h(X=X, w=w, y=y, _v=np.ones(3)))


def test_hvp_keeps_float32():
    h = sd.hvp("sum(x ** 3)", wrt="x", shapes={"x": ("n",)})
    x = np.arange(1.0, 4.0, dtype=np.float32)
    out = h(x=x, _v=np.ones(3, dtype=np.float32))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, 6 * x)


@pytest.mark.parametrize(
    "wrt, error",
    [(["x", "y"], "one wrt variable"), (None, "one wrt variable")],
)
def test_hvp_of_several_variables_is_a_clear_error(wrt, error):
    with pytest.raises(sd.UnsupportedError, match=error):
        sd.hvp("sum(x * y)", wrt=wrt, shapes={"x": ("n",), "y": ("n",)})


def test_hvp_needs_a_scalar_expression():
    with pytest.raises(sd.ShapeError, match="hvp needs a scalar expression"):
        sd.hvp("x ** 2", wrt="x", shapes={"x": ("n",)})


def test_hvp_source_is_deterministic_across_processes():
    script = (
        "import symdiff as sd\n"
        f"print(sd.hvp({LOGISTIC!r}, wrt='w', shapes={LOGISTIC_SHAPES!r}, cache=False).source)"
    )
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           check=True).stdout for _ in range(2)]
    assert runs[0] == runs[1]
    assert runs[0].strip() == sd.hvp(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES,
                                     cache=False).source.strip()


def test_hvp_loaded_from_the_disk_cache_is_the_same(cache_dir, monkeypatch):
    first = sd.hvp(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)
    from symdiff.tensor import build
    from tests.conftest import reset_memory

    reset_memory()

    def refuse(*args, **kwargs):
        raise AssertionError("derived again instead of loading the cached module")

    monkeypatch.setattr(build, "_build", refuse)
    second = sd.hvp(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)
    assert second.source == first.source
    assert second.args == first.args
    assert [str(e) for e in second.exprs] == [str(e) for e in first.exprs]


@pytest.mark.skipif(importlib.util.find_spec("scipy") is None, reason="scipy is a dev extra")
def test_vector_objective_hessp_drives_trust_ncg_without_a_dense_hessian():
    from scipy.optimize import minimize

    obj = sd.objective("sum(100*(x[1:] - x[:-1]**2)**2 + (1 - x[:-1])**2)", "x",
                       shapes={"x": ("n",)})
    result = minimize(obj.fun, np.full(200, -0.5), jac=obj.jac, hessp=obj.hessp,
                      method="trust-ncg", tol=1e-10)
    np.testing.assert_allclose(result.x, np.ones(200), atol=1e-6)
    assert obj._hessian is None  # hessp never built the n-by-n Hessian
