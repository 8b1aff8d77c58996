"""Parameters that are trees (lists, tuples, dicts of arrays) and static arguments (ints,
strings, flags): shapes from ``example=`` or from ``shapes=`` given as a tree, gradients of the
same structure, one specialisation per static value; ``sd.flatten`` / ``sd.unflatten``.
Gradients are checked against central differences of the function itself."""

from __future__ import annotations

import collections
import itertools
import pickle

import numpy as np
import pytest

import symdiff as sd

from .numeric import central_tree


def _mlp(params, X, y):
    h = X
    for W, b in params[:-1]:
        h = np.tanh(h @ W + b)
    W, b = params[-1]
    return np.sum((h @ W + b - y) ** 2)


def _params(rng, sizes=(3, 4, 2)):
    return [(rng.normal(size=(m, n)), rng.normal(size=n)) for m, n in itertools.pairwise(sizes)]


def _close(got, expected, rtol=1e-6, atol=1e-8):
    got_leaves, expected_leaves = sd.flatten(got)[0], sd.flatten(expected)[0]
    np.testing.assert_allclose(got_leaves, expected_leaves, rtol=rtol, atol=atol)


def test_a_list_of_layers_from_an_example():
    rng = np.random.default_rng(0)
    params, X, y = _params(rng), rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    g = sd.grad(_mlp, wrt="params", example=(params, X, y))
    assert isinstance(g, sd.CompiledFunction)
    assert g.args == ("params", "X", "y") and g.wrt == "params"
    got = g(params, X, y)
    assert isinstance(got, list) and all(isinstance(layer, tuple) for layer in got)
    assert [tuple(a.shape for a in layer) for layer in got] == [((3, 4), (4,)), ((4, 2), (2,))]
    _close(got, central_tree(lambda p: _mlp(p, X, y), params))
    assert "params_0_0" in g.source  # the leaves are the generated function's arguments


def test_shapes_as_a_tree_with_named_dimensions():
    rng = np.random.default_rng(1)
    params, X, y = _params(rng), rng.normal(size=(5, 3)), rng.normal(size=(5, 2))
    shapes = {"params": [((3, 4), (4,)), ((4, 2), (2,))], "X": ("n", 3), "y": ("n", 2)}
    g = sd.grad(_mlp, wrt="params", shapes=shapes)
    _close(g(params, X, y), central_tree(lambda p: _mlp(p, X, y), params))
    X2, y2 = rng.normal(size=(9, 3)), rng.normal(size=(9, 2))  # another n
    _close(g(params, X2, y2), central_tree(lambda p: _mlp(p, X2, y2), params))


def test_dicts_named_tuples_and_several_wrt_names():
    Layer = collections.namedtuple("Layer", "W b")

    def loss(params, scale, x):
        z = params["first"].W @ x + params["first"].b
        return scale * np.sum(np.tanh(z) * params["out"]) + np.sum(params["first"].W ** 2)

    rng = np.random.default_rng(2)
    params = {"out": rng.normal(size=2),
              "first": Layer(rng.normal(size=(2, 3)), rng.normal(size=2))}
    x, scale = rng.normal(size=3), 0.7
    g = sd.grad(loss, wrt=["params", "scale"], example=(params, scale, x))
    d_params, d_scale = g(params, scale, x)
    assert isinstance(d_params["first"], Layer) and sorted(d_params) == ["first", "out"]
    _close(d_params, central_tree(lambda p: loss(p, scale, x), params))
    np.testing.assert_allclose(d_scale, central_tree(lambda s: loss(params, s, x), scale),
                               rtol=1e-6)
    value, grads = sd.value_and_grad(loss, wrt="params", example=(params, scale, x))(
        params, scale, x)
    assert np.isclose(value, loss(params, scale, x))
    _close(grads, d_params)


def test_wrt_none_is_every_parameter_that_is_not_static():
    def f(w, n, flag=True):
        return np.sum(w**n) if flag else np.sum(w)

    w = np.array([1.0, 2.0])
    g = sd.grad(f, example=(w, 3))
    assert g.wrt == ("w",)
    (d_w,) = g(w, 3)
    np.testing.assert_allclose(d_w, 3 * w**2)
    np.testing.assert_allclose(g(w, 2)[0], 2 * w)  # another specialisation
    np.testing.assert_allclose(g(w, 2, False)[0], [1.0, 1.0])
    assert g.specialisations == 3


