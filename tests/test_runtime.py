"""symdiff.runtime: accuracy against mpmath and scipy, dtype/shape/special-value rules, the
helpers on their own (as a standalone module copies them), and the rules on their source."""

from __future__ import annotations

import ast
import builtins
import inspect
import math
import os
import pathlib
import symtable
import warnings

import array_api_compat
import array_api_compat.numpy as _xp_numpy
import mpmath
import numpy as _np  # (what the formulas of a generated module call NumPy)
import numpy as np
import pytest
import scipy.special as sc
from hypothesis import given, settings
from hypothesis import strategies as st

from symdiff import runtime as runtime
from symdiff.codegen.standalone import runtime_closure, runtime_definitions
from symdiff.errors import ShapeError
from symdiff.runtime import (
    _argmax_share,
    _as_output,
    _as_outputs,
    _as_vector,
    _at,
    _at_point,
    _cody_erf,
    _cosh,
    _erf,
    _erfc,
    _exp,
    _exp_times_pow2,
    _expm1,
    _float_arrays,
    _gamma,
    _hypot_share,
    _log,
    _log1p,
    _log1p_exp,
    _log_ndtr,
    _loggamma,
    _logistic,
    _polygamma,
    _prod_others,
    _sigmoid,
    _sinc_d,
    _sinh,
    _sinpi,
    _softplus,
    _tanh,
    _tril_inv,
)
from symdiff.verify import ERROR_CONSTANTS

#: Every helper and constant of the runtime, as a standalone module copies them.
DEFINITIONS = runtime_definitions()
HELPERS = sorted(name for name, d in DEFINITIONS.items() if d.text.startswith("def "))
PUBLIC_HELPERS = ["_argmax_share", "_erf", "_gamma", "_loggamma", "_polygamma"]


def rel_err(got, exact) -> float:
    """|got - exact| / |exact| with ``exact`` an mpmath number (computed at 40 digits)."""
    if exact == 0:
        return 0.0 if got == 0 else math.inf
    with mpmath.workdps(40):
        return float(abs((mpmath.mpf(float(got)) - exact) / exact))


def close(got, ref, rtol: float, atol: float = 0.0) -> bool:
    """``got`` within ``rtol * |ref| + atol`` of ``ref``; equal infinities count as close."""
    got, ref = float(got), float(ref)
    return got == ref or abs(got - ref) <= rtol * abs(ref) + atol


def agrees(got, ref, exact_func, x, rtol: float, atol: float = 0.0) -> bool:
    """``got`` is close to scipy's ``ref``, or, where scipy itself is off (e.g. its digamma just
    above a negative integer), close to the mpmath value ``exact_func(x)``."""
    if close(got, ref, rtol, atol):
        return True
    with mpmath.workdps(40):
        exact = float(exact_func(mpmath.mpf(float(x))))
    return close(got, exact, rtol, atol) and not close(ref, exact, rtol, atol)


def mp_ref(func, *args):
    with mpmath.workdps(40):
        return func(*[mpmath.mpf(float(a)) if isinstance(a, float) else a for a in args])


