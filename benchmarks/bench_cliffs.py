"""The no-cliffs benchmarks in one run ("no performance cliffs"): the elementwise set, the wide
Hessians and the many-names problems, one after another in this process, each printing its own
table of ratios against its peers (hand-written NumPy, SymPy's ``lambdify``, and JAX where it is
installed).

- ``bench_elementwise``: every elementwise gradient over ``--points`` points against hand-written
  NumPy (goal: never slower, ratio <= 1.0 on every problem);
- ``bench_hessians``: the softmax-regression, logsumexp and least-squares Hessians against the
  closed forms a person writes and ``jax.hessian`` (goals 1.5x, 1.5x, 1.1x);
- ``bench_many_names``: 1000-name problems: build seconds (goal <= 5 s), gradient/function
  (goal <= 4), one point against hand-written NumPy and ``jax.jit(grad)``.

Run single-threaded on a quiet machine:
``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_cliffs.py`` (about 10
minutes), or ``--quick`` for a smoke run of each (smaller sizes, fewer rounds).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_elementwise  # the scripts beside this one
import bench_hessians
import bench_many_names

#: Each script and its arguments: the full run, then the smoke run.
RUNS = {
    "bench_elementwise": (bench_elementwise.main, [], ["--points", "100000", "--repeat", "5"]),
    "bench_hessians": (bench_hessians.main, [], ["--n", "300", "--repeat", "3"]),
    "bench_many_names": (bench_many_names.main, [], ["--quick"]),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smoke run: small sizes, few rounds")
    parser.add_argument("--only", default="", help="run only the scripts containing this text")
    options = parser.parse_args()
    for name, (run, full, quick) in RUNS.items():
        if options.only not in name:
            continue
        arguments = quick if options.quick else full
        print(f"\n=== {name} {' '.join(arguments)}".rstrip(), flush=True)
        started = time.perf_counter()
        saved, sys.argv = sys.argv, [f"{name}.py", *arguments]
        try:
            run()
        finally:
            sys.argv = saved
        print(f"=== {name}: {time.perf_counter() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()
