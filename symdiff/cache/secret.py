"""The per-user secret that keys every entry's MAC: :func:`load_secret`.

32 random bytes in ``<root>/secret``, created once with mode 0o600 (by whichever process
comes first: written to a temp file, then linked into place, so that no process ever reads
half a secret). It is read on every start of a disk store and checked: a regular file of this
user's that nobody else can read or write. Entries written with another secret (another
account's or machine's, or before the secret was replaced) fail their MAC and are rebuilt.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from .files import READ_FLAGS, TEMP_PREFIX, UnsafePath

SECRET_NAME = "secret"
SECRET_BYTES = 32


def load_secret(root: Path) -> bytes:
    """The secret of the cache at ``root``, created now if there is none.

    Raises :class:`OSError` whose message says why the cache cannot be used: the secret is
    not a regular file, belongs to someone else, can be read or written by group or others
    (``chmod 600`` it), or cannot be created.
    """
    path = root / SECRET_NAME
    for _ in range(3):
        try:
            return _read(path)
        except FileNotFoundError:
            pass
        _create(root, path)
    return _read(path)


def _read(path: Path) -> bytes:
    fd = os.open(path, READ_FLAGS)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath(errno.EINVAL, f"cache secret {path} is not a regular file")
        if os.name == "posix" and st.st_uid != os.getuid():
            raise UnsafePath(errno.EPERM, f"cache secret {path} is owned by another user "
                                          f"(uid {st.st_uid}), so entries cannot be trusted")
        if os.name == "posix" and st.st_mode & 0o077:
            raise UnsafePath(
                errno.EPERM,
                f"cache secret {path} can be read or written by group or others "
                f"(mode {stat.S_IMODE(st.st_mode):#o}), so entries cannot be trusted; "
                f"fix with `chmod 600 {path}`",
            )
        data = os.read(fd, SECRET_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) != SECRET_BYTES:
        raise OSError(errno.EINVAL, f"cache secret {path} is not {SECRET_BYTES} bytes; "
                                    "remove it and its cache directory to start afresh")
    return data


def _create(root: Path, path: Path) -> None:
    """Write a new secret to a temp file and link it to ``path`` unless one is there already
    (another process won the race: its secret is kept)."""
    temporary = root / f"{TEMP_PREFIX}secret-{os.getpid()}-{os.urandom(4).hex()}"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(temporary, flags | getattr(os, "O_BINARY", 0), 0o600)
    try:
        try:
            os.write(fd, os.urandom(SECRET_BYTES))
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(temporary, path)
        except FileExistsError:
            pass
        except OSError:  # no hard links here: a plain exclusive create (rarely racy)
            with contextlib.suppress(FileExistsError):
                os.rename(temporary, path) if not path.exists() else None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
