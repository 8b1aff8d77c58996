"""The disk cache under many processes: one build per key (the others wait and load it), a
stuck lock holder costs a short wait, the cap holds for all writers together, and neither
``kill -9`` during writes nor Ctrl-C during builds leaves a partial or broken entry."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import symdiff as sd
from symdiff import cache, request_index
from symdiff.cache import DiskStore, open_store
from symdiff.cache import disk as disk_module
from symdiff.cache.locks import FileLock
from symdiff.cache.usage import LOCK_PREFIX
from symdiff.options import Options
from tests.cache_workers.common import crash_text, key

from .conftest import ROOT, reset_memory

WORKERS = Path(__file__).resolve().parent / "cache_workers"
VERSION = f"v{cache.FORMAT_VERSION}"
MB = 1024 * 1024
posix = pytest.mark.skipif(os.name != "posix", reason="POSIX signals and flock")


def environment(cache_dir: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "SYMDIFF_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(ROOT)}
    env.pop("SYMDIFF_CACHE_MAX_MB", None)
    env.update(extra)
    return env


def leftovers(cache_dir: Path) -> list[Path]:
    """Temp files and build locks under the version directory."""
    top = cache_dir / VERSION
    return [p for p in top.rglob("*") if p.name.startswith((".tmp-", LOCK_PREFIX))]


#: The absolute error float64 allows in these gradients: ``x + k`` with k up to 10^4 is rounded
#: to half an ulp of 10^4 (9e-13), which sin's derivative times exp(y) carries into the result.
ARGUMENT = 1e-11


def new_expression() -> tuple[str, float, float]:
    """An expression no process has built yet, its gradient wrt x at (0.3, 0.7) from
    ``sympy.diff``, and the same wrt y."""
    k = 2 + uuid.uuid4().int % 10_000
    text = f"sin(x + {k})*exp(y) + log(1 + x**2*y**2)/{k} + atan(x - y)*cosh(y/3)"
    x, y = sp.symbols("x y")
    expr = sp.sympify(text)
    at = {x: sp.Rational(3, 10), y: sp.Rational(7, 10)}
    return text, float(sp.diff(expr, x).subs(at).evalf(30)), float(sp.diff(expr, y).subs(at)
                                                                    .evalf(30))


# -- one build per key -----------------------------------------------------------------------------
@posix
def test_one_process_builds_and_the_others_load_its_entry(cache_dir):
    """Six processes ask for the same new gradient at once: exactly one derives it (imports
    SymPy); the others wait for it and load its entry; every result is right."""
    text, dx, dy = new_expression()
    worker = textwrap.dedent(f"""
        import sys
        sys.stdin.readline()
        import symdiff as sd
        g = sd.grad({text!r}, wrt=["x", "y"])
        gx, gy = g(0.3, 0.7)
        print(repr(float(gx)), repr(float(gy)), "sympy" in sys.modules)
    """)
    processes = [subprocess.Popen([sys.executable, "-c", worker], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=environment(cache_dir)) for _ in range(6)]
    for process in processes:  # start together
        process.stdin.write("go\n")
        process.stdin.flush()
    outputs = [p.communicate(timeout=600) for p in processes]
    assert [p.returncode for p in processes] == [0] * 6, [err for _, err in outputs]
    derived = 0
    for out, _ in outputs:
        gx, gy, imported = out.split()
        assert float(gx) == pytest.approx(dx, rel=1e-12, abs=ARGUMENT)
        assert float(gy) == pytest.approx(dy, rel=1e-12, abs=ARGUMENT)
        derived += imported == "True"
    assert derived == 1
    assert leftovers(cache_dir) == []


def build_lock_path(cache_dir: Path, text: str, wrt: str) -> Path:
    raw = request_index.raw_key("grad", text, wrt, Options())
    return cache_dir / VERSION / "index" / raw[:2] / f"{LOCK_PREFIX}{raw}"


@posix
def test_a_stopped_builder_costs_a_short_wait(cache_dir, monkeypatch):
    """A process that holds the build lock of a request and is then stopped (Ctrl-Z, SIGSTOP):
    a process asking for the same request builds it itself once it has seen the holder stopped
    for ``STUCK_SECONDS``, instead of waiting ``BUILD_WAIT_SECONDS``."""
    text, dx, _ = new_expression()
    lock = build_lock_path(cache_dir, text, "x")
    holder = textwrap.dedent(f"""
        import sys, time
        from symdiff.cache import open_store
        with open_store().building("index", {lock.name[len(LOCK_PREFIX):]!r}):
            print("holding", flush=True)
            time.sleep(600)
    """)
    process = subprocess.Popen([sys.executable, "-c", holder], stdout=subprocess.PIPE,
                               text=True, env=environment(cache_dir))
    try:
        assert process.stdout.readline().strip() == "holding"
        assert lock.exists()
        process.send_signal(signal.SIGSTOP)
        monkeypatch.setattr(disk_module, "STUCK_SECONDS", 1.5)
        reset_memory()
        started = time.monotonic()
        g = sd.grad(text, wrt="x")
        waited = time.monotonic() - started
        assert float(g(0.3, 0.7)) == pytest.approx(dx, rel=1e-12, abs=ARGUMENT)
        assert waited < disk_module.BUILD_WAIT_SECONDS / 4
    finally:
        process.send_signal(signal.SIGCONT)
        process.kill()
        process.wait()


@posix
def test_a_busy_builder_is_waited_for(cache_dir):
    """While the holder is at work (not stopped), a waiter does not build, however long the
    build takes; once the holder lets go, the waiter gets the lock (and would find the
    entry)."""
    store = open_store()
    k = "ab" * 32
    waiter = textwrap.dedent(f"""
        import time
        from symdiff.cache import disk, open_store
        disk.STUCK_SECONDS = 1.5
        started = time.monotonic()
        with open_store().building("module", {k!r}) as got:
            print(got, round(time.monotonic() - started, 1), flush=True)
    """)
    with store.building("module", k) as got:
        assert got
        process = subprocess.Popen([sys.executable, "-c", waiter], stdout=subprocess.PIPE,
                                   text=True, env=environment(cache_dir))
        time.sleep(4.0)  # over its STUCK_SECONDS: a holder at work is waited for
        assert process.poll() is None
    out, _ = process.communicate(timeout=120)
    got, waited = out.split()
    assert got == "True" and float(waited) >= 3.0
    assert leftovers(cache_dir) == []


@posix
def test_a_stuck_cache_lock_costs_a_short_wait(cache_dir):
    """A process holding the cache's own lock (counting or evicting) and stopped there: puts
    go on without it after ``LOCK_WAIT_SECONDS`` each, and count later."""
    store = open_store()
    holder = FileLock(cache_dir / VERSION / ".lock")
    assert holder.acquire(1.0)
    try:
        started = time.monotonic()
        for i in range(3):
            store.put("module", cache.cache_key("stuck", str(i)), f"s = {i}\n")
        waited = time.monotonic() - started
        assert waited < 3 * disk_module.LOCK_WAIT_SECONDS + 5
        for i in range(3):
            assert store.get("module", cache.cache_key("stuck", str(i))) == f"s = {i}\n"
    finally:
        holder.release()
    assert store.prune() == 0
    assert store.info()["entries"] == 3


# -- the cap ---------------------------------------------------------------------------------------
@posix
def test_the_cap_holds_for_all_writers_together(cache_dir):
    """Eight processes write 30 entries of ~12 KB each (2.9 MB in all) under a 200 KB cap:
    what is left is within the cap, give or take one entry per writer in flight."""
    cap_mb = 0.2
    writer = textwrap.dedent("""
        import sys
        from symdiff.cache import cache_key, open_store
        store = open_store()
        sys.stdin.readline()
        for i in range(30):
            store.put("module", cache_key(sys.argv[1], str(i)), f"# {i}\\n" + "w" * 12_000)
    """)
    env = environment(cache_dir, SYMDIFF_CACHE_MAX_MB=str(cap_mb))
    processes = [subprocess.Popen([sys.executable, "-c", writer, str(n)], stdin=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, env=env) for n in range(8)]
    for process in processes:
        process.stdin.write("go\n")
        process.stdin.flush()
    errors = [p.communicate(timeout=300)[1] for p in processes]
    assert [p.returncode for p in processes] == [0] * 8, errors
    on_disk = sum(p.stat().st_size for p in (cache_dir / VERSION).rglob("*.py"))
    cap = int(cap_mb * MB)
    assert on_disk <= cap + 8 * 12_300, (on_disk, cap)
    assert leftovers(cache_dir) == []
    store = DiskStore(cache_dir, cap)
    assert store.prune() >= 0 and store.info()["bytes"] <= cap


# -- kill -9 during writes -------------------------------------------------------------------------
@posix
def test_writers_killed_at_random_points_leave_nothing_broken(cache_dir):
    """Ten rounds of five writers putting, reading and pruning the same keys, each killed
    with SIGKILL at a random moment (50 kills): every entry left loads and is right, and the
    next write removes every temp file and lock of the dead."""
    import random

    rng = random.Random(35)
    env = environment(cache_dir, SYMDIFF_CACHE_MAX_MB="3")
    kills = 0
    for round_ in range(10):
        processes = [subprocess.Popen([sys.executable, str(WORKERS / "crasher.py"),
                                       str(round_ * 10 + n)], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, env=env)
                     for n in range(5)]
        try:
            for process in processes:
                assert process.stdout.readline().strip() == "ready", process.stderr.read()
            for process in processes:
                time.sleep(rng.uniform(0.0, 0.08))
                process.send_signal(signal.SIGKILL)
        finally:
            for process in processes:
                process.kill()
                out, err = process.communicate()
                assert "wrong text" not in out, (out, err)
        kills += sum(p.returncode == -signal.SIGKILL for p in processes)
    assert kills == 50
    store = DiskStore(cache_dir, 3 * MB)
    loaded = 0
    for path in (cache_dir / VERSION).rglob("*.py"):
        k = next(i for i in range(6) if key(i, "crash") == path.stem)
        assert store.get(path.parent.parent.name, path.stem) == crash_text(k)
        loaded += 1
    assert loaded > 0
    store.put("module", key(1, "crash"), crash_text(1))  # the next cache operation
    assert leftovers(cache_dir) == []
    assert store.get("module", key(1, "crash")) == crash_text(1)


# -- Ctrl-C during builds --------------------------------------------------------------------------
@posix
def test_builds_interrupted_at_random_stages_leave_a_consistent_cache(cache_dir):
    """Ctrl-C (a real SIGINT from a timer) at a random moment of 24 builds: each raises
    KeyboardInterrupt promptly or finishes; afterwards every entry in the cache verifies, and
    every one of the expressions loads or rebuilds to the right gradient."""
    rounds = 24
    done = subprocess.run([sys.executable, str(WORKERS / "interrupted.py"), "1", str(rounds)],
                          capture_output=True, text=True, env=environment(cache_dir),
                          timeout=900, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["gc"]  # the collector, paused during builds, is on again
    outcomes = [r["outcome"] for r in report["rounds"]]
    assert "interrupted" in outcomes  # (the timer is due within one build's time)
    latencies = [r["latency"] for r in report["rounds"] if r["latency"] is not None]
    assert max(latencies) < 5.0, latencies  # promptly, even on a loaded machine
    store = DiskStore(cache_dir, cache.DEFAULT_MAX_MB * MB)
    for path in (cache_dir / VERSION).rglob("*.py"):  # no partial or broken entry
        assert store.get(path.parent.parent.name, path.stem) is not None, path
    store.prune()  # the next cache operation: no temp file or build lock was left held
    assert leftovers(cache_dir) == []
    sys.path.insert(0, str(WORKERS))
    try:
        from interrupted import expression
    finally:
        sys.path.remove(str(WORKERS))
    x, y = sp.symbols("x y")
    reset_memory()
    for r in report["rounds"]:
        text = expression(r["k"])
        gx, gy = sd.grad(text, wrt=["x", "y"])(0.5, 0.7)
        expr = sp.sympify(text)
        at = {x: sp.Rational(1, 2), y: sp.Rational(7, 10)}
        assert float(gx) == pytest.approx(float(sp.diff(expr, x).subs(at).evalf(30)), rel=1e-12,
                                        abs=ARGUMENT)
        assert float(gy) == pytest.approx(float(sp.diff(expr, y).subs(at).evalf(30)), rel=1e-12,
                                        abs=ARGUMENT)
    assert np.isfinite(report["span"])


def test_a_nested_request_for_a_key_being_built_does_not_wait_on_itself(cache_dir):
    store = open_store()
    k = "cd" * 32
    started = time.monotonic()
    with store.building("module", k) as outer, store.building("module", k) as inner:
        assert outer and inner
    assert time.monotonic() - started < disk_module.STUCK_SECONDS
    assert leftovers(cache_dir) == []
