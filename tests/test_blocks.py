"""Evaluation in cache-sized blocks: the same numbers as one full-length pass, every shape."""

from __future__ import annotations

import numpy as np
import pytest

import symdiff as sd
from symdiff.runtime import _in_blocks
from symdiff.verify import VerificationError, check_module

EXPRESSIONS = [
    "sin(x)*exp(y)/(1 + x**2)",
    "log(1 + exp(x*y))",
    "max(x, y, 0) + abs(x - y) + erf(x) + sigmoid(y)",
    "where(x > y, x**3, gamma(1 + y**2))",
]


def _in_pieces(fn, arrays, piece=1000, axis=-1):
    """``fn`` over slices short enough never to be blocked, joined along ``axis``."""
    n = arrays[0].shape[axis]
    parts = [
        fn(*[np.take(a, range(i, min(i + piece, n)), axis=axis) for a in arrays])
        for i in range(0, n, piece)
    ]
    if isinstance(parts[0], tuple):
        return tuple(np.concatenate(p, axis=axis) for p in zip(*parts, strict=True))
    return np.concatenate(parts, axis=axis)


def _assert_same(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _assert_same(x, y)
    else:
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)  # bit for bit, not approximately


@pytest.mark.parametrize("text", EXPRESSIONS)
@pytest.mark.parametrize("n", [32767, 32768, 40001, 100000, 300001])
def test_blocked_gradient_is_bitwise_the_one_pass_gradient(text, n):
    rng = np.random.default_rng(n)
    x, y = rng.normal(size=n), rng.normal(size=n)
    g = sd.value_and_grad(text, wrt=["x", "y"])
    value, grads = g(x, y)
    _assert_same(value, _in_pieces(lambda a, b: g(a, b)[0], [x, y]))
    _assert_same(grads, _in_pieces(lambda a, b: g(a, b)[1], [x, y]))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_hessian_and_jacobian_blocks_keep_leading_axes_and_dtype(dtype):
    rng = np.random.default_rng(1)
    x = rng.normal(size=50000).astype(dtype)
    y = rng.normal(size=50000).astype(dtype)
    h = sd.hessian("sin(x)*exp(y)/(1 + x**2)", wrt=["x", "y"])
    j = sd.jacobian(["x*y", "sin(x) - y"], wrt=["x", "y"])
    for fn in (h, j):
        out = fn(x, y)
        assert out.shape == (2, 2, 50000) and out.dtype == dtype
        _assert_same(out, _in_pieces(fn, [x, y]))


def test_broadcast_inputs_are_blocked_without_copies_and_agree():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(300, 1))
    y = rng.normal(size=(1, 400))
    g = sd.grad("x**2*y + sin(x*y)", wrt=["x", "y"])
    dx, dy = g(x, y)
    assert dx.shape == dy.shape == (300, 400)
    ref = [g(x[i : i + 10], y) for i in range(0, 300, 10)]
    np.testing.assert_array_equal(dx, np.concatenate([r[0] for r in ref]))
    np.testing.assert_array_equal(dy, np.concatenate([r[1] for r in ref]))
    assert g(2.0, y[0, :5])[0].shape == (5,)  # a scalar with a short vector: one pass


def test_hvp_direction_is_blocked_with_the_variables():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(2, 60000))
    v = rng.normal(size=(2, 60000))
    hv = sd.hvp("x**3*y + exp(x - y)", wrt=["x", "y"])
    out = hv(x, y, v)
    ref = np.concatenate(
        [hv(x[i : i + 999], y[i : i + 999], v[:, i : i + 999]) for i in range(0, 60000, 999)],
        axis=1,
    )
    np.testing.assert_array_equal(out, ref)


@pytest.mark.parametrize("rows, block", [(10000, 16384), (40000, 65536)])
def test_in_blocks_covers_every_row_once_with_cache_sized_blocks(rows, block):
    """Blocks of 16384 elements, and of 65536 from 262144 elements on (fewer Python calls and,
    on threads, GIL handovers per element; still several blocks per thread)."""
    seen = []

    def formulas(a, b, _out=(None, None)):
        seen.append(a.shape)
        assert b.shape == (1, 7)  # broadcast along the blocked axis: never cut
        return a * b, (np.add(a, b, out=_out[1]),)

    a = np.arange(rows * 7.0).reshape(rows, 7)
    b = np.ones((1, 7))
    out, (pair,) = _in_blocks(formulas, [a, b], (rows, 7), np.float64)
    assert len(seen) > 4 and all(s[1:] == (7,) for s in seen)
    assert sum(s[0] for s in seen) == rows
    assert max(s[0] for s in seen) == block // 7
    np.testing.assert_array_equal(out, a * b)
    np.testing.assert_array_equal(pair, a + b)


