"""Elementwise gradients on threads: symdiff with threads = 1, 2 vs hand-written NumPy (one
thread) and JAX ``jit`` (its default threads), over 1e6 and 1e7 points.

Run: ``OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_threads.py [--points 1e6,1e7]
[--repeat R] [--threads 1,2] [--base PATH] [--no-jax] [--busy [FRACTION]]`` (JAX, where installed:
``pip install ".[bench]"``; set ``OMP_NUM_THREADS``/``OPENBLAS_NUM_THREADS`` only for NumPy: XLA
keeps its own threads). ``--base`` names another checkout's root (main's, say): its symdiff
builds the same gradients, timed as extra columns ("base t=N") interleaved with this checkout's
in every round: an A/B in one process (see ``bench_ab.py``).

The column "default" is symdiff with ``threads=None`` (the number of threads chosen from the
cores other processes leave free), and "def/t=1" its time over that of ``threads=1``: the
default should never lose to one thread. ``--busy`` starts a busy-looping process for every
core but one (``--busy 0.5``: each busy half of the time, in 10 ms periods) for the whole run:
the machine of a user with other work on every other core.

The problems are those of ``bench_elementwise.py`` (the expressions, the hand-written gradients
and the arrays); every peer is timed in this one process, the peers one after another in each
round, and the table gives median times and ratios to the hand-written NumPy gradient on one
thread (lower is better; the goal on a 2-core machine is a geometric mean <= 0.5 with 2
threads). The machine's load average is printed: threads cannot help on cores other work holds;
the last column ("others") is the CPU other processes used while a problem was timed, in cores
(from ``/proc/stat``, Linux only): on this 2-core machine, thread timings mean little above 0.2.
Before timing, every peer's result is compared with the hand-written one, and symdiff's result
on each number of threads with its result on one thread, bit for bit.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import sympy as sp

import symdiff as sd
from symdiff.runtime import blocks

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ab import load_base
from bench_elementwise import CASES, round_times


def _jax_gradient(text: str, wrt: tuple[str, ...], names: list[str]) -> Callable | None:
    """``jax.jit`` of the gradient of the sum (the elementwise gradient), or None without JAX."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    symbols = {n: sp.Symbol(n, real=True) for n in names}
    f = sp.lambdify([symbols[n] for n in names], sp.sympify(text, locals=symbols), modules="jax")
    positions = tuple(names.index(n) for n in wrt)
    grad = jax.jit(jax.grad(lambda *a: jnp.sum(f(*a)), argnums=positions))

    def run(**arrays):
        out = grad(*(arrays[n] for n in names))
        return tuple(o.block_until_ready() for o in out)

    return run


def _count_choices() -> dict[int, int]:
    """How often the default (``threads=None``) chose each number of threads, counted from now
    on (the runtime's ``_free_threads`` wrapped; only the default calls it)."""
    scope = vars(blocks)
    choose = scope["_free_threads"]
    choose = getattr(choose, "__wrapped__", choose)
    seen: dict[int, int] = {}

    def counting() -> int:
        threads = choose()
        seen[threads] = seen.get(threads, 0) + 1
        return threads

    counting.__wrapped__ = choose  # type: ignore[attr-defined]
    scope["_free_threads"] = counting
    return seen


def _others_busy() -> float | None:
    """CPU seconds other processes have used so far (all cores), or None off Linux."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except OSError:
        return None
    tick = os.sysconf("SC_CLK_TCK")
    mine = os.times()
    return (sum(fields[:3]) + sum(fields[5:8])) / tick - (mine.user + mine.system)


#: A process busy ``fraction`` of every 10 ms (a loop on the CPU, then a sleep).
_BUSY = """
import sys, time
busy = 0.01 * float(sys.argv[1])
while True:
    start = time.perf_counter()
    while time.perf_counter() - start < busy:
        pass
    if busy < 0.01:
        time.sleep(0.01 - busy)
