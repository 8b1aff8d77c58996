"""Edges met when porting real models: a NumPy ufunc as the function, array functions traced
without ``shapes=``, einsum broadcasting an axis of length 1, Hessians of several names with
``shapes=``, ``scipy.linalg``, and the refusals of ``odeint`` and ``while`` loops, which say
what to write instead."""

from __future__ import annotations

import numpy as np
import pytest

import symdiff as sd

from .numeric import central


@pytest.mark.parametrize(("ufunc", "point", "expected"), [
    (np.sqrt, 4.0, 0.25),
    (np.exp, 0.0, 1.0),
    (np.tanh, 0.0, 1.0),
])
def test_a_ufunc_is_the_function_of_its_inputs(ufunc, point, expected):
    (got,) = sd.grad(ufunc)(point)
    assert got == pytest.approx(expected)


def test_a_binary_ufunc_names_its_inputs_as_numpy_does():
    g = sd.grad(np.arctan2)
    assert g.args == ("x1", "x2")
    dy, dx = g(1.0, 1.0)
    assert (dy, dx) == (pytest.approx(0.5), pytest.approx(-0.5))


@pytest.mark.parametrize("fn", [lambda x: np.dot(x, x), lambda x: np.max(x),
                                lambda x: np.linalg.norm(x)])
def test_array_functions_without_shapes_say_to_give_shapes(fn):
    with pytest.raises(sd.UnsupportedError, match=r"without shapes=.*give shapes="):
        sd.grad(fn)
    x = np.array([3.0, -4.0, 1.0])
    np.testing.assert_allclose(sd.grad(fn, wrt="x", shapes={"x": (3,)})(x), central(fn, x),
                               rtol=1e-6)


def test_einsum_broadcasts_an_axis_of_length_one():
    w = np.array([[1.0], [2.0], [3.0]])  # (3, 1) against (3, 4)

    def f(x):
        return np.sum(np.einsum("ij,ij->i", x, w) ** 2)

    x = np.random.default_rng(0).normal(size=(3, 4))
    np.testing.assert_allclose(sd.grad(f, wrt="x", shapes={"x": (3, 4)})(x), central(f, x),
                               rtol=1e-6)
    assert sd.compile(f, shapes={"x": (3, 4)})(x) == pytest.approx(f(x))


def test_hessian_of_several_scalar_names_is_one_array():
    H = sd.hessian("x**2*y + y**3", wrt=["x", "y"], shapes={"x": (), "y": ()})
    got = H(1.0, 2.0)
    assert isinstance(got, np.ndarray) and got.shape == (2, 2)
    np.testing.assert_allclose(got, [[4.0, 2.0], [2.0, 12.0]])
    np.testing.assert_allclose(got, sd.hessian("x**2*y + y**3", wrt=["x", "y"])(1.0, 2.0))


def test_hessian_of_several_array_names_is_a_tuple_of_blocks():
    H = sd.hessian("sum(x**2)*y", wrt=["x", "y"], shapes={"x": (2,), "y": ()})
    (hxx, hxy), (hyx, hyy) = H(np.array([1.0, 3.0]), 2.0)
    np.testing.assert_allclose(hxx, 4 * np.eye(2))
    np.testing.assert_allclose(hxy, [2.0, 6.0])
    np.testing.assert_allclose(hyx, [2.0, 6.0])
    assert hxy.shape == (2,) and hyy.shape == ()


def test_scipy_linalg_traces_as_numpy_reading_one_triangle():
    linalg = pytest.importorskip("scipy.linalg", reason="SciPy is in the dev extra")
    A = np.array([[4.0, 1.0], [1.0, 3.0]])
    b = np.array([1.0, 2.0])

    def f(p):
        lower = linalg.cholesky(A * np.exp(p[0]), lower=True)
        z = linalg.solve_triangular(lower, b, lower=True)
        c = linalg.cho_factor(A + p[1] * np.eye(2))
        return np.sum(z**2) + np.sum(linalg.cho_solve(c, b))

    p = np.array([0.3, 0.2])
    np.testing.assert_allclose(sd.grad(f, wrt="p", shapes={"p": (2,)})(p), central(f, p),
                               rtol=1e-6)


def test_odeint_is_refused_with_what_to_write():
    integrate = pytest.importorskip("scipy.integrate", reason="SciPy is in the dev extra")

    def decay(p):
        return np.sum(integrate.odeint(lambda y, t: -p[0] * y, np.ones(1), np.linspace(0, 1, 3)))

    with pytest.raises(sd.UnsupportedError, match=r"odeint .*Runge-Kutta or Euler loop"):
        sd.grad(decay, wrt="p", shapes={"p": (1,)})


def test_while_loops_are_refused_with_what_to_write():
    def halve(x):
        while np.sum(x) > 1:
            x = x / 2
        return np.sum(x)

    with pytest.raises(sd.UnsupportedError, match=r"while loop .*range\(n\)"):
        sd.grad(halve, wrt="x", shapes={"x": (2,)})
    with pytest.raises(sd.UnsupportedError, match=r"while loop .*range\(n\)"):
        sd.grad(scalar_halve)


def scalar_halve(x):
    while x > 1:
        x = x / 2
    return x


def _sign_branch(x):
    if np.sum(x) > 0:
        return np.sum(x)
    return -np.sum(x)


def _scalar_branch(x):
    if x > 0:
        return x
    return -x


@pytest.mark.parametrize(("fn", "options"), [
    (_sign_branch, {"wrt": "x", "shapes": {"x": (2,)}}),
    (_scalar_branch, {}),
])
def test_refusals_name_the_function_and_its_line(fn, options):
    with pytest.raises(sd.UnsupportedError,
                       match=rf"where\(cond, a, b\).*\(in {fn.__name__}, line \d+: 'if "):
        sd.grad(fn, **options)


def test_a_parameter_indexed_without_a_shape_says_to_give_an_example():
    def loss(params):
        W, b = params[0], params[1]
        return W * b

    with pytest.raises(sd.UnsupportedError, match=r"indexing .*example=\(params, \.\.\.\)"):
        sd.grad(loss, wrt="params")


def test_a_numpy_function_not_followed_says_what_to_write():
    with pytest.raises(sd.UnsupportedError,
                       match=r"'unique' is not supported .*pass the result as an argument"):
        sd.grad(lambda x: np.sum(np.unique(x)), wrt="x", shapes={"x": (3,)})


def test_grad_of_grad():
    def f(x):
        return np.sin(x) * x

    d2 = sd.grad(sd.grad(f))  # one parameter: the inner tuple holds its one partial
    x = np.array([0.3, 1.2])
    np.testing.assert_allclose(d2(x)[0], 2 * np.cos(x) - x * np.sin(x), rtol=1e-12)

    def g(x, y):
        return np.sin(x * y)

    with pytest.raises(sd.UnsupportedError, match=r"one partial per wrt name.*sd\.hessian"):
        sd.grad(sd.grad(g))
    np.testing.assert_allclose(sd.grad(sd.grad(g, wrt="x"), wrt="y")(0.5, 2.0),
                               sd.hessian(g)(0.5, 2.0)[0, 1], rtol=1e-12)
