"""``prod`` over axes with ``shapes=``: parsing, tracing, emitted code, gradients (reverse and
forward mode) and Hessians, exact at zeros: the gradient of a product is the product of the
*other* elements, never ``prod(a) / a`` (nan where an element is 0)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import symdiff as sd
from symdiff.verify import VerificationError, check_module

RNG = np.random.default_rng(20)


def _body(source: str) -> str:
    """The module without its three header lines (which name the input and the key)."""
    return source.split("\n", 3)[3]


def central(f, x: np.ndarray, h: float = 1e-6) -> np.ndarray:
    """Central differences of ``f`` (any output shape) in every entry of ``x``: shape
    ``f(x).shape + x.shape``."""
    out = np.asarray(f(x))
    result = np.zeros(out.shape + x.shape)
    for index in np.ndindex(*x.shape):
        step = np.zeros_like(x)
        step[index] = h
        result[(..., *index)] = (np.asarray(f(x + step)) - np.asarray(f(x - step))) / (2 * h)
    return result


def others_loop(a: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """The product of the other elements along ``axes``, by explicit loops (no division)."""
    result = np.empty_like(a)
    for index in np.ndindex(*a.shape):
        product = 1.0
        for other in np.ndindex(*a.shape):
            same_group = all(other[i] == index[i] for i in range(a.ndim) if i not in axes)
            if same_group and other != index:
                product *= a[other]
        result[index] = product
    return result


# -- gradients against central differences ----------------------------------------------------
GRAD_CASES = [
    # (expression, shapes, {name: shape of the random value})
    ("prod(x)", {"x": ("n",)}, {"x": (5,)}),
    ("sum(prod(X, axis=0) * v)", {"X": ("n", "d"), "v": ("d",)}, {"X": (4, 3), "v": (3,)}),
    ("sum(prod(X, axis=1) ** 2)", {"X": ("n", "d")}, {"X": (3, 5)}),
    ("sum(prod(X, axis=-1, keepdims=True) * X)", {"X": ("n", "d")}, {"X": (4, 3)}),
    ("prod(X)", {"X": ("n", "d")}, {"X": (3, 2)}),
    ("prod(X, axis=None) + sum(X)", {"X": ("n", "d")}, {"X": (2, 3)}),
    ("sum(sin(prod(T, axis=1)))", {"T": ("a", "b", "c")}, {"T": (2, 3, 4)}),
    ("sum(prod(T, axis=(0, 2), keepdims=True) * T)", {"T": ("a", "b", "c")},
     {"T": (2, 3, 2)}),
    ("sum(prod(exp(T / 4), axis=2) @ W)", {"T": ("a", "b", "c"), "W": ("b", "k")},
     {"T": (2, 3, 4), "W": (3, 2)}),
]


def _values(sizes: dict, rng: np.random.Generator) -> dict:
    # |entries| around 1, so products of a few stay of order 1
    return {k: rng.choice([-1.0, 1.0], size=s) * rng.uniform(0.5, 1.5, size=s)
            for k, s in sizes.items()}


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("expr, shapes, sizes", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_gradient_matches_central_differences(expr, shapes, sizes, mode):
    values = _values(sizes, np.random.default_rng(len(expr)))
    wrt = sorted(shapes)
    value = sd.compile(expr, shapes=shapes)
    grads = sd.grad(expr, wrt=wrt, shapes=shapes, mode=mode)(**values)
    for name, got in zip(wrt, grads, strict=True):
        numeric = central(lambda x, name=name: value(**{**values, name: x}), values[name])
        assert got.shape == values[name].shape
        np.testing.assert_allclose(got, numeric, rtol=1e-7, atol=1e-8)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 1)])
def test_value_matches_numpy(axis, keepdims):
    X = RNG.normal(size=(3, 4))
    text = "prod(X" + ("" if axis is None else f", axis={axis}") + (
        ", keepdims=True" if keepdims else "") + ")"
    f = sd.compile(text, shapes={"X": ("n", "d")})
    expected = np.prod(X, axis=axis, keepdims=keepdims)
    got = f(X)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-14)


# -- zeros ------------------------------------------------------------------------------------
def _with_zeros(shape, zeros_per_row: int, axis: int, rng) -> np.ndarray:
    """Random entries with ``zeros_per_row`` zeros in every line along ``axis``."""
    a = rng.uniform(0.5, 2.0, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    moved = np.moveaxis(a, axis, -1)
    for index in np.ndindex(*moved.shape[:-1]):
        where = rng.choice(moved.shape[-1], size=zeros_per_row, replace=False)
        moved[(*index, where)] = 0.0
    return a


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("zeros", [1, 2, 3])
@pytest.mark.parametrize("axis", [0, 1])
def test_gradient_with_zeros_is_the_exact_product_of_the_others(axis, zeros, mode):
    X = _with_zeros((5, 4), zeros, axis, np.random.default_rng(10 * axis + zeros))
    c = RNG.normal(size=X.shape[1 - axis])
    expr = f"sum(prod(X, axis={axis}) * c)"
    g = sd.grad(expr, wrt="X", shapes={"X": ("n", "d"), "c": ("d" if axis == 0 else "n",)},
                mode=mode)
    got = g(X=X, c=c)
    expected = others_loop(X, (axis,)) * np.expand_dims(c, axis)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-15)
    if zeros == 1:  # the lone zero gets the product of the rest, the others nothing
        assert np.count_nonzero(got) == X.shape[1 - axis]
    else:
        assert not got.any()


def test_vector_with_one_and_two_zeros():
    g = sd.grad("prod(x)", wrt="x", shapes={"x": ("n",)})
    np.testing.assert_array_equal(g(np.array([2.0, 0.0, 3.0, -4.0])), [0.0, -24.0, 0.0, 0.0])
    np.testing.assert_array_equal(g(np.array([2.0, 0.0, 3.0, 0.0])), np.zeros(4))
    np.testing.assert_array_equal(g(np.array([0.0])), [1.0])
    np.testing.assert_array_equal(g(np.array([5.0])), [1.0])
    with np.errstate(all="raise"):  # no division by zero, even hidden by a where
        g(np.array([0.0, 0.0, 1.0]))


@pytest.mark.parametrize("axes", [(0,), (2,), (0, 2), (0, 1, 2)])
def test_three_axis_gradient_with_zeros(axes):
    rng = np.random.default_rng(sum(axes) + len(axes))
    T = rng.uniform(0.5, 2.0, size=(3, 2, 4))
    T[1, 0, 2] = 0.0
    T[2, 1, 0] = 0.0
    T[2, 1, 3] = 0.0
    text = f"prod(T, axis={axes}, keepdims=True)"
    weights = rng.normal(size=np.prod(T, axis=axes, keepdims=True).shape)
    g = sd.grad(f"sum({text} * w)", wrt="T",
                shapes={"T": T.shape, "w": weights.shape})
    np.testing.assert_allclose(g(T=T, w=weights), others_loop(T, axes) * weights,
                               rtol=1e-13, atol=1e-15)


def test_float32_stays_float32_with_zeros():
    x = np.array([1.5, 0.0, 2.0], dtype=np.float32)
    assert sd.grad("prod(x)", wrt="x", shapes={"x": ("n",)})(x).dtype == np.float32
    assert sd.hessian("prod(x)", wrt="x", shapes={"x": ("n",)})(x).dtype == np.float32


def test_large_product_gradient_matches_prod_over_x():
    x = np.exp(np.random.default_rng(5).normal(scale=0.02, size=1000))
    x *= np.random.default_rng(6).choice([-1.0, 1.0], size=1000)
    g = sd.grad("prod(x)", wrt="x", shapes={"x": ("n",)})
    np.testing.assert_allclose(g(x), np.prod(x) / x, rtol=1e-12)


# -- Hessians ---------------------------------------------------------------------------------
HESSIAN_CASES = [
    ("prod(x)", {"x": ("n",)}, (5,)),
    ("sum(prod(X, axis=1) * c)", {"X": ("n", "d"), "c": ("n",)}, (3, 4)),
    ("sum(prod(X, axis=0) ** 2)", {"X": ("n", "d")}, (3, 2)),
    ("sum(tanh(prod(X, axis=1, keepdims=True)) * X)", {"X": ("n", "d")}, (2, 3)),
    ("prod(X)", {"X": ("n", "d")}, (2, 3)),
]


@pytest.mark.parametrize("zeros", [0, 1, 2])
@pytest.mark.parametrize("expr, shapes, shape", HESSIAN_CASES, ids=[c[0] for c in HESSIAN_CASES])
def test_hessian_matches_central_differences_of_the_gradient(expr, shapes, shape, zeros):
    rng = np.random.default_rng(zeros + len(expr))
    x = rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], size=shape)
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, size=zeros, replace=False)] = 0.0
    wrt = "x" if "x" in shapes else "X"
    others = {k: rng.normal(size=3) for k in shapes if k != wrt}  # c: ("n",) with n = 3
    grad = sd.grad(expr, wrt=wrt, shapes=shapes)
    hessian = sd.hessian(expr, wrt=wrt, shapes=shapes)(**{wrt: x}, **others)
    numeric = central(lambda v: grad(**{wrt: v}, **others), x, h=1e-5)
    assert hessian.shape == x.shape + x.shape
    np.testing.assert_allclose(hessian, numeric, rtol=1e-7, atol=1e-8)
    square = hessian.reshape(x.size, x.size)
    np.testing.assert_allclose(square, square.T, atol=1e-12)


def test_hessian_of_the_product_is_the_product_of_all_but_two():
    x = np.array([2.0, 0.0, 3.0, -1.0])
    h = sd.hessian("prod(x)", wrt="x", shapes={"x": ("n",)})(x)
    expected = np.zeros((4, 4))
    for i, j in itertools.permutations(range(4), 2):
        expected[i, j] = np.prod([x[k] for k in range(4) if k not in (i, j)])
    np.testing.assert_array_equal(h, expected)


def test_hvp_and_jacobian_through_prod():
    X = RNG.normal(size=(3, 4))
    X[1, 2] = 0.0
    shapes = {"X": ("n", "d")}
    jac = sd.jacobian("prod(X, axis=1)", wrt="X", shapes=shapes)(X)
    expected = np.zeros((3, 3, 4))
    for i in range(3):
        expected[i, i] = others_loop(X[i:i + 1], (1,))[0]
    np.testing.assert_allclose(jac, expected, rtol=1e-13, atol=1e-15)
    v = RNG.normal(size=X.shape)
    expr = "sum(prod(X, axis=1) ** 2)"
    hessian = sd.hessian(expr, wrt="X", shapes=shapes)(X)
    product = sd.hvp(expr, wrt="X", shapes=shapes)(X=X, _v=v)
    np.testing.assert_allclose(product, np.tensordot(hessian, v, axes=2), rtol=1e-10,
                               atol=1e-12)


# -- code, tracing, steps, errors -------------------------------------------------------------
def test_emitted_gradient_reads_as_the_product_of_the_others():
    g = sd.grad("prod(x)", wrt="x", shapes={"x": ("n",)})
    source = g.source
    body = source[source.index("def grad_f") :]
    assert "_x_bar = _prod_others(x, 0)" in body
    helper = g.standalone_source[g.standalone_source.index("def _prod_others") :]
    assert "product.all()" in helper and "_np.where(zero, 1, x)" in helper
    check_module(source)
    value = sd.compile("prod(X, axis=1, keepdims=True)", shapes={"X": ("n", "d")}).source
    assert "_np.multiply.reduce(X, axis=1, keepdims=True)" in value
    whole = sd.compile("prod(X)", shapes={"X": ("n", "d")}).source
    assert "_np.multiply.reduce(X, axis=None)" in whole  # reduce's own default is axis=0
    vector = sd.compile("prod(x)", shapes={"x": ("n",)}).source
    assert "_np.multiply.reduce(x)\n" in vector  # one axis: the default is all of them
    x = np.array([1.5, -2.0, 3.0])
    assert sd.compile("prod(x)", shapes={"x": ("n",)})(x) == np.prod(x)


REDUCED = "_np.multiply.reduce(X, axis=1)"


def test_verifier_accepts_prod_only_as_it_accepts_sum():
    source = sd.compile("prod(X, axis=1)", shapes={"X": ("n", "d")}).source
    check_module(source)
    for good in ("_np.prod(X, axis=1)", "_np.add.reduce(X, axis=1)", "_np.prod(X + 1, axis=1)",
                 "_np.maximum.reduce(X + 1, axis=None)", "_np.minimum.reduce(X * 2, axis=(0, 1))"):
        check_module(source.replace(REDUCED, good))
    for bad in ("_np.prod(X, axis=1, initial=0)", "_np.prod(X, axis=1, where=X)",
                "_np.prod.__call__(X)", "_np.multiply.reduce(X, axis=1, initial=0)",
                "_np.multiply.reduce(X, axis=1, out=X)", "_np.multiply.reduce(X, dtype=None)"):
        with pytest.raises(VerificationError):
            check_module(source.replace(REDUCED, bad))
        with pytest.raises(VerificationError):
            check_module(source.replace(REDUCED, bad.replace("prod", "sum")))


@pytest.mark.parametrize("bad", [
    "_np.multiply.reduce",  # a bound method, not called
    "_np.multiply",  # a ufunc, not called
    "X.prod(axis=1)", "X.sum(axis=1)",  # array methods are not emitted
    "X.tofile('f')", "X.dump('f')", "X.__class__", "X.prod.__self__",
    "_np.multiply.accumulate(X)", "_np.multiply.at(X, 0, 2.0)", "_np.divide.reduce(X)",
    "_np.multiply.reduce.__self__", "_check_shapes.reduce(X)", "X.reduce(X)",
    "_np.add.reduce(X, axis=_np)",
])
def test_verifier_refuses_other_methods_and_owners(bad):
    source = sd.compile("prod(X, axis=1)", shapes={"X": ("n", "d")}).source
    with pytest.raises(VerificationError):
        check_module(source.replace(REDUCED, bad))


def traced_rows(X, c):
    return np.sum(np.prod(X, axis=1) * c) + X.prod(axis=0, keepdims=True).sum()


@pytest.mark.parametrize("builder", [sd.grad, sd.hessian, sd.compile])
def test_traced_np_prod_gives_the_string_forms_code(builder):
    text = "sum(prod(X, axis=1) * c) + sum(prod(X, axis=0, keepdims=True))"
    shapes = {"X": ("n", "d"), "c": ("n",)}
    kwargs = {} if builder is sd.compile else {"wrt": "X"}
    traced = builder(traced_rows, shapes=shapes, **kwargs)
    written = builder(text, shapes=shapes, **kwargs)
    assert _body(traced.source) == _body(written.source)
    X, c = RNG.normal(size=(3, 4)), RNG.normal(size=3)
    np.testing.assert_array_equal(traced(X, c), written(X, c))


def test_formulas_and_steps_name_the_product_of_the_others():
    g = sd.grad("sum(prod(X, axis=1) * c)", wrt="X", shapes={"X": ("n", "d"), "c": ("n",)})
    (formula,) = g.exprs
    assert str(formula) == "c[:, None]*prod_others(X, axis=1)"
    assert r"\operatorname{prod}_{\text{others}}" in formula.latex
    steps = sd.derive("sum(prod(X, axis=1) * c)", wrt="X",
                      shapes={"X": ("n", "d"), "c": ("n",)})
    text = str(steps)
    assert "[prod (product of the others)]" in text and "prod(X, axis=1)" in text


@pytest.mark.parametrize("text, error, message", [
    ("prod(X, axis=2)", sd.ShapeError, "prod: axis 2 is out of range"),
    ("prod(X, axis=-3)", sd.ShapeError, "prod: axis -3 is out of range"),
    ("prod(X, axis=(0, 0))", sd.ShapeError, "prod: repeated axis"),
    ("prod(X, axis=0.5)", sd.ParseError, "axis must be an integer"),
    ("prod(X, initial=1)", sd.ParseError, "prod\\(\\) got an unexpected keyword"),
    ("prod(X, 1)", sd.ParseError, "prod\\(\\) takes"),
    ("prod", sd.ParseError, "'prod' is a function"),
])
def test_bad_calls_are_clear_errors(text, error, message):
    with pytest.raises(error, match=message):
        sd.grad(text, wrt="X", shapes={"X": ("n", "d")})


def test_traced_bad_axis_names_prod():
    with pytest.raises(sd.ShapeError, match="prod: axis 3 is out of range"):
        sd.grad(lambda X: np.sum(np.prod(X, axis=3)), wrt="X", shapes={"X": ("n", "d")})
    with pytest.raises(sd.UnsupportedError, match=r"np\.prod"):
        sd.grad(lambda X: np.sum(np.prod(X, axis=0, initial=2.0)), wrt="X",
                shapes={"X": ("n", "d")})


def test_prod_of_constants_folds():
    f = sd.grad("prod(0*x + 2) * sum(x)", wrt="x", shapes={"x": (3,)})
    np.testing.assert_allclose(f(np.ones(3)), np.full(3, 8.0))
