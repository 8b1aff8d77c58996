"""Filesystem helpers that know nothing of entries: atomic writes through a temporary file,
private (0o700) directories and the safety check on them, and ``scandir``/``unlink`` that
never raise."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

TEMP_PREFIX = ".tmp-"


def scan_dir(path: str | Path) -> list[os.DirEntry]:
    """The entries of directory ``path``, or ``[]`` if it cannot be read (never raises)."""
    try:
        with os.scandir(path) as it:
            return list(it)
    except OSError:
        return []


def try_unlink(path: str | Path) -> bool:
    """Remove file ``path``; True if it was removed, False on any OSError (never raises)."""
    try:
        os.unlink(path)
    except OSError:
        return False
    return True


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a fsync'ed temp file in the same directory and
    ``os.replace``; on failure remove the temp file and re-raise."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=TEMP_PREFIX, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try_unlink(tmp)
        raise


def make_dirs(base: Path, target: Path) -> None:
    """Create ``target`` and its missing parents down from ``base`` with mode 0o700."""
    if target.is_dir():
        return
    missing = []
    current = target
    while not current.is_dir():
        missing.append(current)
        if current == base or current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            if not directory.is_dir():
                raise
            continue
        os.chmod(directory, 0o700)  # the umask may have removed bits; never add any


def prepare_dir(root: Path, v1: Path) -> None:
    """Create ``root`` and ``v1`` (0o700) and check they are safe and writable.

    Raises OSError whose message is the reason the cache cannot be used.
    """
    for base, directory in ((Path(root.anchor), root), (root, v1)):
        try:
            make_dirs(base, directory)
        except OSError as exc:
            why = _why(exc)
            raise OSError(exc.errno, f"cannot create cache directory {directory}: {why}") from exc
        _check_safe(directory)
    try:
        fd, probe = tempfile.mkstemp(dir=v1, prefix=TEMP_PREFIX, suffix=".probe")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OSError(exc.errno, f"cache directory {v1} is not writable: {_why(exc)}") from exc


def _check_safe(directory: Path) -> None:
    """Raise PermissionError if ``directory`` could hold code planted by someone else."""
    try:
        st = os.stat(directory)
    except OSError as exc:
        raise OSError(exc.errno, f"cannot use cache directory {directory}: {_why(exc)}") from exc
    if not stat.S_ISDIR(st.st_mode):
        raise OSError(errno.ENOTDIR, f"cache path {directory} is not a directory")
    if os.name != "posix":
        return
    if st.st_uid != os.getuid():
        raise PermissionError(
            errno.EPERM,
            f"cache directory {directory} is owned by another user (uid {st.st_uid}), "
            "so it is not safe to load code from it",
        )
    if st.st_mode & 0o022:
        raise PermissionError(
            errno.EPERM,
            f"cache directory {directory} is writable by group or others "
            f"(mode {stat.S_IMODE(st.st_mode):#o}), so it is not safe to load code from it; "
            f"fix with `chmod go-w {directory}`",
        )


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)
