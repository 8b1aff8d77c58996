"""Answers to identical requests, computed once.

A bounded least-recently-used store of finished answers (at most ``entries`` of them and
``size`` bytes in all), and the requests in progress: a second identical request arriving
while the first is computed waits for that answer instead of occupying another worker (a
class typing the same textbook example at once costs one derivation).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Answer:
    """An HTTP answer: status, content type and body."""

    status: int
    content_type: str
    body: bytes


class _Pending:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.answer: Answer | None = None
        self.error: BaseException | None = None


class Results:
    """The store of answers (see the module's docstring)."""

    def __init__(self, entries: int = 2048, size: int = 64 * 2**20) -> None:
        self._entries, self._size = entries, size
        self._store: OrderedDict[str, Answer] = OrderedDict()
        self._bytes = 0
        self._pending: dict[str, _Pending] = {}
        self._lock = threading.Lock()
        self.hits = self.misses = 0

    def __len__(self) -> int:
        return len(self._store)

    def answer(self, key: str, compute: Callable[[], tuple[Answer, bool]]) -> Answer:
        """The answer stored for ``key``, or the one a request in progress for it gets, or
        ``compute()``'s (an answer and whether to keep it)."""
        with self._lock:
            found = self._store.get(key)
            if found is not None:
                self._store.move_to_end(key)
                self.hits += 1
                return found
            pending = self._pending.get(key)
            owner = pending is None
            if owner:
                pending = self._pending[key] = _Pending()
                self.misses += 1
            else:
                self.hits += 1
        assert pending is not None
        if not owner:
            pending.done.wait()
            if pending.answer is None:
                raise pending.error or RuntimeError("no answer")
            return pending.answer
        try:
            answer, keep = compute()
        except BaseException as error:
            pending.error = error
            raise
        else:
            pending.answer = answer
            if keep:
                self._keep(key, answer)
            return answer
        finally:
            with self._lock:
                self._pending.pop(key, None)
            pending.done.set()

    def _keep(self, key: str, answer: Answer) -> None:
        if len(answer.body) > self._size:
            return
        with self._lock:
            old = self._store.pop(key, None)
            if old is not None:
                self._bytes -= len(old.body)
            self._store[key] = answer
            self._bytes += len(answer.body)
            while len(self._store) > self._entries or self._bytes > self._size:
                _, dropped = self._store.popitem(last=False)
                self._bytes -= len(dropped.body)
