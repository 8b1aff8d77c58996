"""Worker: build gradients and interrupt each at a random moment with a real SIGINT (sent by
a timer thread, as Ctrl-C is), then report as JSON.

Usage: ``python interrupted.py SEED ROUNDS`` with ``SYMDIFF_CACHE_DIR`` set. Each round builds
a new expression (:func:`expression`) with the interrupt due at a random point within the time
one build takes, so that it lands in every stage: parsing, deriving, simplifying, emitting,
verifying, loading, writing the entries. Reports per round whether the build finished or
raised KeyboardInterrupt, and how long the interrupt took to arrive after the signal.
"""

from __future__ import annotations

import gc
import json
import os
import random
import signal
import sys
import threading
import time
import traceback

import symdiff as sd


def expression(k: int) -> str:
    """A new expression for round ``k`` that takes a noticeable time to build."""
    k = abs(k) + 2
    return (f"sin(x + {k})*exp(y/{k + 1}) + log(1 + x**2*y**{k % 5 + 2}) "
            f"+ atan(x*y - {k})/(1 + cosh(x/{k + 3}))")


def _innermost(error: BaseException) -> str:
    """The innermost module of symdiff (or else of any library) the error passed through."""
    frames = traceback.extract_tb(error.__traceback__)
    ours = [f.filename for f in frames if f"{os.sep}symdiff{os.sep}" in f.filename]
    name = (ours or [frames[-1].filename])[-1]
    return name.split(f"{os.sep}symdiff{os.sep}")[-1] if ours else os.path.basename(name)


def _interrupt(sent: list[float]) -> None:
    """What Ctrl-C does: SIGINT to this process (noting when)."""
    sent.append(time.perf_counter())
    os.kill(os.getpid(), signal.SIGINT)


def main() -> int:
    seed, rounds = int(sys.argv[1]), int(sys.argv[2])
    rng = random.Random(seed)
    sd.grad(expression(-1), wrt=["x", "y"])  # the first build imports SymPy and the rest
    start = time.perf_counter()
    sd.grad(expression(-2), wrt=["x", "y"])  # one whole build: how long one takes
    span = time.perf_counter() - start
    report = []
    for k in range(seed * 1000, seed * 1000 + rounds):
        sent: list[float] = []
        timer = threading.Timer(rng.uniform(0.0, span), _interrupt, (sent,))
        outcome, latency, where = "built", None, None
        try:
            timer.start()
            g = sd.grad(expression(k), wrt=["x", "y"])
            g(0.5, 0.7)
            timer.cancel()
            timer.join()  # a SIGINT sent meanwhile is raised here, inside the try
            time.sleep(0.01)
        except KeyboardInterrupt as interrupt:
            outcome, latency = "interrupted", time.perf_counter() - sent[0]
            where = _innermost(interrupt)
        report.append({"k": k, "outcome": outcome, "latency": latency, "where": where})
    print(json.dumps({"rounds": report, "gc": gc.isenabled(), "span": span}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
