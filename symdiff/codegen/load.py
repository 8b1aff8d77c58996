"""Source text -> callable: compile and execute one generated module, register it for tracebacks.

Only modules rendered by symdiff's own templates reach this function; user text never does.

Tracebacks. :mod:`linecache` serves the generated lines to the ``traceback`` module, IPython and
``inspect``, but the interpreter's own printer of an uncaught exception (``python script.py``,
up to Python 3.12) reads source lines from the file named by the code object and skips names
such as ``<symdiff ...>`` outright. So each module is also written, once, to a private directory
(:func:`source_dir`: ``<tmp>/symdiff-sources-<uid>``, mode 0o700, or ``$SYMDIFF_SOURCE_DIR``) as
``<name>-<sha256 of the text>.py``, and compiled under that path: every traceback shows the
generated line. The file is only ever read to display lines (the code runs from the text that
was verified); when it cannot be written, the ``<symdiff ...>`` name and linecache remain.
"""

from __future__ import annotations

import contextlib
import hashlib
import linecache
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import progress
from ..verify import check_module


def load_function(source: str, name: str, filename: str) -> Callable[..., Any]:
    """Execute generated ``source`` in a fresh namespace and return its function ``name``.

    The module's syntax tree is checked first (:func:`symdiff.verify.check_module`); anything a
    template cannot produce is refused before it runs. The code is compiled under the path of a
    copy of the source on disk (:func:`source_file`), else under ``filename``, and the source
    is registered with :mod:`linecache` under that name, so that tracebacks and
    ``inspect.getsource`` show the generated lines.
    """
    with progress.stage("verify"):
        tree = check_module(source)
    with progress.stage("compile"):
        found = source_file(source, name)
        if found is None and "\nimport numba as _numba\n" in source:
            from ..errors import SymdiffError

            raise SymdiffError(
                "a backend='numba' function needs its module in a file (Numba caches the "
                f"compiled code beside it), and {source_dir()} is not a private writable "
                "directory: set SYMDIFF_SOURCE_DIR to one")
        filename = found or filename
        code = compile(tree, filename, "exec")  # the tree just checked, not a second parse
        namespace: dict[str, Any] = {"__name__": "symdiff.generated", "__file__": filename}
        if found is not None and "\nimport numba as _numba\n" in source:
            namespace = _numba_namespace(found)
        exec(code, namespace)  # our own rendered module, never user text
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    return namespace[name]


def _numba_namespace(path: str) -> dict[str, Any]:
    """The namespace of a Numba module: a module registered in :data:`sys.modules` under a
    name of its file's (``symdiff.generated.grad_f-<hash>``), which Numba's cache records
    in the compiled code it writes, and imports again when a later process loads it."""
    import sys
    import types

    name = "symdiff.generated." + Path(path).stem
    module = sys.modules.get(name)
    if module is None:
        module = sys.modules[name] = types.ModuleType(name)
    module.__file__ = path
    return module.__dict__


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


def source_file(source: str, name: str) -> str | None:
    """The path of a file holding exactly ``source`` (written now if missing), or None when the
    directory is unusable: not creatable or writable, not a directory, another user's, or
    writable by others (someone could swap the lines a traceback shows)."""
    data = source.encode("utf-8")
    directory = source_dir()
    path = directory / f"{name}-{hashlib.sha256(data).hexdigest()[:24]}.py"
    try:
        if not _private_dir(directory):
            return None
        try:
            if os.stat(path).st_size == len(data):
                return str(path)
        except FileNotFoundError:
            pass
        import tempfile  # (a write: not when the copy is there already)

        fd, temporary = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".py")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:
        return None
    return str(path)


def _private_dir(directory: Path) -> bool:
    """Create ``directory`` (mode 0o700) if needed; whether it is a real directory of ours
    that nobody else can write to."""
    with contextlib.suppress(FileExistsError):
        os.mkdir(directory, 0o700)
    info = os.lstat(directory)
    if not stat.S_ISDIR(info.st_mode):
        return False
    return os.name != "posix" or (info.st_uid == os.getuid() and not info.st_mode & 0o022)