"""


def _start_busy(count: int, fraction: float) -> list[subprocess.Popen]:
    """``count`` processes each busy ``fraction`` of the time, until :func:`_stop_busy`."""
    return [subprocess.Popen([sys.executable, "-c", _BUSY, str(fraction)])
            for _ in range(count)]


def _stop_busy(processes: list[subprocess.Popen]) -> None:
    for process in processes:
        process.send_signal(signal.SIGTERM)
    for process in processes:
        process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--points", default="1e6,1e7")
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--only", default="", help="run only the cases containing this text")
    parser.add_argument("--base", default="", help="another checkout's root")
    parser.add_argument("--no-jax", action="store_true", help="leave JAX out")
    parser.add_argument("--busy", nargs="?", type=float, const=1.0, default=0.0,
                        help="keep every core but one busy (this fraction of the time)")
    options = parser.parse_args()
    busy = _start_busy((os.cpu_count() or 1) - 1, options.busy) if options.busy else []
    try:
        _run(options)
    finally:
        _stop_busy(busy)


def _run(options: argparse.Namespace) -> None:
    base = load_base(Path(options.base).resolve()) if options.base else None
    counts = [int(t) for t in options.threads.split(",")]
    sizes = [int(float(p)) for p in options.points.split(",")]
    if options.busy:
        print(f"busy processes: {(os.cpu_count() or 1) - 1}, each busy {options.busy:.0%} "
              "of the time")
    print(f"cores: {os.cpu_count()}; load average at start: "
          f"{', '.join(f'{v:.2f}' for v in os.getloadavg())}")
    means: dict[tuple[int, str], list[float]] = {}
    for points in sizes:
        print(f"\ngradient over {points:.0e} points, median of {options.repeat} rounds; "
              "ratios to hand-written NumPy on one thread")
        columns = ["default", "def/t=1"] + [f"threads={t}" for t in counts]
        columns += [f"base t={t}" for t in counts] if base else []
        columns += [] if options.no_jax else ["jax jit"]
        header = f"{'expression':54} {'hand ms':>8} " + " ".join(f"{c:>10}" for c in columns)
        header += f" {'others':>7}  default's threads:calls"
        print(header)
        print("-" * len(header))
        rng = np.random.default_rng(0)
        for text, wrt, hand, make in CASES:
            if options.only not in text:
                continue
            arrays = make(rng, points)
            names = sorted(arrays)
            g = sd.grad(text, wrt=list(wrt))
            peers: dict[str, Callable] = {
                "hand": lambda hand=hand, wrt=wrt, **a: hand(**a)[: len(wrt)]}
            peers["default"] = g.with_threads(None)
            chosen = _count_choices()
            for t in counts:
                peers[f"threads={t}"] = g.with_threads(t)
            for t in counts if base else ():
                peers[f"base t={t}"] = base.grad(text, wrt=list(wrt)).with_threads(t)
            jitted = None if options.no_jax else _jax_gradient(text, wrt, names)
            if jitted is not None:
                peers["jax jit"] = jitted
            reference = hand(**arrays)[: len(wrt)]
            one = g.with_threads(1)(**arrays)
            for name, fn in peers.items():
                got = fn(**arrays)
                for ours, ref in zip(got, reference, strict=True):
                    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-12, err_msg=name)
                if name.startswith(("threads=", "base", "default")):
                    assert all(np.array_equal(a, b) for a, b in zip(got, one, strict=True)), name
            busy, start = _others_busy(), time.perf_counter()
            times = round_times(peers, arrays, options.repeat)
            others = ((_others_busy() - busy) / (time.perf_counter() - start)
                      if busy is not None else float("nan"))
            medians = {name: statistics.median(t) for name, t in times.items()}
            hand_time = medians["hand"]
            if "threads=1" in times:  # the default over one thread, round by round
                medians["def/t=1"] = hand_time * statistics.median(
                    d / o for d, o in zip(times["default"], times["threads=1"], strict=True))
            cells = []
            for column in columns:
                if column in medians:
                    ratio = medians[column] / hand_time
                    means.setdefault((points, column), []).append(ratio)
                    cells.append(f"{ratio:10.2f}")
                else:
                    cells.append(f"{'-':>10}")
            counts_seen = " ".join(f"{t}:{n}" for t, n in sorted(chosen.items()))
            print(f"{text:54} {hand_time * 1e3:8.2f} " + " ".join(cells) + f" {others:7.2f}"
                  f"  {counts_seen}", flush=True)
        row = []
        for column in columns:
            found = means.get((points, column))
            row.append(f"{statistics.geometric_mean(found):10.2f}" if found else f"{'-':>10}")
        print(f"{'geometric mean':54} {'':8} " + " ".join(row))
    print(f"\nload average at end: {', '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
