"""How the build time of ``grad`` grows with the size and the depth of an expression (the "no
cliffs" growth table): CPU seconds per build, each in a fresh process with the cache off, the
median of ``--repeat`` runs (the processes of every row take turns, round by round), with the
ratio of each row to the one before it and the ratio of their DAG sizes (distinct
subexpressions of the parsed expression). Linear growth keeps the two ratios close.

- ``sum``: ``sin(1*x + y/1)/1 + ... + sin(n*x + y/n)/n``, n = 100, 400, 800, 3,200 (3,200 terms
  are beyond the parser's default ``max_nodes``; the child raises it, and the time budget, as
  a user does: ``symdiff.parsing.LIMITS``, docs/performance.md);
- ``nest``: ``x/(1 + (x/(1 + (...)**2))**2)`` nested d = 10, 20, 40 deep.

Run: ``python benchmarks/bench_growth.py [--repeat 3] [--quick]`` (``--quick``: the small rows
only). The load average is printed with the table: on a busy machine the ratios are the part
to read.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

#: (family, size) of each row, in the order printed.
ROWS = [("sum", 100), ("sum", 400), ("sum", 800), ("sum", 3200),
        ("nest", 10), ("nest", 20), ("nest", 40)]
QUICK = [("sum", 100), ("sum", 400), ("nest", 10), ("nest", 20)]


def expression(family: str, size: int) -> str:
    """The text of a row's expression."""
    if family == "sum":
        return " + ".join(f"sin({k}*x + y/{k})/{k}" for k in range(1, size + 1))
    text = "x"
    for _ in range(size):
        text = f"x/(1 + ({text})**2)"
    return text


def child(family: str, size: int) -> None:
    """One build in this (fresh) process: prints its CPU seconds and the DAG size as JSON."""
    import symdiff as sd
    from symdiff.parsing import LIMITS
    from symdiff.simplify.dag import node_count

    LIMITS["max_nodes"] = max(LIMITS["max_nodes"], 200_000)  # the sum of 3,200 terms
    LIMITS["max_milliseconds"] = max(LIMITS["max_milliseconds"], 60_000)
    text = expression(family, size)
    sd.grad("x**2*y", cache=False)  # imports and first-use work out of the timing
    start = time.process_time()
    sd.grad(text, cache=False)
    seconds = time.process_time() - start
    print(json.dumps({"seconds": seconds, "dag": node_count([sd.parse(text)])}))


def _run(family: str, size: int) -> dict:
    env = {**os.environ, "SYMDIFF_DISABLE_CACHE": "1", "SYMDIFF_PROGRESS": "0"}
    done = subprocess.run([sys.executable, __file__, "--child", family, str(size)], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="the small rows only")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        child(options.child[0], int(options.child[1]))
        return
    rows = QUICK if options.quick else ROWS
    seconds: dict[tuple[str, int], list[float]] = {row: [] for row in rows}
    dags: dict[tuple[str, int], int] = {}
    for round_ in range(options.repeat):
        for j in range(len(rows)):
            row = rows[(round_ + j) % len(rows)]
            found = _run(*row)
            seconds[row].append(found["seconds"])
            dags[row] = found["dag"]
    load = " ".join(f"{v:.2f}" for v in os.getloadavg())
    print(f"build CPU seconds of grad, fresh process per build, cache off; median of "
          f"{options.repeat}; load average {load} on {os.cpu_count()} CPUs")
    print(f"{'expression':<10} {'size':>6} {'DAG':>7} {'CPU s':>7} {'ratio':>7} {'DAG ratio':>10}")
    previous: tuple[str, float, int] | None = None
    for family, size in rows:
        median, dag = statistics.median(seconds[(family, size)]), dags[(family, size)]
        ratio = dag_ratio = ""
        if previous is not None and previous[0] == family:
            ratio, dag_ratio = f"{median / previous[1]:.2f}", f"{dag / previous[2]:.2f}"
        print(f"{family:<10} {size:>6} {dag:>7} {median:>7.2f} {ratio:>7} {dag_ratio:>10}")
        previous = (family, median, dag)


if __name__ == "__main__":
    main()
