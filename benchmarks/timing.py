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


def settle_allocator() -> None:
    """Free one block of 30 MB, which with glibc raises the size from which ``malloc`` maps
    fresh pages to 30 MB (and the free memory it keeps to 60 MB): NumPy's arrays of 1e6
    points are then reused from the heap, as they are in a process that has freed a large
    array before, instead of pages the kernel maps and zeroes on each call. The hand-written
    NumPy is two to three times faster so (``--settled`` in the benchmarks that offer it)."""
    import numpy as np

    block = np.empty(30 << 20, np.uint8)
    block[::4096] = 1  # (touched: a real block, freed below)
    del block