def no_warnings(func, *args):
    """Call ``func``; any warning (floating-point or otherwise) fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return func(*args)


def nudge(x: float, toward: float, steps: int = 1) -> float:
    for _ in range(steps):
        x = float(np.nextafter(x, toward))
    return x


# --------------------------------------------------------------------------------------- erf

ERF_POINTS = [
    1e-300, 1e-100, 1e-20, 1e-12, 1e-8, 1e-4, 0.01, 0.1, 0.25, 0.4,
    nudge(0.46875, 0.0), 0.46875, nudge(0.46875, 1.0), 0.47, 0.5, 0.6, 0.75, 0.9, 1.0, 1.25,
    1.5, 2.0, 2.5, 3.0, 3.5, 3.99, nudge(4.0, 0.0), 4.0, nudge(4.0, 5.0), 4.01, 4.5, 5.0, 5.5,
    5.9, 6.0, 7.0, 8.0, 10.0, 26.0, 26.6, 27.0, 30.0, 1e3, 1e10, 1e300,
]  # fmt: skip


@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("x", ERF_POINTS)
def test_erf_matches_mpmath(x, sign):
    x = sign * x
    assert rel_err(no_warnings(_erf, x), mp_ref(mpmath.erf, x)) <= 1e-14


def test_erf_dense_grid_matches_mpmath():
    xs = np.concatenate([np.linspace(-7, 7, 1401), np.geomspace(1e-6, 0.5, 100)])
    got = _erf(xs)
    assert max(rel_err(g, mp_ref(mpmath.erf, x)) for g, x in zip(got, xs, strict=True)) <= 1e-14


def test_erf_special_values():
    got = no_warnings(_erf, np.array([np.nan, np.inf, -np.inf, 0.0, -0.0]))
    assert np.isnan(got[0])
    assert got[1] == 1.0 and got[2] == -1.0
    assert got[3] == 0.0 and not np.signbit(got[3])
    assert got[4] == 0.0 and np.signbit(got[4])


# ------------------------------------------------------------------------------------- gamma

GAMMA_POINTS = [
    1e-300, 1e-20, 1e-10, 1e-3, 0.1, 0.3, nudge(0.5, 0.0), 0.5, 0.75, 1.0, 1.2, 1.4616321449683622,
    1.5, 2.0, 2.5, 3.2, 4.9, 5.0, 5.1, 7.5, 10.5, 20.0, 30.3, 50.5, 100.1, 140.5, 150.25, 170.5,
    171.6,
    -1e-300, -1e-20, -1e-10, -0.25, -0.49, nudge(-0.5, 0.0), -0.5, nudge(-0.5, -1.0), -0.75,
    -1.5, -2.5, -3.7, -10.1, -25.5, -31.152905763622197, -49.9, -50.5,
    # next to the poles
    nudge(-1.0, 0.0), nudge(-1.0, -2.0), -1.0 + 1e-9, -2.0 - 1e-12, -3.0 + 1e-7, -20.0 + 1e-10,
    -49.0 - 1e-8, nudge(-50.0, 0.0, 3),
]  # fmt: skip


@pytest.mark.parametrize("x", GAMMA_POINTS)
def test_gamma_matches_mpmath(x):
    assert rel_err(no_warnings(_gamma, x), mp_ref(mpmath.gamma, x)) <= 1e-13


def test_gamma_dense_grid_matches_mpmath():
    xs = np.concatenate([np.linspace(-49.95, 0.45, 1000), np.linspace(0.05, 171.5, 1500)])
    xs = xs[xs != np.floor(xs)]
    got = _gamma(xs)
    assert max(rel_err(g, mp_ref(mpmath.gamma, x)) for g, x in zip(got, xs, strict=True)) <= 1e-13


def test_gamma_poles_overflow_and_special_values_match_scipy():
    xs = np.array(
        [0.0, -0.0, -1.0, -2.0, -50.0, -1e300, np.inf, -np.inf, np.nan, 171.7, 1e10, -200.5, -201.5]
    )
    got = no_warnings(_gamma, xs)
    ref = sc.gamma(xs)
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(ref))
    assert np.isposinf(got[0]) and np.isneginf(got[1])  # the documented choice at 0


# ---------------------------------------------------------------------------------- loggamma

LOGGAMMA_POINTS = [
    5e-324, 1e-300, 1e-20, 1e-10, 1e-3, 0.1, 0.25, nudge(0.5, 0.0), 0.5, 0.75, 0.9, 0.99,
    1.5, 1.75, 1.9, 2.1, 2.25, nudge(2.5, 0.0), 2.5, nudge(2.5, 3.0), 2.6, 3.0, 3.5, 4.0, 7.25,
    9.99, nudge(10.0, 0.0), 10.0, 10.01, 12.5, 50.0, 171.0, 1e3, 1e5, 1e10, 1e20, 1e100, 1e200,
    1e300, 1e305,
]  # fmt: skip
NEAR_ONE_TWO = [
    c + d for c in (1.0, 2.0) for d in (-0.25, -1e-3, -1e-8, -1e-15, 1e-15, 1e-8, 1e-3, 0.25)
] + [nudge(1.0, 0.0), nudge(1.0, 2.0), nudge(2.0, 0.0), nudge(2.0, 3.0)]


@pytest.mark.parametrize("x", LOGGAMMA_POINTS + NEAR_ONE_TWO)
def test_loggamma_matches_mpmath(x):
    exact = mp_ref(mpmath.loggamma, x)
    got = no_warnings(_loggamma, x)
    assert rel_err(got, exact) <= 1e-13
    if x in NEAR_ONE_TWO:
        with mpmath.workdps(40):
            assert abs(mpmath.mpf(float(got)) - exact) <= 1e-15


def test_loggamma_dense_grid_matches_mpmath():
    xs = np.concatenate([np.linspace(0.001, 20.0, 2000), np.geomspace(20.0, 1e300, 300)])
    xs = xs[(xs != 1.0) & (xs != 2.0)]
    got = _loggamma(xs)
    worst = max(rel_err(g, mp_ref(mpmath.loggamma, x)) for g, x in zip(got, xs, strict=True))
    assert worst <= 1e-13


def test_loggamma_zeros_and_domain():
    got = no_warnings(_loggamma, np.array([1.0, 2.0, 0.0, -0.0, -0.5, -3.0, -np.inf, np.nan]))
    assert got[0] == 0.0 and got[1] == 0.0
    assert np.isnan(got[2:]).all()  # x <= 0 is outside the real domain: nan
    assert no_warnings(_loggamma, np.inf) == np.inf
    assert no_warnings(_loggamma, 1.7e308) == np.inf  # overflow


# --------------------------------------------------------------------------------- polygamma

POLYGAMMA_POINTS = [
    # negative non-integers
    -0.5, -0.25, -0.9, -1.5, -2.3, -3.75, -7.7, -10.25, -30.9, -49.5, -1e-8,
    # small and moderate x
    1e-8, 1e-3, 0.1, 0.5, 1.0, 1.3, 1.4616321449683622, 1.47, 1.5, 2.0, 3.7, 9.9, 10.0, 14.5,
    # large x
    100.0, 1234.5, 1e4, 1e5, 1e6,
]  # fmt: skip


@pytest.mark.parametrize("n", range(5))
@pytest.mark.parametrize("x", POLYGAMMA_POINTS)
def test_polygamma_matches_mpmath(n, x):
    exact = mp_ref(lambda v: mpmath.polygamma(n, v), x)
    assert rel_err(no_warnings(_polygamma, n, x), exact) <= 1e-12


@pytest.mark.parametrize("n", range(5))
def test_polygamma_dense_grid_matches_mpmath(n):
    neg = np.linspace(-49.93, -0.07, 700)
    if n % 2 == 0:  # psi_n has a zero in each negative unit interval: keep half-integers only
        neg = np.arange(-49.5, 0.0, 1.0)
    xs = np.concatenate([neg, np.linspace(0.01, 30.0, 600), np.geomspace(30.0, 1e6, 100)])
    got = _polygamma(n, xs)
    worst = max(
        rel_err(g, mp_ref(lambda v: mpmath.polygamma(n, v), x))
        for g, x in zip(got, xs, strict=True)
    )
    assert worst <= 1e-12


@pytest.mark.parametrize("n", [5, 8, 12, 30, 100])
@pytest.mark.parametrize("x", [-3.3, -0.5, 0.2, 1.5, 7.0, 25.0, 1e3])
def test_polygamma_higher_orders(n, x):
    exact = mp_ref(lambda v: mpmath.polygamma(n, v), x)
    assert rel_err(_polygamma(n, x), exact) <= 1e-12


def test_digamma_near_positive_root_is_relatively_accurate():
    root = 1.4616321449683622
    xs = np.array([nudge(root, 0.0), nudge(root, 2.0), root + 1e-10, root - 1e-6, root + 0.19])
    for x, got in zip(xs, _polygamma(0, xs), strict=True):
        assert rel_err(got, mp_ref(mpmath.digamma, x)) <= 1e-13


@pytest.mark.parametrize("n", range(5))
def test_polygamma_poles_and_special_values(n):
    xs = np.array([0.0, -0.0, -1.0, -2.0, -50.0, -1e300, -np.inf, np.nan, np.inf])
    got = no_warnings(_polygamma, n, xs)
    assert np.isnan(got[:8]).all()  # documented: nan at every pole (and at -inf, nan)
    assert got[8] == (np.inf if n == 0 else 0.0)


@pytest.mark.parametrize("n", [-1, 1.5, True, "1"])
def test_polygamma_rejects_bad_order(n):
    with pytest.raises((ValueError, TypeError)):
        _polygamma(n, 1.0)


def test_polygamma_accepts_numpy_integer_order():
    assert _polygamma(np.int64(1), 2.0) == _polygamma(1, 2.0)


# ------------------------------------------------------------------ dtype and shape contract

UNARY = [
    ("_erf", _erf),
    ("_erfc", _erfc),
    ("_gamma", _gamma),
    ("_loggamma", _loggamma),
    ("_polygamma0", lambda x: _polygamma(0, x)),
    ("_polygamma3", lambda x: _polygamma(3, x)),
    ("_hypot_share", lambda x: _hypot_share(x, 0.5)),
    ("_sinc_d1", lambda x: _sinc_d(1, x)),
    ("_sinc_d2", lambda x: _sinc_d(2, x)),
]
SAMPLE = np.array([[0.3, 1.7, 4.2], [2.5, 0.9, 12.0]])


@pytest.mark.parametrize(("name", "func"), UNARY)
def test_float32_in_float32_out(name, func):
    got = func(SAMPLE.astype(np.float32))
    assert got.dtype == np.float32 and got.shape == SAMPLE.shape
    # computed in float64, rounded once
    wide = func(SAMPLE.astype(np.float32).astype(np.float64))
    np.testing.assert_array_equal(got, wide.astype(np.float32))
    assert func(np.float32(0.5)).dtype == np.float32
    assert func(np.array([0.5, 2.0], dtype=np.float16)).dtype == np.float16


@pytest.mark.parametrize(("name", "func"), UNARY)
def test_float64_ints_scalars_and_shapes(name, func):
    assert func(SAMPLE).dtype == np.float64
    assert func(np.array([1, 2, 3])).dtype == np.float64
    assert func(np.array([True, False])).dtype == np.float64
    assert func([0.5, 1.5]).shape == (2,)  # lists work too
    scalar = func(0.5)
    assert isinstance(scalar, np.float64) and np.ndim(scalar) == 0
    assert np.ndim(func(np.array(0.5))) == 0
    assert func(np.array(0.5)) == scalar
    assert func(np.zeros((0, 3)) + 1.0).shape == (0, 3)
    np.testing.assert_array_equal(func(SAMPLE)[1], func(SAMPLE[1]))


@pytest.mark.parametrize(("name", "func"), UNARY)
def test_complex_input_is_rejected(name, func):
    with pytest.raises(TypeError):
        func(np.array([1.0 + 1j]))


def test_sinpi_is_exact_at_integers_and_halves():
    xs = np.array([0.0, 1.0, -3.0, 1e20, 0.5, -2.5, 7.5])
    np.testing.assert_array_equal(_sinpi(xs)[:4], 0.0)
    np.testing.assert_array_equal(_sinpi(xs)[4:], [1.0, -1.0, -1.0])
    for x in [0.1, -0.3, 1.25, 33.7, -1e-9]:
        assert rel_err(_sinpi(x), mp_ref(mpmath.sinpi, x)) <= 2e-16


# ----------------------------------------------------------------------------- argmax share


def test_argmax_share_unique_and_ties():
    assert _argmax_share(3.0, 1.0, 3.0) == 1.0
    assert _argmax_share(1.0, 1.0, 3.0) == 0.0
    assert _argmax_share(2.0, 2.0, 2.0) == 0.5
    assert _argmax_share(2.0, 2.0, 2.0, 2.0) == pytest.approx(1.0 / 3.0, rel=1e-16)
    assert _argmax_share(2.0, 2.0, 2.0, 1.0) == 0.5
    assert _argmax_share(5.0, 5.0) == 1.0


def test_argmax_share_broadcasting_mixed_shapes():
    a = np.array([[1.0], [2.0], [3.0]])  # (3, 1)
    b = np.array([2.0, 1.0, 3.0, 2.0])  # (4,)
    c = 2.0
    args = (a, b, c)
    shares = [_argmax_share(arg, *args) for arg in args]
    for share in shares:
        assert share.shape == (3, 4) and share.dtype == np.float64
    # independent reference, element by element
    ab, bb, cb = np.broadcast_arrays(a, b, np.asarray(c))
    for idx in np.ndindex(3, 4):
        vals = [ab[idx], bb[idx], cb[idx]]
        top = max(vals)
        k = vals.count(top)
        for share, v in zip(shares, vals, strict=True):
            assert share[idx] == ((v == top) / k)
    np.testing.assert_allclose(sum(shares), 1.0, rtol=0, atol=1e-15)
    # two-way and three-way ties are present in this grid
    assert (shares[0] == 0.5).any() and np.isclose(shares[0], 1.0 / 3.0).any()


def test_argmax_share_dtypes():
    f32 = np.array([1.0, 2.0], dtype=np.float32)
    assert _argmax_share(f32, f32, np.float32(1.5)).dtype == np.float32
    assert _argmax_share(f32, f32, 1.5).dtype == np.float32  # Python scalars are weak
    assert _argmax_share(f32, f32, np.array([1.0, 3.0])).dtype == np.float64
    ints = np.array([1, 5])
    assert _argmax_share(ints, ints, np.array([5, 2])).dtype == np.float64
    np.testing.assert_array_equal(_argmax_share(ints, ints, np.array([5, 2])), [0.0, 1.0])
    assert isinstance(_argmax_share(1, 1, 2), np.float64)
    assert _argmax_share(f32, f32, np.float64(1.5)).dtype == np.float64  # NumPy scalars count
    assert _argmax_share(np.float16(1), np.float16(1), 0.5).dtype == np.float16


def test_argmax_share_nan_and_errors():
    got = no_warnings(_argmax_share, np.array([np.nan, 1.0]), np.array([np.nan, 1.0]), 0.0)
    assert np.isnan(got[0]) and got[1] == 1.0
    with pytest.raises(TypeError):
        _argmax_share(1.0)


@given(st.lists(st.lists(st.integers(-2, 2), min_size=5, max_size=5), min_size=1, max_size=4))
def test_argmax_share_property_shares_sum_to_one(rows):
    args = [np.array(r, dtype=np.float64) for r in rows]
    shares = [_argmax_share(arg, *args) for arg in args]
    np.testing.assert_allclose(sum(shares), 1.0, rtol=0, atol=1e-15)
    top = np.max(args, axis=0)
    for arg, share in zip(args, shares, strict=True):
        assert ((share > 0) == (arg == top)).all()


# ------------------------------------------------------------- hypothesis against scipy


@settings(max_examples=300, deadline=None)
@given(st.floats(-1e6, 1e6, allow_nan=False))
def test_erf_property_vs_scipy(x):
    ref = sc.erf(x)
    assert agrees(_erf(x), ref, mpmath.erf, x, 1e-14, 1e-320)


@settings(max_examples=300, deadline=None)
@given(st.floats(-50.0, 170.0, allow_nan=False))
def test_gamma_property_vs_scipy(x):
    if x <= 0 and x == math.floor(x):
        assert np.isnan(_gamma(x)) or np.isinf(_gamma(x))
        return
    ref = sc.gamma(x)
    assert agrees(_gamma(x), ref, mpmath.gamma, x, 1e-13)


@settings(max_examples=300, deadline=None)
@given(st.floats(-50.0, 1e6, allow_nan=False))
def test_digamma_property_vs_scipy(x):
    if x <= 0 and x == math.floor(x):
        assert np.isnan(_polygamma(0, x))
        return
    ref = sc.psi(x)
    # Both sides are relatively accurate except next to the zeros of digamma, where the
    # unavoidable error is absolute: a few ulp of the terms psi(1 - x) and pi cot(pi x).
    scale = abs(sc.psi(1.0 - x)) + abs(math.pi / math.tan(math.pi * x)) if x < 0 else 1.0
    assert agrees(_polygamma(0, x), ref, mpmath.digamma, x, 1e-12, 1e-15 * scale)


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 4), st.floats(0.0, 1e6, exclude_min=True))
def test_polygamma_property_vs_scipy_positive(n, x):
    ref = sc.polygamma(n, x)
    assert agrees(_polygamma(n, x), ref, lambda v: mpmath.polygamma(n, v), x, 1e-12)


@settings(max_examples=200, deadline=None)
@given(st.floats(0.0, 1e300, exclude_min=True))
def test_loggamma_property_vs_scipy(x):
    ref = sc.gammaln(x)
    assert agrees(_loggamma(x), ref, mpmath.loggamma, x, 1e-13, 2e-16)


# ------------------------------------------------------------- helpers as copied on their own


def test_runtime_closure_follows_what_each_helper_reads():
    names = runtime_closure(["_gamma"])
    assert names[0] == "_gamma" and "_sinpi" in names and "_erf" not in names
    assert runtime_closure(["_sinpi", "_gamma", "_gamma"])[:2] == ["_sinpi", "_gamma"]
    with pytest.raises(KeyError):
        runtime_closure(["_erf", "_no_such_helper"])
    assert set(runtime_closure(["_elementwise"])) >= {"_in_blocks", "_at_point", "_on_threads"}


def _loop_formulas(x):
    """A Numba module's formulas as the runtime sees them (``py_func``: the Python function)."""
    return 2.0 * x


