"""Free workers handed out fairly: first come, first served, except that a client who has
used more than :data:`HEAVY` seconds of worker time lately waits behind everyone else.

A student whose inputs run out of time spends a whole budget each time, so the next free
worker goes to the others first; such a student is served when nobody else waits. A class
asking for textbook derivatives (a tenth of a second each) stays first come, first served.
Usage decays with a half-life of :data:`HALF_LIFE` seconds, so a heavy client is back to equal
terms a minute or two later. A client is who the page says it is (a random name per open page),
else its address; it is a matter of fairness, not of security.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from typing import Generic, TypeVar

HALF_LIFE = 60.0
#: Worker seconds used lately beyond which a client waits behind the others.
HEAVY = 5.0
#: Clients remembered at most; the least used are forgotten beyond this.
MAX_CLIENTS = 4096

Item = TypeVar("Item")


class Timeout(Exception):
    """Nothing became free for this request in the time it may wait."""


class FairQueue(Generic[Item]):
    """Items (free workers) put back by :meth:`put`, taken by :meth:`get` in fair order."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._free: deque[Item] = deque()
        self._waiting: list[tuple[int, str]] = []
        self._tickets = itertools.count()
        self._usage: dict[str, tuple[float, float]] = {}  # client -> (seconds, when)

    def put(self, item: Item) -> None:
        with self._condition:
            self._free.append(item)
            self._condition.notify_all()

    def get(self, client: str, wait: float) -> Item:
        """A free item for ``client``, waiting at most ``wait`` seconds (:class:`Timeout`)."""
        deadline = time.monotonic() + wait
        with self._condition:
            waiter = (next(self._tickets), client)
            self._waiting.append(waiter)
            try:
                while True:
                    if self._free and self._next() == waiter:
                        return self._free.popleft()
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise Timeout
                    self._condition.wait(remaining)
            finally:
                self._waiting.remove(waiter)
                self._condition.notify_all()

    def charge(self, client: str, seconds: float) -> None:
        """Count ``seconds`` of worker time against ``client``."""
        with self._condition:
            self._usage[client] = (self._used(client) + seconds, time.monotonic())
            if len(self._usage) > MAX_CLIENTS:
                for name in sorted(self._usage, key=self._used)[: len(self._usage) // 2]:
                    del self._usage[name]

    def usage(self, client: str) -> float:
        """The worker time ``client`` has used lately, in seconds (decayed)."""
        with self._condition:
            return self._used(client)

    def _used(self, client: str) -> float:
        seconds, when = self._usage.get(client, (0.0, 0.0))
        return seconds * 0.5 ** ((time.monotonic() - when) / HALF_LIFE)

    def _next(self) -> tuple[int, str]:
        return min(self._waiting, key=lambda waiter: (self._used(waiter[1]) > HEAVY, waiter[0]))
