"""The tensor operation families (:mod:`symdiff.tensor.families`): every row is wired into every
table of the layer, the verifier's allow-list covers its NumPy names, and the model family
(``cumsum``, ``flip``) differentiates right in both modes, to second order, from the string
language and from traced NumPy calls and methods."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import symdiff as sd
from symdiff import verify
from symdiff.errors import ParseError, ShapeError, UnsupportedError
from symdiff.tensor import families
from symdiff.tensor.emit import _STATEMENTS
from symdiff.tensor.formula import _LATEX, _TEXT
from symdiff.tensor.jvp import TENSOR_JVPS
from symdiff.tensor.traced import ARRAY_FUNCTIONS
from symdiff.tensor.vjp import TENSOR_VJPS
from tests.numeric import central as _central


def test_every_row_is_in_every_table():
    for op in families.OPS:
        for table in (TENSOR_VJPS, TENSOR_JVPS, _STATEMENTS, _TEXT, _LATEX):
            assert op in table, op


def test_verifier_allows_exactly_the_family_names():
    assert families.numpy_names() <= verify.NUMPY_NAMES
    assert families.numpy_names() == verify.allowed.FAMILY_NUMPY_NAMES


def test_spellings_are_callable_every_way():
    for spelling in families.SPELLINGS.values():
        assert spelling.usage.startswith(spelling.name + "(")
    for function, spelling in families.NUMPY_SPELLINGS.items():  # the tracer dispatches them
        assert function in ARRAY_FUNCTIONS, spelling.usage


CASES = [
    ("sum(cumsum(x) ** 2)", lambda x: np.sum(np.cumsum(x) ** 2), (2, 3)),
    ("sum(cumsum(x, axis=1) * x)", lambda x: np.sum(np.cumsum(x, axis=1) * x), (3, 4)),
    ("sum(sin(cumsum(x, axis=-2)))", lambda x: np.sum(np.sin(np.cumsum(x, axis=-2))), (4, 2)),
    ("sum(flip(x, axis=0) * x ** 2)", lambda x: np.sum(np.flip(x, axis=0) * x ** 2), (5,)),
    ("sum(flip(x) * exp(x))", lambda x: np.sum(np.flip(x) * np.exp(x)), (2, 3)),
    ("sum(flip(cumsum(x, axis=0), axis=(0, 1)) ** 3)",
     lambda x: np.sum(np.flip(np.cumsum(x, axis=0), axis=(0, 1)) ** 3), (3, 2)),
]


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("text, fn, shape", CASES, ids=[c[0] for c in CASES])
def test_gradient_against_central_differences(text, fn, shape, mode):
    x = np.random.default_rng(3).uniform(-1, 1, shape)
    g = sd.grad(text, shapes={"x": shape}, mode=mode)
    (got,) = g(x)
    np.testing.assert_allclose(got, _central(fn, x), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("text, fn, shape", CASES[:4], ids=[c[0] for c in CASES[:4]])
def test_traced_equals_string(text, fn, shape):
    x = np.random.default_rng(4).uniform(-1, 1, shape)
    traced = sd.grad(fn, shapes={"x": shape})
    parsed = sd.grad(text, shapes={"x": shape})
    np.testing.assert_allclose(traced(x)[0], parsed(x)[0], rtol=1e-12)


def test_method_spelling():
    def f(x):
        return np.sum(x.cumsum(axis=0) ** 2)

    x = np.random.default_rng(5).uniform(-1, 1, (3, 2))
    (got,) = sd.grad(f, shapes={"x": (3, 2)})(x)
    np.testing.assert_allclose(got, _central(f, x), rtol=1e-6, atol=1e-8)


def test_hessian_against_sympy():
    xs = sp.symbols("x0:4", real=True)
    partial = [sum(xs[: i + 1]) for i in range(4)]
    f = sum(p**3 for p in partial) + sum(a * b for a, b in zip(xs, reversed(xs), strict=True))
    point = {s: v for s, v in zip(xs, (0.3, -1.2, 0.7, 2.0), strict=True)}
    want = np.array([[float(sp.diff(f, a, b).subs(point)) for b in xs] for a in xs])
    H = sd.hessian("sum(cumsum(x)**3) + sum(x * flip(x))", shapes={"x": (4,)})
    got = np.asarray(H(np.array([0.3, -1.2, 0.7, 2.0]))).reshape(4, 4)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_named_dimension_and_float32():
    g = sd.grad("sum(cumsum(x, axis=0) ** 2)", shapes={"x": ("n",)})
    x = np.linspace(-1, 1, 7, dtype=np.float32)
    (got,) = g(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, _central(lambda v: np.sum(np.cumsum(v) ** 2),
                                             x.astype(float)), rtol=1e-4, atol=1e-5)


def test_steps_name_the_rule():
    text = str(sd.derive("sum(cumsum(x) ** 2)", wrt="x", shapes={"x": (3,)}))
    assert "cumsum (reversed cumsum)" in text
    assert "flip(cumsum(flip(" in text


def test_bad_calls_are_clear():
    with pytest.raises(ShapeError, match="cumsum: axis 2 is out of range"):
        sd.grad("sum(cumsum(x, axis=2))", shapes={"x": (3,)})
    with pytest.raises(ParseError, match=r"cumsum\(a, axis=None\)"):
        sd.grad("sum(cumsum(x, 0, 1))", shapes={"x": (3,)})
    with pytest.raises(ParseError, match="expected a constant"):
        sd.grad("sum(cumsum(x, axis=y))", shapes={"x": (3,), "y": ()})
    with pytest.raises(UnsupportedError, match="must be a constant"):
        sd.grad(lambda x, k: np.sum(np.cumsum(x, axis=k)), shapes={"x": (3,), "k": ()})
