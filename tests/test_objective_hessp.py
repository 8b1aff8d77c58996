"""Hessian-vector products over many scalar names: the hvp module's packed point path (the
direction ``_v`` a float64 vector, its components after the point in the register) and
``sd.objective(...).hessp`` filling that register directly. References: ``sympy.diff``'s
Hessian times the direction, and the hvp module's own array path; the verifier accepts what
the path writes and nothing else."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import symdiff as sd
from symdiff.codegen import pack
from symdiff.verify import VerificationError, check_module

N = 40  # enough names for the packed point path
SMALL = 12  # names for the tests against SymPy's Hessian (the packed path forced on)


@pytest.fixture
def packed(monkeypatch):
    """Every elementwise build takes the packed point path where it can."""
    monkeypatch.setattr(pack, "FORCE", True)


def _chain(n: int) -> str:
    return " + ".join(f"a*(x{i + 1} - x{i}**2)**2 + (b - x{i})**2 + exp(x{i})*x{i + 1}/10"
                      for i in range(n - 1))


def _hessian_times(text: str, wrt: list[str], values: dict[str, float],
                   direction: np.ndarray) -> np.ndarray:
    """``sympy.diff``'s Hessian at ``values`` times ``direction``, evaluated exactly."""
    expr = sp.sympify(text)
    at = {sp.Symbol(k): sp.Float(v, 30) for k, v in values.items()}
    symbols = [sp.Symbol(w) for w in wrt]
    rows = [[float(sp.diff(expr, a, b).evalf(30, subs=at)) for b in symbols] for a in symbols]
    return np.array(rows) @ direction


