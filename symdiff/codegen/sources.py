"""Copies of generated modules on disk, for the tracebacks that read lines from files.

:mod:`linecache` serves the generated lines to the ``traceback`` module, IPython, pdb and
``inspect``, but the interpreter's own printer of an uncaught exception (``python script.py``,
up to Python 3.12) reads source lines from the file named by the code object. So a module is
compiled under the path of a copy, ``<name>-<first 24 hex digits of its SHA-256>.py`` in
:func:`source_dir` (``$SYMDIFF_SOURCE_DIR``, else ``<tmp>/symdiff-sources-<uid>``, mode 0o700):

- a function cached on disk has its copy written when it is loaded (:func:`write_copy`);
- one built with ``cache=False`` has none written unless a traceback needs it: an uncaught
  exception passing through its code writes the copy just before the default hook prints it
  (:func:`copy_later`).

Copies are content-addressed (one file per distinct module, written once), capped at
:data:`SOURCES_MAX_MB` (least recently loaded removed first: a load touches its copy), and
removed by ``symdiff cache clear`` (:func:`clear_copies`). A copy is only ever read to display
lines; the code runs from the text that was verified. Where the directory is unusable (not
creatable, not a directory, another user's, writable by others), nothing is written and
linecache still serves the lines.
"""

from __future__ import annotations

import contextlib
import hashlib
import linecache
import os
import re
import stat
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

SOURCES_MAX_MB = 20
"""Cap of the directory of copies, in MiB: beyond it, the least recently loaded go."""
SCAN_EVERY_WRITES = 32
"""A process measures the directory at its first write of a copy and then every this many."""
_COPY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*-[0-9a-f]{24}\.py")
_TEMP_PREFIX = ".tmp-"
_STALE_TEMP_SECONDS = 600.0

_mutex = threading.Lock()
_writes_until_scan = 0
#: Files not written yet (``cache=False``) that a traceback may need, by path: the count of
#: live functions compiled under each (:func:`copy_later`, :func:`forget_later`).
_LATER: dict[str, int] = {}


def source_dir() -> Path:
    """Where copies of generated sources go: ``$SYMDIFF_SOURCE_DIR``, else a per-user directory
    in the system's temporary directory."""
    configured = os.environ.get("SYMDIFF_SOURCE_DIR", "").strip()
    if configured:
        return Path(configured)
    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return Path(_temporary_dir()) / f"symdiff-sources-{user}"


def _temporary_dir() -> str:
    """The system's directory of temporary files: ``$TMPDIR`` (``$TEMP``, ``$TMP``) where set,
    else ``/tmp`` on POSIX systems, else :func:`tempfile.gettempdir` (imported only then:
    loading a cached function should not import ``tempfile``)."""
    for name in ("TMPDIR", "TEMP", "TMP"):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    if os.name == "posix":
        return "/tmp"
    import tempfile

    return tempfile.gettempdir()


def copy_path(source: str, name: str, salt: str = "") -> Path:
    """The path of the copy of ``source`` (whose function is ``name``); ``salt``, a text that
    the file's name depends on besides the source (what the module's compiled code holds of
    other files)."""
    digest = hashlib.sha256((source + salt).encode("utf-8")).hexdigest()[:24]
    return source_dir() / f"{name}-{digest}.py"


def write_copy(source: str, name: str, salt: str = "") -> str | None:
    """The path of a file holding exactly ``source`` (written now if missing, touched if there),
    or None when the directory is unusable (``salt``: as for :func:`copy_path`)."""
    path = copy_path(source, name, salt)
    try:
        if not _private_dir(path.parent):
            return None
        try:
            os.utime(path)  # there already: now the most recently used
            return str(path)
        except FileNotFoundError:
            pass
        _write(path, source.encode("utf-8"))
    except OSError:
        return None
    _count_write(path.parent)
    return str(path)


