"""Bound constants: NumPy arrays a traced function closes over or builds.

Each becomes a trailing parameter ``_c0, _c1, ...`` of the generated module, declared by shape
and dtype; the compiled function captures the values when tracing and passes them on every
call. Checked here: gradients and Hessians against central differences and closed forms, both
modes, one module source for constants of one shape (values never in it), ``bind``, pickling,
the disk cache, and the errors.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import symdiff as sd
from symdiff.errors import ShapeError, UnsupportedError

from .conftest import reset_memory
from .test_display import assert_katex_safe

RNG = np.random.default_rng(1515)
X = RNG.normal(size=(7, 3))
Y = RNG.normal(size=7)
LABELS = np.where(RNG.normal(size=7) > 0, 1.0, -1.0)
MASK = np.array([True, False, True])


def _central(f, w: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    grad = np.zeros(w.shape + np.shape(f(w)))
    for i in np.ndindex(w.shape):
        step = np.zeros_like(w)
        step[i] = eps
        grad[i] = (f(w + step) - f(w - step)) / (2 * eps)
    return np.moveaxis(grad, tuple(range(w.ndim)), tuple(range(-w.ndim, 0))) if np.ndim(
        f(w)) else grad


def least_squares(w):
    return np.sum((X @ w - Y) ** 2)


def logistic(w):
    return np.sum(np.log(1 + np.exp(-LABELS * (X @ w)))) + 0.5 * np.sum((w * MASK) ** 2)


def with_eye(w):
    return w @ (np.eye(3) + 0.5 * np.ones((3, 3))) @ w + np.sum(np.where(MASK, w, np.sin(w)))


def _make_loss(data: np.ndarray, target: np.ndarray):
    def loss(w):
        return np.sum((data @ w - target) ** 2)

    return loss


# -- gradients, Hessians, modes ---------------------------------------------------------------
@pytest.mark.parametrize("f", [least_squares, logistic, with_eye], ids=lambda f: f.__name__)
def test_closures_against_central_differences_and_hessian(f):
    w = RNG.normal(size=3)
    g = sd.grad(f, wrt="w", shapes={"w": (3,)})
    np.testing.assert_allclose(g(w), _central(f, w), rtol=1e-6, atol=1e-7)
    forward = sd.grad(f, wrt="w", shapes={"w": (3,)}, mode="forward")
    np.testing.assert_allclose(forward(w), g(w), rtol=1e-12, atol=1e-12)
    h = sd.hessian(f, wrt="w", shapes={"w": (3,)})
    np.testing.assert_allclose(h(w), _central(g, w), rtol=1e-5, atol=1e-6)
    v = RNG.normal(size=3)
    hvp = sd.hvp(f, wrt="w", shapes={"w": (3,)})
    np.testing.assert_allclose(hvp(w, v), h(w) @ v, rtol=1e-10, atol=1e-10)
    value, grad = sd.value_and_grad(f, wrt="w", shapes={"w": (3,)})(w)
    assert value == pytest.approx(f(w), rel=1e-12) and np.allclose(grad, g(w))


def test_least_squares_closed_forms():
    w = RNG.normal(size=3)
    g = sd.grad(least_squares, wrt="w", shapes={"w": (3,)})
    np.testing.assert_allclose(g(w), 2 * X.T @ (X @ w - Y), rtol=1e-12)
    h = sd.hessian(least_squares, wrt="w", shapes={"w": (3,)})
    np.testing.assert_allclose(h(w), 2 * X.T @ X, rtol=1e-12)
    jac = sd.jacobian(lambda w: X @ w - Y, wrt="w", shapes={"w": (3,)})
    np.testing.assert_allclose(jac(w), X, rtol=1e-12)
    value = sd.compile(lambda w: X @ w, shapes={"w": (3,)})
    np.testing.assert_allclose(value(w), X @ w, rtol=1e-12)


def test_source_names_the_constants_and_no_gradient_flows_into_them():
    g = sd.grad(least_squares, wrt="w", shapes={"w": (3,)})
    assert "def grad_f(w, _c0, _c1):" in g.source
    assert "_c0 (7, 3) float64 (X), _c1 (7,) float64 (Y)" in g.source
    assert g.args == ("w",) and str(g.__signature__) == "(w)"
    assert list(g.constants) == ["X", "Y"] and g.recipe.constants == ("_c0", "_c1")
    assert "_c0_bar" not in g.source and "_c1_bar" not in g.source
    assert "Bound constants" in g.__doc__


def test_the_same_array_is_one_constant_and_scalars_stay_literals():
    def f(x):
        return np.sum(X @ x) + np.sum(X @ (x * x)) + np.float64(0.3) * np.sum(x) + np.array(3.0)

    g = sd.grad(f, wrt="x", shapes={"x": (3,)})
    assert list(g.constants) == ["X"]
    assert "3*sum(x)/10 + 3" in g.source and "_c1" not in g.source  # literals


def test_constants_built_inside_are_named_by_parameter():
    def f(x):
        return np.sum(np.arange(4.0) * x) + np.sum(np.linspace(0, 1, 4) * x ** 2)

    g = sd.grad(f, wrt="x", shapes={"x": (4,)})
    assert list(g.constants) == ["_c0", "_c1"]
    x = RNG.normal(size=4)
    np.testing.assert_allclose(g(x), np.arange(4.0) + 2 * np.linspace(0, 1, 4) * x)


# -- one module for every value of one shape --------------------------------------------------
def test_same_shape_reuses_the_module_source_and_values_are_never_written():
    first = np.full((7, 3), 123.456)
    second = RNG.normal(size=(7, 3))
    g1 = sd.grad(_make_loss(first, Y), wrt="w", shapes={"w": (3,)})
    g2 = sd.grad(_make_loss(second, Y), wrt="w", shapes={"w": (3,)})
    assert g1.source == g2.source
    assert "123.456" not in g1.source
    w = RNG.normal(size=3)
    np.testing.assert_allclose(g1(w), 2 * first.T @ (first @ w - Y), rtol=1e-12)
    np.testing.assert_allclose(g2(w), 2 * second.T @ (second @ w - Y), rtol=1e-12)
    g3 = sd.grad(_make_loss(X[:5], Y[:5]), wrt="w", shapes={"w": (3,)})
    assert g3.source != g1.source and "(5, 3)" in g3.source


def test_captured_when_traced_and_rebound_with_bind():
    data = RNG.normal(size=(7, 3))
    g = sd.grad(_make_loss(data, Y), wrt="w", shapes={"w": (3,)})
    assert list(g.constants) == ["data", "target"]
    w = RNG.normal(size=3)
    before = g(w)
    data += 1.0  # mutating the array afterwards does not change g
    np.testing.assert_array_equal(g(w), before)
    rebound = g.bind(data=data)
    np.testing.assert_allclose(rebound(w), 2 * data.T @ (data @ w - Y), rtol=1e-12)
    np.testing.assert_array_equal(g(w), before)  # bind returns a new function
    assert rebound.source is g.source
    by_parameter = g.bind(_c1=np.zeros(7))
    np.testing.assert_allclose(by_parameter(w), 2 * (data - 1.0).T @ ((data - 1.0) @ w))
    assert not g.constants["data"].flags.writeable


def test_bind_checks_names_shapes_and_dtypes():
    g = sd.grad(least_squares, wrt="w", shapes={"w": (3,)})
    with pytest.raises(TypeError, match=r"unknown constant.*Z.*X, Y"):
        g.bind(Z=X)
    with pytest.raises(ShapeError, match=r"X was traced as an array of shape \(7, 3\)"):
        g.bind(X=X[:4])
    with pytest.raises(ShapeError, match=r"dtype float64; got .* float32"):
        g.bind(X=X.astype(np.float32))
    ints = g.bind(Y=np.arange(7))  # integers convert to float64 as when traced
    w = RNG.normal(size=3)
    np.testing.assert_allclose(ints(w), 2 * X.T @ (X @ w - np.arange(7)), rtol=1e-12)


def test_float32_constants_keep_float32():
    data = X.astype(np.float32)

    def f(w):
        return np.sum((data @ w) ** 2)

    g = sd.grad(f, wrt="w", shapes={"w": (3,)})
    assert "float32 (data)" in g.source
    got = g(np.ones(3, dtype=np.float32))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, 2 * X.T @ (X @ np.ones(3)), rtol=1e-4)


# -- persistence --------------------------------------------------------------------------------
def test_pickle_carries_the_constants():
    g = sd.grad(logistic, wrt="w", shapes={"w": (3,)}).bind(X=2 * X)
    copy = pickle.loads(pickle.dumps(g))
    w = RNG.normal(size=3)
    np.testing.assert_array_equal(copy(w), g(w))
    assert list(copy.constants) == ["LABELS", "X", "MASK"]  # -LABELS is computed from LABELS
    assert not copy.constants["X"].flags.writeable


def test_disk_cache_stores_the_module_once_and_never_the_values(cache_dir, monkeypatch):
    first = np.full((7, 3), 123.456)
    g1 = sd.grad(_make_loss(first, Y), wrt="w", shapes={"w": (3,)})
    reset_memory()
    from symdiff.tensor import build

    def refuse(*args, **kwargs):
        raise AssertionError("derived again")

    monkeypatch.setattr(build, "_build", refuse)
    second = RNG.normal(size=(7, 3))
    g2 = sd.grad(_make_loss(second, Y), wrt="w", shapes={"w": (3,)})  # from the disk entry
    assert g2.source == g1.source and g2.key == g1.key
    w = RNG.normal(size=3)
    np.testing.assert_allclose(g2(w), 2 * second.T @ (second @ w - Y), rtol=1e-12)
    stored = [p.read_text() for p in cache_dir.rglob("*.py") if p.is_file()]
    assert stored and not any("123.456" in text for text in stored)


# -- np.where and errors ------------------------------------------------------------------------
def test_where_with_a_constant_boolean_condition():
    def f(x):
        return np.sum(np.where(MASK, np.log(x), 0.0))  # the unused branch may be nan

    x = np.array([0.5, -1.0, 2.0])
    g = sd.grad(f, wrt="x", shapes={"x": (3,)})
    np.testing.assert_allclose(g(x), [2.0, 0.0, 0.5])

    def not_bool(x):
        return np.sum(np.where(X[0], x, 0.0))

    with pytest.raises(UnsupportedError, match="constant boolean array"):
        sd.grad(not_bool, wrt="x", shapes={"x": (3,)})


@pytest.mark.parametrize("bad, what", [
    (np.ones(3, dtype=complex), "complex numbers"),
    (np.array(["a", "b", "c"]), "dtype <U1"),
    (np.array([1.0, None, 2.0], dtype=object), "dtype object"),
])
def test_constants_that_are_not_real_numbers_are_refused(bad, what):
    def f(x):
        return np.sum(x * bad)

    with pytest.raises(UnsupportedError, match=rf"constant array bad of shape \(3,\) holds {what}"):
        sd.grad(f, wrt="x", shapes={"x": (3,)})


def test_explain_and_derive_show_the_constants():
    g = sd.grad(least_squares, wrt="w", shapes={"w": (3,)})
    assert "_c0.T @" in g.explain()
    derivation = sd.derive(least_squares, wrt="w", shapes={"w": (3,)})
    assert "z1 = _c0 @ w" in str(derivation)
    latex = derivation.latex()
    assert_katex_safe(latex)
    assert r"{\mathtt{\_c0}}^{T}" in latex and " _c" not in latex


def test_recipe_records_the_constants_and_reads_older_records():
    from symdiff.recipe import Recipe

    g = sd.grad(least_squares, wrt="w", shapes={"w": (3,)})
    record = g.recipe.to_json()
    assert record["constants"] == ["_c0", "_c1"]
    assert record["shapes"] == [["w", [3]], ["_c0", [7, 3]], ["_c1", [7]]]
    assert Recipe.from_json(record) == g.recipe
    older = {k: v for k, v in record.items() if k != "constants"}
    assert Recipe.from_json(older).constants == ()
    plain = sd.grad("sum(x**2)", wrt="x", shapes={"x": (3,)})
    assert "constants" not in plain.recipe.to_json() and plain.constants == {}


def _other_numpy_calls(X):
    def f(w):
        return (np.sum(np.dot(X, w) ** 2) + np.sum(np.maximum(X[:, 0], w[0] * X[:, 1]))
                + np.sum(np.where(X[:, 2] > w[1], 1.0, w[2])) + w.dot(X.T).sum())

    return f


def test_constants_in_other_numpy_calls():
    f = _other_numpy_calls(X)
    w = np.array([0.3, -0.2, 0.7])
    g = sd.grad(f, wrt="w", shapes={"w": (3,)})
    np.testing.assert_allclose(g(w), _central(f, w), rtol=1e-6, atol=1e-7)
    # X[:, 0], X[:, 1], X[:, 2] > ... and X.T are computed from X's constant: bind recomputes them
    assert list(g.constants) == ["X"]
    np.testing.assert_allclose(g.bind(X=2 * X)(w), _central(_other_numpy_calls(2 * X), w),
                               rtol=1e-6, atol=1e-6)


def test_signature_with_defaults_and_keyword_only_parameters():
    def loss(w, *, scale=2.0):
        return scale * np.sum((X @ w) ** 2)

    g = sd.grad(loss, wrt="w", shapes={"w": (3,), "scale": ()})
    assert str(g.__signature__) == "(w, *, scale=2.0)"
    w = RNG.normal(size=3)
    np.testing.assert_allclose(g(w), 4 * X.T @ (X @ w), rtol=1e-12)
    np.testing.assert_allclose(g.bind(X=2 * X)(w, scale=1.0), 8 * X.T @ (X @ w), rtol=1e-12)
    np.testing.assert_allclose(g.call_by_name({"w": w}), g(w))


def test_named_dimensions_meeting_a_constant_get_a_hint():
    with pytest.raises(ShapeError, match=r"\(3 != d\).*constant arrays .*X \(7, 3\).*fixed sizes"):
        sd.grad(least_squares, wrt="w", shapes={"w": ("d",)})


def test_large_constants_are_parameters_not_source():
    big = RNG.normal(size=(2000, 50))

    def f(w):
        return np.sum(np.tanh(big @ w))

    g = sd.grad(f, wrt="w", shapes={"w": (50,)})
    assert len(g.source) < 10_000
    w = RNG.normal(size=50) / 10
    np.testing.assert_allclose(g(w), big.T @ (1 - np.tanh(big @ w) ** 2), rtol=1e-10)


def test_transposes_and_other_views_of_a_named_array_are_rebound_with_it():
    data = RNG.normal(size=(7, 3))

    def f(w):
        return np.sum((data.T @ (data @ w)) ** 2) + np.sum(data[:, 0] * np.tanh(data @ w))

    g = sd.grad(f, wrt="w", shapes={"w": (3,)})
    assert list(g.constants) == ["data"]  # data.T is _c0.T, data[:, 0] is _c0[:, 0]
    assert "_c0.T" in g.source
    w = RNG.normal(size=3)
    np.testing.assert_allclose(g(w), _central(f, w), rtol=1e-6, atol=1e-6)
    rebound = g.bind(data=2 * data)
    data *= 2  # f now computes with the new values, as the rebound g does
    np.testing.assert_allclose(rebound(w), _central(f, w), rtol=1e-6, atol=1e-6)


def test_arrays_reached_through_an_attribute_are_constants_as_met():
    holder = type("Holder", (), {})()
    holder.data = RNG.normal(size=(7, 3))  # an attribute: captured where met, as NumPy made it

    def f(w):
        return np.sum(holder.data[:, 0] * np.tanh(holder.data @ w))

    g = sd.grad(f, wrt="w", shapes={"w": (3,)})
    assert list(g.constants) == ["_c0", "_c1"]
    w = RNG.normal(size=3)
    np.testing.assert_allclose(g(w), _central(f, w), rtol=1e-6, atol=1e-6)


def test_a_recipe_formula_reads_back_with_the_constants_as_arguments():
    g = sd.grad(least_squares, wrt="w", shapes={"w": (3,)})
    (text,) = g.recipe.exprs
    assert text == "sum(((_c0 @ w) - _c1)**2)"
    again = sd.grad(text, wrt="w", shapes=dict(g.recipe.shapes))
    assert again.args == ("_c0", "_c1", "w") and again.constants == {}
    w = RNG.normal(size=3)
    np.testing.assert_allclose(again(X, Y, w), g(w), rtol=1e-12)
    with pytest.raises(sd.ParseError, match="reserved"):
        sd.grad("sum(_d0 * w)", wrt="w", shapes={"w": (3,), "_d0": (3,)})
