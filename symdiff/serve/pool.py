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

A task that has used more than ``foreground`` seconds of CPU time (more than a classroom
exercise needs; where the system does not say, Linux's ``/proc``, of wall time) moves to the
background: its process gets the lowest CPU priority, so it runs on what the other
tasks leave of the machine, and a fresh worker takes its place in the pool, so the pool keeps
its size (at most ``size`` tasks in the background at once; beyond that a task keeps its place
in the pool, at the lowest priority). A process cannot take back the priority it gave up, so
it ends with its task. One student's pathological input then costs the others neither a
worker nor a core, and it still gets its answer if the machine has time to spare within the
budget.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
import time
from collections import OrderedDict
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


#: The niceness of a task moved to the background: the lowest CPU priority (POSIX).
LOWEST = 19


def lower_priority(pid: int) -> None:
    """Give every thread of process ``pid`` the lowest CPU priority, where the platform has
    priorities (on Linux a thread has its own, so each is changed)."""
    if not hasattr(os, "setpriority"):
        return
    try:
        threads = [int(name) for name in os.listdir(f"/proc/{pid}/task")]
    except (OSError, ValueError):
        threads = [pid]
    for thread in threads:
        with contextlib.suppress(OSError):
            os.setpriority(os.PRIO_PROCESS, thread, LOWEST)


#: Texts whose place is remembered, at most (the least recently used are forgotten).
HOMES = 4096
#: Seconds between two looks at the CPU time of a task that may go to the background.
WATCH = 0.05


def cpu_seconds(pid: int) -> float | None:
    """The CPU time process ``pid`` has used (all its threads), where the system says
    (``/proc``: Linux)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class _Usage:
    """The CPU time a process has used since this was made; its wall time where the system
    does not say."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.cpu = cpu_seconds(pid)
        self.wall = time.monotonic()

    def seconds(self) -> float:
        now = None if self.cpu is None else cpu_seconds(self.pid)
        return time.monotonic() - self.wall if now is None else now - self.cpu


class _Worker:
    def __init__(self, process: Any, connection: Any, place: int) -> None:
        self.process = process
        self.connection = connection
        self.place = place
        self.substituted = False  # moved to the background, another worker in its place

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

    :meth:`run` gives a task to a free worker (fairly among clients, and where its ``near``
    text ran before: :mod:`.fair`) and waits at most ``budget`` seconds for its answer; a
    worker that does not answer in time is killed and replaced (in the background, so the
    request answers at once). A task that uses more than ``foreground`` seconds of CPU time
    moves to the background (see the module's docstring); ``None``: never. ``replaced``
    counts the workers ended for time or memory, ``backgrounded`` the tasks moved to the
    background.
    """

    def __init__(self, size: int, handler: Handler, preload: Sequence[str] = (),
                 memory_mb: int | None = None, warm: Callable[[], None] | None = None,
                 foreground: float | None = None) -> None:
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
        self._idle: FairQueue[_Worker] = FairQueue(lookahead=size)
        self._homes: OrderedDict[str, int] = OrderedDict()  # text -> place it last ran at
        self._all: set[_Worker] = set()
        self._lock = threading.Lock()
        self._closed = False
        self.size = size
        self.foreground = foreground
        self.replaced = self.backgrounded = 0
        self._background = 0  # tasks in the background with a substitute in their place
        try:
            starting = [self._start(0)]
        except OSError:  # no forkserver here (its socket's path too long for the system)
            if method != "forkserver":
                raise
            self._context, self.method = multiprocessing.get_context("spawn"), "spawn"
            starting = [self._start(0)]
        starting += [self._start(place) for place in range(1, size)]
        for worker in starting:  # they warm up at the same time
            if not worker.ready():
                self.close()
                raise RuntimeError("a worker process did not start")
            self._idle.put(worker, worker.place)

    def _start(self, place: int) -> _Worker:
        parent, child = self._context.Pipe()
        process = self._context.Process(target=_work, name="symdiff-worker", daemon=True,
                                        args=(child, self._handler, self._memory_mb,
                                              self._warm))
        process.start()
        child.close()
        worker = _Worker(process, parent, place)
        with self._lock:
            self._all.add(worker)
        return worker

    def _restock(self, place: int) -> None:
        """Start a worker at ``place`` (in a thread of its own: it takes a moment)."""
        def start() -> None:
            try:
                worker = self._start(place)
            except Exception:  # closing, or out of processes: the pool runs with one fewer
                return
            if self._closed or not worker.ready():
                worker.stop()
                with self._lock:
                    self._all.discard(worker)
            else:
                self._idle.put(worker, place)

        if not self._closed:
            threading.Thread(target=start, name="symdiff-restock", daemon=True).start()

    def _retire(self, worker: _Worker, replaced: bool) -> None:
        """End ``worker`` (counted in ``replaced`` if it ran out of time or memory) and start
        another at its place, unless a substitute took it when its task went to the
        background."""
        with self._lock:
            self._all.discard(worker)
            self.replaced += replaced
            if worker.substituted:
                self._background -= 1
        worker.stop()
        if not worker.substituted:
            self._restock(worker.place)

    def _to_background(self, worker: _Worker) -> None:
        """Lower the priority of ``worker``'s process and, unless ``size`` tasks are in the
        background already, start a substitute at its place."""
        lower_priority(worker.process.pid)
        with self._lock:
            self.backgrounded += 1
            if self._background >= self.size:
                return
            self._background += 1
            worker.substituted = True
        self._restock(worker.place)

    def home(self, near: str | None) -> int | None:
        """The place of the worker that last ran a task ``near`` the same text, if any."""
        if near is None:
            return None
        with self._lock:
            return self._homes.get(near)

    def _remember(self, near: str | None, place: int) -> None:
        if near is None:
            return
        with self._lock:
            self._homes[near] = place
            self._homes.move_to_end(near)
            if len(self._homes) > HOMES:
                self._homes.popitem(last=False)

    def run(self, task: str, payload: dict[str, Any], budget: float, wait: float,
            client: str = "", near: str | None = None) -> tuple[str, Any]:
        """``(status, value)`` of ``task``: ``"ok"`` and the handler's value, ``"input"`` and a
        symdiff error's details, ``"internal"`` and an unexpected error's message. Raises
        :class:`Busy` when no worker is free within ``wait`` seconds, :class:`OutOfTime` when
        the task takes longer than ``budget`` seconds, :class:`WorkerLost` when the worker
        ends (out of memory). Free workers go to clients fairly (:mod:`.fair`), first to the
        one that ran a task ``near`` the same text (tasks of one expression); the time a task
        takes is counted against its client."""
        try:
            worker = self._idle.get(client, wait, self.home(near))
        except Timeout:
            raise Busy from None
        self._remember(near, worker.place)
        start = time.monotonic()
        background = False
        used = _Usage(worker.process.pid)
        try:
            worker.connection.send((task, payload))
            deadline = start + budget
            while True:
                remaining = deadline - time.monotonic()
                watching = not background and self.foreground is not None
                if remaining <= 0 or worker.connection.poll(
                        min(remaining, WATCH) if watching else remaining):
                    break
                if watching and used.seconds() > self.foreground:
                    background = True
                    self._idle.background(client)
                    self._to_background(worker)
            reply = worker.connection.recv() if remaining > 0 else None
        except (EOFError, OSError):
            self._retire(worker, replaced=True)
            raise WorkerLost from None
        finally:
            self._idle.release(client, time.monotonic() - start, background)
        if reply is None:
            self._retire(worker, replaced=True)
            raise OutOfTime(budget)
        status, value = reply
        if status == "memory" or not worker.process.is_alive():
            self._retire(worker, replaced=True)
        elif background:
            self._retire(worker, replaced=False)
        else:
            self._idle.put(worker, worker.place)
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