def _write(path: Path, data: bytes) -> None:
    import tempfile  # (a write: not when the copy is there already)

    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=_TEMP_PREFIX, suffix=".py")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def _private_dir(directory: Path) -> bool:
    """Create ``directory`` (mode 0o700) if needed; whether it is a real directory of ours
    that nobody else can write to."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(directory, 0o700)
    info = os.lstat(directory)
    if not stat.S_ISDIR(info.st_mode):
        return False
    return os.name != "posix" or (info.st_uid == os.getuid() and not info.st_mode & 0o022)


# -- the cap ---------------------------------------------------------------------------------------
def _count_write(directory: Path) -> None:
    global _writes_until_scan
    with _mutex:
        _writes_until_scan -= 1
        due = _writes_until_scan <= 0
        if due:
            _writes_until_scan = SCAN_EVERY_WRITES
    if due:
        trim(directory)


def _copies(directory: Path) -> Iterator[tuple[os.DirEntry, os.stat_result]]:
    """The copies in ``directory`` (and the temp files of writers that died), with their
    stat; never raises."""
    try:
        with os.scandir(directory) as entries:
            found = list(entries)
    except OSError:
        return
    for entry in found:
        if _COPY_RE.fullmatch(entry.name) or entry.name.startswith(_TEMP_PREFIX):
            try:
                yield entry, entry.stat(follow_symlinks=False)
            except OSError:
                continue


def trim(directory: Path | None = None, cap: int | None = None) -> int:
    """Remove the least recently used copies until ``directory`` holds at most 80% of ``cap``
    bytes (if it holds more than ``cap``; default :data:`SOURCES_MAX_MB`), and temp files left
    by writers that died; returns how many files went."""
    directory = source_dir() if directory is None else directory
    cap = SOURCES_MAX_MB * 1024 * 1024 if cap is None else cap
    stale = time.time() - _STALE_TEMP_SECONDS
    copies, total, removed = [], 0, 0
    for entry, info in _copies(directory):
        if entry.name.startswith(_TEMP_PREFIX):
            if info.st_mtime < stale and _unlink(entry.path):
                removed += 1
            continue
        copies.append((info.st_mtime, entry.path, info.st_size))
        total += info.st_size
    if total > cap:
        copies.sort()
        for _, path, size in copies:
            if total <= 0.8 * cap:
                break
            if _unlink(path):
                removed += 1
                total -= size
    return removed


def clear_copies() -> int:
    """Remove every copy (and temp file) from :func:`source_dir`; returns how many went."""
    return sum(_unlink(entry.path) for entry, _ in _copies(source_dir()))


def _unlink(path: str) -> bool:
    try:
        os.unlink(path)
    except OSError:
        return False
    return True


# -- copies written only when a traceback needs them -----------------------------------------------
def copy_later(path: str) -> None:
    """Note that a function is compiled under ``path`` whose copy is not written: an uncaught
    exception through its code writes it (from linecache) before the default hook prints."""
    with _mutex:
        _LATER[path] = _LATER.get(path, 0) + 1
    _install_hooks()


def forget_later(path: str) -> None:
    """One function compiled under ``path`` is gone (the last one: forget the path)."""
    with _mutex:
        left = _LATER.get(path, 0) - 1
        if left > 0:
            _LATER[path] = left
        else:
            _LATER.pop(path, None)


def _write_needed(error: BaseException | None) -> None:
    """Write the copies of every pending path that ``error``'s tracebacks pass through (its
    causes and contexts too). Never raises."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        tb: TracebackType | None = error.__traceback__
        while tb is not None:
            path = tb.tb_frame.f_code.co_filename
            if path in _LATER:
                lines = linecache.getlines(path)
                if lines:
                    with contextlib.suppress(OSError):
                        if _private_dir(Path(path).parent) and not os.path.exists(path):
                            _write(Path(path), "".join(lines).encode("utf-8"))
            tb = tb.tb_next
        error = error.__cause__ or error.__context__


def _install_hooks() -> None:
    """Wrap the default ``sys.excepthook`` and ``threading.excepthook`` (never another's)."""
    if sys.excepthook is sys.__excepthook__:
        default = sys.__excepthook__

        def excepthook(kind: type, error: BaseException, tb: Any) -> None:
            _write_needed(error)
            default(kind, error, tb)

        sys.excepthook = excepthook
    if threading.excepthook is threading.__excepthook__:
        thread_default = threading.__excepthook__

        def thread_excepthook(args: Any) -> None:
            _write_needed(args.exc_value)
            thread_default(args)

        threading.excepthook = thread_excepthook
