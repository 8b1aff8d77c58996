"""Build time of recurrent models traced with ``shapes=`` (``tests/recurrent_models.py``):
an LSTM (hidden 8, input 4) and an HMM forward pass (4 states, 5 symbols), over 5, 15 and 30
steps, with the cache off, and the gradient's agreement with central differences.

Run: ``python benchmarks/bench_recurrent_models.py [--steps 5,15,30] [--repeat 1]``.
Goals: the 30-step LSTM builds in <= 10 s, the HMM in <= 5 s, and build time grows linearly
(the ratio of consecutive rows about the ratio of the steps).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
from sympy.core.cache import clear_cache

import symdiff as sd
from symdiff.pipeline import clear_memo
from tests.recurrent_models import central_gradient, hmm, lstm


def build_seconds(model, steps: int, repeat: int) -> tuple[float, float, float]:
    """Median build seconds, wall and CPU (of this process: on a loaded machine the wall time
    counts other processes' turns), memos cleared before each, and the worst relative gradient
    error against central differences."""
    times, cpu = [], []
    for _ in range(repeat):
        clear_memo()
        clear_cache()
        f, shapes, params = model(steps)
        start, start_cpu = time.perf_counter(), time.process_time()
        g = sd.grad(f, wrt=list(shapes), shapes=shapes, cache=False)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    worst = 0.0
    for name, got in zip(shapes, g(**params), strict=True):
        ref = central_gradient(f, params, name)
        worst = max(worst, float(np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-3)))
    return statistics.median(times), statistics.median(cpu), worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", default="5,15,30")
    parser.add_argument("--repeat", type=int, default=1)
    options = parser.parse_args()
    sd.grad(lambda x: np.sum(x**2), shapes={"x": (3,)}, cache=False)  # imports, first build
    print(f"{'model':6} {'steps':>5} {'build s':>8} {'cpu s':>6} {'ratio':>6} {'grad err':>9}")
    for name, model in (("lstm", lstm), ("hmm", hmm)):
        last = None
        for steps in (int(s) for s in options.steps.split(",")):
            seconds, cpu, error = build_seconds(model, steps, options.repeat)
            ratio = f"{seconds / last:6.2f}" if last else "      "
            print(f"{name:6} {steps:5d} {seconds:8.2f} {cpu:6.2f} {ratio} {error:9.1e}",
                  flush=True)
            last = seconds


if __name__ == "__main__":
    main()