_loop_formulas.py_func = _loop_formulas


def _plain_loop(x, _out, _start, _stop):
    """A Numba module's loop, as plain Python."""
    for i in range(_start, _stop):
        _out[0][i] = _loop_formulas(_at(x, i))


def _twice_block(a, _out=(None, None)):
    """A stand-in for a module's ``_formulas``: elementwise, returns a value and a tuple, the
    first written into its output's rows when given."""
    return np.multiply(a, 2.0, out=_out[0]), (-a,)


def _filled_block(a, _out):
    """A stand-in for an array result's ``_formulas``: fills its two rows."""
    _out[0] = np.multiply(a, 2.0, out=_out[0])
    _out[1] = -a
    return _out


def _reciprocal_point(a, _out=(None, None, None, None)):
    """A stand-in for ``_formulas`` at a point: ``1/a`` (Python raises at 0.0, NumPy: inf)
    and ``a`` nested as value_and_grad's outputs are; last, 1 where ``1/a`` was computed on a
    Python float."""
    return 1 / a, (a, (1 / a,)), float(type(1 / a) is float)


def _reciprocal_packed(r):
    """A stand-in for ``_packed``: the register ``r`` holds the inputs (4, 2) and room for
    their reciprocals; the outputs are 1/4, then (4, 1/2)."""
    r[2:4] = 1 / r[0:2]
    return r[[2, 0, 3]]


