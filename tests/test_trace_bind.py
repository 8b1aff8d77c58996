"""``bind`` rebinds everything derived from what it rebinds: values a traced function computes
from a closed-over array (``np.sum(x)``, ``x.mean()``, ``np.linalg.norm(x)``, ``x @ x``, ...)
are expressions in its bound constant, so ``g.bind(x=new)`` equals building from scratch with
``new``; where the compiled function holds numbers computed from the array instead, ``bind``
refuses with a SymdiffError saying why."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import symdiff as sd
from tests.numeric import central

#: Values computed from a vector ``x`` (shape (4,)), as users write them.
VECTOR_KINDS = {
    "sum": lambda x: np.sum(x),
    "mean method": lambda x: x.mean(),
    "norm": lambda x: np.linalg.norm(x),
    "max method": lambda x: x.max(),
    "min": lambda x: np.min(x),
    "dot": lambda x: x @ x,
    "std": lambda x: np.std(x),
    "var ddof": lambda x: np.var(x, ddof=1),
    "prod": lambda x: np.prod(x),
    "negation": lambda x: -x,
    "slice": lambda x: x[1:],
    "normalised": lambda x: x / np.sum(x),
    "standardised": lambda x: (x - x.mean()) / x.std(),
    "cumsum": lambda x: np.cumsum(x),
    "sort": lambda x: np.sort(x),
    "outer": lambda x: np.outer(x, x),
    "exp of max": lambda x: np.exp(np.max(np.abs(x))),
    "median": lambda x: np.median(x),
    "concatenate": lambda x: np.concatenate([x, 2 * x]),
    "stack rows": lambda x: np.stack([x, x ** 2]).sum(axis=0),
}
#: Values computed from a matrix ``x`` (shape (3, 3), well conditioned).
MATRIX_KINDS = {
    "transpose product": lambda x: x.T @ x,
    "column means": lambda x: np.mean(x, axis=0),
    "determinant": lambda x: np.linalg.det(x),
    "inverse": lambda x: np.linalg.inv(x),
    "solve": lambda x: np.linalg.solve(x, np.ones(3)),
    "trace": lambda x: np.trace(x),
    "log-determinant": lambda x: np.linalg.slogdet(x)[1],
    "ravel": lambda x: x.ravel(),
    "row norms": lambda x: np.linalg.norm(x, axis=1),
}


def _objective(kind, x):
    """A user's function of ``r`` that uses a value derived from the closed-over ``x``."""
    def f(r):
        return np.sum(np.sin(r * kind(x))) + r ** 2 * np.sum(kind(x))
    return f


def _vectors():
    return hnp.arrays(np.float64, (4,), elements=st.floats(0.5, 2.0))


def _matrices():
    return hnp.arrays(np.float64, (3, 3), elements=st.floats(-0.3, 0.3)).map(
        lambda a: a + 2.0 * np.eye(3))


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(sorted(VECTOR_KINDS)), _vectors(), _vectors(), st.floats(-1.0, 1.0))
def test_bind_of_a_vector_equals_a_fresh_build(name, x, new, r):
    kind = VECTOR_KINDS[name]
    g = sd.grad(_objective(kind, x), wrt="r", shapes={"r": ()})
    fresh = sd.grad(_objective(kind, new), wrt="r", shapes={"r": ()})
    assert np.isclose(g.bind(x=new)(r), fresh(r), rtol=1e-10, atol=1e-12,
                      equal_nan=True), name
    assert np.isclose(fresh(r), central(_objective(kind, new), np.array(r)), rtol=1e-5,
                      atol=1e-6, equal_nan=True), name


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(sorted(MATRIX_KINDS)), _matrices(), _matrices(), st.floats(-1.0, 1.0))
def test_bind_of_a_matrix_equals_a_fresh_build(name, x, new, r):
    kind = MATRIX_KINDS[name]
    g = sd.grad(_objective(kind, x), wrt="r", shapes={"r": ()})
    fresh = sd.grad(_objective(kind, new), wrt="r", shapes={"r": ()})
    assert np.isclose(g.bind(x=new)(r), fresh(r), rtol=1e-9, atol=1e-12, equal_nan=True), name


def test_the_example_of_a_sum_folded_at_trace_time():
    x = np.array([1.0, 2.0, 3.0, 4.0])

    def f(r):
        return np.sum(x) / np.sum(r + x)

    g = sd.grad(f, wrt="r", shapes={"r": ()})
    x10 = 10 * x
    expected = sd.grad(lambda r: np.sum(x10) / np.sum(r + x10), wrt="r", shapes={"r": ()})(1.0)
    assert np.isclose(g.bind(x=10 * x)(1.0), expected, rtol=1e-12)
    assert np.isclose(expected, -np.sum(x10) * 4 / np.sum(1.0 + x10) ** 2, rtol=1e-12)
    assert "_c1 () float64 (computed from x when bound)" in g.source  # once per binding


