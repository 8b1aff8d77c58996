"""Builds on a thread with a large C stack: :func:`on_large_stack`.

Parsing, deriving, simplifying and printing recurse once per level of an expression (SymPy's
walks, the engine's rules, Python's parser and compiler), so a build raises the interpreter's
recursion limit (:data:`symdiff.pipeline.BUILD_RECURSION_LIMIT`). That limit counts Python
frames, not bytes of the C stack: where the recursion passes through C (SymPy's cache
wrappers, the comparison of tuples of arguments, ``all`` over a generator), each level takes
a kilobyte or more of C stack, and a few thousand levels overflowed the 8 MB stack of the main
thread (a segmentation fault, where a clear error was due), let alone a thread's smaller
default stack (512 kB on macOS). So a build runs on a thread of its own with
:data:`STACK_BYTES` of stack: address space reserved, memory taken only as deep as the build
goes. There the recursion limit is met, and reported as a clear error, long before the stack
ends.

The calling thread waits; a ``KeyboardInterrupt`` it receives (Ctrl-C) is raised in the
building thread too, and the build ends there before the caller goes on. The build runs in a
copy of the caller's context (``contextvars``: the progress report, NumPy's ``errstate``) and
with the caller's SymPy parameters (``sympy.evaluate``), which SymPy keeps per thread. A
build started from a building thread (a function that needs another one) runs where it is, and
so does a build under a profiler (``cProfile``, ``sys.setprofile``): a profiler's hook belongs
to the thread that set it, and the profile is to show the build.
"""

from __future__ import annotations

import contextvars
import ctypes
import sys
import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

#: The stack of a building thread: room for far more than the build's recursion limit of the
#: deepest frames seen (a few kB each).
STACK_BYTES = 512 * 2**20
#: The SymPy parameters a building thread takes from its caller (SymPy keeps them per thread).
SYMPY_PARAMETERS = ("evaluate", "distribute", "exp_is_pow")

_HERE = threading.local()  # ``building`` is set on building threads
_STARTING = threading.Lock()  # ``threading.stack_size`` is process-wide


def on_large_stack(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` on a thread with a stack of :data:`STACK_BYTES` (see the module notes),
    its result returned and its exception raised here; where no such thread can be made, or
    on a building thread already or under a profiler, here."""
    if getattr(_HERE, "building", False) or sys.getprofile() is not None:
        return fn(*args)
    from sympy.core.parameters import global_parameters

    parameters = {name: getattr(global_parameters, name) for name in SYMPY_PARAMETERS}
    context = contextvars.copy_context()
    outcome: list[tuple[bool, Any]] = []

    def build() -> None:
        _HERE.building = True
        try:
            for name, value in parameters.items():
                if getattr(global_parameters, name) != value:  # (setting one clears SymPy's cache)
                    setattr(global_parameters, name, value)
            outcome.append((True, context.run(fn, *args)))
        except BaseException as error:
            outcome.append((False, error))

    thread = _started(build)
    if thread is None:
        return fn(*args)
    try:
        thread.join()
    except BaseException as interrupt:  # Ctrl-C while waiting: the build stops too
        _raise_in(thread, type(interrupt))
        thread.join()
        raise
    finished, value = outcome.pop()
    if finished:
        return value
    try:
        raise value
    finally:
        value = None  # (no cycle through this frame and the exception's traceback)


def _started(target: Callable[[], None]) -> threading.Thread | None:
    """A daemon thread with a stack of :data:`STACK_BYTES` running ``target``, started; None
    where the platform refuses a stack of that size or a new thread."""
    with _STARTING:
        try:
            previous = threading.stack_size(STACK_BYTES)
        except (ValueError, RuntimeError):
            return None
        try:
            thread = threading.Thread(target=target, name="symdiff-build", daemon=True)
            thread.start()
        except RuntimeError:  # (no thread of that size could be made)
            return None
        finally:
            threading.stack_size(previous)
    return thread


def _raise_in(thread: threading.Thread, kind: type[BaseException]) -> None:
    """Raise ``kind`` in ``thread`` at its next Python instruction."""
    if thread.ident is not None and thread.is_alive():
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident),
                                                   ctypes.py_object(kind))
