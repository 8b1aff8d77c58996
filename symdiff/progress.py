"""Progress reports of long builds: which stage runs, how long each took, what it made.

A build (:func:`build`, around everything the pipeline does for one builder call) runs through
stages (:func:`stage`): ``parse``, ``derive`` (``simplify`` inside it, where derivatives are
simplified for reading), ``stable forms`` (the outputs rewritten in numerically stable forms),
``CSE``, ``print``, ``verify`` and ``compile``. A build that is still running after
:data:`DEFAULT_AFTER` seconds (``SYMDIFF_PROGRESS=<seconds>`` sets another threshold; ``0``,
``off``, ``false`` or ``no`` silences every report) is announced by a watcher thread, with the
stages done so far and the one running; from then on each stage is reported once it has ended
(when the next one starts: a stage entered again right after it ended goes on), with its time
and counts, and so is the end of the build (or the exception that stopped it,
``KeyboardInterrupt`` included). Shorter builds report nothing, except a ``KeyboardInterrupt``:
Ctrl-C is always answered with the stage it stopped.

Reports are records of the logger ``symdiff.progress`` at level INFO. Where logging is not
configured (no handler on that logger or its ancestors), each report is written to
``sys.stderr`` as one line, which terminals and Jupyter show as they come.

Nothing here runs when no build is being made: loading a cached function passes through
:func:`stage` (``verify``, ``compile``) as a no-op, and this module imports only the standard
library's light modules (``threading`` and ``logging`` when a build is first reported on).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

#: Builds running longer than this many seconds are reported (``SYMDIFF_PROGRESS`` overrides).
DEFAULT_AFTER = 1.0
#: The logger of the reports.
LOGGER = "symdiff.progress"
#: Values of ``SYMDIFF_PROGRESS`` that silence the reports.
SILENT = frozenset({"0", "off", "false", "no"})

_BUILD: contextvars.ContextVar[_Build | None] = contextvars.ContextVar("symdiff_build",
                                                                       default=None)


def threshold() -> float | None:
    """Seconds after which a build is reported (``SYMDIFF_PROGRESS``), or None: never."""
    setting = os.environ.get("SYMDIFF_PROGRESS", "").strip().lower()
    if not setting:
        return DEFAULT_AFTER
    if setting in SILENT:
        return None
    try:
        seconds = float(setting)
    except ValueError:
        return DEFAULT_AFTER  # "1", "on", "yes" or anything else: the default
    return seconds if seconds > 0 else None


def emit(message: str) -> None:
    """One report: a record of ``symdiff.progress`` at INFO, or a line on ``sys.stderr`` where
    logging is not configured."""
    import logging

    logger = logging.getLogger(LOGGER)
    if logger.hasHandlers():
        logger.info(message)
    else:
        print(message, file=sys.stderr, flush=True)


class _Stage:
    """A stage's time and counts, and those of the stages run inside it (by name)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.seconds = 0.0
        self.calls = 0
        self.counts: dict[str, Any] = {}
        self.inner: dict[str, _Stage] = {}

    def text(self) -> str:
        """``derive 2.31 s (2 outputs; mode forward; simplify 1.90 s in 2 calls)``."""
        details = [(f"{v:,} {k[:-1] if v == 1 and k.endswith('s') else k}"
                    if isinstance(v, int) else f"{k} {v}") for k, v in self.counts.items()]
        details += [f"{s.name} {s.seconds:.2f} s" + (f" in {s.calls:,} calls" if s.calls > 1
                                                      else "") for s in self.inner.values()]
        return f"{self.name} {self.seconds:.2f} s" + (f" ({'; '.join(details)})"
                                                       if details else "")


