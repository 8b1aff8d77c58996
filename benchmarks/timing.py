"""Timing shared by the benchmark scripts (run as scripts: ``from timing import ...``)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence


def interleaved_times(
    peers: Sequence[tuple[str, Callable]],
    args: tuple,
    repeat: int,
    clock: Callable[[], float] = time.perf_counter,
) -> list[list[float]]:
    """Each peer's times over ``repeat`` rounds (after one warm-up call each), the peers taking
    turns to go first so that none always follows the same one (a fixed order favours
    whoever comes after a peer that leaves the caches warm)."""
    for _, fn in peers:
        fn(*args)
    times: list[list[float]] = [[] for _ in peers]
    for round_ in range(repeat):
        for j in range(len(peers)):
            i = (round_ + j) % len(peers)
            start = clock()
            peers[i][1](*args)
            times[i].append(clock() - start)
    return times


def interleaved_medians(
    peers: Sequence[tuple[str, Callable]],
    args: tuple,
    repeat: int,
    clock: Callable[[], float] = time.perf_counter,
) -> list[float]:
    """The median of each peer's :func:`interleaved_times`."""
    return [statistics.median(row) for row in interleaved_times(peers, args, repeat, clock)]