def test_in_blocks_fills_an_array_result_block_by_block():
    """With ``leading``, the formulas fill the rows of one array (zeros first) they are given."""
    def formulas(a, _out):
        _out[0] = np.multiply(a, 2.0, out=_out[0])
        _out[2] = -a
        return _out

    a = np.linspace(0, 1, 100_000)
    out = _in_blocks(formulas, [a], a.shape, np.float64, 2, (3,))
    np.testing.assert_array_equal(out, np.stack([2 * a, np.zeros_like(a), -a]))


@pytest.mark.parametrize("shape", [(), (0,), (3,), (3, 20000), (32767,)])
def test_in_blocks_computes_short_or_flat_arrays_in_one_go(shape):
    calls = []

    def formulas(a, _out=(None,)):
        assert _out == (None,)
        calls.append(a.shape)
        return a + 1.0

    a = np.zeros(shape)
    np.testing.assert_array_equal(_in_blocks(formulas, [a], shape, np.float64), a + 1.0)
    assert calls == [shape]


VALID = (
    "def _formulas(x, _out=(None,)):\n    _t0 = _np.sin(x)\n"
    "    _t1 = _np.multiply(_t0, x, out=_out[0])\n"
    "    return _t1\n"
)


def _module(body: str) -> str:
    return (
        "import numpy as _np\nfrom symdiff.runtime import _elementwise\n\n\n"
        "def f(x, *, threads=None):\n"
        "    return _elementwise(_formulas, (x,), threads=threads)\n\n\n" + body
    )


def test_verify_accepts_the_formulas_function():
    check_module(_module(VALID))
    check_module(_module(VALID.replace("_np.multiply(_t0, x, out=_out[0])", "_t0*x")))


@pytest.mark.parametrize(
    "body",
    [
        "def _formulas(x, _out=(None,)):\n    return open('/etc/passwd')\n",
        "def _formulas(x, *rest):\n    return x\n",
        "def _formulas(x, _out=(None,)):\n    import os\n    return x\n",
        "def _formulas(x, _np):\n    return x\n",
        "def _formulas(x, _out=print):\n    return x\n",
        "def _formulas(x, _out=(None,)):\n    return x if _out is None else x\n",
        "def _formulas(x, _out=(None,)):\n    return _np.multiply(x, x, out=_t0)\n",
        "def _formulas(x, _out=(None,)):\n    return x\n\n\n"
        "def _formulas(x, _out=(None,)):\n    return x\n",
    ],
)
def test_verify_refuses_a_tampered_formulas_function(body):
    with pytest.raises(VerificationError):
        check_module(_module(body))


def test_generated_module_has_the_formulas_function_and_stays_standalone(tmp_path):
    g = sd.grad("sin(x)*y", wrt=["x", "y"])
    assert "def _formulas(x, y, _out=(None, None)):" in g.source
    assert "return _elementwise(_formulas, (x, y), threads=threads)" in g.source
    path = tmp_path / "grad_standalone.py"
    g.save(path)
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    x = np.linspace(0, 1, 50000)
    np.testing.assert_array_equal(namespace["grad_f"](x, 2.0)[0], g(x, 2.0)[0])


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_a_single_point_gives_the_numbers_of_an_array_of_points(text):
    # At one point the formulas run on NumPy scalars (quicker than 0-d arrays); their power
    # function may round the last bit differently from the array loop's (x**3), nothing more.
    rng = np.random.default_rng(8)
    xs, ys = rng.normal(size=20), rng.normal(size=20)
    g = sd.value_and_grad(text, wrt=["x", "y"])
    value, (dx, dy) = g(xs, ys)
    for i in range(20):
        v, (a, b) = g(float(xs[i]), float(ys[i]))
        assert v.shape == a.shape == b.shape == () and a.dtype == np.float64
        np.testing.assert_allclose([v, a, b], [value[i], dx[i], dy[i]], rtol=4e-16, atol=0)


def test_the_block_loop_makes_few_python_calls_per_block():
    """Per block, the loop calls the formulas and one function of its own, and no other
    Python function (slicing and bookkeeping per block cost more than the cheapest
    gradients' blocks: an op count, not a timing)."""
    import sys

    def formulas(a, b, _out=(None,)):
        return (np.add(a, b, out=_out[0]),)

    a, b = np.ones(61 * 65536 + 100), np.ones(1)
    calls = []

    def profile(frame, event, arg):
        if event == "call":
            calls.append(frame.f_code.co_name)

    sys.setprofile(profile)
    try:
        (out,) = _in_blocks(formulas, (a, b), a.shape, a.dtype, 1)
    finally:
        sys.setprofile(None)
    np.testing.assert_array_equal(out, a + 1.0)
    blocks = 62
    assert calls.count("formulas") == blocks
    assert len(calls) <= 2 * blocks + 25, sorted(set(calls))  # (the old loop: 4 per block)
