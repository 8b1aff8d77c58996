"""Compiled functions inside traced functions: ``sd.grad(sd.grad(f))``, derivatives of any
order of elementwise functions, a loss calling a compiled function by name, nested functions
over parameter trees, derivatives of ``.exprs``; the refusals say what to do. References:
autograd (optional, where installed), central differences, closed forms."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import sympy as sp

import symdiff as sd

from .numeric import central

HAS_AUTOGRAD = importlib.util.find_spec("autograd") is not None
needs_autograd = pytest.mark.skipif(not HAS_AUTOGRAD, reason="optional comparison with "
                                    "autograd: autograd is not installed")


def _tanh(x):
    return (1.0 - np.exp(-x)) / (1.0 + np.exp(-x))


def test_elementwise_derivatives_of_any_order():
    x = np.linspace(-2.5, 2.5, 11)
    d = _tanh
    for _ in range(3):
        d = sd.grad(d, wrt="x")
    t = np.tanh(x / 2)  # _tanh(x) = tanh(x/2): its third derivative in closed form
    s2 = 1 - t**2
    expected = (s2 * (3 * t**2 - 1)) / 4
    np.testing.assert_allclose(d(x), expected, rtol=1e-10, atol=1e-12)


@needs_autograd
def test_elementwise_derivatives_against_autograd():
    import autograd.numpy as anp
    from autograd import elementwise_grad

    def tanh(x):
        return (1.0 - anp.exp(-x)) / (1.0 + anp.exp(-x))

    x = np.linspace(-3.0, 3.0, 9)
    mine, theirs = _tanh, tanh
    for _ in range(4):
        mine, theirs = sd.grad(mine, wrt="x"), elementwise_grad(theirs)
    np.testing.assert_allclose(mine(x), theirs(x), rtol=1e-10, atol=1e-12)


def _loss(w):
    return np.sum(np.sin(w) * w**2)


_GRAD = sd.grad(_loss, wrt="w", shapes={"w": (3,)})


def _gradient_norm(w):
    return np.sum(_GRAD(w) ** 2)  # calls a compiled function by name


def test_a_loss_calling_a_compiled_gradient():
    w = np.array([0.3, -1.0, 2.0])
    g = sd.grad(_gradient_norm, wrt="w", shapes={"w": (3,)})
    np.testing.assert_allclose(g(w), central(_gradient_norm, w), rtol=1e-6)
    grad = 2 * w * np.sin(w) + w**2 * np.cos(w)
    hess_diag = 2 * np.sin(w) + 4 * w * np.cos(w) - w**2 * np.sin(w)
    np.testing.assert_allclose(g(w), 2 * grad * hess_diag, rtol=1e-12)


def test_grad_of_grad_is_the_hessian():
    w = np.array([0.3, -1.0, 2.0])
    J = sd.jacobian(_GRAD, wrt="w", shapes={"w": (3,)})
    H = sd.hessian(_loss, wrt="w", shapes={"w": (3,)})
    np.testing.assert_allclose(J(w), H(w), rtol=1e-12, atol=1e-14)


@needs_autograd
def test_nested_grad_against_autograd():
    import autograd
    import autograd.numpy as anp

    def f(x, y):
        return anp.sin(x * y) + x**3 * y

    def mine(x, y):
        return np.sin(x * y) + x**3 * y

    dfdx = sd.grad(mine, wrt="x")
    d2 = sd.grad(dfdx, wrt="y")  # d/dy d/dx, elementwise
    x, y = np.array([0.5, 1.5]), np.array([-0.3, 0.8])
    theirs = autograd.elementwise_grad(autograd.elementwise_grad(f, 0), 1)(x, y)
    np.testing.assert_allclose(d2(x, y), theirs, rtol=1e-12)


def test_partials_stay_partials_when_one_argument_is_computed_from_another():
    inner = sd.grad(lambda a, b: np.sum(a * b**2), wrt="a", shapes={"a": (2,), "b": (2,)})

    def outer(x):
        return np.sum(inner(x, x**2))  # d/da of sum(a b^2) is b^2 = x^4

    g = sd.grad(outer, wrt="x", shapes={"x": (2,)})
    x = np.array([0.7, -1.2])
    np.testing.assert_allclose(g(x), 4 * x**3, rtol=1e-12)


def test_nested_functions_over_parameter_trees():
    params = {"a": np.array([1.0, 2.0]), "b": 0.5}

    def h(p):
        return np.sum(p["a"] ** 3) * p["b"]

    gh = sd.grad(h, wrt="p", example=(params,))

    def squared_norm(p):
        gp = gh(p)
        return np.sum(gp["a"] ** 2) + gp["b"] ** 2

    got = sd.grad(squared_norm, wrt="p", example=(params,))(params)
    a, b = params["a"], params["b"]  # grad h = (3 a^2 b, sum(a^3))
    np.testing.assert_allclose(got["a"], 2 * 3 * a**2 * b * 6 * a * b + 2 * np.sum(a**3) * 3
                               * a**2)
    np.testing.assert_allclose(got["b"], np.sum(2 * 3 * a**2 * b * 3 * a**2))


def test_value_and_grad_and_hessian_compose():
    vg = sd.value_and_grad(lambda x, y: x**2 * y, wrt=["x", "y"])

    def f(x, y):
        value, (dx, dy) = vg(x, y)
        return value + dx * dy

    x, y = np.array([0.5, 2.0]), np.array([1.5, -1.0])
    g = sd.grad(f, wrt="x")  # f = x^2 y + 2 x^3 y
    np.testing.assert_allclose(g(x, y), 2 * x * y + 6 * x**2 * y)
    H = sd.hessian(lambda x, y: x**3 * y**2, wrt=["x", "y"])

    def trace_of_h(x, y):
        h = H(x, y)
        return h[0, 0] + h[1, 1]  # 6 x y^2 + 2 x^3

    np.testing.assert_allclose(sd.grad(trace_of_h, wrt="y")(x, y), 12 * x * y)


def test_derivatives_of_exprs():
    g = sd.grad("x**3 * sin(y)", wrt="x")
    again = sd.grad(g.exprs[0], wrt=["x", "y"])
    x, y = 0.7, 1.3
    np.testing.assert_allclose(again(x, y), (6 * x * np.sin(y), 3 * x**2 * np.cos(y)))
    assert sd.derive(g.exprs[0], wrt="x").result == sp.sympify("6*x*sin(y)",
                                                               locals={"x": sp.Symbol(
                                                                   "x", real=True),
                                                                   "y": sp.Symbol("y",
                                                                                  real=True)})


def test_what_cannot_be_composed_says_what_to_do():
    class Holder:
        pass

    holder = Holder()
    holder.g = _GRAD
    with pytest.raises(sd.UnsupportedError, match="other than by name"):
        sd.grad(lambda w: np.sum(holder.g(w)), wrt="w", shapes={"w": (3,)})
    with pytest.raises(sd.UnsupportedError, match="give the outer builder shapes="):
        sd.grad(lambda w: _GRAD(w)[0], wrt="w")
    hvp = sd.hvp("x**3 * y", wrt=["x", "y"])
    with pytest.raises(sd.UnsupportedError, match="Hessian-vector product"):
        sd.grad(lambda x, y, v: hvp(x, y, v)[0], wrt="x")