def _call_examples():
    x = np.array([-2.5, -0.3, 0.2, 1.5, 3.0, 40.0])
    long = np.linspace(-1.0, 1.0, 40000)
    return {
        "_in_blocks": (
            (_twice_block, [long], long.shape, long.dtype, 2),
            (long * 2.0, (-long,)),
        ),
        "_elementwise": ((_filled_block, (long,), 1, (2,)), np.stack([long * 2.0, -long])),
        "_numba_elementwise": ((_loop_formulas, (x,), 1, _plain_loop, (1,), 0), 2.0 * x),
        "_numba_ready": ((), None),
        "_nothing": ((), None),
        "_reused_empty": ((2, 3, np.float64), None),
        "_at": ((x, 2), x[2]),
        "_select": ((False, 1.0, 2.5), 2.5),
        "_ln2_multiple": ((3.0,), 4.0),
        "_times_pow2": ((1.5, 3.0), 12.0),
        "_exp_times_pow2": ((0.75, -1.0), _exp_times_pow2(0.75, -1.0)),
        "_exp": ((0.75,), _exp(0.75)),
        "_expm1": ((1e-3,), _expm1(1e-3)),
        "_log": ((3.5,), _log(3.5)),
        "_log1p": ((1e-3,), _log1p(1e-3)),
        "_tanh": ((-0.4,), _tanh(-0.4)),
        "_cosh": ((2.5,), _cosh(2.5)),
        "_sinh": ((-0.4,), _sinh(-0.4)),
        "_atan": ((-0.4,), math.atan(-0.4)),
        "_atan2": ((-0.0, -2.0), -math.pi),
        "_logistic": ((-3.0,), _logistic(-3.0)),
        "_log1p_exp": ((-3.0,), _log1p_exp(-3.0)),
        "_at_scalars": ((_twice_block, [np.asarray(1.5)], np.dtype(np.float32)), (3.0, (-1.5,))),
        "_as_outputs": (((x[:1], 2), (2,), np.float32, ()), (np.full(2, x[0], np.float32),
                                                             np.full(2, 2.0, np.float32))),
        "_leaves": ((((1, (2, 3)), 4),), [1, 2, 3, 4]),
        "_nested_like": ((((1, (2, 3)), 4), [5, 6, 7, 8]), ((5, (6, 7)), 8)),
        "_thread_count": ((None, 1000), 1),
        "_on_threads": ((lambda a, b: b.__setitem__(0, a), iter([(1, [0]), (2, [0])]),
                         lambda: None, 2), None),
        "_on_floats": ((_reciprocal_packed,), None),
        "_point_numpy": ((), None),
        "_at_point": ((_reciprocal_point, (4.0,)), (0.25, (4.0, (0.25,)), 1.0)),
        "_at_packed": ((_reciprocal_packed, (4.0, np.float64(2.0)), 4, (0, 2)),
                       (0.25, (4.0, 0.5))),
        "_zero_d": ((np.array([1.5, -2.0, 3.0]),), (1.5, -2.0, 3.0)),
        "_free_threads": (({"pid": os.getpid(), "cores": 1},), 1),  # one core: one thread
        "_sinpi": ((x,), _sinpi(x)),
        "_cody_erf": ((x,), _cody_erf(x)),
        "_erf": ((x,), _erf(x)),
        "_erfc": ((x,), _erfc(x)),
        "_log_ndtr": ((x,), _log_ndtr(x)),
        "_gamma": ((x,), _gamma(x)),
        "_loggamma": ((x[2:],), _loggamma(x[2:])),
        "_polygamma": ((2, x), _polygamma(2, x)),
        "_argmax_share": ((x, x, 1.0), _argmax_share(x, x, 1.0)),
        "_sigmoid": ((x,), _sigmoid(x)),
        "_softplus": ((x,), _softplus(x)),
        "_hypot_share": ((x, 1.0), _hypot_share(x, 1.0)),
        "_sinc_d": ((1, x), _sinc_d(1, x)),
        "_prod_others": ((x, (0,)), _prod_others(x, (0,))),
        "_tril_inv": ((np.tril(np.outer(x, x) + 4 * np.eye(6)),),
                      np.linalg.inv(np.tril(np.outer(x, x) + 4 * np.eye(6)))),
        "_gram": ((np.stack([x, x**2], axis=1), x),
                  np.stack([x, x**2], axis=1).T @ (x[:, None] * np.stack([x, x**2], axis=1))),
        "_common_shape": ((("a", "b", "c"), x, x[:, None], np.asarray(1.0)), (6, 6)),
        "_float_dtype": ((("a", "b"), x.astype(np.float32), np.arange(2)), np.dtype(np.float64)),
        "_as_output": ((x[:1], (2,), np.float32), np.full(2, x[0], np.float32)),
        "_as_vector": ((x[:2], 2), _as_vector(x[:2], 2)),
        "_as_arrays": ((("a", "b"), x[:2], [1, 2]), [x[:2], np.array([1, 2])]),
        "_float_arrays": (
            (("a", "b"), [1, 2], x.astype(np.float32)),
            (np.array([1.0, 2.0]), x.astype(np.float32).astype(np.float64)),
        ),
        "_check_shapes": ((("x",), (x,), (("n",),), (("n", 2),)), (6,)),
        "_affine_grid": ((5, (10, 1), (2, 3)), np.array([5, 6, 7, 15, 16, 17])),
        # the Array API backend's helpers, on NumPy's wrapped namespace
        "_xp_namespace": ((x, 1.0), _xp_numpy),
        "_xp_float_dtype": ((_xp_numpy, ("a", "b"), x.astype(np.float32), np.arange(2)),
                            np.dtype(np.float32)),
        "_xp_float_arrays": (
            (_xp_numpy, ("a", "b"), np.arange(2), x.astype(np.float32)),
            (np.array([0.0, 1.0], np.float32), x.astype(np.float32)),
        ),
        "_xp_common_shape": ((("a", "b", "c"), x, x[:, None], np.asarray(1.0)), (6, 6)),
        "_xp_as_output": ((_xp_numpy, x[:1], (2,), np.float32),
                          np.full(2, x[0], dtype=np.float32)),
        "_xp_vector": ((np.ones((2, 3)), 2), np.ones((2, 3))),
        "_xp_in_blocks": (
            (lambda part, size: (part[0] * 2.0, (-part[0],)), [long], long.shape, _xp_numpy),
            (long * 2.0, (-long,)),
        ),
        "_xp_elementwise": ((lambda a, xp: (a * 2.0, -a), (long,)), (long * 2.0, -long)),
        "_xp_outputs": ((_xp_numpy, ((x, 1.0), (x, x)), (6,), np.float64, (2, 2), ()),
                        np.stack([np.stack([x, np.ones(6)]), np.stack([x, x])])),
    }


