"""How long a class waits at ``symdiff serve``: 30 students sending 20 textbook requests each
(previews, derivations, checks, plots, graphs, code, practice sets, as the page sends them),
while one student sends pathological inputs throughout (tests/serve_load.py).

Run: ``python benchmarks/bench_serve.py [--students N] [--requests R] [--workers W]``. The
server runs as a teacher starts it (``symdiff serve --port 0``), in its own process, with a
fresh cache; the report gives the median, 95th percentile and largest latency of the
students' requests, and what the pathological requests came back as.
"""

from __future__ import annotations

import argparse
import os
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
    args = parser.parse_args()
    options = [] if args.workers is None else ["--workers", str(args.workers)]
    with tempfile.TemporaryDirectory() as cache:
        env = {"SYMDIFF_CACHE_DIR": cache, "SYMDIFF_SOURCE_DIR": ""}
        with serving(*options, env=env) as (url, _):
            report = serve_load.run(url, args.students, args.requests)
    print(f"cores: {os.cpu_count()}; load: {os.getloadavg()[0]:.1f}")
    print(report.summary())


if __name__ == "__main__":
    main()