def test_a_global_array_read_by_a_helper_is_rebound_too():
    g = sd.grad(_scaled_loss, wrt="w", shapes={"w": (3,)})
    w = np.array([0.1, -0.2, 0.3])
    other = np.array([1.0, -1.0, 2.0])
    expected = 2 * w * np.sum(other) / 3
    assert np.allclose(g.bind(SCALE=other)(w), expected, rtol=1e-12)


SCALE = np.array([3.0, 1.0, 2.0])


def _normaliser():
    return np.sum(SCALE) / SCALE.size


def _scaled_loss(w):
    return np.sum(w ** 2) * _normaliser()


def test_an_int_array_as_values_and_as_an_index():
    counts = np.array([2, 0, 3])
    order = np.array([2, 0, 1])

    def f(w):
        return np.sum(counts * np.log(w)) - np.sum(counts) * np.log(np.sum(w[order]))

    g = sd.grad(f, wrt="w", shapes={"w": (3,)})
    w = np.array([0.2, 0.3, 0.5])
    assert np.allclose(g(w), central(f, w), rtol=1e-6)
    with pytest.raises(sd.SymdiffError, match=r"counts .*np\.sum"):
        g.bind(counts=np.array([1, 1, 1]))  # np.sum(counts) was computed by NumPy
    with pytest.raises(sd.SymdiffError, match=r"order .*written into the generated code"):
        g.bind(order=np.array([1, 2, 0]))  # a short index is written as literals

    long_order = np.arange(100)[::-1].copy()

    def h(v):
        return np.sum(np.sin(v[long_order]) * np.arange(100))

    g = sd.grad(h, wrt="v", shapes={"v": (100,)})
    v = np.linspace(-1.0, 1.0, 100)
    new_order = np.roll(long_order, 3)
    expected = np.zeros(100)
    expected[new_order] = np.cos(v[new_order]) * np.arange(100)
    assert np.allclose(g.bind(long_order=new_order)(v), expected, rtol=1e-12)


def test_what_cannot_stay_symbolic_is_refused_with_why():
    x = np.array([1.0, -2.0, 3.0])

    def f(r):
        top = float(np.max(x))  # Python reads a number: traced again with plain arrays
        return np.sum(np.sin(r * x)) * top

    g = sd.grad(f, wrt="r", shapes={"r": ()})
    assert np.isclose(g(0.5), central(f, np.array(0.5)), rtol=1e-6)
    with pytest.raises(sd.SymdiffError, match=r"x when it was traced .*symbolic constant"):
        g.bind(x=2 * x)

    def h(r):
        return np.sum(np.sin(r * np.asarray(x)))  # numbers NumPy took from the array

    with pytest.raises(sd.SymdiffError, match=r"np\.asarray"):
        sd.grad(h, wrt="r", shapes={"r": ()}).bind(x=2 * x)


@pytest.mark.parametrize("name", ["sum", "norm", "std", "dot"])
def test_scalar_tracing_refuses_to_rebind(name):
    x = np.array([1.0, 2.0, 3.0, 4.0])
    kind = VECTOR_KINDS[name]

    def f(r):
        return np.sin(r * kind(x)) + r ** 2

    g = sd.grad(f, wrt="r")  # no shapes=: the derived number is in the expression
    assert np.isclose(g(0.3), np.cos(0.3 * kind(x)) * kind(x) + 0.6)
    with pytest.raises(sd.SymdiffError, match="without shapes="):
        g.bind(x=2 * x)


def test_what_is_computed_from_data_alone_is_computed_once_per_binding():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 3)), rng.normal(size=50)

    def make(X):
        def loss(w):
            Xs = (X - X.mean(axis=0)) / X.std(axis=0)
            return np.sum((Xs @ w - y) ** 2)
        return loss

    g = sd.grad(make(X), wrt="w", shapes={"w": (3,)})
    assert "computed from X when bound" in g.source
    assert "_np.add.reduce" not in g.source.split("def grad_f")[1].split("# Helpers")[0]
    w = np.array([0.2, -0.1, 0.4])
    assert np.allclose(g(w), central(make(X), w), rtol=1e-6)
    new = rng.normal(size=(50, 3))
    rebound = pickle.loads(pickle.dumps(g)).bind(X=new)
    assert np.allclose(rebound(w), central(make(new), w), rtol=1e-6)
    derived = next(name for name in g.constants if name.startswith("_c"))
    with pytest.raises(TypeError, match="computed from X"):
        g.bind(**{derived: np.zeros(g.constants[derived].shape)})
