"""``sd.objective`` over scalar names: the packed register path (many names) and the plain
call (few) give the value_and_grad function's own numbers, follow ``params`` as they change, and
compute once for ``fun`` then ``jac`` at one point without handing out shared arrays.
References: the compiled ``value_and_grad`` called by name (bit for bit) and ``sympy.diff``."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import symdiff as sd

N = 40  # enough names for the packed point path (it wins from 15-40 names on)


def _chain(n: int) -> str:
    """A sum of alike terms over x0..x{n-1} with parameters a and b in it."""
    return " + ".join(f"a*(x{i + 1} - x{i}**2)**2 + (b - x{i})**2 + exp(x{i})/10"
                      for i in range(n - 1))


def _reference(text: str, wrt: list[str], values: dict[str, float]) -> tuple[float, np.ndarray]:
    """Value and gradient by SymPy: ``sympy.diff`` of the parsed text, evaluated exactly."""
    expr = sp.sympify(text)
    at = {sp.Symbol(k): sp.Float(v, 30) for k, v in values.items()}
    grads = [float(sp.diff(expr, sp.Symbol(w)).evalf(30, subs=at)) for w in wrt]
    return float(expr.evalf(30, subs=at)), np.array(grads)


@pytest.mark.parametrize("n", [3, N])
def test_objective_gives_the_compiled_functions_numbers_and_sympys(n):
    names = [f"x{i}" for i in range(n)]
    wrt = names[::-1]  # not the register's order
    params = {"a": 100, "b": np.float64(0.5)}  # an int and a NumPy scalar
    obj = sd.objective(_chain(n), wrt=wrt, params=params)
    assert (obj._entry is not None) == (n == N)  # the packed path where it pays
    x = np.random.default_rng(n).uniform(-1, 1, n)
    value, grads = obj.value_and_grad(x)
    floats = dict(zip(wrt, x.tolist(), strict=True))
    own_value, own_grads = sd.value_and_grad(_chain(n), wrt=wrt)(**floats, a=100.0, b=0.5)
    assert value == float(own_value)
    np.testing.assert_array_equal(grads, np.array([float(g) for g in own_grads]))
    ref_value, ref_grads = _reference(_chain(n), wrt, {**floats, "a": 100.0, "b": 0.5})
    assert value == pytest.approx(ref_value, rel=1e-12)
    np.testing.assert_allclose(grads, ref_grads, rtol=1e-11, atol=1e-12)
    assert obj.fun(x) == value
    np.testing.assert_array_equal(obj.jac(x), grads)


@pytest.mark.parametrize("n", [3, N])
def test_objective_follows_params_and_points_that_change(n):
    names = [f"x{i}" for i in range(n)]
    obj = sd.objective(_chain(n), wrt=names, params={"a": 1.0, "b": 0.0})
    x = np.linspace(-0.5, 0.5, n)
    before = obj.jac(x)
    obj.params["a"] = 3.0  # changed in place
    changed = obj.jac(x)
    assert not np.array_equal(before, changed)
    fresh = sd.objective(_chain(n), wrt=names, params={"a": 3.0, "b": 0.0})
    np.testing.assert_array_equal(changed, fresh.jac(x))
    obj.params = {"a": 1.0, "b": 0.0}  # replaced
    np.testing.assert_array_equal(obj.jac(x), before)
    value = obj.fun(x)
    x[0] += 0.25  # the caller's vector changed in place: not the point computed before
    assert obj.fun(x) != value
    again = sd.objective(_chain(n), wrt=names, params={"a": 1.0, "b": 0.0})
    np.testing.assert_array_equal(obj.jac(x), again.jac(x))


def test_objective_hands_out_its_own_arrays():
    obj = sd.objective(_chain(N), wrt=[f"x{i}" for i in range(N)], params={"a": 2.0, "b": 1.0})
    x = np.full(N, 0.3)
    first = obj.jac(x)
    expected = first.copy()
    first[:] = 0.0  # the caller's to change: the next call at the same point is unaffected
    np.testing.assert_array_equal(obj.jac(x), expected)
    _, grads = obj.value_and_grad(x)
    grads[:] = 1.0
    np.testing.assert_array_equal(obj.value_and_grad(x)[1], expected)


@settings(max_examples=15, deadline=None)
@given(order=st.permutations(list(range(N))), fixed=st.sets(st.integers(0, N - 1), max_size=8),
       seed=st.integers(0, 2**16))
def test_objective_with_any_wrt_order_and_fixed_names_matches_a_call_by_name(order, fixed, seed):
    """Names held fixed by params sit between the wrt ones in the register."""
    text = " + ".join(f"(x{i + 1} - x{i}**2)**2 + sin(x{i})" for i in range(N - 1))
    wrt = [f"x{i}" for i in order if i not in fixed]
    rng = np.random.default_rng(seed)
    params = {f"x{i}": float(rng.uniform(-1, 1)) for i in fixed}
    obj = sd.objective(text, wrt=wrt, params=params)
    assert obj._entry is not None
    x = rng.uniform(-1, 1, len(wrt))
    value, grads = obj.value_and_grad(x)
    own_value, own_grads = sd.value_and_grad(text, wrt=wrt)(
        **params, **dict(zip(wrt, x.tolist(), strict=True)))
    assert value == float(own_value)
    np.testing.assert_array_equal(grads, np.array([float(g) for g in own_grads], ndmin=1))


def test_objective_refuses_a_vector_of_the_wrong_length_and_array_params():
    obj = sd.objective(_chain(N), wrt=[f"x{i}" for i in range(N)], params={"a": 1.0, "b": 0.0})
    with pytest.raises(sd.SymdiffError, match=f"vector of {N} values"):
        obj.jac(np.zeros(N - 1))
    spread = sd.objective("a*x**2", wrt=["x"], params={"a": np.array([1.0, 2.0])})
    with pytest.raises(sd.SymdiffError, match=r"one number.*shape \(2,\)"):
        spread.fun([1.0])
    one = sd.objective("a*x**2 + y", wrt=["x", "y"], params={"a": np.array([3.0])})  # (1,)
    value, grads = one.value_and_grad([2.0, 5.0])
    assert value == 17.0 and type(value) is float
    np.testing.assert_array_equal(grads, [12.0, 1.0])
    assert grads.shape == (2,) and grads.dtype == np.float64


def test_objective_pickles_with_its_packed_path():
    obj = sd.objective(_chain(N), wrt=[f"x{i}" for i in range(N)], params={"a": 1.0, "b": 0.0})
    x = np.full(N, 0.1)
    expected = obj.jac(x)
    again = pickle.loads(pickle.dumps(obj))
    assert again._entry is not None
    np.testing.assert_array_equal(again.jac(x), expected)
