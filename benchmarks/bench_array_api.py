"""The Array API backend against the NumPy backend on NumPy arrays, and a Dask logistic-regression
gradient on a LocalCluster with 1 and 2 workers, against the same gradient written by hand
with Dask.

Run: ``python benchmarks/bench_array_api.py [--repeat R] [--rows N] [--chunk C] [--no-dask]``
(``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1`` for single-thread ratios). Needs the ``dask`` extra.

Part 1: each case is built twice, ``backend="numpy"`` and ``backend="array_api"``, and called on
the same NumPy arrays in interleaved rounds; the table gives the median times and their ratio
(goal: at most 1.2x; the NumPy module on one thread, as the Array API one). Part 2: ``X``
(``rows x 20``, row chunks) and ``y`` are drawn on the workers and persisted; the table gives
the median time of one gradient (``client.compute(g(X, w, y))``) and the peak resident memory of
each worker (``ru_maxrss``, which includes the persisted data: ``rows * 20 * 8`` bytes spread
over the workers).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
from timing import interleaved_medians

import symdiff as sd

LOGISTIC = "sum(log(1 + exp(-y * (X @ w))))"
SHAPES = {"X": ("n", "d"), "y": ("n",), "w": ("d",)}
ELEMENTWISE = "x**2*sin(y) + log1p(exp(x*y)) + sqrt(1 + x**2)"




def _one_thread(backend: str) -> Callable:
    """The elementwise gradient of ``backend``, the NumPy module's on one thread (from 524288
    elements it would use every core by default; the Array API module has no thread pool):
    the same work, one core each."""
    g = sd.grad(ELEMENTWISE, backend=backend)
    return g.with_threads(1) if backend == "numpy" else g


def numpy_arrays(repeat: int) -> None:
    """The Array API module vs the NumPy module, both on NumPy arrays."""
    rng = np.random.default_rng(0)
    cases: list[tuple[str, Callable[[str], Callable], tuple]] = []
    for n in (10, 10**4, 10**6):
        x, y = rng.normal(size=n), rng.normal(size=n)
        cases.append((f"elementwise grad, {n:.0e} points", _one_thread, (x, y)))
    for n in (100, 10**5):
        X, w = rng.normal(size=(n, 20)), rng.normal(size=20)
        y = np.sign(rng.normal(size=n))
        cases.append((f"logistic grad, {n:.0e} x 20",
                      lambda b: sd.grad(LOGISTIC, wrt="w", shapes=SHAPES, backend=b), (X, w, y)))
        cases.append((f"logistic hessian, {n:.0e} x 20",
                      lambda b: sd.hessian(LOGISTIC, wrt="w", shapes=SHAPES, backend=b),
                      (X, w, y)))
    print(f"{'case':34s} {'numpy':>11s} {'array_api':>11s} {'ratio':>7s}")
    ratios = []
    for label, make, args in cases:
        base, standard = make("numpy"), make("array_api")
        peers = [("numpy", base), ("array_api", standard)]
        t_base, t_standard = interleaved_medians(peers, args, repeat)
        ratios.append(t_standard / t_base)
        print(f"{label:34s} {t_base * 1e6:9.1f}us {t_standard * 1e6:9.1f}us "
              f"{t_standard / t_base:6.2f}x")
    geomean = float(np.exp(np.mean(np.log(ratios))))
    print(f"{'geometric mean':34s} {'':11s} {'':11s} {geomean:6.2f}x")


def _peak_rss() -> int:
    """This process's peak resident memory: ``VmHWM`` (Linux; reset when the worker process
    was started, unlike ``ru_maxrss``, which keeps the parent's peak across fork and exec)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _by_hand(da, X, w, y):
    """The gradient as a Dask user writes it: ``X.T @ (-y * sigmoid(-y * (X @ w)))``."""
    return X.T @ (-y / (1.0 + da.exp(y * (X @ w))))


def dask_cluster(rows: int, chunk: int, repeat: int) -> None:
    """Time per logistic gradient over ``rows x 20`` on LocalClusters of 1 and 2 workers."""
    import dask.array as da
    from distributed import Client, LocalCluster, wait

    g = sd.grad(LOGISTIC, wrt="w", shapes=SHAPES, backend="array_api")
    w = np.linspace(-0.2, 0.2, 20)
    print(f"\nDask logistic gradient, {rows:.0e} x 20 ({rows * 20 * 8 / 2**30:.2f} GiB of X), "
          f"chunks of {chunk:.0e} rows")
    print(f"{'workers':>7s} {'per gradient':>13s} {'hand-written':>13s} {'ratio':>6s} "
          f"{'rows/s':>10s} {'peak memory per worker':>28s}")
    for workers in (1, 2):
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                          dashboard_address=None, memory_limit="6GiB") as cluster, \
                Client(cluster) as client:
            rng = da.random.default_rng(0)
            X = 2.0 * rng.random(size=(rows, 20), chunks=(chunk, 20)) - 1.0
            y = da.sign(rng.random(size=(rows,), chunks=chunk) - 0.5)
            X, y = client.persist([X, y])
            wait([X, y])
            client.compute(g(X, w, y)).result()  # warm: workers import what they need
            times: list[list[float]] = [[], []]
            for round_ in range(repeat):
                for j in range(2):
                    i = (round_ + j) % 2
                    graph = g(X, w, y) if i == 0 else _by_hand(da, X, w, y)
                    start = time.perf_counter()
                    client.compute(graph).result()
                    times[i].append(time.perf_counter() - start)
            peaks = sorted(client.run(_peak_rss).values())
            per, hand = (statistics.median(t) for t in times)
            memory = ", ".join(f"{p / 2**20:.0f} MiB" for p in peaks)
            print(f"{workers:7d} {per:12.3f}s {hand:12.3f}s {per / hand:5.2f}x {rows / per:10.3g} "
                  f"{memory:>28s}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--rows", type=int, default=10**7)
    parser.add_argument("--chunk", type=int, default=500_000)
    parser.add_argument("--no-dask", action="store_true")
    args = parser.parse_args()
    numpy_arrays(args.repeat)
    if not args.no_dask:
        dask_cluster(args.rows, args.chunk, max(3, args.repeat // 5))


if __name__ == "__main__":
    main()