def test_an_iteration_counter_picks_a_batch():
    rng = np.random.default_rng(3)
    data, targets = rng.normal(size=(12, 2)), rng.normal(size=12)
    batch = 4

    def objective(w, i):
        rows = slice((i % 3) * batch, (i % 3 + 1) * batch)
        return np.mean((data[rows] @ w - targets[rows]) ** 2)

    g = sd.grad(objective, wrt="w", shapes={"w": (2,)})  # i has no shape: static
    w = np.array([0.3, -0.2])
    for i in range(5):
        rows = slice((i % 3) * batch, (i % 3 + 1) * batch)
        X, t = data[rows], targets[rows]
        np.testing.assert_allclose(g(w, i), 2 * X.T @ (X @ w - t) / batch, rtol=1e-12)
    assert g.specialisations == 5  # one per value, as JAX's static_argnames
    np.testing.assert_allclose(g(w, np.array(1)), g(w, 1))  # integers: static values too
    with pytest.raises(sd.ShapeError, match=r"argument 'i' of objective is static"):
        g(w, np.array(1.0))


def test_static_names_the_scalar_way():
    def f(x, n):
        return x**n if n % 2 else np.cos(x) * n

    g = sd.grad(f, wrt="x", static="n")
    x = np.array([0.5, 1.5])
    np.testing.assert_allclose(g(x, 3), 3 * x**2)
    np.testing.assert_allclose(g(x, 2), -2 * np.sin(x))


def test_source_before_the_static_values_are_known_says_what_to_do():
    g = sd.grad(lambda w, i: np.sum(w * i), wrt="w", shapes={"w": (2,)})
    with pytest.raises(sd.SymdiffError, match="call it first"):
        print(g.source)
    g(np.ones(2), 3)
    assert "3" in g.source


def test_structure_mismatches_and_bad_examples_are_clear():
    rng = np.random.default_rng(4)
    params = _params(rng)
    X, y = rng.normal(size=(2, 3)), rng.normal(size=(2, 2))
    g = sd.grad(_mlp, wrt="params", example=(params, X, y))
    with pytest.raises(sd.ShapeError, match="argument 'params' of _mlp has the structure"):
        g(params[:1], X, y)
    with pytest.raises(sd.ShapeError):
        g([(W.T, b) for W, b in params], X, y)
    with pytest.raises(sd.SymdiffError, match="static argument"):
        sd.grad(_mlp, wrt="X", example=(params, "three", y))
    with pytest.raises(sd.SymdiffError, match="example= takes the arguments"):
        sd.grad(_mlp, wrt="params", example=params[0][0])
    with pytest.raises(sd.ShapeError, match="each leaf must be a shape"):
        sd.grad(_mlp, wrt="params", shapes={"params": [((3, 4), "b")], "X": (2, 3),
                                            "y": (2, 2)})


def test_hessian_of_a_tree_is_a_tree_of_blocks():
    def f(p):
        return np.sum(p["a"] ** 2 * p["b"]) + p["b"] ** 3

    p = {"a": np.array([1.0, 2.0]), "b": 0.5}
    H = sd.hessian(f, wrt="p", example=(p,))(p)
    np.testing.assert_allclose(H["a"]["a"], np.diag(2 * p["b"] * np.ones(2)))
    np.testing.assert_allclose(H["a"]["b"], 2 * p["a"])
    np.testing.assert_allclose(H["b"]["b"], 6 * p["b"])


def test_trees_pickle_and_bind():
    w = {"u": np.array([1.0, 2.0]), "v": np.array([3.0])}
    data = np.array([0.5, 0.25])

    def f(w, k):
        return np.sum(w["u"] * data) * w["v"][0] * k

    g = sd.grad(f, wrt="w", example=(w, 2))
    again = pickle.loads(pickle.dumps(g))
    _close(again(w, 2), g(w, 2))
    bound = g.bind(data=2 * data)
    np.testing.assert_allclose(bound(w, 2)["u"], 2 * 2 * data * w["v"][0])


def test_flatten_and_unflatten():
    tree = [(np.ones((2, 2)), np.arange(2.0)), {"b": 3.0, "a": np.array([4.0])}]
    vector, unflatten = sd.flatten(tree)
    assert vector.tolist() == [1, 1, 1, 1, 0, 1, 4, 3]  # dict items by sorted key
    back = unflatten(vector * 2)
    assert back[1]["b"].shape == () and back[0][0].shape == (2, 2)
    assert sd.unflatten(vector, like=tree)[1]["a"].tolist() == [4.0]
    with pytest.raises(sd.SymdiffError, match="vector of 8 numbers"):
        unflatten(np.ones(3))

    def l2(params):  # flatten inside a traced function
        flat, _ = sd.flatten(params)
        return flat @ flat

    g = sd.grad(l2, wrt="params", example=(tree,))
    _close(g(tree), sd.unflatten(2 * vector, like=tree))
