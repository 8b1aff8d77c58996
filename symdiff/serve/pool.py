"""Worker processes with a time budget: a task that runs out of time is stopped by ending its
process, and a fresh process takes its place.

Python cannot stop a thread that is busy in SymPy, so every task of the classroom server runs
in a worker process of a :class:`WorkerPool`: one student's pathological input ends its own
worker, never the server or the other students' tasks. Workers are started by the
``forkserver`` method where the platform has it, from a server process that has already
imported what the tasks need (``preload``): a replacement is ready in milliseconds, not the
seconds an import of SymPy takes; elsewhere (or when the forkserver cannot start: its socket's
path in a deep temporary directory too long for the system) by ``spawn``. A worker warms up
(``warm``) before it says it is ready and gets a task, so a task's budget is never spent on
imports. It ignores Ctrl-C (the server stops it), and on Linux its memory is capped
(``memory_mb`` beyond what it holds when it starts), so a runaway task fails with a
``MemoryError`` instead of swapping the machine.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import ParseError, SymdiffError
from .fair import FairQueue, Timeout

#: A task: its name and its arguments (already checked), run by the pool's handler.
Handler = Callable[[str, dict[str, Any]], Any]


class Busy(Exception):
    """No worker became free in the time a request may wait."""


class OutOfTime(Exception):
    """The task ran longer than its budget; its worker was stopped and replaced."""


class WorkerLost(Exception):
    """The worker ended while running the task (it was replaced)."""


def error_details(error: SymdiffError) -> dict[str, Any]:
    """A symdiff error as data: its message (with the parser's caret line) and position."""
    position = error.position if isinstance(error, ParseError) else None
    return {"message": str(error), "position": position}


def _limit_memory(megabytes: int | None) -> None:
    """Cap this process's address space at what it holds now plus ``megabytes`` (Linux)."""
    if not megabytes:
        return
    try:
        import resource

        with open("/proc/self/statm", encoding="ascii") as statm:
            pages = int(statm.read().split()[0])
        limit = pages * os.sysconf("SC_PAGE_SIZE") + megabytes * 2**20
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, OSError, ValueError):
        pass  # not Linux: no cap


def _work(connection: Any, handler: Handler, memory_mb: int | None,
          warm: Callable[[], None] | None) -> None:
    """A worker's loop: warm up, say so, then run each task received and send back
    ``(status, value)``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if warm is not None:
        warm()
    _limit_memory(memory_mb)
    connection.send(("ready", None))
    while True:
        try:
            task, payload = connection.recv()
        except (EOFError, OSError):
            return
        try:
            reply: tuple[str, Any] = ("ok", handler(task, payload))
        except SymdiffError as error:
            reply = ("input", error_details(error))
        except MemoryError:
            connection.send(("memory", {"message": "the task needed more memory than a "
                                                   "worker may use"}))
            return  # the pool replaces this process
        except Exception as error:
            reply = ("internal", {"message": f"{type(error).__name__}: {error}"})
        connection.send(reply)


#: Seconds a new worker may take to start and warm up (imports of SymPy on a slow machine).
STARTUP = 300.0


class _Worker:
    def __init__(self, process: Any, connection: Any) -> None:
        self.process = process
        self.connection = connection

    def ready(self) -> bool:
        """Wait for the worker to say it is ready (whether it did)."""
        try:
            return self.connection.poll(STARTUP) and self.connection.recv()[0] == "ready"
        except (EOFError, OSError):
            return False

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.connection.close()
        if self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=5)


class WorkerPool:
    """``size`` worker processes running ``handler(task, payload)``, one task each at a time.

    :meth:`run` gives a task to a free worker (fairly among clients: :mod:`.fair`) and waits
    at most ``budget`` seconds for its answer; a worker that does not answer in time is killed
    and replaced (in the background, so the request answers at once). ``replaced`` counts the
    replacements.
    """

    def __init__(self, size: int, handler: Handler, preload: Sequence[str] = (),
                 memory_mb: int | None = None, warm: Callable[[], None] | None = None) -> None:
        if size < 1:
            raise ValueError("a pool needs at least one worker")
        methods = multiprocessing.get_all_start_methods()
        method = "forkserver" if "forkserver" in methods else "spawn"
        self._context = multiprocessing.get_context(method)
        if method == "forkserver" and preload:
            self._context.set_forkserver_preload(list(preload))
        self.method = method
        self._handler = handler
        self._memory_mb = memory_mb
        self._warm = warm
        self._idle: FairQueue[_Worker] = FairQueue()
        self._all: set[_Worker] = set()
        self._lock = threading.Lock()
        self._closed = False
        self.size = size
        self.replaced = 0
        try:
            starting = [self._start()]
        except OSError:  # no forkserver here (its socket's path too long for the system)
            if method != "forkserver":
                raise
            self._context, self.method = multiprocessing.get_context("spawn"), "spawn"
            starting = [self._start()]
        starting += [self._start() for _ in range(size - 1)]
        for worker in starting:  # they warm up at the same time
            if not worker.ready():
                self.close()
                raise RuntimeError("a worker process did not start")
            self._idle.put(worker)

    def _start(self) -> _Worker:
        parent, child = self._context.Pipe()
        process = self._context.Process(target=_work, name="symdiff-worker", daemon=True,
                                        args=(child, self._handler, self._memory_mb,
                                              self._warm))
        process.start()
        child.close()
        worker = _Worker(process, parent)
        with self._lock:
            self._all.add(worker)
        return worker

    def _restock(self) -> None:
        try:
            worker = self._start()
        except Exception:  # closing, or out of processes: the pool runs with one fewer
            return
        if self._closed or not worker.ready():
            worker.stop()
        else:
            self._idle.put(worker)

    def _replace(self, worker: _Worker) -> None:
        with self._lock:
            self._all.discard(worker)
            self.replaced += 1
        worker.stop()
        if not self._closed:
            threading.Thread(target=self._restock, name="symdiff-restock", daemon=True).start()

    def run(self, task: str, payload: dict[str, Any], budget: float, wait: float,
            client: str = "") -> tuple[str, Any]:
        """``(status, value)`` of ``task``: ``"ok"`` and the handler's value, ``"input"`` and a
        symdiff error's details, ``"internal"`` and an unexpected error's message. Raises
        :class:`Busy` when no worker is free within ``wait`` seconds, :class:`OutOfTime` when
        the task takes longer than ``budget`` seconds, :class:`WorkerLost` when the worker
        ends (out of memory). Free workers go first to the ``client`` that has used them least
        lately (:mod:`.fair`); the time a task takes is counted against its client."""
        try:
            worker = self._idle.get(client, wait)
        except Timeout:
            raise Busy from None
        start = time.monotonic()
        try:
            worker.connection.send((task, payload))
            ready = worker.connection.poll(budget)
            reply = worker.connection.recv() if ready else None
        except (EOFError, OSError):
            self._replace(worker)
            raise WorkerLost from None
        finally:
            self._idle.charge(client, time.monotonic() - start)
        if reply is None:
            self._replace(worker)
            raise OutOfTime(budget)
        status, value = reply
        if status == "memory" or not worker.process.is_alive():
            self._replace(worker)
        else:
            self._idle.put(worker)
        return status, value

    def pids(self) -> list[int]:
        """The process ids of the workers (alive or being replaced)."""
        with self._lock:
            return [w.process.pid for w in self._all]

    def close(self) -> None:
        """Stop every worker."""
        self._closed = True
        with self._lock:
            workers = list(self._all)
            self._all.clear()
        for worker in workers:
            worker.stop()
