"""A bounded in-process memo: :class:`LRU`, a mapping that keeps only its most recently used
entries. The memos of compiled functions (:data:`MEMO_SIZE` each) use it, so that a process
that builds thousands of different functions holds a bounded number of them."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

MEMO_SIZE = 128
"""How many functions each in-process memo keeps (the most recently used)."""

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """At most ``size`` entries; reading one makes it the most recently used, adding one
    beyond ``size`` forgets the least recently used. Safe to share between threads."""

    def __init__(self, size: int = MEMO_SIZE):
        self.size = size
        self._items: OrderedDict[K, V] = OrderedDict()
        self._mutex = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value of ``key`` (now the most recently used), or None."""
        with self._mutex:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        """Store ``value`` under ``key``, forgetting the least recently used beyond the size."""
        with self._mutex:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._mutex:
            self._items.clear()

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items