@pytest.mark.parametrize(
    ("arrays", "dtype"),
    [
        ((np.arange(3), True), np.float64),  # ints and bools promote to float64
        ((np.ones(2, np.float32), np.float32(2.0)), np.float32),  # float32 stays float32
        ((np.ones(2, np.float32), np.ones(2)), np.float64),
        (([1.5, 2.0],), np.float64),  # lists become arrays
        ((np.ones(2, ">f8"),), np.float64),  # byte-swapped arrays come out native
    ],
)
def test_float_arrays_promotes_every_argument_to_one_float_dtype(arrays, dtype):
    """The slow path of a tensor function's prelude: one dtype for all, never an integer one."""
    got = _float_arrays(tuple(f"a{i}" for i in range(len(arrays))), *arrays)
    assert len(got) == len(arrays)
    for array, original in zip(got, arrays, strict=True):
        assert type(array) is np.ndarray and array.dtype == np.dtype(dtype)
        assert array.dtype.isnative
        np.testing.assert_array_equal(array, np.asarray(original, dtype=dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("zeros", [0, 1, 2])
def test_prod_others_branches_agree_with_the_product_of_the_others(dtype, zeros):
    """The fast branch (no zero anywhere) and the zero-counting one both give the product of
    the other elements along the axes, column by column."""
    rng = np.random.default_rng(zeros)
    x = rng.uniform(0.5, 2.0, size=(4, 3)).astype(dtype)
    x[:zeros, 1] = 0  # column 1 gets `zeros` zeros; the other columns none
    got = _prod_others(x, (0,))
    want = np.array([[np.prod(np.delete(x[:, j], i)) for j in range(3)] for i in range(4)])
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=4 * np.finfo(dtype).eps)
    everything = _prod_others(x, (0, 1))
    flat = x.ravel()
    want_all = [np.prod(np.delete(flat, k)) for k in range(flat.size)]
    np.testing.assert_allclose(everything.ravel(), want_all, rtol=16 * np.finfo(dtype).eps)


@pytest.mark.parametrize("shape", [(1, 1), (5, 64, 64), (3, 65, 65), (200, 200)])
def test_tril_inv_is_the_inverse_of_a_lower_triangular_matrix(shape):
    rng = np.random.default_rng(shape[-1])
    lower = np.tril(rng.uniform(-1, 1, shape)) + 3 * np.eye(shape[-1])
    got = _tril_inv(lower)
    np.testing.assert_allclose(got @ lower, np.broadcast_to(np.eye(shape[-1]), shape), atol=1e-12)
    assert (np.triu(got, 1) == 0).all()
    assert _tril_inv(lower.astype(np.float32)).dtype == np.float32


def test_prod_others_when_the_product_underflows_without_zeros():
    x = np.array([1e-200, 1e-200, 1e150])  # prod underflows to 0, but no element is 0
    assert _prod_others(x, (0,)).tolist() == [0.0, 0.0, 0.0]  # the same as prod(x) / x
    assert np.prod(x) == 0
    with np.errstate(all="raise"):
        _prod_others(np.array([[0.0, 2.0], [3.0, 0.0]]), (0, 1))


def test_as_vector_checks_the_leading_axis():
    assert _as_vector([1.0, 2.0], 2).shape == (2,)
    with pytest.raises(ShapeError, match="'_v' must have the 2 components"):
        _as_vector([1.0, 2.0, 3.0], 2)
    with pytest.raises(ShapeError):
        _as_vector(1.0, 2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_softplus_gives_the_numbers_of_logaddexp(dtype):
    x = np.concatenate([np.linspace(-800, 800, 4001), [-1e-300, 0.0, 1e-300]]).astype(dtype)
    ours = _softplus(x)
    assert ours.dtype == dtype
    np.testing.assert_allclose(ours, np.logaddexp(dtype(0), x), rtol=4 * np.finfo(dtype).eps,
                               atol=0)
    special = _softplus(np.array([np.nan, np.inf, -np.inf], dtype))
    assert np.isnan(special[0]) and special[1] == np.inf and special[2] == 0.0
    assert np.isnan(_softplus(float("nan"))) and _softplus(float("inf")) == float("inf")
    for value in (-745.5, -3.0, 0.0, 2.5, 40.0, 1e300):  # Python floats: math
        np.testing.assert_allclose(_softplus(value), np.logaddexp(0.0, value), rtol=1e-15)
        np.testing.assert_allclose(_softplus(np.float64(value)), np.logaddexp(0.0, value),
                                   rtol=1e-15)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_is_accurate_in_both_tails_without_overflow(dtype):
    x = np.array([-1000.0, -40.0, -5.0, 0.0, 3.0, 40.0, 1000.0], dtype=dtype)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        ours = _sigmoid(x)
    assert ours.dtype == dtype
    with mpmath.workdps(40):
        want = [float(1 / (1 + mpmath.exp(-mpmath.mpf(float(v))))) for v in x]
    np.testing.assert_allclose(ours, want, rtol=4 * np.finfo(dtype).eps, atol=0)
    assert np.isnan(_sigmoid(np.nan))


@pytest.mark.parametrize(
    "x",
    [np.linspace(-700, 700, 41), np.linspace(-50, 50, 12, dtype=np.float32).reshape(3, 4),
     np.arange(-3, 4), 2.5, np.float64(-3.0), np.asarray(1.5)],
    ids=["float64", "float32 2-d", "int", "float", "numpy scalar", "0-d"],
)
def test_sigmoid_is_exactly_e_over_one_plus_e_where_exp_is_finite(x):
    """Arrays finish in place (the quotient written into ``exp(x)``); everything gives exactly
    ``e / (e + 1)``, the input is never modified, and the result has the formula's type and
    dtype."""
    before = np.array(x, copy=True)
    e = np.exp(x)
    want = e / (e + 1.0)
    got = _sigmoid(x)
    assert type(got) is type(want) and np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.asarray(x), before)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sigmoid_falls_back_where_exp_overflows_or_the_input_is_infinite(dtype):
    """``exp(800)`` overflows and ``exp(inf)/exp(inf)`` is nan: those blocks take
    ``1/(1 + exp(-x))`` instead, silently, and every element is right."""
    x = np.array([-np.inf, -800.0, -3.0, 0.0, 3.0, 800.0, np.inf, np.nan], dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = _sigmoid(x)
    with np.errstate(over="ignore"):
        want = 1.0 / (1.0 + np.exp(-x))
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=2 * np.finfo(dtype).eps, atol=0)
    assert _sigmoid(np.float64(800.0)) == 1.0 and _sigmoid(np.inf) == 1.0


def _assert_same_structure(got, ref):
    if ref is _xp_numpy:  # a namespace
        assert got is ref
        return
    if isinstance(ref, tuple) and any(isinstance(r, tuple | np.ndarray) for r in ref):
        assert isinstance(got, tuple) and len(got) == len(ref)
        for g, r in zip(got, ref, strict=True):
            _assert_same_structure(g, r)
    else:
        np.testing.assert_array_equal(got, ref)


def test_each_helper_runs_on_its_own_as_a_standalone_module_copies_it():
    """A helper's text and that of everything it reads, run where only ``_np``, ``_math``,
    ``_xpc`` and the error classes exist, as :func:`symdiff.codegen.standalone.standalone`
    writes them; each gives the example's result."""
    examples = _call_examples()
    assert set(examples) == set(HELPERS)
    for name in HELPERS:
        namespace = {"_np": np, "_math": math, "_xpc": array_api_compat}
        for line in ERROR_CONSTANTS:
            exec(line, namespace)
        texts = [DEFINITIONS[n].text for n in runtime_closure([name])]
        exec(compile("\n\n".join(texts), f"<helpers {name}>", "exec"), namespace)
        args, ref = examples[name]
        got = namespace[name](*args)
        if ref is not None:
            _assert_same_structure(got, ref)


# ------------------------------------------------------------------------- source rules

PACKAGE_DIR = pathlib.Path(runtime.__file__).parent
HELPER_MODULES = sorted(p for p in PACKAGE_DIR.glob("*.py") if p.name != "__init__.py")
#: The imports a helper module may make: the names its helpers' text may use, and the helpers
#: of the package's other modules.
HELPER_IMPORTS = {
    "import math as _math",
    "import numpy as _np",
    "from ..errors import ArgumentError as _ArgumentError",
    "from ..errors import ShapeError as _ShapeError",
}
#: The optional import of the Array API backend's helper module (``standard.py``).
OPTIONAL_IMPORT = (
    "try:\n    import array_api_compat as _xpc\nexcept ImportError:\n    _xpc = None"
)


def _docstring_first(body: list[ast.stmt]) -> None:
    assert isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    assert isinstance(body[0].value.value, str) and body[0].value.value.strip()


def test_the_package_is_its_init_and_helper_modules():
    """Every helper module is a plain ``.py`` file next to ``__init__``; none hides deeper."""
    assert (PACKAGE_DIR / "__init__.py").is_file()
    assert len(HELPER_MODULES) >= 2
    assert not [p for p in PACKAGE_DIR.rglob("*.py") if p.parent != PACKAGE_DIR]


@pytest.mark.parametrize("path", HELPER_MODULES, ids=lambda p: p.name)
def test_helper_module_top_level_statements(path):
    """A helper module: its docstring, imports of ``_np``/``_math``/the error classes and of
    its package's helpers, helpers and constants (one assignment to an underscored name)."""
    body = ast.parse(path.read_text()).body
    _docstring_first(body)
    for node in body[1:]:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            assert all(a.asname is None and a.name in DEFINITIONS for a in node.names)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            assert ast.unparse(node) in HELPER_IMPORTS, ast.unparse(node)
            continue
        if path.stem == "standard" and isinstance(node, ast.Try):
            assert ast.unparse(node) == OPTIONAL_IMPORT
            continue
        if isinstance(node, ast.Assign):
            assert len(node.targets) == 1 and node.targets[0].id.startswith("_")
            continue
        assert isinstance(node, ast.FunctionDef), f"unexpected: {ast.unparse(node)[:80]}"
        assert node.name.startswith("_") and node.name in HELPERS
        assert getattr(runtime, node.name).__module__ == f"symdiff.runtime.{path.stem}"


def test_every_helper_is_defined_once():
    defined: dict[str, str] = {}
    for path in HELPER_MODULES:
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.FunctionDef | ast.Assign):
                name = node.name if isinstance(node, ast.FunctionDef) else node.targets[0].id
                assert name not in defined, f"{name} in {defined.get(name)}"
                defined[name] = path.stem
    assert sorted(n for n in defined if n in HELPERS) == HELPERS


