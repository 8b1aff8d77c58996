"""Filesystem helpers that know nothing of entries: the safety checks on every directory and
file the cache reads, reads that never block and are bounded in size, atomic writes through a
temporary file held locked by its writer, private (0o700) directories, and ``scandir`` /
``unlink`` that never raise."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from . import locks

TEMP_PREFIX = ".tmp-"

#: ``os.open`` flags of every read: never follow a symlink, never wait on a FIFO or a device.
READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


class UnsafePath(PermissionError):
    """A directory or file of the cache that someone other than this user could have written
    (another owner, writable by group or others, a symlink): nothing under it is trusted."""


class OddFile(ValueError):
    """Something other than a regular file (a FIFO, a device, a socket, a directory) where an
    entry should be, or a file larger than any entry."""


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


def try_rmdir(path: str | Path) -> bool:
    """Remove directory ``path`` if it is empty; True if it was removed (never raises)."""
    try:
        os.rmdir(path)
    except OSError:
        return False
    return True


# -- who may have written a path -------------------------------------------------------------------
def check_owner(path: str | Path, st: os.stat_result, what: str) -> None:
    """Raise :class:`UnsafePath` unless ``st`` (of ``path``) is owned by this user or root and
    not writable by group or others (POSIX; elsewhere every path passes)."""
    if os.name != "posix":
        return
    if st.st_uid not in (os.getuid(), 0):
        raise UnsafePath(
            errno.EPERM,
            f"cache {what} {path} is owned by another user (uid {st.st_uid}), "
            "so it is not safe to load code from it",
        )
    if st.st_mode & 0o022:
        raise UnsafePath(
            errno.EPERM,
            f"cache {what} {path} is writable by group or others "
            f"(mode {stat.S_IMODE(st.st_mode):#o}), so it is not safe to load code from it; "
            f"fix with `chmod go-w {path}`",
        )


def check_dir(path: str | Path) -> None:
    """Raise :class:`UnsafePath` unless ``path`` is a real directory (not a symlink) that only
    this user (or root) can write; :class:`FileNotFoundError` if it is missing."""
    st = os.lstat(path)
    if stat.S_ISLNK(st.st_mode):
        raise UnsafePath(errno.ELOOP, f"cache directory {path} is a symlink, which is refused")
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafePath(errno.ENOTDIR, f"cache path {path} is not a directory")
    check_owner(path, st, "directory")


def check_below(top: Path, directory: Path) -> None:
    """:func:`check_dir` on every directory below ``top`` down to ``directory``."""
    current = top
    for part in directory.relative_to(top).parts:
        current = current / part
        check_dir(current)


def read_file(path: str | Path, limit: int) -> tuple[bytes, os.stat_result]:
    """The bytes of regular file ``path`` and its stat, read without following a symlink or
    waiting on a FIFO, and at most ``limit`` bytes.

    Raises :class:`FileNotFoundError` if it is missing, :class:`OddFile` for anything but a
    regular file (a symlink included) or one over ``limit``, :class:`UnsafePath` if it is not
    this user's (or root's) or others can write it, another :class:`OSError` if it cannot be
    read.
    """
    try:
        fd = os.open(path, READ_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OddFile(f"{path} is a symlink") from None
        raise
    with os.fdopen(fd, "rb", buffering=0) as handle:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OddFile(f"{path} is not a regular file")
        check_owner(path, st, "file")
        if st.st_size > limit:
            raise OddFile(f"{path} is {st.st_size} bytes, more than {limit}")
        chunks, left = [], st.st_size + 1  # one byte more: a file that grew is caught
        while left > 0:
            chunk = handle.read(left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    data = b"".join(chunks)
    if len(data) > st.st_size:
        raise OddFile(f"{path} grew while it was read")
    return data, st


# -- writes ----------------------------------------------------------------------------------------
def new_temp(directory: str | Path, suffix: str) -> tuple[int, str]:
    """A new private (0o600) file ``.tmp-<random><suffix>`` in ``directory``, opened for
    writing: ``(fd, path)``."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    flags |= getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    while True:
        path = os.path.join(directory, f"{TEMP_PREFIX}{os.urandom(8).hex()}{suffix}")
        try:
            return os.open(path, flags, 0o600), path
        except FileExistsError:
            continue


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a fsync'ed temp file in the same directory and
    ``os.replace``. On failure the temp file is removed and the error re-raised.

    The temp file is locked by its writer until it is in place (:func:`locks.hold_new`), so
    that a scan can tell the temp file of a writer that died (unlocked) from one still being
    written (:func:`locks.remove_if_unlocked`).
    """
    for attempt in range(2):
        fd, tmp = new_temp(path.parent, ".part")
        try:
            if not locks.hold_new(fd):  # a scan took it for a dead writer's: start again
                os.close(fd)
                continue
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
                try:
                    os.replace(tmp, path)
                except FileNotFoundError:
                    if attempt or os.path.lexists(tmp):
                        raise
                    continue  # a scan removed it before we locked it: once more
            return
        except BaseException:
            try_unlink(tmp)
            raise
    raise OSError(errno.EAGAIN, f"could not write {path}: its temporary files kept vanishing")


def make_dirs(base: Path, target: Path, *, check: bool = True) -> None:
    """Create ``target`` and its missing parents down from ``base`` with mode 0o700; with
    ``check``, every directory from the first existing one down to ``target`` must pass
    :func:`check_dir`."""
    test = check_dir if check else _is_dir
    missing = []
    current = target
    while True:
        try:
            test(current)
            break
        except FileNotFoundError:
            missing.append(current)
        if current == base or current.parent == current:
            break
        current = current.parent
    for directory in reversed(missing):
        try:
            os.mkdir(directory, 0o700)
        except FileExistsError:
            test(directory)  # made by another process meanwhile, or not a directory
            continue
        os.chmod(directory, 0o700)  # the umask may have removed bits; never add any


def _is_dir(path: Path) -> None:
    """Raise FileNotFoundError if ``path`` is missing, NotADirectoryError if it is no
    directory."""
    if not os.path.isdir(path):
        if os.path.lexists(path):
            raise NotADirectoryError(errno.ENOTDIR, "not a directory", str(path))
        raise FileNotFoundError(errno.ENOENT, "no such directory", str(path))


def prepare_dir(root: Path, top: Path) -> None:
    """Create ``root`` and ``top`` (0o700) and check they are safe and writable.

    Raises OSError whose message is the reason the cache cannot be used.
    """
    try:
        make_dirs(Path(root.anchor), root, check=False)  # (the root's parents are not read)
        check_dir(root)
        make_dirs(root, top)
    except UnsafePath:
        raise
    except OSError as exc:
        where = exc.filename or top
        raise OSError(exc.errno, f"cannot create cache directory {where}: {_why(exc)}") from exc
    try:
        fd, probe = new_temp(top, ".probe")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise OSError(exc.errno, f"cache directory {top} is not writable: {_why(exc)}") from exc


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)
