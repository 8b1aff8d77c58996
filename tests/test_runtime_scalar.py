"""The scalar functions of ``symdiff.runtime.scalar`` (what ``backend="numba"`` loops call for
``exp``, ``log``, ``expm1``, ``log1p``, ``tanh``, ``cosh``, ``sinh``, ``atan``, ``atan2``,
sigmoid and softplus),
compiled by Numba in a loop as a module's loop compiles them: within an ulp or two of the
exact value (mpmath at 40 digits) over their whole range, NumPy's values at zeros, infinities,
nan, subnormals and the edges of overflow, float32 arguments computed in float64, and a loop
that calls no function of the C library (so the compiler can vectorise it). Without Numba the
same code runs in Python, on floats."""

from __future__ import annotations

import re

import mpmath
import numpy as np
import pytest

from symdiff.runtime import scalar

numba = pytest.importorskip("numba", reason="Numba is not installed (the numba extra)")

from symdiff.runtime.loops import _numba_ready  # noqa: E402  (after the skip)

_numba_ready()

#: (function, its mpmath reference, NumPy's ufunc, worst error allowed in ulp, arguments)
_WIDE = np.random.default_rng(7)


def _points(*ranges: tuple[float, float, int]) -> np.ndarray:
    return np.concatenate([_WIDE.uniform(low, high, count) for low, high, count in ranges])


CASES = {
    "_exp": (mpmath.exp, np.exp, 1.0, _points((-745.1, 709.78, 1500), (-2, 2, 1500),
                                              (-1e-7, 1e-7, 200), (-745.1, -708, 400))),
    "_expm1": (mpmath.expm1, np.expm1, 1.0, _points((-40, 40, 1500), (-2, 2, 1500),
                                                    (-1e-7, 1e-7, 200), (0.3, 0.8, 300),
                                                    (-0.8, -0.3, 300), (38, 709.7, 200))),
    "_log": (mpmath.log, np.log, 1.0, np.concatenate([
        np.exp(_points((-740, 709, 1500))), _points((0.5, 2, 1500), (1 - 1e-7, 1 + 1e-7, 300),
                                                    (1e-320, 1e-300, 100))])),
    "_log1p": (mpmath.log1p, np.log1p, 1.5, np.concatenate([
        _points((-1, 10, 1500), (-1e-7, 1e-7, 400), (-0.999, -0.3, 300)),
        np.exp(_points((-700, 700, 800)))])),
    "_tanh": (mpmath.tanh, np.tanh, 2.5, _points((-25, 25, 1500), (-2, 2, 1500),
                                                 (-1e-7, 1e-7, 200), (0.5, 1.5, 300))),
    "_cosh": (mpmath.cosh, np.cosh, 1.5, _points((-710.4, 710.4, 1200), (-2, 2, 1200),
                                                 (-1e-7, 1e-7, 200), (20, 25, 300),
                                                 (709, 710.47, 200))),
    "_sinh": (mpmath.sinh, np.sinh, 2.0, _points((-710.4, 710.4, 1200), (-2, 2, 1200),
                                                 (-1e-7, 1e-7, 200), (20, 25, 300),
                                                 (-710.47, -709, 200))),
    "_logistic": (lambda x: 1 / (1 + mpmath.exp(-x)), None, 2.0, _points((-745, 745, 1500),
                                                                        (-3, 3, 1500))),
    "_log1p_exp": (lambda x: mpmath.log1p(mpmath.exp(x)), None, 2.0,
                   _points((-745, 745, 1500), (-3, 3, 1500))),
    "_atan": (mpmath.atan, np.arctan, 1.0, np.concatenate([
        _points((-3, 3, 2000), (-1e-8, 1e-8, 200), (0.43, 0.45, 200), (1.18, 1.2, 200),
                (2.43, 2.45, 200)),
        np.exp(_points((-700, 700, 1000))), -np.exp(_points((-700, 700, 500)))])),
}
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 5e-324, -5e-324, 1e-310,
                    -1e-310, 1e-20, -1e-20, 2.0, 0.5, 22.5, -22.5, 38.5, -38.5, 709.78, 709.79,
                    710.0, 710.47, 710.48, -745.13, -745.14, -746.0, 1e300, -1e300, 1e308,
                    -1.0 + 2**-53])


