"""The float64 check of simplified forms: what it costs and what it changes.

For each problem of ``bench_elementwise.py`` and a few unrolled recurrences, the gradient is
built three ways in this one process, with the cache off:

- "checked": as symdiff builds it, each simplified output kept only where it is about as
  accurate as the unsimplified one (:func:`symdiff.simplify.numeric.faithful_form`);
- "simplified": the simplified form always (the check switched off);
- "dag": ``simplify=False``, the expression as derived (its DAG, CSE'd).

Each build starts from a cold SymPy cache and symdiff memo.

The table gives each build's seconds, whether the checked code differs from the always
simplified code, and the run time of the three over ``--points`` points (median of
``--repeat`` interleaved rounds), as ratios to "simplified".

Run: ``PYTHONPATH=. python benchmarks/bench_faithful.py [--points 100000] [--repeat 15]``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
from bench_elementwise import CASES
from sympy.core.cache import clear_cache
from timing import interleaved_times

import symdiff as sd
import symdiff.build
import symdiff.engine.sweeps
import symdiff.tensor.elementwise
from symdiff.pipeline import clear_memo
from symdiff.simplify.numeric import faithful_form

_USERS = (symdiff.build, symdiff.engine.sweeps, symdiff.tensor.elementwise)


def _recurrence(steps: int) -> str:
    """The fixed point ``x - (x**2 - a)/20`` from ``x = 10``, ``steps`` times, as text."""
    text = "10"
    for _ in range(steps):
        text = f"({text}) - ((({text}))**2 - a)/20"
    return text


def _switch(checked: bool) -> None:
    for module in _USERS:
        module.faithful_form = faithful_form if checked else (lambda original, simplified:
                                                              simplified)


def _build(expr: str, wrt: tuple[str, ...], how: str):
    clear_cache()  # (each build from a cold SymPy cache: the first would fill it for the others)
    clear_memo()
    _switch(how != "simplified")
    start = time.perf_counter()
    g = sd.grad(expr, wrt=list(wrt), simplify=how != "dag", cache=False)
    seconds = time.perf_counter() - start
    _switch(True)
    return g, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=15)
    options = parser.parse_args()
    rng = np.random.default_rng(0)
    problems = [(expr, wrt, make) for expr, wrt, _, make in CASES]
    problems += [(_recurrence(n), ("a",), lambda rng, n: {"a": rng.uniform(1, 3, n)})
                 for n in (3, 5)]
    print(f"{'expression':42} {'build s: checked/simpl/dag':>27} {'differs':>7} "
          f"{'run: checked/dag vs simpl':>26}")
    ratios = {"checked": [], "dag": []}
    for expr, wrt, make in problems:
        arrays = make(rng, options.points)
        built = {how: _build(expr, wrt, how) for how in ("checked", "simplified", "dag")}
        peers = [(how, lambda g=g, arrays=arrays: g(**arrays)) for how, (g, _) in built.items()]
        times = interleaved_times(peers, (), options.repeat)
        median = {how: statistics.median(t) for (how, _), t in zip(peers, times, strict=True)}
        differs = built["checked"][0].source != built["simplified"][0].source
        for how in ratios:
            ratios[how].append(median[how] / median["simplified"])
        brief = expr if len(expr) <= 40 else expr[:37] + "..."
        builds = "/".join(f"{built[h][1]:.2f}" for h in ("checked", "simplified", "dag"))
        print(f"{brief:42} {builds:>27} {'yes' if differs else 'no':>7} "
              f"{median['checked'] / median['simplified']:12.2f} "
              f"{median['dag'] / median['simplified']:12.2f}", flush=True)
    for how, values in ratios.items():
        geo = float(np.exp(np.mean(np.log(values))))
        print(f"geometric mean run time, {how} / simplified: {geo:.3f}")


if __name__ == "__main__":
    main()
