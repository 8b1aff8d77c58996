"""Every tensor operation's gradient against central differences, in float64, on random shapes.

One row per operation (``OPS``), like the scalar layer's rule table test: the expression, the
declared shapes and the variables to differentiate. Sizes of named dimensions are drawn at
random (seeded) for each row. Plus the special cases: a row broadcast over a matrix, a
3-axis transpose, slicing a row and a column, and max/min with two- and three-way ties.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import symdiff as sd
from tests.tensor_cases import central_gradient

# (id, expression, shapes, wrt)
OPS = [
    ("add-row-over-matrix", "sum((X + b)**2)", {"X": ("n", "d"), "b": ("d",)}, ["X", "b"]),
    ("subtract-column", "sum((X - c)**3)", {"X": ("n", "d"), "c": ("n", 1)}, ["X", "c"]),
    ("multiply", "sum(X * Y * b)", {"X": ("n", "d"), "Y": ("n", "d"), "b": ("d",)},
     ["X", "Y", "b"]),
    ("divide", "sum(X / (1 + b**2))", {"X": ("n", "d"), "b": (1, "d")}, ["X", "b"]),
    ("power", "sum(exp(X) ** b)", {"X": ("n", "d"), "b": ("d",)}, ["X", "b"]),
    ("scalar-variable", "c * sum(X**2) + c**2", {"c": (), "X": ("n", "d")}, ["c", "X"]),
    ("branch", "sum(X * X + sin(X) * X)", {"X": ("n", "d")}, ["X"]),
    ("matmul-matrix-matrix", "sum(sin(A @ B))", {"A": ("n", "k"), "B": ("k", "m")}, ["A", "B"]),
    ("matmul-matrix-vector", "sum(exp(A @ b))", {"A": ("n", "k"), "b": ("k",)}, ["A", "b"]),
    ("matmul-vector-matrix", "sum(tanh(a @ B))", {"a": ("k",), "B": ("k", "m")}, ["a", "B"]),
    ("matmul-vector-vector", "(a @ b)**2", {"a": ("k",), "b": ("k",)}, ["a", "b"]),
    ("matmul-batched", "sum(cos(A @ B))", {"A": (2, "n", "k"), "B": ("k", "m")}, ["A", "B"]),
    ("matmul-batched-both", "sum(sin(A @ B))", {"A": (2, "n", "k"), "B": (2, "k", "m")},
     ["A", "B"]),
    ("matmul-batched-broadcast", "sum(sin(A @ B) ** 2)",
     {"A": (3, 1, "n", "k"), "B": (2, "k", "m")}, ["A", "B"]),
    ("matmul-matrix-stack", "sum(tanh(A @ B))", {"A": ("n", "k"), "B": (2, "k", "m")},
     ["A", "B"]),
    ("matmul-stack-vector", "sum(exp(A @ b))", {"A": (2, "n", "k"), "b": ("k",)}, ["A", "b"]),
    ("matmul-vector-stack", "sum(exp(a @ B))", {"a": ("k",), "B": (2, "k", "m")}, ["a", "B"]),
    ("sum-all", "sum(X)**2", {"X": ("n", "d")}, ["X"]),
    ("sum-axis", "sum(sum(X, axis=0)**2)", {"X": ("n", "d")}, ["X"]),
    ("sum-axes-keepdims", "sum(sum(T, axis=(0, 2), keepdims=True) * T)",
     {"T": ("n", "d", 2)}, ["T"]),
    ("mean", "sum(mean(X, axis=1)**2) + mean(X)", {"X": ("n", "d")}, ["X"]),
    ("max-axis", "sum(max(X, axis=1)**2)", {"X": ("n", "d")}, ["X"]),
    ("max-all", "max(X) * sum(X)", {"X": ("n", "d")}, ["X"]),
    ("min-axis-keepdims", "sum(min(X, axis=0, keepdims=True) * X)", {"X": ("n", "d")}, ["X"]),
    ("transpose-T", "sum((X.T @ X) ** 2)", {"X": ("n", "d")}, ["X"]),
    ("transpose-3-axes", "sum(transpose(T, (2, 0, 1)) * W)", {"T": (2, 3, 4), "W": (4, 2, 3)},
     ["T", "W"]),
    ("transpose-T-3-axes", "sum(T.T * W)", {"T": (2, 3, 4), "W": (4, 3, 2)}, ["T"]),
    ("reshape", "sum(reshape(X, (d, n)) @ X)", {"X": ("n", "d")}, ["X"]),
    ("reshape-flat", "sum(reshape(X, (-1,)) ** 3)", {"X": ("n", "d")}, ["X"]),
    ("slice-row", "sum(X[1] ** 2)", {"X": ("n", "d")}, ["X"]),
    ("slice-column", "sum(X[:, 2] ** 2)", {"X": ("n", "d")}, ["X"]),
    ("slice-range", "sum(X[1:3] ** 2) + sum(X[-1, 1:] ** 3)", {"X": ("n", "d")}, ["X"]),
    ("slice-step", "sum(X[::2, -3:-1] ** 2) + sum(X[::-1, 0] * X[:, 0])", {"X": (5, 4)}, ["X"]),
    ("repeat", "sum(repeat(x, 3, axis=0) ** 2 * W)", {"x": (1, "d"), "W": (3, "d")}, ["x"]),
    ("repeat-elements", "sum(repeat(x, 2, axis=1) ** 2 * W)", {"x": (3, 2), "W": (3, 4)}, ["x"]),
    ("softmax", "sum(softmax(X, axis=1) * W)", {"X": ("n", "d"), "W": ("n", "d")}, ["X"]),
    ("softmax-axis-0", "sum(softmax(X, axis=0) ** 2)", {"X": ("n", "d")}, ["X"]),
    ("logsumexp-axis", "sum(logsumexp(X, axis=1) * c)", {"X": ("n", "d"), "c": ("n",)}, ["X"]),
    ("logsumexp-all", "logsumexp(X)", {"X": ("n", "d")}, ["X"]),
    ("elementwise-functions", "sum(relu(X) + softplus(X) + sqrt(abs(X) + 1) + sigmoid(X))",
     {"X": ("n", "d")}, ["X"]),
    ("elementwise-max", "sum(max(X, Y))", {"X": ("n", "d"), "Y": ("d",)}, ["X", "Y"]),
    ("where", "sum(where(X > 0, X**2, -X))", {"X": ("n", "d")}, ["X"]),
    ("attention", "sum(softmax(Q @ K.T, axis=1) @ V)", {"Q": (3, 4), "K": (5, 4), "V": (5, 2)},
     ["Q", "K", "V"]),
    ("seed-004", "sum(sigmoid(a) @ b)", {"a": (3, 4), "b": (4, 2)}, ["a", "b"]),
]


def random_values(shapes, rng, sizes=None):
    """Random float64 arrays for ``shapes``, named dimensions drawn from 2..5."""
    sizes = dict(sizes or {})
    for shape in shapes.values():
        for dim in shape:
            if isinstance(dim, str) and dim not in sizes:
                sizes[dim] = int(rng.integers(2, 6))
    sizes.setdefault("d", 3)
    sizes["d"] = max(sizes["d"], 3)  # slices up to column 2
    sizes["n"] = max(sizes.get("n", 4), 4)
    return {
        name: rng.normal(size=tuple(sizes[d] if isinstance(d, str) else d for d in shape))
        for name, shape in shapes.items()
    }


def assert_gradient_matches(expr, shapes, wrt, values, rtol=1e-6):
    f = sd.compile(expr, shapes=shapes)
    g = sd.grad(expr, wrt=wrt, shapes=shapes)
    values = {k: v for k, v in values.items() if k in g.args}
    grads = g(**values)
    for name, analytic in zip(wrt, grads, strict=True):
        numeric = central_gradient(lambda **kw: f(**{k: kw[k] for k in f.args}), values, name)
        assert analytic.shape == values[name].shape
        scale = max(1.0, float(np.max(np.abs(numeric), initial=0.0)))  # round-off grows with f
        assert np.max(np.abs(analytic - numeric), initial=0.0) / scale < rtol, name


@pytest.mark.parametrize(("expr", "shapes", "wrt"), [row[1:] for row in OPS],
                         ids=[row[0] for row in OPS])
def test_gradient_matches_central_differences(expr, shapes, wrt):
    rng = np.random.default_rng(zlib.crc32(expr.encode()))
    assert_gradient_matches(expr, shapes, wrt, random_values(shapes, rng))


@pytest.mark.parametrize(("expr", "shapes", "wrt"), [row[1:] for row in OPS],
                         ids=[row[0] for row in OPS])
def test_forward_mode_agrees_with_reverse_mode(expr, shapes, wrt):
    rng = np.random.default_rng(7)
    values = random_values(shapes, rng)
    reverse = sd.grad(expr, wrt=wrt, shapes=shapes)
    forward = sd.grad(expr, wrt=wrt, shapes=shapes, mode="forward")
    args = {k: values[k] for k in reverse.args}
    for r, f in zip(reverse(**args), forward(**args), strict=True):
        np.testing.assert_allclose(f, r, rtol=1e-10, atol=1e-12)


BATCHED = [row for row in OPS if row[0].startswith("matmul-") and any(
    len(shape) > 2 for shape in row[2].values())]


@pytest.mark.parametrize(("expr", "shapes", "wrt"), [row[1:] for row in BATCHED],
                         ids=[row[0] for row in BATCHED])
def test_hessian_through_a_batched_matmul_matches_central_differences(expr, shapes, wrt):
    """Forward over reverse through stacks of matrices (the tangent axis moved in front of
    the matrix axes): each Hessian block against central differences of the gradient."""
    values = random_values(shapes, np.random.default_rng(5))
    grad = sd.grad(expr, wrt=wrt, shapes=shapes)
    hess = sd.hessian(expr, wrt=wrt, shapes=shapes)
    args = {k: values[k] for k in hess.args}
    blocks = hess(**args)
    h = 1e-6
    for j, name in enumerate(wrt):
        x = values[name]
        for index in np.ndindex(x.shape):
            up, down = x.copy(), x.copy()
            up[index] += h
            down[index] -= h
            ahead = grad(**{**args, name: up})
            behind = grad(**{**args, name: down})
            for i in range(len(wrt)):
                numeric = (ahead[i] - behind[i]) / (2 * h)
                block = blocks[i][j]
                np.testing.assert_allclose(block[(..., *index)], numeric, rtol=1e-5, atol=1e-6)


def test_value_matches_numpy():
    rng = np.random.default_rng(0)
    X, W = rng.normal(size=(4, 3)), rng.normal(size=(3, 2))
    f = sd.compile("softmax(tanh(X @ W), axis=1)[1:3, :]", shapes={"X": (4, 3), "W": (3, 2)})
    z = np.tanh(X @ W)
    want = (np.exp(z) / np.exp(z).sum(axis=1, keepdims=True))[1:3, :]
    np.testing.assert_allclose(f(X=X, W=W), want, rtol=1e-14)
    lse = sd.compile("logsumexp(X, axis=0)", shapes={"X": (4, 3)})
    np.testing.assert_allclose(lse(X), np.log(np.exp(X).sum(axis=0)), rtol=1e-14)


# -- special cases ---------------------------------------------------------------------------------
def test_broadcasting_a_row_over_a_matrix_sums_the_gradient_over_rows():
    g = sd.grad("sum(X + b)", wrt="b", shapes={"X": ("n", "d"), "b": ("d",)})
    np.testing.assert_array_equal(g(X=np.zeros((5, 3)), b=np.zeros(3)), [5.0, 5.0, 5.0])


def test_slicing_a_row_and_a_column_scatters_into_zeros():
    g = sd.grad("sum(X[2, :]) + 10 * sum(X[:, 1])", wrt="X", shapes={"X": (4, 5)})
    want = np.zeros((4, 5))
    want[2, :] += 1
    want[:, 1] += 10
    np.testing.assert_array_equal(g(X=np.ones((4, 5))), want)


def test_three_axis_transpose_gradient_is_transposed_back_by_argsort():
    g = sd.grad("sum(transpose(T, (2, 0, 1)) * W)", wrt="T", shapes={"T": (2, 3, 4),
                                                                      "W": (4, 2, 3)})
    W = np.arange(24.0).reshape(4, 2, 3)
    np.testing.assert_array_equal(g(T=np.zeros((2, 3, 4)), W=W),
                                  W.transpose(np.argsort((2, 0, 1))))


TIES = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0], [5.0, 1.0, 0.0]])


def test_max_along_an_axis_splits_ties_evenly():
    g = sd.grad("sum(max(X, axis=1))", wrt="X", shapes={"X": (3, 3)})
    want = [[0, 1 / 2, 1 / 2], [1 / 3, 1 / 3, 1 / 3], [1, 0, 0]]
    np.testing.assert_allclose(g(X=TIES), want, rtol=0, atol=1e-15)


def test_min_along_an_axis_splits_ties_evenly():
    g = sd.grad("sum(min(X, axis=1))", wrt="X", shapes={"X": (3, 3)})
    X = np.array([[3.0, 1.0, 1.0], [2.0, 2.0, 2.0], [5.0, 1.0, 0.0]])
    want = [[0, 1 / 2, 1 / 2], [1 / 3, 1 / 3, 1 / 3], [0, 0, 1]]
    np.testing.assert_allclose(g(X=X), want, rtol=0, atol=1e-15)


def test_max_of_everything_splits_ties_evenly_like_the_seed():
    g = sd.grad("max(X)", wrt="X", shapes={"X": (2, 5)})
    np.testing.assert_allclose(g(X=np.ones((2, 5))), np.full((2, 5), 0.1), rtol=0, atol=1e-15)


def test_elementwise_max_of_two_arrays_splits_ties_evenly():
    g = sd.grad("sum(max(a, b))", wrt=["a", "b"], shapes={"a": (3,), "b": (3,)})
    da, db = g(a=np.array([1.0, 2.0, 3.0]), b=np.array([1.0, 5.0, 0.0]))
    np.testing.assert_array_equal(da, [0.5, 0.0, 1.0])
    np.testing.assert_array_equal(db, [0.5, 1.0, 0.0])


def test_max_and_min_reductions_over_several_axes():
    g = sd.grad("sum(max(T, axis=(0, 2)))", wrt="T", shapes={"T": (2, 2, 2)})
    T = np.zeros((2, 2, 2))
    T[1, 0, 1] = 1.0
    want = np.zeros((2, 2, 2))
    want[1, 0, 1] = 1.0
    want[:, 1, :] = 0.25  # a four-way tie in the second slice
    np.testing.assert_allclose(g(T=T), want, rtol=0, atol=1e-15)


def _arrays(result):
    if isinstance(result, tuple):
        for item in result:
            yield from _arrays(item)
    else:
        yield np.asarray(result)


@pytest.mark.parametrize(("expr", "shapes", "wrt"), [row[1:] for row in OPS],
                         ids=[row[0] for row in OPS])
def test_generated_code_never_writes_into_or_returns_the_arguments(expr, shapes, wrt):
    """The emitted code updates buffers in place (``_x_bar[1:] -= ...``, ``out=``): every one
    must be its own array, never an argument or a view of one, in every kind of function."""
    rng = np.random.default_rng(11)
    values = random_values(shapes, rng)
    built = [
        sd.compile(expr, shapes=shapes),
        sd.grad(expr, wrt=wrt, shapes=shapes),
        sd.grad(expr, wrt=wrt, shapes=shapes, mode="forward"),
        sd.value_and_grad(expr, wrt=wrt, shapes=shapes),
        sd.hessian(expr, wrt=wrt[0], shapes=shapes),
        sd.hvp(expr, wrt=wrt[0], shapes=shapes),
    ]
    for f in built:
        args = {k: values[k] for k in f.args if k in values}
        if "_v" in f.args:
            args["_v"] = rng.normal(size=values[wrt[0]].shape)
        before = {k: v.copy() for k, v in args.items()}
        result = f(**args)
        for name, array in args.items():
            np.testing.assert_array_equal(array, before[name], err_msg=f"{f!r} wrote {name}")
        for out in _arrays(result):
            for name, array in args.items():
                assert not np.shares_memory(out, array), f"{f!r} returned a view of {name}"
