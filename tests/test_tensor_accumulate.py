"""Emitted gradients add slice adjoints into one buffer and share logsumexp's exp."""

import numpy as np
import pytest

import symdiff as sd
from tests.tensor_cases import central_gradient

X = ("n",)


def body(source: str) -> str:
    """The generated function: the module's last ``def`` before the helpers copied after it."""
    return source.split("\ndef ")[-1]


def test_slice_adjoints_accumulate_in_place():
    g = sd.grad("sum(x**2) - sum(x[1:]*x[:-1])", wrt="x", shapes={"x": X}, cache=False)
    lines = [line.strip() for line in body(g.source).splitlines()]
    assert "_x_bar = 2.0*x" in lines  # a float literal: NumPy takes it quicker than an int
    assert "_x_bar[:-1] -= x[1:]" in lines  # in place: no temporary, no copy back
    assert "_x_bar[1:] -= x[:-1]" in lines
    assert "_np.zeros" not in body(g.source)
    x = np.arange(1.0, 7.0)
    np.testing.assert_allclose(g(x), 2 * x - np.r_[x[1:], 0] - np.r_[0, x[:-1]])


def test_rosenbrock_scatters_into_one_zeros_buffer():
    expr = "sum(100*(x[1:] - x[:-1]**2)**2 + (1 - x[:-1])**2)"
    g = sd.grad(expr, wrt="x", shapes={"x": X}, cache=False)
    assert body(g.source).count("_np.zeros") == 1
    assert "_x_bar[1:] += " in g.source
    x = np.random.default_rng(1).standard_normal(7)
    f = sd.compile(expr, shapes={"x": X}, cache=False)
    np.testing.assert_allclose(g(x), central_gradient(f, {"x": x}, "x"), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("expr, shapes", [
    ("sum(x[1:] * x[:-1] * x[1:])", {"x": X}),
    ("sum(x) + sum(x[2:]) + 3*sum(x[:2]) + sum(x[1:-1])", {"x": X}),  # dense part a constant
    ("sum(x[::2] * x[1::2]) + sum(x**3)", {"x": (6,)}),
    ("sum(X[1:, :] * X[:-1, :]) + sum(X[:, 0] * v)", {"X": ("n", 3), "v": ("n",)}),
    ("sum(X[0] * v) + sum(X * v)", {"X": ("n", 3), "v": (3,)}),  # dense part broadcast
    ("sum(exp(x[1:]) * x[:-1]) + sum(x)", {"x": X}),  # the dense part is a bare constant
    ("sum(x[1:]) * sum(x[:-1])", {"x": X}),
    ("sum(sin(x[:2])) + sum(x[1:3] ** 2) + sum(cos(x[2:]))", {"x": X}),
])
def test_accumulated_gradients_match_central_differences(expr, shapes):
    names = list(shapes)
    g = sd.grad(expr, wrt=names[0], shapes=shapes, cache=False)
    f = sd.compile(expr, shapes=shapes, cache=False)
    rng = np.random.default_rng(2)
    sizes = {"n": 6}
    args = {k: rng.standard_normal([sizes.get(d, d) for d in s]) for k, s in shapes.items()}
    before = {k: v.copy() for k, v in args.items()}
    got = g(**args)
    for k in args:  # arguments are never written to
        np.testing.assert_array_equal(args[k], before[k])
    want = central_gradient(f, args, names[0])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_verifier_takes_only_slice_additions_in_place():
    from symdiff.verify import VerificationError, check_module

    source = sd.grad("sum(x**2) - sum(x[1:]*x[:-1])", wrt="x", shapes={"x": X},
                     cache=False).source
    check_module(source)
    for bad in ("_x_bar[1:] *= x[:-1]", "_x_bar += x", "x[1:] -= x[:-1]",
                "_x_bar[1:] -= _np.save('f', x)", "_x_bar[x] -= x"):
        with pytest.raises(VerificationError):
            check_module(source.replace("_x_bar[1:] -= x[:-1]", bad))


def test_logsumexp_gradient_is_one_exp_and_stable():
    g = sd.grad("logsumexp(x)", wrt="x", shapes={"x": X}, cache=False)
    assert body(g.source).count("_np.exp") == 1
    assert "_np.log" not in body(g.source)
    x = np.array([1000.0, 999.0, -1000.0])
    e = np.exp(x - x.max())
    np.testing.assert_allclose(g(x), e / e.sum(), rtol=1e-15)
    assert np.all(np.isfinite(g(np.full(4, 1e300))))


@pytest.mark.parametrize("expr", [
    "logsumexp(X)", "sum(logsumexp(X, axis=1) * c)", "sum(logsumexp(X, axis=0, keepdims=True))",
    "sum(logsumexp(X, keepdims=True) * X)", "sum(logsumexp(X, axis=1, keepdims=True) * X)",
])
def test_logsumexp_value_and_gradient_share_the_exp(expr):
    shapes = {"X": ("n", "d"), "c": ("n",)}
    shapes = {k: v for k, v in shapes.items() if k in expr}
    vg = sd.value_and_grad(expr, wrt="X", shapes=shapes, cache=False)
    if "* X" not in expr:
        assert body(vg.source).count("_np.exp") == 1
    rng = np.random.default_rng(3)
    args = {"X": rng.standard_normal((4, 3)) + 500, "c": rng.standard_normal(4)}
    args = {k: v for k, v in args.items() if k in shapes}
    f = sd.compile(expr, shapes=shapes, cache=False)
    value, grad = vg(**args)
    np.testing.assert_allclose(value, f(**args), rtol=1e-12)
    want = central_gradient(f, args, "X", h=1e-5)
    np.testing.assert_allclose(grad, want, rtol=1e-5, atol=1e-5)