def test_init_exports_every_helper():
    """``__init__``: its docstring, imports, the index of its modules' helpers (``MODULES``),
    ``__all__`` (every helper) and ``__getattr__`` (which imports a module on first use)."""
    body = ast.parse((PACKAGE_DIR / "__init__.py").read_text()).body
    _docstring_first(body)
    for node in body[1:]:
        if isinstance(node, ast.Import | ast.ImportFrom):
            continue
        if isinstance(node, ast.FunctionDef):
            assert node.name in ("__getattr__", "__dir__")
            continue
        assert isinstance(node, ast.Assign), ast.unparse(node)[:80]
        assert [ast.unparse(t) for t in node.targets] in (["MODULES"], ["_MODULE_OF"],
                                                           ["__all__"])
    assert sorted(runtime.__all__) == HELPERS
    for module, names in runtime.MODULES.items():
        assert {n for n, d in DEFINITIONS.items() if d.module == module
                and d.text.startswith("def ")} == set(names)


def test_the_scalar_functions_numba_registers_are_the_scalar_modules_helpers():
    """``_numba_ready`` registers ``_SCALAR_FUNCTIONS``: every helper of the scalar module but
    ``_at`` and ``_select``, which it overloads."""
    from symdiff.runtime.scalar import _SCALAR_FUNCTIONS as registered

    scalar = tuple(sorted(set(runtime.MODULES["scalar"]) - {"_at", "_select"}))
    assert registered == scalar