@pytest.fixture(scope="module")
def loops():
    """Each function in a compiled loop, as a module's loop calls it."""
    made = {}
    for name in CASES:
        function = getattr(scalar, name)

        @numba.njit(fastmath=False, error_model="numpy")
        def loop(x, out, function=function):
            for i in range(x.shape[0]):
                out[i] = function(x[i])

        made[name] = loop
    return made


def _ulps(got: float, exact) -> float:
    """|got - exact| in units in the last place of the exact value rounded to a double."""
    nearest = float(exact)
    spacing = np.spacing(abs(nearest)) if nearest != 0 else 5e-324
    return float(abs(mpmath.mpf(float(got)) - exact) / mpmath.mpf(float(spacing)))


@pytest.mark.parametrize("name", sorted(CASES))
def test_within_an_ulp_or_two_of_the_exact_value(name, loops):
    exact_fn, _, bound, x = CASES[name]
    got = np.empty_like(x)
    loops[name](x, got)
    worst = 0.0
    with mpmath.workdps(40):
        for value, result in zip(x, got, strict=True):
            exact = exact_fn(mpmath.mpf(float(value)))
            if not mpmath.isfinite(exact) or abs(exact) > 1.7976931348623157e308:
                assert result == np.inf * np.sign(float(exact)), (value, result)
                continue
            worst = max(worst, _ulps(result, exact))
    assert worst <= bound, worst


@pytest.mark.parametrize("name", [n for n in sorted(CASES) if CASES[n][1] is not None])
def test_special_values_are_numpys(name, loops):
    """Zeros keep their sign, infinities, nan and the edges of overflow and underflow give
    NumPy's values (which are the exact ones rounded, or within an ulp of them)."""
    got = np.empty_like(SPECIAL)
    loops[name](SPECIAL, got)
    with np.errstate(all="ignore"):
        expected = CASES[name][1](SPECIAL)
    for x, a, b in zip(SPECIAL, got, expected, strict=True):
        if np.isnan(b) or np.isinf(b) or b == 0:
            assert a == b or (np.isnan(a) and np.isnan(b)), (x, a, b)
            assert np.signbit(a) == np.signbit(b) or np.isnan(b), (x, a, b)
        else:
            assert abs(a - b) <= 2 * np.spacing(abs(b)), (x, a, b)


def test_the_tails_of_sigmoid_and_softplus(loops):
    x = np.array([-800.0, -745.0, -40.0, 0.0, 40.0, 800.0, np.inf, -np.inf, np.nan])
    sig, soft = np.empty_like(x), np.empty_like(x)
    loops["_logistic"](x, sig)
    loops["_log1p_exp"](x, soft)
    np.testing.assert_array_equal(sig[[0, 3, 5, 6, 7]], [0.0, 0.5, 1.0, 1.0, 0.0])
    assert 0 < sig[1] < 1e-323 and sig[2] == np.exp(-40.0) / (1 + np.exp(-40.0))
    np.testing.assert_array_equal(soft[[0, 5, 6, 7]], [0.0, 800.0, np.inf, 0.0])
    assert np.isnan(sig[8]) and np.isnan(soft[8])


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_float32_argument_is_computed_in_float64(name, loops):
    x = np.linspace(-3.0, 3.0, 13, dtype=np.float32) + np.float32(4.0) * (name == "_log")
    got = np.empty(13)
    loops[name](x, got)
    reference = np.empty(13)
    loops[name](x.astype(np.float64), reference)
    np.testing.assert_array_equal(got, reference)


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_loop_calls_no_function_of_the_c_library(name, loops):
    """What lets the compiler vectorise a loop of formulas that call these."""
    loop = loops[name]
    x = np.linspace(0.5, 2.0, 8)
    loop(x, np.empty(8))
    ir = loop.inspect_llvm(loop.signatures[0])
    calls = set(re.findall(r"call [^@]*@([\w.]+)\(", ir))
    assert not {c for c in calls if re.fullmatch(r"(llvm\.)?(exp|log|tanh|cosh|sinh|expm1|"
                                                 r"log1p|pow)(\.f64)?", c)}, calls


@pytest.mark.parametrize("name", sorted(CASES))
def test_in_python_on_floats_the_same_numbers(name, loops):
    """The same code runs in Python (a module saved with its helpers, before Numba compiles
    anything, gives the same numbers)."""
    function = getattr(scalar, name)
    x = np.array([-2.5, -0.3, 1e-9, 0.7, 3.0, 30.0]) + 3.0 * (name == "_log")
    compiled = np.empty_like(x)
    loops[name](x, compiled)
    np.testing.assert_array_equal([float(function(float(v))) for v in x], compiled)


