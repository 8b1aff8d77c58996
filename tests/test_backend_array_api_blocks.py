"""``backend="array_api"`` on long arrays: the formulas run in cache-sized blocks on NumPy and
array-api-strict arrays (``_xp_in_blocks``), in one call on other namespaces, and the numbers are
those of one pass of the same module, bit for bit, whatever the shapes, dtypes and outputs."""

from __future__ import annotations

import numpy as np
import pytest

import symdiff as sd
from symdiff.runtime import _xp_in_blocks

xp = pytest.importorskip("array_api_strict")
import array_api_compat.numpy as xp_numpy  # noqa: E402 (after the skip: array_api_strict pulls it)

EXPR = "x**2*sin(y) + log1p(exp(x*y)) + sqrt(1 + x**2)"


def _pieces(fn, arrays, piece=1000):
    """``fn`` over row slices short enough never to be blocked, joined along the first axis."""
    n = arrays[0].shape[0]
    parts = [fn(*[a[i : i + piece] for a in arrays]) for i in range(0, n, piece)]
    return tuple(np.concatenate(p) for p in zip(*parts, strict=True))


def _same(a, b):
    assert len(a) == len(b)
    for u, v in zip(a, b, strict=True):
        u = np.from_dlpack(u)
        assert u.shape == v.shape and u.dtype == v.dtype
        np.testing.assert_array_equal(u, v)  # bit for bit


@pytest.mark.parametrize("n", [32768, 50001])
def test_blocked_numpy_and_strict_arrays_give_the_one_pass_numbers(n):
    rng = np.random.default_rng(n)
    x, y = rng.normal(size=n), rng.normal(size=n)
    g = sd.grad(EXPR, backend="array_api")
    assert "return _xp_elementwise(_formulas, (x, y))" in g.source
    reference = _pieces(g, [x, y])
    _same(g(x, y), reference)
    got = g(xp.asarray(x), xp.asarray(y))  # array-api-strict: standard slicing and assignment
    assert all(type(a) is type(xp.asarray(1.0)) for a in got)
    _same(got, reference)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_hessians_keep_their_leading_axes_dtype_and_broadcasting(dtype):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(300, 1)).astype(dtype)
    y = rng.normal(size=(1, 400)).astype(dtype)
    h = sd.hessian("sin(x)*exp(y)/(1 + x**2)", wrt=["x", "y"], backend="array_api")
    out = h(x, y)
    assert out.shape == (2, 2, 300, 400) and out.dtype == dtype
    rows = [h(x[i : i + 10], y) for i in range(0, 300, 10)]
    np.testing.assert_array_equal(out, np.concatenate(rows, axis=2))
    np.testing.assert_array_equal(
        out, sd.hessian("sin(x)*exp(y)/(1 + x**2)", wrt=["x", "y"])(x, y).astype(dtype))
    strict = h(xp.asarray(x), xp.asarray(y))  # (every axis indexed, as the standard wants)
    np.testing.assert_array_equal(np.from_dlpack(strict), out)


def test_blocks_only_for_numpy_and_strict_namespaces():
    calls = []

    def formulas(part, shape):
        (a,) = part
        calls.append(shape)
        return a * 2.0, (a + 1.0,)

    a = np.arange(70000.0).reshape(10000, 7)
    doubled, (plus,) = _xp_in_blocks(formulas, [a], a.shape, xp_numpy)
    assert len(calls) > 4 and sum(s[0] for s in calls) == 10000
    assert max(s[0] for s in calls) * 7 <= 16384
    np.testing.assert_array_equal(doubled, a * 2.0)
    np.testing.assert_array_equal(plus, a + 1.0)
    da = pytest.importorskip("dask.array")
    import array_api_compat.dask.array as xp_dask

    calls.clear()
    lazy = da.from_array(a, chunks=(2500, 7))
    doubled, (plus,) = _xp_in_blocks(formulas, [lazy], a.shape, xp_dask)
    assert calls == [a.shape]  # one call: Dask's arrays are lazy and in chunks already
    np.testing.assert_array_equal(doubled.compute(), a * 2.0)