def test_public_helpers_present():
    assert set(PUBLIC_HELPERS) <= set(HELPERS)
    for name in HELPERS:
        func = getattr(runtime, name)
        assert name.startswith("_") and inspect.isfunction(func)
        assert inspect.getdoc(func), f"{name} needs a docstring"


def _global_names(source: str) -> set[str]:
    """Names a function's source reads from the global (module or builtin) scope."""
    names: set[str] = set()
    tables = [symtable.symtable(source, "<helper>", "exec")]
    while tables:
        table = tables.pop()
        for sym in table.get_symbols():
            if table.get_type() != "module" and sym.is_global():
                names.add(sym.get_name())
        tables.extend(table.get_children())
    return names


@pytest.mark.parametrize("name", HELPERS)
def test_helper_refers_only_to_allowed_names(name):
    used = _global_names(DEFINITIONS[name].text)
    errors = {"_ShapeError", "_ArgumentError"}  # bound by a standalone module
    allowed = {"_np", "_math", "_xpc"} | errors | set(DEFINITIONS) | set(dir(builtins))
    assert used <= allowed, f"{name} refers to {sorted(used - allowed)}"


def test_common_shape_is_numpy_broadcasting():
    from symdiff.runtime import _common_shape

    for shapes in [[(3,), (3,)], [(), (4, 1), (5,)], [(2, 1, 3), (4, 1)], [(0,), (1,)]]:
        arrays = [np.zeros(s) for s in shapes]
        names = tuple(f"a{i}" for i in range(len(arrays)))
        assert _common_shape(names, *arrays) == np.broadcast_shapes(*shapes)
    with pytest.raises(ShapeError, match=r"arguments 'b' with shape \(3,\) and 'c' with shape "
                       r"\(4,\) do not broadcast together"):
        _common_shape(("a", "b", "c"), np.zeros(1), np.zeros(3), np.zeros(4))


