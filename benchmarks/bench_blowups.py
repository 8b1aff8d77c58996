"""Build time of the expressions that once blew up: ``derive()`` and ``grad()``
(every variable, cache off), median of ``--repeat`` runs in one process, each from empty
memos (symdiff's and SymPy's).

Run: ``python benchmarks/bench_blowups.py [--repeat R]``. Goals: derive under 2 s, grad under
1 s. The expressions are those of ``tests/test_blowups.py``, which checks their sizes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sympy.core.cache import clear_cache

import symdiff as sd
from symdiff.pipeline import clear_memo
from tests.test_blowups import CASES, dag_size


def _median(fn, repeat: int) -> float:
    """Median time of ``fn`` with symdiff's memo and SymPy's cache emptied before each run."""
    times = []
    for _ in range(repeat):
        clear_memo()
        clear_cache()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    sd.grad("x**2", cache=False)  # imports and first-use caches out of the timings
    print(f"{'expression':<28} {'DAG':>5} {'derive s':>9} {'grad s':>8}")
    for name, text, wrt, _ in CASES:
        derive = _median(lambda t=text, w=wrt: sd.derive(t, wrt=w), args.repeat)
        grad = _median(lambda t=text: sd.grad(t, cache=False), args.repeat)
        print(f"{name:<28} {dag_size(sd.parse(text)):>5} {derive:>9.2f} {grad:>8.2f}")


if __name__ == "__main__":
    main()