@pytest.mark.parametrize("name", [n for n in sorted(CASES) if CASES[n][1] is not None])
def test_no_floating_point_flag_where_numpy_raises_none(name):
    """Inside a ufunc (a tensor module's fused statement) NumPy warns of the flags a loop
    raises: a branch computed and not selected (an overflow in ``expm1``'s scaling of a
    large negative argument) must raise none that NumPy's own function does not."""
    function = getattr(scalar, name)

    def kernel(x):
        return function(x)

    ufunc = numba.vectorize(cache=False)(kernel)
    x = np.concatenate([SPECIAL, np.linspace(-800.0, 800.0, 3201), -np.logspace(-300, 300, 61),
                        np.logspace(-300, 300, 61)])
    for value in x:
        with np.errstate(all="raise", under="ignore"):
            try:
                CASES[name][1](np.array([value]))
            except FloatingPointError:
                continue  # (NumPy raises one here: a flag of ours is no news)
            try:
                ufunc(np.array([value]))
            except FloatingPointError as error:
                raise AssertionError((name, value, str(error))) from None


@pytest.fixture(scope="module")
def atan2_loop():
    @numba.njit(fastmath=False, error_model="numpy")
    def loop(y, x, out):
        for i in range(x.shape[0]):
            out[i] = scalar._atan2(y[i], x[i])

    return loop


def test_atan2_within_an_ulp_and_a_half_of_the_exact_angle(atan2_loop):
    rng = np.random.default_rng(11)
    scale = np.exp(rng.uniform(-300, 300, (2, 1500))) * rng.choice([-1.0, 1.0], (2, 1500))
    y = np.concatenate([rng.normal(size=2500), scale[0], rng.normal(size=300)])
    x = np.concatenate([rng.normal(size=2500), scale[1], -rng.uniform(0, 1e-3, 300)])
    got = np.empty_like(x)
    atan2_loop(y, x, got)
    worst = 0.0
    with mpmath.workdps(40):
        for a, b, result in zip(y, x, got, strict=True):
            worst = max(worst, _ulps(result, mpmath.atan2(mpmath.mpf(float(a)),
                                                          mpmath.mpf(float(b)))))
    assert worst <= 1.5, worst


def test_atan2_at_zeros_infinities_and_nan_is_numpys(atan2_loop):
    """Every pair of the special values, signed zeros included: NumPy's angle, sign and all."""
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 5e-324, -5e-324, 1e308,
                        -1e308, 3.0])
    y, x = (a.ravel() for a in np.meshgrid(special, special))
    got = np.empty_like(x)
    atan2_loop(y, x, got)
    expected = np.arctan2(y, x)
    for a, b, g, e in zip(y, x, got, expected, strict=True):
        if np.isnan(e) or e == 0 or np.isinf(e):
            assert g == e or (np.isnan(g) and np.isnan(e)), (a, b, g, e)
            assert np.signbit(g) == np.signbit(e) or np.isnan(e), (a, b, g, e)
        else:
            assert abs(g - e) <= 2 * np.spacing(abs(e)), (a, b, g, e)


def test_atan2_raises_no_floating_point_flag():
    """Nothing a branch computes and discards overflows or divides by zero (inside a ufunc
    NumPy would warn of it): 0/0, inf/inf and huge ratios are kept out of the division."""

    def kernel(y, x):
        return scalar._atan2(y, x)

    ufunc = numba.vectorize(cache=False)(kernel)
    values = np.array([0.0, -0.0, np.inf, -np.inf, 1e-300, -1e300, 1e300, 2.0, 5e-324])
    y, x = (a.ravel() for a in np.meshgrid(values, values))
    with np.errstate(all="raise", under="ignore"):
        got = ufunc(y, x)
    np.testing.assert_allclose(got, np.arctan2(y, x), rtol=4e-16, atol=0)


def test_atan2_loop_calls_no_function_of_the_c_library(atan2_loop):
    x = np.linspace(0.5, 2.0, 8)
    atan2_loop(x, x, np.empty(8))
    ir = atan2_loop.inspect_llvm(atan2_loop.signatures[0])
    calls = set(re.findall(r"call [^@]*@([\w.]+)\(", ir))
    assert not {c for c in calls if re.fullmatch(r"(llvm\.)?(atan2?|pow)(\.f64)?", c)}, calls
