"""The classroom application: requests checked (:mod:`.fields`), answered once
(:mod:`.results`) by worker processes under a time budget (:mod:`.pool`).

Two pools share the machine: a *quick* one (one worker) for what the page asks for while a
student types (the preview of what was understood, a practice set's exercises), and a
*main* one for derivations, answer checks, plots, graphs, code and worksheets, so a preview
never waits behind another student's derivation.

Every outcome is an HTTP answer with a JSON body ``{"ok": true, ...}`` or ``{"ok": false,
"error": ..., "kind": ...}``. Input that symdiff refuses (``kind`` ``"input"``, with the
parser's position), that runs out of time (``"time"``) or of memory (``"memory"``) is an
answer like any other (``200``): students type unfinished expressions all the time. ``503``
says every worker stayed busy for as long as a request may wait, ``500`` an unexpected error.
Answers to identical requests are kept, those of inputs that ran out of time too (they would
again).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

from . import fields
from .pool import Busy, OutOfTime, WorkerLost, WorkerPool
from .results import Answer, Results

#: The tasks the quick pool runs; every other task runs in the main pool.
QUICK_TASKS = frozenset({"preview", "practice"})
JSON = "application/json; charset=utf-8"
HTML = "text/html; charset=utf-8"
#: The modules a worker needs, imported once by the process workers are started from.
PRELOAD = ("symdiff.serve.preload",)


@dataclass(frozen=True)
class Settings:
    """How the application runs: ``workers`` main worker processes (by default one more than
    the machine has cores, from 2 to 8: a task that has just begun and will not end soon holds
    one while the others keep every core), each task at most ``budget`` seconds, moved to the
    background after ``foreground`` seconds of CPU time (:mod:`.pool`; a first or second
    derivative of the textbook examples and of the hardest practice exercises, or its plot,
    graph, code or answer check, needs at most 0.4 s), a request waiting at most ``wait``
    seconds for a free worker, a worker using at most ``memory_mb`` more memory than it starts
    with (Linux)."""

    workers: int = max(2, min(8, (os.cpu_count() or 1) + 1))
    budget: float = 10.0
    foreground: float = 0.5
    wait: float = 30.0
    memory_mb: int | None = 2048
    cache_entries: int = 2048
    cache_bytes: int = 64 * 2**20


def body(data: dict[str, Any]) -> bytes:
    return json.dumps(data, separators=(",", ":")).encode("utf-8")


def failure(status: int, message: str, kind: str, position: int | None = None) -> Answer:
    return Answer(status, JSON, body({"ok": False, "error": message, "kind": kind,
                                      "position": position}))


class Classroom:
    """The application behind the HTTP server: :meth:`answer` a task's request."""

    def __init__(self, settings: Settings | None = None) -> None:
        from .tasks import handle, warm

        self.settings = settings or Settings()
        self.results = Results(self.settings.cache_entries, self.settings.cache_bytes)
        memory = self.settings.memory_mb
        foreground = self.settings.foreground
        self.quick = WorkerPool(1, handle, PRELOAD, memory, warm, foreground)
        self.main = WorkerPool(self.settings.workers, handle, PRELOAD, memory, warm, foreground)

    def close(self) -> None:
        self.quick.close()
        self.main.close()

    def answer(self, task: str, raw: dict[str, Any], client: str = "") -> Answer:
        """The answer to ``task`` with the request body ``raw`` (checked here, raising
        :class:`~.fields.BadRequest`), from the store when it was answered before; ``client``
        says who asks (workers are shared fairly between clients)."""
        request = fields.checked(task, raw)
        return self.results.answer(fields.key(task, request),
                                   lambda: self._compute(task, request, client))

    def _compute(self, task: str, request: dict[str, Any], client: str
                 ) -> tuple[Answer, bool]:
        pool = self.quick if task in QUICK_TASKS else self.main
        budget = self.settings.budget
        try:
            status, value = pool.run(task, request, budget, self.settings.wait, client,
                                     request.get("expr") or request.get("seed"))
        except Busy:
            return failure(503, "every worker is busy; try again in a moment", "busy"), False
        except OutOfTime:
            return failure(200, f"this takes longer than the {budget:g} s a request may take",
                           "time"), True
        except WorkerLost:
            return failure(200, "this needs more memory than a request may use", "memory"), True
        if status == "input":
            return failure(200, value["message"], "input", value["position"]), True
        if status != "ok":
            return failure(500, value["message"], "internal"), False
        if isinstance(value, str):  # a whole page
            return Answer(200, HTML, value.encode("utf-8")), True
        return Answer(200, JSON, body({"ok": True, **value})), True
