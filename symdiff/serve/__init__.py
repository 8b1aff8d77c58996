"""``symdiff serve``: the classroom page as a local web application.

One page (``static/``) to type an expression and see what was understood, reveal its
derivation one hint and one step at a time, check an answer, plot f and f', see the
computational graph with values at a point and the generated NumPy code, and practise with
exercises from a seed; each asks the server for what symdiff computes
(:mod:`symdiff.classroom`).

The server is the standard library's (``http.server``): the page needs a handful of JSON
routes and nothing a framework adds, and ``symdiff serve`` then works offline on any
installation, with no package to add in a classroom. What keeps a class from breaking it is
symdiff's own: requests bounded and checked before they are computed (:mod:`.fields`), every
computation in a worker process under a time budget, ended and replaced when it runs out
(:mod:`.pool`), answers to identical requests computed once (:mod:`.results`), connections
bounded and timed out (:mod:`.server`). Nothing is written to disk but symdiff's cache of
generated modules (:func:`keep_writes_in_cache`).

Modules: ``fields`` (what a request may contain), ``tasks`` (what a worker computes),
``pool`` (the worker processes), ``results`` (answers kept), ``app`` (the application:
the three together), ``server`` (HTTP), ``preload`` (warms the workers' parent process).
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from ..errors import SymdiffError
from .app import Classroom, Settings
from .server import LOOPBACK, ClassroomServer

DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 8000


def warning(host: str, port: int) -> str | None:
    """What to say before listening on ``host``: nothing for a loopback address."""
    if host in LOOPBACK or host.startswith("127."):
        return None
    return (f"warning: listening on {host} port {port}: every device that can reach this "
            "computer (the classroom network, and beyond it if the network lets it through) "
            "can use the page. It has no login and no encryption; stop it with Ctrl-C when "
            "the lesson ends.")


def _lan_address() -> str | None:
    """This computer's address on the local network, if it has one (nothing is sent)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("10.255.255.255", 1))
            return probe.getsockname()[0]
    except OSError:
        return None


def keep_writes_in_cache() -> None:
    """Send the copies of generated modules that tracebacks read (``SYMDIFF_SOURCE_DIR``,
    :func:`symdiff.codegen.load.source_dir`) beside the entries of symdiff's cache, unless
    the user chose a place: the server writes nothing outside the cache's directory."""
    if os.environ.get("SYMDIFF_SOURCE_DIR", "").strip():
        return
    import symdiff as sd

    path = sd.cache_info().get("path")
    if path is not None:
        os.environ["SYMDIFF_SOURCE_DIR"] = str(Path(path).parent / "sources")


def stoppable_by_ctrl_c() -> None:
    """Make Ctrl-C (SIGINT) raise ``KeyboardInterrupt`` in this process, as the server says it
    does: a process started by one that ignores or blocks SIGINT inherits that (Python keeps
    an inherited ``SIG_IGN``), and such a server could only be killed. Only from the main
    thread, where Python handles signals."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def serve(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT, settings: Settings | None = None,
          say: Callable[[str], None] | None = None) -> None:
    """Serve the classroom page on ``host``:``port`` until interrupted (Ctrl-C).

    ``port=0`` takes any free port; the address is said (``say``, default: printed to
    stdout) once the workers are ready. Raises :class:`~symdiff.SymdiffError` when the address
    cannot be used (a port in use)."""
    say = say or (lambda text: print(text, flush=True))
    stoppable_by_ctrl_c()
    try:
        server = ClassroomServer((host, port), None)  # the address first: fail fast
    except OSError as error:
        raise SymdiffError(f"cannot listen on {host} port {port}: "
                           f"{error.strerror or error}; choose another with --port") from error
    caution = warning(host, port)
    if caution:
        print(f"symdiff serve: {caution}", file=sys.stderr, flush=True)
    keep_writes_in_cache()
    classroom = Classroom(settings)
    server.classroom = classroom
    bound = server.server_address[1]
    shown = f"[{host}]" if ":" in host else host
    try:  # (from here on Ctrl-C stops the server as it says, whenever it comes)
        if host in ("0.0.0.0", "::"):
            lan = _lan_address()
            shown = "127.0.0.1"
            if lan:
                say(f"symdiff serve: for the class, http://{lan}:{bound}/")
        say(f"symdiff serve: the classroom page is at http://{shown}:{bound}/ (Ctrl-C stops "
            "it)")
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        classroom.close()


__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "Classroom", "Settings", "serve", "warning"]