def test_erfc_keeps_full_relative_precision_in_the_tail():
    """Where erfc is tiny 1 - erf(x) is 0 or all rounding; _erfc is within a few ulp of mpmath
    up to the underflow, and 2 - erfc(|x|) on the left."""
    xs = np.concatenate([np.linspace(-6.0, 27.0, 3001), [0.46875, -0.46875, 4.0, 26.5]])
    with mpmath.workdps(40):
        exact = np.array([float(mpmath.erfc(mpmath.mpf(float(v)))) for v in xs])
    got = _erfc(xs)
    normal = exact > 1e-300
    assert np.max(np.abs(got[normal] - exact[normal]) / exact[normal]) < 2e-15
    assert _erfc(np.inf) == 0.0 and _erfc(-np.inf) == 2.0 and _erfc(28.0) == 0.0
    assert np.isnan(_erfc(np.nan))


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_sinc_d_is_accurate_through_zero_and_beyond(n):
    """The n-th derivative of sin(x)/x: the series near 0 and the recurrence beyond agree with
    mpmath (relative to the function's scale), also just around the switch at |x| = 2."""
    xs = np.concatenate([np.linspace(-9.0, 9.0, 361), [0.0, 1e-9, -1e-4, 1.9999999, 2.0]])
    with mpmath.workdps(40):
        exact = np.array([
            float(mpmath.diff(lambda t: mpmath.sinc(t), mpmath.mpf(float(v)), n)) for v in xs
        ])
    got = _sinc_d(n, xs)
    np.testing.assert_allclose(got, exact, rtol=1e-13, atol=1e-13)
    assert _sinc_d(1, 0.0) == 0.0 and _sinc_d(2, 0.0) == -1 / 3


def test_at_point_runs_on_floats_and_falls_back_to_numpy_scalars_where_python_raises():
    """Python floats where they give NumPy's numbers (``_elementwise`` makes NumPy float64
    scalars Python floats first); at 1/0.0 (ZeroDivisionError) the point is computed again on
    NumPy scalars, which give inf, as every other path does. Every output comes back a 0-d
    float64 array, nested as it was."""
    from symdiff.runtime import _elementwise

    for value, (same, (reciprocal,)), on_floats in (
            _at_point(_reciprocal_point, (4.0,)),
            _elementwise(_reciprocal_point, (np.float64(4.0),))):
        for got, want in ((value, 0.25), (same, 4.0), (reciprocal, 0.25), (on_floats, 1.0)):
            assert type(got) is np.ndarray and got.shape == () and got.dtype == np.float64
            assert got == want
    with np.errstate(divide="ignore"):
        value, _, on_floats = _at_point(_reciprocal_point, (0.0,))
    assert value == np.inf and on_floats == 0.0

    def doubled(a, _out=(None,)):
        return a * 2.0

    single = _at_point(doubled, (1.5,))
    assert type(single) is np.ndarray and single.shape == () and single == 3.0


def test_at_point_runs_the_arithmetic_ufuncs_as_operators():
    """A formula writes an output's last operation as the operator's ufunc (``out=`` its
    block); at a point those ufuncs are the operators themselves: Python floats in, Python
    floats computed (ZeroDivisionError raised, then NumPy scalars)."""
    seen = []

    def formulas(x, y, _out=(None, None)):
        first = _np.divide(x, y, out=_out[0])
        seen.append(type(first))
        return first, _np.square(_np.negative(x, out=None), out=_out[1])

    value, square = _at_point(formulas, (3.0, 4.0))
    assert seen == [float] and value == 0.75 and square == 9.0
    with np.errstate(divide="ignore"):
        value, _ = _at_point(formulas, (3.0, 0.0))
    assert seen[-1] is np.float64 and value == np.inf
    assert formulas(3.0, 4.0)[0].__class__ is np.float64  # (NumPy's own ufuncs, as written)


def test_as_outputs_copies_arguments_and_arrays_handed_out_twice():
    x = np.arange(3.0)
    first, _, third = _as_outputs((x, x * 2, 1.0), (3,), np.dtype(np.float64), (x,))
    assert first is not x and np.array_equal(first, x)
    assert third.tolist() == [1.0, 1.0, 1.0]
    t = x * 2
    a, b = _as_outputs((t, t), (3,), np.dtype(np.float64), ())
    assert a is t and b is not t and np.array_equal(a, b)
    assert _as_output(2, (2,), np.float32).dtype == np.float32


@pytest.mark.parametrize("count", [1, 2, 7, 100, 101, 1000])
def test_zero_d_views_are_each_element_as_a_0d_array(count):
    """The outputs of a point: one 0-d float64 array per element, in order, views of the
    vector (an itemgetter up to 100 elements, an nditer beyond)."""
    from symdiff.runtime import _zero_d

    values = np.arange(count, dtype=np.float64) * 1.5 - 3.0
    views = _zero_d(values)
    assert type(views) is tuple and len(views) == count
    assert all(type(v) is np.ndarray and v.shape == () and v.dtype == np.float64 for v in views)
    assert [float(v) for v in views] == values.tolist()
    assert all(np.shares_memory(v, values) for v in views)
    assert _zero_d(np.zeros(0)) == ()
