"""Inter-process locks on files: :class:`FileLock` (a bounded wait, never a stall: a holder
that is stopped is given up on), and the writer's lock on a temporary file that tells a live
writer from a dead one (:func:`hold_new`, :func:`remove_if_unlocked`).

On POSIX these are ``flock`` locks, which the kernel drops when their process dies, so no lock
outlives its holder. ``fcntl`` is imported on first use: only a process that writes to the
cache takes a lock. Elsewhere the ``filelock`` package provides :class:`FileLock`, and a temp
file is taken for dead once it is :data:`STALE_TEMP_SECONDS` old.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import time
from typing import Any

STALE_TEMP_SECONDS = 600.0
"""Where files cannot be locked: a temp file this old was left by a writer that died."""

_OPEN_FLAGS = (
    os.O_RDWR
    | os.O_CREAT
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_PROBE_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_POSIX = os.name == "posix"


def _try_flock(fd: int) -> bool:
    """Take an exclusive ``flock`` on ``fd`` without waiting; whether it was taken."""
    import fcntl  # deferred: only writers lock

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
            return False
        raise
    return True


def _same_file(fd: int, path: str) -> bool:
    """Whether open ``fd`` is still the file at ``path`` (not removed or replaced meanwhile)."""
    try:
        here, there = os.fstat(fd), os.stat(path, follow_symlinks=False)
    except OSError:
        return False
    return (here.st_ino, here.st_dev) == (there.st_ino, there.st_dev)


def hold_new(fd: int) -> bool:
    """Lock a temp file just created (``fd``) for as long as it stays open; False if a scan
    locked it first (it will remove it: the caller starts again with another file)."""
    return _try_flock(fd) if _POSIX else True


def remove_if_unlocked(path: str | os.PathLike) -> bool:
    """Remove temp file ``path`` if no writer holds it (its writer died, or it is not a temp
    file of a writer at all); True if removed. Never raises, never blocks."""
    path = os.fspath(path)
    if not _POSIX:
        try:
            if time.time() - os.stat(path, follow_symlinks=False).st_mtime < STALE_TEMP_SECONDS:
                return False
            os.unlink(path)
        except OSError:
            return False
        return True
    try:
        fd = os.open(path, _PROBE_FLAGS)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            return False
        with contextlib.suppress(OSError):  # a symlink: nobody's temp file
            os.unlink(path)
            return True
        return False
    try:
        if not _try_flock(fd) or not _same_file(fd, path):
            return False
        os.unlink(path)  # while holding the lock: its writer is gone
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


class FileLock:
    """An exclusive lock on the file ``path`` shared by every process (and thread: each
    :meth:`acquire` opens the file anew).

    ``remove``: the holder deletes the file when it releases it (a lock per cache key leaves
    no file behind); a waiter that gets the lock of a file removed meanwhile tries again on
    the new one. ``owner``: the holder writes its process id into the file, so that waiters can
    tell a holder that is stopped (Ctrl-Z, a debugger: :func:`stopped`) from one at work
    (:meth:`acquire`'s ``stuck``).

    The lock lives in a file object: whatever interrupts its holder (Ctrl-C between two
    statements), the lock is released once that object is dropped, never kept by a lost
    descriptor.
    """

    def __init__(self, path: str | os.PathLike, *, remove: bool = False, owner: bool = False):
        self.path = os.fspath(path)
        self.remove = remove
        self.owner = owner
        self._file: io.FileIO | None = None
        self._other: Any = None  # the ``filelock`` lock where there is no flock

    @property
    def held(self) -> bool:
        """Whether this object holds the lock now."""
        return self._file is not None or self._other is not None

    def acquire(self, timeout: float, stuck: float | None = None) -> bool:
        """Take the lock, waiting at most ``timeout`` seconds, or less once its holder has been
        seen stopped for ``stuck`` seconds; whether it was taken. Raises OSError only if the
        lock file cannot be made (not a regular file, no permission)."""
        if not _POSIX:
            return self._acquire_elsewhere(timeout)
        deadline = time.monotonic() + timeout
        delay = 0.002
        stopped_since: float | None = None
        while True:
            handle = io.FileIO(os.open(self.path, _OPEN_FLAGS, 0o600), "r+")  # closed if lost
            fd = handle.fileno()
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                handle.close()
                raise OSError(errno.EINVAL, f"{self.path} is not a regular file")
            got = _try_flock(fd)
            if got and _same_file(fd, self.path):
                self._file = handle
                if self.owner:
                    with contextlib.suppress(OSError):
                        os.ftruncate(fd, 0)
                        os.write(fd, b"%d\n" % os.getpid())
                return True
            holder = _holder(fd) if stuck is not None and not got else None
            handle.close()
            if got:
                continue  # its holder removed it on release: lock the new file
            now = time.monotonic()
            if holder is not None and stopped(holder):
                stopped_since = now if stopped_since is None else stopped_since
                if now - stopped_since >= stuck:
                    return False
            else:
                stopped_since = None
            if now >= deadline:
                return False
            time.sleep(min(delay, deadline - now))
            delay = min(delay * 2, 0.05)

    def release(self) -> None:
        """Let go of the lock (removing its file first if ``remove``); nothing if not held."""
        if self._other is not None:
            self._other.release()
            self._other = None
            return
        handle, self._file = self._file, None
        if handle is None:
            return
        try:
            if self.remove:
                with contextlib.suppress(OSError):
                    os.unlink(self.path)
        finally:
            handle.close()

    def _acquire_elsewhere(self, timeout: float) -> bool:
        import filelock  # deferred: only writers lock

        lock = filelock.FileLock(self.path, timeout=timeout, mode=0o600)
        try:
            lock.acquire()
        except filelock.Timeout:
            return False
        self._other = lock
        return True


def _holder(fd: int) -> int | None:
    """The process id a holder wrote into the lock file open as ``fd``, if any."""
    try:
        text = os.pread(fd, 24, 0)
        return int(text.decode("ascii").strip()) if text.strip() else None
    except (OSError, ValueError):
        return None


def stopped(pid: int) -> bool:
    """Whether process ``pid`` is stopped (by a signal such as Ctrl-Z's, or a debugger), as
    ``/proc`` says; False where there is no ``/proc`` or no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            state = handle.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state in (b"T", b"t")
