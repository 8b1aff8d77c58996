"""Unrolled recurrences (``tests/recurrences.py``): accuracy against 50-digit mpmath and build
time, in every mode and both layers (scalar, and ``shapes=`` with 0-d arrays).

For each kind (a fixed point, the logistic map, Newton's square root, explicit Euler and RK4
steps of small ODEs, a Lotka-Volterra map) and each number of steps, ``value_and_grad`` is built
with the cache off and called at seeded parameters; the table gives the build seconds and the
worst relative error of the value and gradient, also as a multiple of ``(1 + condition
number) * 2**-52`` (the condition numbers from the 50-digit references).

Run: ``python benchmarks/bench_recurrences.py [--steps 1,8,30] [--kinds all]``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import symdiff as sd
from tests.recurrences import KINDS, NUMPY, conditions, errors, program, random_case

EPS = 2.0**-52
MODES = ("auto", "forward", "reverse")


def run(kind: str, steps: int, seed: int = 0) -> list[tuple[str, float, float, float]]:
    """``(label, build seconds, worst relative error, worst error / ((1 + cond) eps))`` for
    every mode and layer."""
    case = random_case(kind, random.Random(seed), steps)
    names = list(case.params)
    kv, kg = conditions(case)
    rows = []
    for layer in ("scalar", "shapes"):
        shapes = {n: () for n in names} if layer == "shapes" else None
        for mode in MODES:
            f = program(kind, steps, NUMPY)
            start = time.perf_counter()
            g = sd.value_and_grad(f, wrt=names, mode=mode, shapes=shapes, cache=False)
            seconds = time.perf_counter() - start
            value, grads = g(*(case.params[n] for n in names))
            ev, eg = errors(case, float(value), [float(x) for x in grads])
            worst = max([ev, *eg])
            scaled = max([ev / ((1 + kv) * EPS), *(e / ((1 + k) * EPS) for e, k in
                                                   zip(eg, kg, strict=True))])
            rows.append((f"{layer:6} {mode:7}", seconds, worst, scaled))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", default="1,8,30")
    parser.add_argument("--kinds", default="all")
    options = parser.parse_args()
    kinds = KINDS if options.kinds == "all" else options.kinds.split(",")
    worst = (0.0, 0.0, "")
    print(f"{'kind':15} {'steps':>5} {'layer/mode':15} {'build s':>8} {'rel err':>9} "
          f"{'/(1+k)eps':>9}")
    for kind in kinds:
        for steps in (int(s) for s in options.steps.split(",")):
            for label, seconds, error, scaled in run(kind, steps):
                print(f"{kind:15} {steps:5d} {label:15} {seconds:8.2f} {error:9.1e} "
                      f"{scaled:9.1f}", flush=True)
                if scaled > worst[1]:
                    worst = (error, scaled, f"{kind}, {steps} steps, {label}")
    print(f"worst: {worst[0]:.1e} relative, {worst[1]:.1f} x (1 + cond) eps ({worst[2]})")


if __name__ == "__main__":
    main()
