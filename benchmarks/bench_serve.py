"""How long a class waits at ``symdiff serve``: 30 students sending 20 textbook requests each
(previews, derivations, checks, plots, graphs, code, practice sets, as the page sends them),
while one student sends pathological inputs throughout (tests/serve_load.py).

Run: ``python benchmarks/bench_serve.py [--students N] [--requests R] [--workers W]
[--runs K]``. Each run starts the server as a teacher does (``symdiff serve --port 0``), in its
own process, with a fresh cache; it reports the median, 95th percentile and largest latency
of the students' requests, how many failed, what the pathological requests came back as and
how long each took, and whether the server answered after them. Several runs end with the
median of their 95th percentiles. The machine's load (1-minute average) is printed before
and after each run: on a shared machine the latencies follow it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests import serve_load  # noqa: E402
from tests.serve_process import serving  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    options = [] if args.workers is None else ["--workers", str(args.workers)]
    print(f"cores: {os.cpu_count()}; {args.students} students, {args.requests} requests each")
    p95 = []
    for run in range(1, args.runs + 1):
        before = os.getloadavg()[0]
        with tempfile.TemporaryDirectory() as cache:
            env = {"SYMDIFF_CACHE_DIR": cache, "SYMDIFF_SOURCE_DIR": ""}
            with serving(*options, env=env) as (url, _):
                report = serve_load.run(url, args.students, args.requests)
        p95.append(report.percentile(95))
        print(f"run {run} (load {before:.1f} -> {os.getloadavg()[0]:.1f}): {report.summary()}",
              flush=True)
    if args.runs > 1:
        print(f"median p95 of {args.runs} runs: {statistics.median(p95):.3f} s")


if __name__ == "__main__":
    main()
