"""What the cache buys: cold build, warm in-process call of the builder, warm start in a new
process (wall time), against a process that only imports NumPy.

Run: ``python benchmarks/bench_cache.py [--repeat R]``. Each figure is the median of R runs in
this one invocation; every cold run uses a fresh cache directory.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

EXPRESSIONS = {
    "small": "sin(x)*exp(y)/(1 + x**2)",
    "medium": "log(1 + exp(-y*(a*x + b))) + (a**2 + b**2)/2 + erf(a*x)*tanh(b*y)",
}
BUILD = "import symdiff as sd; g = sd.grad({expr!r}); g(*[0.5] * len(g.args))"


def _run(code: str, cache_dir: str) -> float:
    env = {**os.environ, "SYMDIFF_CACHE_DIR": cache_dir}
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    baseline = statistics.median(
        _run("import numpy", tempfile.mkdtemp()) for _ in range(options.repeat)
    )
    print(f"new process importing numpy only: {baseline * 1e3:.0f} ms (median of {options.repeat})")
    print(
        f"{'expression':8} {'cold process ms':>16} {'warm process ms':>16} {'warm/numpy':>11}"
        f" {'in-process call us':>19}"
    )
    for name, expr in EXPRESSIONS.items():
        code = BUILD.format(expr=expr)
        cold, warm = [], []
        for _ in range(options.repeat):
            directory = tempfile.mkdtemp()
            cold.append(_run(code, directory))
            warm.append(_run(code, directory))
        in_process = _in_process(expr, options.repeat)
        print(
            f"{name:8} {statistics.median(cold) * 1e3:16.0f} {statistics.median(warm) * 1e3:16.0f}"
            f" {statistics.median(warm) / baseline:11.2f} {in_process * 1e6:19.1f}"
        )


def _in_process(expr: str, repeat: int) -> float:
    os.environ["SYMDIFF_CACHE_DIR"] = tempfile.mkdtemp()
    import symdiff as sd

    sd.grad(expr)
    times = []
    for _ in range(repeat * 200):
        start = time.perf_counter()
        sd.grad(expr)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


if __name__ == "__main__":
    main()
