"""``backend="numba"`` against hand-written NumPy and the NumPy backend over 1e6 points.

Run: ``OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_numba.py [--points N]
[--repeat R] [--only TEXT] [--no-startup] [--prange] [--clock wall|cpu]``.

The problems: a quotient of transcendental functions, a Gaussian log-density (gradient, and
value and gradient), a logistic loss, a rational function with repeated subexpressions, a
composition ten deep, and a sum of 50 terms ``sin(k*x + y/k)/k``; each with its gradient
written by hand in NumPy as a careful person writes it (the same accuracy: no approximations).
All peers are timed in this one process on the same arrays, one after another in each round
(each round starting with the next peer); the table gives each one's median time and its ratio
to the hand-written NumPy (lower is better): the NumPy backend on one thread, the Numba backend
on one thread and on two. ``--prange`` adds a column for two threads through Numba's own
``prange`` over the module's ``_formulas`` (the same outputs, allocated alike), against the
backend's blocks on the runtime's threads. ``--clock cpu`` times one thread by this process's
CPU time (on a loaded machine: the time without the waits for a core; not for threads).

The startup table (skip it with ``--no-startup``) times, in fresh processes sharing one cache
directory, building a Numba function and its first call on 1e6 points: the first process
derives, emits and compiles (Numba's compile time dominates); the second loads the module
from symdiff's cache and the machine code from Numba's, and compiles nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

import numpy as np
from bench_elementwise import (
    _hand_logistic_loss,
    _hand_normal_logpdf,
    _hand_quotient,
    _logistic,
    _normal,
    _xy,
    startup,
)
from timing import interleaved_medians, settle_allocator

import symdiff as sd


def _hand_normal_value(x, mu, sigma):
    z = (x - mu) / sigma
    return -0.5 * z * z - np.log(sigma) - 0.5 * np.log(2 * np.pi), _hand_normal_logpdf(x, mu, sigma)


def _hand_rational(x, y):
    u = x * y + 1
    u2 = u * u
    n = u2 + u2 * u
    d = 1 + u2 + y * y
    r = 1 / d
    du = ((2 * u + 3 * u2) - n * r * 2 * u) * r
    return du * y, du * x - 2 * y * n * r * r


DEPTH = 10


def _nested_expr() -> str:
    text = "x*y"
    for _ in range(DEPTH):
        text = f"sin({text})"
    return text


def _hand_nested(x, y):
    u = x * y
    chain = np.cos(u)
    u = np.sin(u)
    for _ in range(DEPTH - 1):
        chain *= np.cos(u)
        u = np.sin(u)
    return chain * y, chain * x


TERMS = 50


def _hand_sum(x, y):
    gx, gy = np.zeros_like(x), np.zeros_like(x)
    for k in range(1, TERMS + 1):
        c = np.cos(k * x + y / k)
        gx += c
        gy += c / (k * k)
    return gx, gy


NORMAL = "-0.5*((x - mu)/sigma)**2 - log(sigma) - 0.5*log(2*pi)"
#: (label, builder, expression, wrt, hand-written NumPy, arrays)
CASES: list[tuple[str, Callable, str, tuple[str, ...], Callable, Callable]] = [
    ("sin(x)*exp(y)/(1+x**2) grad", sd.grad, "sin(x)*exp(y)/(1 + x**2)", ("x", "y"),
     _hand_quotient, _xy),
    ("Gaussian log-density grad", sd.grad, NORMAL, ("x", "mu", "sigma"),
     _hand_normal_logpdf, _normal),
    ("Gaussian log-density value_and_grad", sd.value_and_grad, NORMAL, ("x", "mu", "sigma"),
     _hand_normal_value, _normal),
    ("logistic loss grad", sd.grad, "log(1 + exp(-y*(w*x + b)))", ("w", "b"),
     _hand_logistic_loss, _logistic),
    ("rational, repeated subexpressions", sd.grad,
     "((x*y + 1)**2 + (x*y + 1)**3)/(1 + (x*y + 1)**2 + y**2)", ("x", "y"), _hand_rational, _xy),
    ("nested composition, depth 10", sd.grad, _nested_expr(), ("x", "y"), _hand_nested, _xy),
    ("sum of 50 terms sin(k*x + y/k)/k", sd.grad,
     " + ".join(f"sin({k}*x + y/{k})/{k}" for k in range(1, TERMS + 1)), ("x", "y"),
     _hand_sum, _xy),
]


def _check(ours, hand, arrays) -> None:
    """The peers compute the same numbers (to 1e-9 relative: the hand forms differ)."""
    got, want = ours(**arrays), hand(**arrays)

    def flat(v):
        return [leaf for item in v for leaf in flat(item)] if isinstance(v, tuple) else [v]

    for a, b in zip(flat(got), flat(want), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def prange_twin(function) -> Callable:
    """``function`` (a Numba module's, every output one flat array) run by Numba's ``prange``
    over its ``_formulas`` on float64 arrays of one shape: the alternative to the runtime's
    blocks on threads, for the A/B column."""
    import numba

    space = function._fn.__globals__
    formulas = space["_formulas"]
    names = list(formulas.py_func.__code__.co_varnames[: formulas.py_func.__code__.co_argcount])
    found = [function._fn(*(np.ones(2) for _ in names), threads=1)]
    while any(isinstance(item, tuple) for item in found):  # the outputs, flat
        found = [leaf for item in found
                 for leaf in (item if isinstance(item, tuple) else (item,))]
    count = len(found)
    targets = ", ".join(f"_out[{k}][_i]" for k in range(count))
    text = (f"def threaded({', '.join(names)}, _out):\n"
            f"    for _i in numba.prange(_out[0].shape[0]):\n"
            f"        {targets} = formulas({', '.join(f'{n}[_i]' for n in names)})\n")
    scope = {"numba": numba, "formulas": formulas}
    exec(text, scope)  # the benchmark's own text
    threaded = numba.njit(parallel=True, fastmath=False, error_model="numpy")(scope["threaded"])

    def run(**arrays):
        flat = [arrays[n].reshape(-1) for n in names]
        out = tuple(np.empty(flat[0].size) for _ in range(count))
        threaded(*flat, out)
        return out if count > 1 else out[0]

    return run


def run_case(case, points: int, repeat: int, prange: bool = False,
             clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Median times of each peer over ``repeat`` rounds (the peers taking turns to go first)."""
    _, builder, expr, wrt, hand, make = case
    arrays = make(np.random.default_rng(0), points)
    numpy_backend = builder(expr, wrt=list(wrt))
    numba_backend = builder(expr, wrt=list(wrt), backend="numba")
    arrays = {name: arrays[name] for name in numpy_backend.args}
    peers = [
        ("hand NumPy", lambda a: hand(**a)),
        ("symdiff NumPy", lambda a: numpy_backend(**a, threads=1)),
        ("numba 1 thread", lambda a: numba_backend(**a, threads=1)),
        ("numba 2 threads", lambda a: numba_backend(**a, threads=2)),
    ]
    if prange:
        import numba

        numba.set_num_threads(2)
        twin = prange_twin(numba_backend)
        peers.append(("prange 2 threads", lambda a: twin(**a)))
    for _, peer in peers[1:]:  # compile every loop; the same numbers as the hand-written
        _check(lambda **a: peer(a), hand, arrays)  # noqa: B023
    medians = interleaved_medians(peers, (arrays,), repeat, clock)
    return dict(zip([name for name, _ in peers], medians, strict=True))


def thread_headroom(rounds: int = 9) -> float:
    """How much a second thread adds on this machine now: the median, over interleaved
    rounds, of (time on one thread) / (time on two) - 1 for a compute-bound Numba loop over
    a block that stays in cache (no memory traffic, no page faults), run as the backend runs
    its blocks. 1.0: two free cores; near 0: the second core is busy with other processes."""
    import numba

    from symdiff.runtime.threads import _on_threads

    @numba.njit(nogil=True, fastmath=False, error_model="numpy")
    def spin(x, out, times):
        for _ in range(times):
            for i in range(x.shape[0]):
                out[i] = out[i] * 0.999 + np.sqrt(x[i] + out[i] * out[i])

    x, outs = np.linspace(1.0, 2.0, 4096), [np.zeros(4096) for _ in range(8)]
    spin(x, outs[0], 1)

    def run(threads: int) -> float:  # eight blocks, each writing its own array
        start = time.perf_counter()
        _on_threads(lambda k: spin(x, outs[k], 400), iter([(k,) for k in range(8)]),
                    lambda: None, threads)
        return time.perf_counter() - start

    gains = []
    for _ in range(rounds):
        one, two = run(1), run(2)
        gains.append(one / two - 1.0)
    return statistics.median(gains)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--only", default="")
    parser.add_argument("--no-startup", action="store_true")
    parser.add_argument("--prange", action="store_true",
                        help="add two threads through Numba's prange (A/B against blocks)")
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall")
    parser.add_argument("--settled", action="store_true",
                        help="first free one block of 30 MB (see settle_allocator)")
    options = parser.parse_args()
    if options.settled:
        settle_allocator()
    clock = time.process_time if options.clock == "cpu" else time.perf_counter
    print(f"load average: {os.getloadavg()}  points: {options.points}  rounds: "
          f"{options.repeat}  clock: {options.clock}")
    names = ["symdiff NumPy", "numba 1 thread", "numba 2 threads",
             *(["prange 2 threads"] if options.prange else [])]
    print(f"{'problem':<38} {'hand ms':>8} " + " ".join(f"{n:>16}" for n in names))
    ratios: dict[str, list[float]] = {name: [] for name in names}
    for case in CASES:
        if options.only not in case[0]:
            continue
        medians = run_case(case, options.points, options.repeat, options.prange, clock)
        hand = medians["hand NumPy"]
        row = [medians[name] / hand for name in ratios]
        for name, value in zip(ratios, row, strict=True):
            ratios[name].append(value)
        print(f"{case[0]:<38} {hand * 1e3:>8.2f} " + " ".join(f"{r:>16.2f}" for r in row),
              flush=True)
    if all(ratios.values()):
        geo = [statistics.geometric_mean(values) for values in ratios.values()]
        print(f"{'geometric mean':<38} {'':>8} " + " ".join(f"{g:>16.2f}" for g in geo))
    print(f"load average after: {os.getloadavg()}")
    print(f"two threads' share of the machine now: {thread_headroom():.2f} of a second "
          "core (the speed-up of a compute-bound loop in cache from 1 to 2 threads, less 1)")
    if options.no_startup:
        return
    print("\nstartup: build + first call on 1e6 points, in a fresh process (seconds)")
    for expr in (CASES[0][2], CASES[4][2]):
        cold, warm, report = startup(expr)
        print(f"{expr:<60} first process {cold:6.2f}  second process {warm:6.2f}")
        print(f"    first build's report: {report}")


if __name__ == "__main__":
    main()