def test_the_hvp_point_path_is_packed_and_gives_the_array_paths_numbers(packed):
    n = SMALL
    names = [f"x{i}" for i in range(n)]
    h = sd.hvp(_chain(n), wrt=names)
    assert "_at_packed(_packed, (" in h.source and ", *_v), " in h.source
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, n)
    v = rng.normal(size=n)
    values = {**dict(zip(names, x.tolist(), strict=True)), "a": 3.0, "b": 0.5}
    got = h(**values, _v=v)
    assert type(got) is np.ndarray and got.shape == (n,) and got.dtype == np.float64
    arrays = h(**{k: np.asarray(val) for k, val in values.items()}, _v=v)  # the array path
    np.testing.assert_allclose(got, arrays, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got, _hessian_times(_chain(n), names, values, v),
                               rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("direction", [
    lambda v: v.astype(np.float32),  # float32: the general path's dtype rules
    lambda v: v.tolist(),  # a list
    lambda v: np.stack([v, 2 * v], axis=1),  # two directions at once: shape (n, 2)
])
def test_other_directions_take_the_general_path(direction):
    n = N
    names = [f"x{i}" for i in range(n)]
    h = sd.hvp(_chain(n), wrt=names)
    rng = np.random.default_rng(1)
    values = {**dict(zip(names, rng.uniform(-1, 1, n).tolist(), strict=True)), "a": 2.0,
              "b": 1.0}
    v = rng.normal(size=n)
    given_v = direction(v)
    got = h(**values, _v=given_v)
    reference = h(**{k: np.asarray(val) for k, val in values.items()}, _v=np.asarray(given_v))
    assert got.shape == reference.shape and got.dtype == reference.dtype
    np.testing.assert_array_equal(got, reference)
    with pytest.raises(sd.ShapeError, match="direction"):
        h(**values, _v=v[:-1])  # one component short: never read as a point


@settings(max_examples=6, deadline=None)
@given(order=st.permutations(list(range(N))), fixed=st.sets(st.integers(0, N - 1), max_size=6),
       seed=st.integers(0, 2**16))
def test_objective_hessp_fills_the_register_in_any_wrt_order(order, fixed, seed):
    """The objective's hessp gives the hvp module's own numbers at a point (bit for bit),
    with names held fixed by params between the wrt ones."""
    text = " + ".join(f"(x{i + 1} - x{i}**2)**2 + sin(x{i})*x{i + 1}" for i in range(N - 1))
    wrt = [f"x{i}" for i in order if i not in fixed]
    rng = np.random.default_rng(seed)
    params = {f"x{i}": float(rng.uniform(-1, 1)) for i in fixed}
    obj = sd.objective(text, wrt=wrt, params=params)
    x = rng.uniform(-1, 1, len(wrt))
    p = rng.normal(size=len(wrt))
    got = obj.hessp(x, p)
    assert obj._hvp_layout is not None and obj._hvp_layout.register is not None
    own = sd.hvp(text, wrt=wrt)(**params, **dict(zip(wrt, x.tolist(), strict=True)), _v=p)
    np.testing.assert_array_equal(got, own)


def test_objective_hessp_follows_params_hands_out_its_own_arrays_and_pickles(packed):
    n = SMALL
    names = [f"x{i}" for i in range(n)]
    obj = sd.objective(_chain(n), wrt=names, params={"a": 1.0, "b": 0.0})
    x = np.linspace(-0.5, 0.5, n)
    p = np.cos(np.arange(n))
    values = dict(zip(names, x.tolist(), strict=True))
    before = obj.hessp(x, p)
    assert obj._hvp_layout is not None and obj._hvp_layout.register is not None
    np.testing.assert_allclose(before, _hessian_times(_chain(n), names,
                                                      {**values, "a": 1.0, "b": 0.0}, p),
                               rtol=1e-11, atol=1e-11)
    before[:] = 7.0  # the caller's to change
    obj.params["a"] = 4.0  # changed in place: laid out again
    changed = obj.hessp(x, p)
    np.testing.assert_allclose(changed, _hessian_times(_chain(n), names,
                                                       {**values, "a": 4.0, "b": 0.0}, p),
                               rtol=1e-11, atol=1e-11)
    again = pickle.loads(pickle.dumps(obj))
    assert again._hvp_entry is not None
    np.testing.assert_array_equal(again.hessp(x, p), changed)


def test_few_names_keep_the_plain_call(monkeypatch):
    monkeypatch.setattr(pack, "FORCE", False)
    obj = sd.objective("100*(y - x**2)**2 + (1 - x)**2", wrt=["x", "y"])
    got = obj.hessp([0.5, 0.25], [1.0, -2.0])
    assert obj._hvp_entry is None
    np.testing.assert_allclose(got, obj.hess([0.5, 0.25]) @ [1.0, -2.0], rtol=1e-13)


# -- the verifier ---------------------------------------------------------------------------------
def _hvp_module(test: str, call: str) -> str:
    return (
        "import numpy as _np\nfrom symdiff.runtime import _at_packed, _elementwise\n\n\n"
        "def hvp_f(x, y, _v, *, threads=None):\n"
        "    if (x.__class__ is float or x.__class__ is _np.float64) and "
        f"(y.__class__ is float or y.__class__ is _np.float64) and {test}:\n"
        f"        return {call}\n"
        "    return _elementwise(_formulas, (x, y), threads=threads, leading=(2,), "
        "direction=_v, floats=False)\n\n\n"
        "def _formulas(x, y, _x_dir, _y_dir, _out):\n    _out[0] = x\n    return _out\n\n\n"
        "def _packed(_r):\n    _r[4:6] = _r[0:2]*_r[2:4]\n    return _r[4:6]\n"
    )


TEST = "_v.__class__ is _np.ndarray and _v.shape == (2,) and _v.dtype == _np.float64"
CALL = "_at_packed(_packed, (x, y, *_v), 6, None)"


def test_the_verifier_accepts_the_hvp_point_path(packed):
    check_module(_hvp_module(TEST, CALL))
    h = sd.hvp(_chain(4), wrt=[f"x{i}" for i in range(4)], cache=False)
    assert "*_v), " in h.source
    check_module(h.source)


@pytest.mark.parametrize("test, call", [
    (TEST.replace("(2,)", "(n,)"), CALL),  # a literal length
    (TEST.replace("_np.float64", "_np.object_"), CALL),
    (TEST.replace("_np.ndarray", "list"), CALL),
    (TEST.replace("_v.shape ==", "_v.fill(0) =="), CALL),
    (TEST.replace("_v.shape == (2,)", "x.shape == (2,)"), CALL),  # the direction's test only
    (TEST, CALL.replace("*_v", "*x")),  # only the direction is spread
    (TEST, CALL.replace("(x, y, *_v)", "(*_v, x, y)")),  # and last
    (TEST, CALL.replace("None", "2")),  # the vector itself
    (TEST, CALL.replace("*_v", "_v[0]")),
])
def test_the_verifier_refuses_other_direction_tests_and_calls(test, call):
    with pytest.raises(VerificationError):
        check_module(_hvp_module(test, call))