class _Build:
    """The stages of one build and whether it has been announced (the watcher thread and the
    building thread share it, under ``lock``)."""

    def __init__(self, title: Callable[[], str], after: float) -> None:
        import threading

        self.title = title
        self.start = time.perf_counter()
        self.lock = threading.Lock()
        self.announced = False
        self.over = False  # the build has ended: too late to announce it
        self.done: list[_Stage] = []  # top-level stages ended, in order
        self.reported = 0  # how many of them have been reported
        self.running: list[tuple[_Stage, float]] = []  # the stages entered, outermost first
        self.stopped_in: str | None = None  # the stages an exception left, innermost last
        self.timer = threading.Timer(after, self.announce)
        self.timer.daemon = True

    def _elapsed(self) -> float:
        return time.perf_counter() - self.start

    def _now_running(self) -> str:
        names = [s.name for s, _ in self.running]
        return " > ".join(names) if names else "between stages"

    def announce(self) -> None:
        """The first report (from the watcher thread): the stages so far, the one running."""
        with self.lock:
            if self.announced or self.over:
                return
            self.announced = True
            self.reported = len(self.done)
            done = "".join(f"{s.text()}; " for s in self.done)
            message = (f"symdiff: building {self.title()} ({self._elapsed():.1f} s so far): "
                       f"{done}running {self._now_running()}")
            emit(message)  # (under the lock: before any stage's line the build thread writes)

    def _pending(self) -> list[str]:
        """The lines of the top-level stages ended and not yet reported (under ``lock``)."""
        if not self.announced:
            return []
        lines = [f"symdiff: {s.text()}" for s in self.done[self.reported:]]
        self.reported = len(self.done)
        return lines

    def enter(self, name: str) -> tuple[_Stage, bool]:
        """Enter stage ``name``: the stage, and whether it is timed (not when it is the stage
        running already, entered again from inside)."""
        lines: list[str] = []
        with self.lock:
            if self.running and self.running[-1][0].name == name:
                return self.running[-1][0], False
            if self.running:  # a stage inside another: accumulated by name in its parent
                parent = self.running[-1][0]
                found = parent.inner.setdefault(name, _Stage(name))
            elif self.done and self.done[-1].name == name and self.reported < len(self.done):
                found = self.done.pop()  # the same stage again, right after: it goes on
            else:
                found = _Stage(name)
                lines = self._pending()
            self.running.append((found, time.perf_counter()))
        for line in lines:
            emit(line)
        return found, True

    def leave(self, found: _Stage, failed: bool) -> None:
        """Leave ``found`` (``failed``: by an exception); a top-level stage that ends is
        reported when the next one starts, or the build ends."""
        with self.lock:
            if failed and self.stopped_in is None:
                self.stopped_in = self._now_running()
            entered = self.running.pop()[1]
            found.seconds += time.perf_counter() - entered
            found.calls += 1
            if not self.running and not failed:  # (an exception: the end says where)
                self.done.append(found)

    def end(self, error: BaseException | None) -> None:
        """The build is over: stop the watcher; report the end if the build was announced."""
        self.timer.cancel()
        with self.lock:
            self.over = True
            if not self.announced and not isinstance(error, KeyboardInterrupt):
                return  # (Ctrl-C is answered with where it stopped, however soon)
            lines = self._pending()
            if error is None:
                message = f"symdiff: built {self.title()} in {self._elapsed():.2f} s"
            else:
                where = self.stopped_in or self._now_running()
                message = (f"symdiff: {type(error).__name__} in {where} after "
                           f"{self._elapsed():.2f} s: {self.title()} not built")
        for line in [*lines, message]:
            emit(line)


@contextlib.contextmanager
def build(title: Callable[[], str]) -> Iterator[None]:
    """Report this build if it runs long (``title()``: what is built, asked for only then).
    Inside another build (a function that needs another), the outer build's report goes on."""
    after = threshold() if _BUILD.get() is None else None
    if after is None:
        yield
        return
    made = _Build(title, after)
    token = _BUILD.set(made)
    try:
        made.timer.start()  # (inside: Ctrl-C while the watcher starts is answered too)
        yield
    except BaseException as error:
        made.end(error)
        raise
    else:
        made.end(None)
    finally:
        _BUILD.reset(token)


@contextlib.contextmanager
def stage(name: str) -> Iterator[dict[str, Any]]:
    """The stage ``name`` of the build running in this context (a no-op outside a build).
    Yields a dict for the stage's counts (``counts["temporaries"] = 412``), added up over the
    stage's calls."""
    made = _BUILD.get()
    counts: dict[str, Any] = {}
    if made is None:
        yield counts
        return
    found, timed = made.enter(name)
    failed = True
    try:
        yield counts
        failed = False
    finally:
        with made.lock:
            for key, value in counts.items():
                if isinstance(value, int) and isinstance(found.counts.get(key), int):
                    found.counts[key] += value
                else:
                    found.counts[key] = value
        if timed:
            made.leave(found, failed)


def describe(kind: str, exprs: Any, wrt: Any) -> Callable[[], str]:
    """The title of a build of ``kind`` (``grad of sin(x)*y wrt x, y``), made when asked."""

    def title() -> str:
        first = exprs[0] if isinstance(exprs, list | tuple) and exprs else exprs
        if isinstance(first, str):
            text = " ".join(first.split())
        elif callable(first) and hasattr(first, "__qualname__"):
            text = f"{first.__qualname__}()"
        else:  # a SymPy expression: printing a large one could take long
            text = f"a SymPy {type(first).__name__}"
        if len(text) > 60:
            text = text[:57] + "..."
        more = f" (and {len(exprs) - 1} more)" if isinstance(exprs, list | tuple) \
            and len(exprs) > 1 else ""
        names = [wrt] if isinstance(wrt, str) else list(wrt or ())
        shown = ", ".join(names[:5]) + (f", ... ({len(names)} names)" if len(names) > 5 else "")
        return f"{kind} of {text}{more}" + (f" wrt {shown}" if names else "")

    return title
