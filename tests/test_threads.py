"""Blocks on threads and outputs written into their blocks (``out=``): the same numbers bit for
bit whatever the number of threads, fresh output arrays, a saved module that runs alone."""

from __future__ import annotations

import pickle
import subprocess
import sys
import threading
import time
from typing import ClassVar

import numpy as np
import pytest

import symdiff as sd
from symdiff.errors import SymdiffError
from symdiff.runtime import blocks

#: Long enough for several blocks (the default uses threads only from 524,288 elements).
N = 200_003

TEXTS = [
    "log(1 + exp(-y*(w*x + b)))",
    "v*tanh(w*x + b)",
    "-0.5*((x - mu)/sigma)**2 - log(sigma) - 0.5*log(2*pi)",
    "where(x > y, x**3, sigmoid(y)) + abs(x - y)",
]


def _arrays(text, n, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    names = sorted(sd.grad(text).args)
    values = {name: rng.uniform(0.5, 2.0, n).astype(dtype) for name in names}
    return values


def _pieces(fn, arrays, piece=4096):
    """``fn`` over slices short enough to be computed in one go, joined along the last axis."""
    n = next(iter(arrays.values())).shape[-1]
    parts = [fn(**{k: v[..., i : i + piece] for k, v in arrays.items()})
             for i in range(0, n, piece)]
    return _join(parts)


def _join(parts):
    if isinstance(parts[0], tuple):
        return tuple(_join(list(p)) for p in zip(*parts, strict=True))
    return np.concatenate(parts, axis=-1)


def _same(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    else:
        assert a.shape == b.shape and a.dtype == b.dtype
        assert np.array_equal(a, b, equal_nan=True)  # bit for bit, not approximately


def _leaves(result):
    if isinstance(result, tuple):
        return [leaf for item in result for leaf in _leaves(item)]
    return [result]


@pytest.mark.parametrize("text", TEXTS)
def test_every_number_of_threads_gives_the_one_thread_numbers_bit_for_bit(text):
    arrays = _arrays(text, N)
    g = sd.value_and_grad(text)
    one = g(**arrays, threads=1)
    for threads in (2, 3, None):
        _same(g(**arrays, threads=threads), one)
    _same(one, _pieces(g, arrays))  # and those of arrays short enough for one block


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_hessians_jacobians_and_hvps_on_threads_are_bitwise_one_thread(dtype):
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(2, N)).astype(dtype)
    v = rng.normal(size=(2, N)).astype(dtype)
    functions = [
        (sd.hessian("sin(x)*exp(y)/(1 + x**2)", wrt=["x", "y"]), (x, y)),
        (sd.jacobian(["x*y", "sin(x) - y"], wrt=["x", "y"]), (x, y)),
        (sd.hvp("x**3*y + exp(x - y)", wrt=["x", "y"]), (x, y, v)),
    ]
    for fn, args in functions:
        one = fn(*args, threads=1)
        assert one.dtype == dtype and one.shape in ((2, 2, N), (2, N))
        _same(fn(*args, threads=2), one)
        keys = ["x", "y", "_v"][: len(args)]
        _same(one, _pieces(fn, dict(zip(keys, args, strict=True))))


@pytest.mark.parametrize("shape, rows_per_piece", [((600_001,), None), ((301, 1000), 20),
                                                   ((5, 70_000), 1)])
def test_long_arrays_on_threads_are_bitwise_one_thread(shape, rows_per_piece):
    """Blocks of 65536 elements (from 262144 on) and a threaded call's short lead block, in
    rows of one element or of many: the numbers of one thread and of unblocked pieces."""
    rng = np.random.default_rng(7)
    x, y = rng.normal(size=(2, *shape))
    g = sd.value_and_grad("sin(x)*exp(y)/(1 + x**2) + where(x > y, x**3, sigmoid(y))")
    one = g(x, y, threads=1)
    for threads in (2, 3):
        _same(g(x, y, threads=threads), one)
    if rows_per_piece is None:
        pieces = _pieces(g, {"x": x, "y": y})
    else:
        parts = [g(x[i : i + rows_per_piece], y[i : i + rows_per_piece])
                 for i in range(0, shape[0], rows_per_piece)]
        pieces = (np.concatenate([p[0] for p in parts]),
                  _join_rows([p[1] for p in parts]))
    _same(one, pieces)


def test_outputs_are_fresh_arrays_never_each_other_nor_an_input():
    # d/dx and d/dy of x*y + x + y share nothing but are easily the same temporary; d/dz of
    # z is the input itself
    rng = np.random.default_rng(2)
    x, y, z = rng.normal(size=(3, N))
    for fn in (sd.grad("x*y + x*y + x + y + z"), sd.value_and_grad("(x + y)*(x - y) + z")):
        out = _leaves(fn(x, y, z, threads=2))
        for i, a in enumerate(out):
            assert a.flags.writeable and a.flags.c_contiguous
            assert not any(np.shares_memory(a, b) for b in (x, y, z)), i
            assert not any(np.shares_memory(a, b) for b in out[i + 1 :]), i


def test_an_input_passed_twice_and_outputs_that_are_inputs():
    rng = np.random.default_rng(3)
    x = rng.normal(size=N)
    keep = x.copy()
    g = sd.grad("x*y + sin(x)*y + z", wrt=["x", "y", "z"])
    dx, dy, dz = g(x, x, x, threads=2)
    assert np.array_equal(x, keep)  # never written
    np.testing.assert_allclose(dx, x + np.cos(x) * x, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(dy, x + np.sin(x), rtol=1e-13, atol=1e-14)
    assert np.array_equal(dz, np.ones(N))
    assert not np.shares_memory(dx, dy) and not np.shares_memory(dy, x)
    _same((dx, dy, dz), _pieces(g, {"x": x, "y": x, "z": x}))


def test_float32_non_contiguous_and_broadcast_inputs():
    rng = np.random.default_rng(4)
    g = sd.value_and_grad("log(1 + exp(-y*(w*x + b)))")
    base = rng.normal(size=(2 * N,)).astype(np.float32)
    w = base[::2]  # a strided view
    b = np.float32(0.25)  # a scalar
    x = np.asfortranarray(rng.normal(size=(N, 1)).astype(np.float32))[:, 0]  # another view
    y = np.where(rng.random(N) < 0.5, -1.0, 1.0).astype(np.float32)
    value, grads = g(b, w, x, y, threads=2)
    assert value.dtype == np.float32 and all(d.dtype == np.float32 for d in grads)
    assert value.shape == (N,) and all(d.shape == (N,) for d in grads)
    one = g(b, w, x, y, threads=1)
    _same((value, grads), one)
    contiguous = g(b, np.ascontiguousarray(w), np.ascontiguousarray(x), y, threads=1)
    _same(one, contiguous)
    z = -y * (w * x + b)
    s = 1 / (1 + np.exp(-z))
    np.testing.assert_allclose(grads[0], -y * s, rtol=2e-6, atol=1e-6)  # d/db
    # arguments of different shapes broadcast to (rows, columns); the constant partial too
    rows = rng.normal(size=(600, 1))
    cols = rng.normal(size=(1, 500))
    h = sd.grad("x**2*y + sin(x*y) + 3*z", wrt=["x", "y", "z"])
    dx, dy, dz = h(rows, cols, 2.0, threads=2)
    assert dx.shape == dy.shape == dz.shape == (600, 500)
    assert np.array_equal(dz, np.full((600, 500), 3.0))
    _same((dx, dy, dz), h(rows, cols, 2.0, threads=1))
    _same((dx, dy, dz), _join_rows([h(rows[i : i + 7], cols, 2.0) for i in range(0, 600, 7)]))


def _join_rows(parts):
    return tuple(np.concatenate(p, axis=0) for p in zip(*parts, strict=True))


class _CountingThread(threading.Thread):
    started: ClassVar[list[int]] = []

    def start(self):
        _CountingThread.started.append(1)
        super().start()


@pytest.fixture
def count_threads(monkeypatch):
    _CountingThread.started = []
    monkeypatch.setattr(threading, "Thread", _CountingThread)
    return _CountingThread.started


def _fresh_pool(fn):
    """Forget the worker threads of the runtime (``_on_threads``' pool), as in a process
    just started; the old workers end on their own."""
    from symdiff.runtime import _on_threads

    _on_threads.__defaults__[-1].clear()


def test_one_thread_starts_no_thread_and_the_workers_are_kept(count_threads, monkeypatch):
    g = sd.grad("sin(x)*y", wrt=["x", "y"])
    count_threads.clear()  # (a build runs on a thread of its own: symdiff.stacks)
    _fresh_pool(g)
    x = np.linspace(0, 1, N)
    g(x, 2.0, threads=1)
    g.with_threads(1)(x, 2.0)
    g(x, 2.0)  # under 524,288 elements: the default is one thread
    g(1.0, 2.0, threads=4)  # one point
    g(x[:30000], 2.0, threads=4)  # computed in one go
    monkeypatch.setattr(blocks, "_free_threads", lambda: 8)  # 8 free cores
    g(np.linspace(0, 1, 524287), 2.0)
    assert count_threads == []
    g(x, 2.0, threads=3)  # two worker threads besides this one
    assert len(count_threads) == 2
    g(x, 2.0, threads=3)  # the same two again
    g(x, 2.0, threads=2)
    assert len(count_threads) == 2
    g(np.linspace(0, 1, 524288), 2.0)  # the default: one per free core, so 5 more
    assert len(count_threads) == 7


def test_workers_are_daemons_that_end_when_idle():
    g = sd.grad("cos(x)*y", wrt=["x", "y"])
    _fresh_pool(g)
    before = set(threading.enumerate())
    g(np.linspace(0, 1, N), 2.0, threads=3)
    workers = set(threading.enumerate()) - before
    assert len(workers) == 2 and all(w.daemon for w in workers)
    for worker in workers:  # idle for 2 s, they end
        worker.join(timeout=30)
        assert not worker.is_alive()
    _same(g(np.linspace(0, 1, N), 2.0, threads=3), g(np.linspace(0, 1, N), 2.0, threads=1))


def test_calls_from_several_threads_at_once_share_the_workers():
    g = sd.value_and_grad("log(1 + exp(-y*(w*x + b)))")
    arrays = [_arrays("log(1 + exp(-y*(w*x + b)))", N, seed=s) for s in range(4)]
    expected = [g(**a, threads=1) for a in arrays]
    got: dict[int, object] = {}

    def run(i):
        for _ in range(3):
            got[i] = g(**arrays[i], threads=2)

    callers = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()
    for i in range(4):
        _same(got[i], expected[i])


@pytest.mark.skipif(not hasattr(__import__("os"), "fork"), reason="needs os.fork")
def test_a_forked_child_makes_its_own_workers(tmp_path):
    # the parent's workers do not exist in a child: it starts its own instead of waiting for
    # them (a hang would be caught by the timeout)
    code = (
        "import os, sys, numpy as np, symdiff as sd\n"
        "g = sd.grad('exp(x)*sin(y)', wrt=['x', 'y'])\n"
        "x = np.linspace(0, 1, 200003)\n"
        "one = g(x, x, threads=1)\n"
        "assert all(np.array_equal(a, b) for a, b in zip(g(x, x, threads=2), one))\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    ok = all(np.array_equal(a, b) for a, b in zip(g(x, x, threads=2), one))\n"
        "    os._exit(0 if ok else 3)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "sys.exit(os.waitstatus_to_exitcode(status))\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120,
                   env={**__import__("os").environ, "SYMDIFF_DISABLE_CACHE": "1"})


def test_threads_option_of_builders_calls_and_functions():
    g = sd.grad("x*y**2", wrt=["x", "y"], threads=2)
    assert g.threads == 2 and sd.grad("x*y**2", wrt=["x", "y"]).threads is None
    assert g.with_threads(None).threads is None and g.with_threads(2) is g
    assert pickle.loads(pickle.dumps(g)).threads == 2
    assert "threads" not in str(g.__signature__)  # the arguments as they were
    decorated = sd.grad(wrt="x", threads=1)(lambda x, k=2.0: k * x**2)
    assert decorated.threads == 1 and decorated(3.0) == 12.0
    assert decorated(np.full(N, 3.0), threads=2)[5] == 12.0  # through the binding wrapper
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(SymdiffError, match="threads"):
            g.with_threads(bad)
        with pytest.raises(SymdiffError, match="threads"):
            sd.grad("x*y", threads=bad)
    with pytest.raises(TypeError, match="threads"):
        g(np.ones(N), 1.0, threads=0)


def test_a_variable_named_threads_keeps_its_name_and_the_keyword_becomes_private():
    g = sd.grad("threads*x**2", wrt=["threads", "x"])
    assert "def grad_f(threads, x, *, _threads=None):" in g.source
    x = np.linspace(0, 1, N)
    dt, dx = g(threads=2.0, x=x)
    assert np.array_equal(dx, 2 * 2.0 * x) and dt.shape == (N,)
    _same(g(2.0, x, _threads=2), g.with_threads(1)(2.0, x))


def test_errors_and_errstate_reach_the_threads():
    g = sd.grad("log(x)", wrt="x")
    x = np.ones(N)
    x[-5] = 0.0  # in one of the last blocks, computed on a helper thread or this one
    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        g(x, threads=2)
    with np.errstate(divide="ignore"):
        assert np.isinf(g(x, threads=2)[-5])


def test_an_error_on_a_worker_thread_is_raised_in_the_caller_and_all_stop():
    from symdiff.runtime import _in_blocks

    caller = threading.current_thread()
    seen = []

    def formulas(a, _out=(None,)):
        here = threading.current_thread()
        seen.append((here is caller, np.geterr()["divide"]))
        if here is not caller:
            raise KeyError("on a worker")
        time.sleep(0.001)  # the caller is slow: the worker takes one of the first blocks
        return a * 2.0

    a = np.ones(40 * 16384)
    for _ in range(5):  # until a worker takes a block (the caller may take them all)
        seen.clear()
        with np.errstate(divide="raise"):
            try:
                _in_blocks(formulas, (a,), a.shape, a.dtype, 2)
            except KeyError as error:
                assert "on a worker" in str(error)
                break
    else:
        pytest.fail("no block ran on a worker")
    assert {d for _, d in seen} == {"raise"}  # errstate on every thread, the workers too
    assert any(not mine for mine, _ in seen) and len(seen) < 40  # then all stopped
    ok = _in_blocks(lambda a, _out=(None,): a * 2.0, (a,), a.shape, a.dtype, 2)
    assert np.array_equal(ok, a * 2.0)  # the workers still serve


def test_a_saved_module_runs_on_threads_standalone(tmp_path):
    g = sd.value_and_grad("log(1 + exp(-y*(w*x + b)))")
    arrays = _arrays("log(1 + exp(-y*(w*x + b)))", N)
    path = g.save(tmp_path / "logistic.py")
    np.savez(tmp_path / "inputs.npz", **arrays)
    code = (
        "import sys, numpy as np; sys.path.insert(0, sys.argv[1]); import logistic; "
        "a = dict(np.load(sys.argv[1] + '/inputs.npz')); "
        "v, (g0, g1, g2, g3) = logistic.value_and_grad_f(**a, threads=2); "
        "np.savez(sys.argv[1] + '/out.npz', v, g0, g1, g2, g3); "
        "assert not [m for m in sys.modules if m.startswith(('symdiff', 'sympy'))]"
    )
    # timed: the workers are daemons that never keep the interpreter from exiting
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True, cwd=tmp_path,
                   timeout=120)
    assert path.exists()
    saved = np.load(tmp_path / "out.npz")
    value, grads = g(**arrays, threads=1)
    for ours, theirs in zip([value, *grads], [saved[f"arr_{i}"] for i in range(5)], strict=True):
        assert np.array_equal(ours, theirs)


@pytest.mark.parametrize("n", [1, 1000, 40_001, 600_001])
def test_hessian_and_jacobian_entries_that_are_zero_stay_zero(n):
    """Entries that are 0 are never written: the arrays start as zeros, at a point, unblocked,
    in blocks and on threads (the full arrays of the blocks too)."""
    import sympy as sp

    text = "x**2*y + z**3 + sin(w)"  # zero cross terms: (x, z), (x, w), (y, y), (y, z), ...
    names = ["w", "x", "y", "z"]
    rng = np.random.default_rng(n)
    values = {k: rng.uniform(-1, 1, n) for k in names}
    h = sd.hessian(text, wrt=names)
    j = sd.jacobian(["x*y", "z**2", "sin(w) + x"], wrt=names)
    symbols = sp.symbols(names)
    expr = sp.sympify(text)
    for fn, exprs in ((h, None), (j, ["x*y", "z**2", "sin(w) + x"])):
        rows = ([[sp.diff(expr, a, b) for b in symbols] for a in symbols] if exprs is None
                else [[sp.diff(sp.sympify(e), b) for b in symbols] for e in exprs])
        reference = np.array([[sp.lambdify(symbols, entry, "numpy")(*values.values())
                               * np.ones(n) for entry in row] for row in rows])
        one = fn(**values, threads=1)
        np.testing.assert_allclose(one, reference, rtol=1e-12, atol=1e-12)
        assert (one[reference == 0] == 0).all()
        _same(fn(**values, threads=2), one)
        point = fn(**{k: float(v[0]) for k, v in values.items()})
        np.testing.assert_allclose(point, reference[..., 0], rtol=1e-12, atol=1e-12)
