"""Free workers handed out fairly, and where what a request needs is already warm.

Order: first come, first served, except that a client who has used more than :data:`HEAVY`
seconds of worker time lately waits behind everyone else and has at most one task running at
a time, and a client with a task in the background (:meth:`FairQueue.background`: one that
outgrew what a classroom exercise needs) waits until it ends. A student whose inputs run out
of time spends a whole budget each time, so the next free worker goes to the others first;
such a student is served when nobody else waits, one request after the other. A class asking
for textbook derivatives (a tenth of a second each) stays first come, first served. Usage
decays with a half-life of :data:`HALF_LIFE` seconds, so a heavy client is back to equal terms
a minute or two later. A client is who the page says it is (a random name per open page),
else its address; it is a matter of fairness, not of security.

Place: every worker has a place (its slot in the pool), and a request may prefer one (the
slot where its expression was computed before: the derivation, its compiled modules and
SymPy's caches are warm there). A free worker goes to the first of the ``lookahead`` waiters
at the head of the line (in the order above) that prefers its place or has no preference, else
to the first waiter: no worker idles while someone waits, and a waiter is passed over only
while its own place is busy and at most ``lookahead`` times (then any place will do).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass
from typing import Generic, TypeVar

HALF_LIFE = 60.0
#: Worker seconds used lately beyond which a client waits behind the others.
HEAVY = 5.0
#: Clients remembered at most; the least used are forgotten beyond this.
MAX_CLIENTS = 4096

Item = TypeVar("Item")


class Timeout(Exception):
    """Nothing became free for this request in the time it may wait."""


@dataclass(eq=False)
class _Waiter:
    client: str
    place: int | None
    passed: int = 0  # times a waiter behind it was served first


class FairQueue(Generic[Item]):
    """Items (free workers, each at a place) put back by :meth:`put`, taken by :meth:`get` in
    fair order; a client's task ends with :meth:`release`."""

    def __init__(self, lookahead: int = 1) -> None:
        self._lookahead = max(1, lookahead)
        self._condition = threading.Condition()
        self._free: list[tuple[int, Item]] = []  # (place, item), the longest free first
        self._waiting: list[_Waiter] = []  # in the order they came
        self._usage: dict[str, tuple[float, float]] = {}  # client -> (seconds, when)
        self._running: Counter[str] = Counter()
        self._background: Counter[str] = Counter()

    def put(self, item: Item, place: int = 0) -> None:
        with self._condition:
            self._free.append((place, item))
            self._condition.notify_all()

    def get(self, client: str, wait: float, place: int | None = None) -> Item:
        """A free item for ``client``, at ``place`` if it is free, waiting at most ``wait``
        seconds (:class:`Timeout`). Its task ends with :meth:`release`."""
        deadline = time.monotonic() + wait
        with self._condition:
            waiter = _Waiter(client, place)
            self._waiting.append(waiter)
            try:
                while True:
                    chosen = self._choose()
                    if chosen is not None and chosen[0] is waiter:
                        for ahead in chosen[2]:
                            ahead.passed += 1
                        self._running[client] += 1
                        return self._free.pop(chosen[1])[1]
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise Timeout
                    self._condition.wait(remaining)
            finally:
                self._waiting.remove(waiter)
                self._condition.notify_all()

    def background(self, client: str) -> None:
        """Say that a task of ``client`` went to the background: the client gets nothing
        more until it is released."""
        with self._condition:
            self._background[client] += 1

    def release(self, client: str, seconds: float, background: bool = False) -> None:
        """End a task of ``client`` that used a worker for ``seconds`` (in the background
        for a while, or not)."""
        with self._condition:
            for count in (self._running, self._background) if background else (self._running,):
                count[client] -= 1
                if count[client] <= 0:
                    del count[client]
            self._charge(client, seconds)
            self._condition.notify_all()

    def charge(self, client: str, seconds: float) -> None:
        """Count ``seconds`` of worker time against ``client``."""
        with self._condition:
            self._charge(client, seconds)

    def usage(self, client: str) -> float:
        """The worker time ``client`` has used lately, in seconds (decayed)."""
        with self._condition:
            return self._used(client)

    def _charge(self, client: str, seconds: float) -> None:
        self._usage[client] = (self._used(client) + seconds, time.monotonic())
        if len(self._usage) > MAX_CLIENTS:
            for name in sorted(self._usage, key=self._used)[: len(self._usage) // 2]:
                del self._usage[name]

    def _used(self, client: str) -> float:
        seconds, when = self._usage.get(client, (0.0, 0.0))
        return seconds * 0.5 ** ((time.monotonic() - when) / HALF_LIFE)

    def _choose(self) -> tuple[_Waiter, int, list[_Waiter]] | None:
        """Who gets a free item now, which (its index in ``_free``) and whom it passes over,
        if anyone gets one."""
        if not self._free:
            return None
        light, heavy = [], []
        for waiter in self._waiting:
            if self._background[waiter.client]:
                continue
            if self._used(waiter.client) <= HEAVY:
                light.append(waiter)
            elif not self._running[waiter.client]:
                heavy.append(waiter)
        turn = light or heavy
        if not turn:
            return None
        places = {place: index for index, (place, _) in reversed(list(enumerate(self._free)))}
        for k, waiter in enumerate(turn[: self._lookahead]):
            if waiter.place in places:
                return waiter, places[waiter.place], turn[:k]
            if waiter.place is None or waiter.passed >= self._lookahead:
                return waiter, 0, turn[:k]
        return turn[0], 0, []
