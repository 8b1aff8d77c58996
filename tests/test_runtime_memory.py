"""``_reused_empty``: the outputs of compiled loops are new arrays, as ``numpy.empty`` gives,
whose memory goes back to the runtime (not the system) once no array uses it, and is reused
only then: never while the array or a view of it lives, at most ``_REUSED_AT_MOST`` bytes
kept."""

from __future__ import annotations

import gc
import os
import threading
import time

import numpy as np
import pytest

from symdiff.runtime import memory
from symdiff.runtime.memory import _REUSED_AT_MOST, _REUSED_FROM, _reused_empty

BIG = _REUSED_FROM // 8 + 1000  # float64 elements of one array kept for reuse


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def _kept_bytes() -> int:
    kept = _reused_empty.__defaults__[0]
    return sum(block.nbytes for block in kept.get("free", []))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("total", [0, 1, 7, BIG])
def test_arrays_are_new_writeable_aligned_and_contiguous(total, dtype):
    arrays = _reused_empty(3, total, dtype)
    assert len(arrays) == 3
    for a in arrays:
        assert a.shape == (total,) and a.dtype == dtype
        assert a.flags.writeable and a.flags.aligned and a.flags.c_contiguous
        a[:] = 1.5
    assert not any(np.shares_memory(a, b) for k, a in enumerate(arrays) for b in arrays[k + 1:])


def test_memory_is_reused_once_no_array_uses_it():
    first = _reused_empty(1, BIG, np.float64)[0]
    address = _address(first)
    first[:] = 7.0
    del first
    gc.collect()
    second = _reused_empty(1, BIG, np.float64)[0]
    assert _address(second) == address  # the same memory, most recently kept first


def test_memory_a_view_still_uses_is_never_handed_out():
    first = _reused_empty(1, BIG, np.float64)[0]
    view = first[10:20]
    view[:] = 3.0
    del first
    gc.collect()
    others = _reused_empty(4, BIG, np.float64)
    for other in others:
        other[:] = -1.0
        assert not np.shares_memory(other, view)
    assert np.array_equal(view, np.full(10, 3.0))


def test_a_different_size_or_dtype_gets_its_own_memory():
    first = _reused_empty(1, BIG, np.float64)[0]
    address = _address(first)
    del first
    gc.collect()
    other = _reused_empty(1, BIG + 1, np.float64)[0]
    assert _address(other) != address and other.shape == (BIG + 1,)
    same_bytes = _reused_empty(1, 2 * BIG, np.float32)[0]  # the same bytes, reused as float32
    assert same_bytes.dtype == np.float32 and same_bytes.shape == (2 * BIG,)


def test_small_arrays_come_from_numpy():
    (small,) = _reused_empty(1, 10, np.float64)
    assert small.flags.owndata


def test_at_most_the_limit_is_kept():
    count = _REUSED_AT_MOST // (BIG * 8) + 3
    arrays = _reused_empty(count, BIG, np.float64)
    del arrays
    gc.collect()
    assert 0 < _kept_bytes() <= _REUSED_AT_MOST


def test_concurrent_calls_never_share_memory():
    """Threads that take and drop arrays at once never get memory another array uses."""
    failures: list[str] = []

    def work(seed: int) -> None:
        for k in range(30):
            arrays = _reused_empty(2, BIG, np.float64)
            for j, a in enumerate(arrays):
                a[:] = seed * 1000 + k * 10 + j
            for j, a in enumerate(arrays):
                if not np.all(a == seed * 1000 + k * 10 + j):
                    failures.append(f"thread {seed} call {k} output {j}")

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures


def test_the_module_keeps_no_other_state():
    assert [n for n in vars(memory) if not n.startswith("__")] == [
        "_np", "_REUSED_FROM", "_REUSED_AT_MOST", "_reused_empty"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX only")
def test_a_forked_child_starts_with_its_own_lock_and_memory():
    """A child forked while another thread holds the lock (taking memory) still gets arrays."""
    kept = _reused_empty.__defaults__[0]
    _reused_empty(1, BIG, np.float64)
    with kept["lock"]:  # as if another thread were inside _reused_empty at the fork
        pid = os.fork()
        if pid == 0:  # the child: must not wait for a lock no thread of it will release
            try:
                (a,) = _reused_empty(1, BIG, np.float64)
                a[:] = 2.0
                os._exit(0 if float(a.sum()) == 2.0 * BIG else 1)
            finally:
                os._exit(2)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.05)
    os.kill(pid, 9)
    pytest.fail("the forked child waited for the parent's lock")
