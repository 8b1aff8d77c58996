"""The in-memory store: :class:`MemoryStore`, used when the disk cannot be (and by a disk store
for what it could not write)."""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Iterator

from .entries import check_key, check_text
from .protocol import DEFAULT_MAX_MB, MB


class MemoryStore:
    """A dict-backed :class:`Store` for this process only (LRU-bounded by ``max_bytes``).

    ``reason`` says why the disk is not used (shown by :meth:`info`).
    """

    def __init__(self, max_bytes: int = DEFAULT_MAX_MB * MB, reason: str | None = None):
        self.max_bytes = int(max_bytes)
        self.reason = reason
        self._items: OrderedDict[tuple[str, str], tuple[str, int]] = OrderedDict()
        self._bytes = 0
        self._mutex = threading.Lock()

    def get(self, namespace: str, key: str) -> str | None:
        """The stored text, or ``None``; a hit makes the entry most recently used."""
        check_key(namespace, key)
        with self._mutex:
            item = self._items.get((namespace, key))
            if item is None:
                return None
            self._items.move_to_end((namespace, key))
            return item[0]

    def put(self, namespace: str, key: str, text: str) -> None:
        """Store ``text``, evicting least-recently-used entries beyond ``max_bytes``."""
        check_key(namespace, key)
        check_text(text)
        size = len(text.encode("utf-8", "surrogatepass"))
        with self._mutex:
            old = self._items.pop((namespace, key), None)
            if old is not None:
                self._bytes -= old[1]
            self._items[(namespace, key)] = (text, size)
            self._bytes += size
            while self._bytes > self.max_bytes and len(self._items) > 1:
                _, (_, dropped) = self._items.popitem(last=False)
                self._bytes -= dropped

    @contextlib.contextmanager
    def building(self, namespace: str, key: str) -> Iterator[bool]:
        """No lock: a memory store is this process's own (yields False)."""
        check_key(namespace, key)
        yield False

    def discard(self, namespace: str, key: str) -> None:
        """Forget one entry if present."""
        with self._mutex:
            old = self._items.pop((namespace, key), None)
            if old is not None:
                self._bytes -= old[1]

    def __len__(self) -> int:
        return len(self._items)

    def info(self) -> dict:
        """``path`` None, ``kind`` "memory", entry count, total UTF-8 bytes, cap and reason."""
        with self._mutex:
            entries, size = len(self._items), self._bytes
        return {
            "path": None,
            "entries": entries,
            "bytes": size,
            "cap": self.max_bytes,
            "kind": "memory",
            "reason": self.reason,
        }

    def clear(self) -> int:
        """Forget everything; returns the number of entries removed."""
        with self._mutex:
            count = len(self._items)
            self._items.clear()
            self._bytes = 0
        return count
