"""The on-disk cache of generated Python modules (text), shared between processes.

Building a module takes SymPy seconds; its text is stored here so that the next process loads it
instead. Entries live at ``<root>/v{FORMAT_VERSION}/<namespace>/<key[:2]>/<key>.py``; each file
is one header line ``# symdiff-cache v1 sha256=<hex digest of the body> bytes=<len>`` followed by
the body (UTF-8). A read verifies the header, the length and the checksum, so a truncated,
edited or foreign file is a miss (and is deleted), never a wrong answer. Writes go to a
temporary file in the same directory and are moved into place with :func:`os.replace`, so a
reader never sees half a file. The total size is capped: least-recently-used entries (oldest
mtime; a hit touches the file) are evicted under an inter-process lock.

Configuration, read by :func:`open_store`:

- ``SYMDIFF_DISABLE_CACHE=1`` (or ``true``/``yes``): keep results in memory only.
- ``SYMDIFF_CACHE_DIR``: the root directory (default: ``platformdirs.user_cache_dir("symdiff")``).
- ``SYMDIFF_CACHE_MAX_MB``: the size cap in MiB (a float; default :data:`DEFAULT_MAX_MB`).

A directory that cannot be created or written, or that is unsafe (writable by group or others,
or owned by another user, so that someone else could plant code in it), is never used: one
:class:`SymdiffCacheWarning` says why and results are kept in memory.

This module imports only the standard library, ``platformdirs`` and ``filelock``, and does no
I/O at import time.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import math
import os
import re
import stat
import tempfile
import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol, runtime_checkable

__all__ = [
    "DEFAULT_MAX_MB",
    "FORMAT_VERSION",
    "DiskStore",
    "MemoryStore",
    "Store",
    "SymdiffCacheWarning",
    "cache_key",
    "open_store",
    "reset_store",
]

FORMAT_VERSION: int = 1
"""Version of the on-disk format; entries live under ``<root>/v{FORMAT_VERSION}/``."""

DEFAULT_MAX_MB: int = 200
"""Default size cap of the disk cache, in MiB (overridden by ``SYMDIFF_CACHE_MAX_MB``)."""

MB = 1024 * 1024
STALE_TEMP_SECONDS = 600.0
"""A ``.tmp-*`` file older than this was left by a killed writer and is removed on eviction."""
SCAN_EVERY_PUTS = 64
"""A disk store re-measures the tree at least once every this many puts."""
LOCK_TIMEOUT = 10.0
TEMP_PREFIX = ".tmp-"

_NAMESPACE_RE = re.compile(r"[a-z]+")
_KEY_RE = re.compile(r"[0-9a-f]{16,64}")
_ENTRY_NAME_RE = re.compile(r"([0-9a-f]{16,64})\.py")
_HEADER_RE = re.compile(rb"# symdiff-cache v([0-9]+) sha256=([0-9a-f]{64}) bytes=([0-9]+)")
_MAX_HEADER = 128
_TRUE = {"1", "true", "yes"}

log = logging.getLogger(__name__)


class SymdiffCacheWarning(UserWarning):
    """The disk cache cannot be used (or a write failed); results are kept in memory."""


@runtime_checkable
class Store(Protocol):
    """What :func:`open_store` returns: a text store keyed by ``(namespace, key)``."""

    def get(self, namespace: str, key: str) -> str | None:
        """The stored (verified) text, or ``None``."""
        ...

    def put(self, namespace: str, key: str, text: str) -> None:
        """Store ``text``; never raises on I/O trouble."""
        ...

    def info(self) -> dict:
        """``{"path", "entries", "bytes", "cap", "kind", "reason"}``."""
        ...

    def clear(self) -> int:
        """Remove every entry; returns how many were removed."""
        ...


# -- keys ------------------------------------------------------------------------------------------
def cache_key(*parts: str) -> str:
    """SHA-256 hex digest of ``parts``, each length-prefixed so that the join is unambiguous.

    Stable across processes, platforms and ``PYTHONHASHSEED``; ``("ab", "c")`` and
    ``("a", "bc")`` give different keys.
    """
    digest = hashlib.sha256()
    for part in parts:
        if not isinstance(part, str):
            raise TypeError(f"cache_key parts must be str, not {type(part).__name__}")
        data = part.encode("utf-8", "surrogatepass")
        digest.update(b"%d:" % len(data))
        digest.update(data)
        digest.update(b";")
    return digest.hexdigest()


def _check(namespace: str, key: str) -> None:
    """Raise ValueError unless ``namespace`` is ``[a-z]+`` and ``key`` is ``[0-9a-f]{16,64}``."""
    if not isinstance(namespace, str) or not _NAMESPACE_RE.fullmatch(namespace):
        raise ValueError(f"invalid cache namespace {namespace!r}: expected [a-z]+")
    if not isinstance(key, str) or not _KEY_RE.fullmatch(key):
        raise ValueError(f"invalid cache key {key!r}: expected 16 to 64 lowercase hex digits")


def _check_text(text: str) -> None:
    if not isinstance(text, str):
        raise TypeError(f"cache text must be str, not {type(text).__name__}")


# -- entry format ----------------------------------------------------------------------------------
def _encode_entry(body: bytes) -> bytes:
    """The file contents for ``body``: header line, newline, body."""
    header = f"# symdiff-cache v{FORMAT_VERSION} sha256={hashlib.sha256(body).hexdigest()} "
    return header.encode("ascii") + b"bytes=%d\n" % len(body) + body


def _decode_entry(data: bytes) -> str:
    """The verified text of a file's contents; raises ValueError saying what is wrong."""
    newline = data.find(b"\n", 0, _MAX_HEADER)
    if newline < 0:
        raise ValueError("no header line")
    match = _HEADER_RE.fullmatch(data[:newline])
    if match is None:
        raise ValueError("malformed header")
    version, digest, length = match.groups()
    if int(version) != FORMAT_VERSION:
        raise ValueError(f"format version {int(version)}, expected {FORMAT_VERSION}")
    body = data[newline + 1 :]
    if len(body) != int(length):
        raise ValueError(f"body is {len(body)} bytes, header says {int(length)}")
    if hashlib.sha256(body).hexdigest().encode("ascii") != digest:
        raise ValueError("checksum mismatch")
    return body.decode("utf-8")  # UnicodeDecodeError is a ValueError


# -- memory ----------------------------------------------------------------------------------------
class MemoryStore:
    """A dict-backed :class:`Store` for this process only (LRU-bounded by ``max_bytes``).

    ``reason`` says why the disk is not used (shown by :meth:`info`).
    """

    def __init__(self, max_bytes: int = DEFAULT_MAX_MB * MB, reason: str | None = None):
        self.max_bytes = int(max_bytes)
        self.reason = reason
        self._items: OrderedDict[tuple[str, str], tuple[str, int]] = OrderedDict()
        self._bytes = 0
        self._mutex = threading.Lock()

    def get(self, namespace: str, key: str) -> str | None:
        """The stored text, or ``None``; a hit makes the entry most recently used."""
        _check(namespace, key)
        with self._mutex:
            item = self._items.get((namespace, key))
            if item is None:
                return None
            self._items.move_to_end((namespace, key))
            return item[0]

    def put(self, namespace: str, key: str, text: str) -> None:
        """Store ``text``, evicting least-recently-used entries beyond ``max_bytes``."""
        _check(namespace, key)
        _check_text(text)
        size = len(text.encode("utf-8", "surrogatepass"))
        with self._mutex:
            old = self._items.pop((namespace, key), None)
            if old is not None:
                self._bytes -= old[1]
            self._items[(namespace, key)] = (text, size)
            self._bytes += size
            while self._bytes > self.max_bytes and len(self._items) > 1:
                _, (_, dropped) = self._items.popitem(last=False)
                self._bytes -= dropped

    def discard(self, namespace: str, key: str) -> None:
        """Forget one entry if present."""
        with self._mutex:
            old = self._items.pop((namespace, key), None)
            if old is not None:
                self._bytes -= old[1]

    def __len__(self) -> int:
        return len(self._items)

    def info(self) -> dict:
        """``path`` None, ``kind`` "memory", entry count, total UTF-8 bytes, cap and reason."""
        with self._mutex:
            entries, size = len(self._items), self._bytes
        return {
            "path": None,
            "entries": entries,
            "bytes": size,
            "cap": self.max_bytes,
            "kind": "memory",
            "reason": self.reason,
        }

    def clear(self) -> int:
        """Forget everything; returns the number of entries removed."""
        with self._mutex:
            count = len(self._items)
            self._items.clear()
            self._bytes = 0
        return count


# -- disk ------------------------------------------------------------------------------------------
class DiskStore:
    """A :class:`Store` of verified files under ``<root>/v{FORMAT_VERSION}/``, capped at
    ``max_bytes``.

    The constructor creates the directories (mode 0o700) and checks that they are safe and
    writable; it raises :class:`OSError` with a readable message otherwise (:func:`open_store`
    turns that into a warning and a :class:`MemoryStore`). After construction nothing raises on
    I/O trouble: a failed write warns once and keeps the text in memory for this process.
    """

    def __init__(self, root: str | os.PathLike, max_bytes: int):
        self.root = Path(os.path.abspath(os.path.expanduser(os.fspath(root))))
        self.path = self.root / f"v{FORMAT_VERSION}"
        self.max_bytes = max(0, int(max_bytes))
        self._fallback = MemoryStore(self.max_bytes)
        self._mutex = threading.Lock()
        self._estimate = 0
        self._puts_until_scan = 0  # the first put measures the tree
        self._warned = False
        _prepare_dir(self.root, self.path)
        import filelock  # deferred: only a disk store needs it

        self._filelock = filelock
        self._lock = filelock.FileLock(str(self.path / ".lock"), timeout=LOCK_TIMEOUT, mode=0o600)

    def __repr__(self) -> str:
        return f"DiskStore({str(self.root)!r}, max_bytes={self.max_bytes})"

    def _entry(self, namespace: str, key: str) -> Path:
        return self.path / namespace / key[:2] / f"{key}.py"

    # get ------------------------------------------------------------------------------------------
    def get(self, namespace: str, key: str) -> str | None:
        """The verified text of an entry, or ``None``. An entry that does not verify is deleted.

        A hit touches the file's mtime (the LRU clock).
        """
        _check(namespace, key)
        text = self._fallback.get(namespace, key)
        if text is not None:
            return text
        path = self._entry(namespace, key)
        text, st, why = _read_entry(path)
        if text is None:
            if why is not None:
                self._drop(path, st, why)
            return None
        with contextlib.suppress(OSError):
            os.utime(path)  # the LRU clock
        return text

    def _drop(self, path: Path, st: os.stat_result | None, why: str) -> None:
        """Delete a bad entry (best effort; only if it is still the file we read)."""
        log.debug("symdiff cache: discarding %s: %s", path, why)
        try:
            if st is not None:
                now = os.stat(path, follow_symlinks=False)
                if (now.st_ino, now.st_dev) != (st.st_ino, st.st_dev):
                    return  # replaced by a writer meanwhile
            os.unlink(path)
        except OSError:
            pass

    # put ------------------------------------------------------------------------------------------
    def put(self, namespace: str, key: str, text: str) -> None:
        """Write an entry atomically (temp file, fsync, ``os.replace``), then evict if over cap.

        On any OSError the text is kept in memory for this process and one
        :class:`SymdiffCacheWarning` per store is issued; nothing is raised.
        """
        _check(namespace, key)
        _check_text(text)
        try:
            body = text.encode("utf-8")
        except UnicodeEncodeError:
            log.debug("symdiff cache: %s/%s is not encodable, kept in memory", namespace, key)
            self._fallback.put(namespace, key, text)
            return
        data = _encode_entry(body)
        if len(data) > self.max_bytes:
            log.debug("symdiff cache: %s/%s is larger than the cap, kept in memory", namespace, key)
            self._fallback.put(namespace, key, text)
            return
        path = self._entry(namespace, key)
        try:
            _make_dirs(self.path, path.parent)
            _write_atomic(path, data)
        except OSError as exc:
            self._write_failed(exc)
            self._fallback.put(namespace, key, text)
            return
        self._fallback.discard(namespace, key)
        with self._mutex:
            self._estimate += len(data)
            self._puts_until_scan -= 1
            due = self._estimate > self.max_bytes or self._puts_until_scan <= 0
        if due:
            self.prune()

    def _write_failed(self, exc: OSError) -> None:
        with self._mutex:
            if self._warned:
                return
            self._warned = True
        warnings.warn(
            f"symdiff: could not write to the cache at {self.path} ({exc}); "
            "results are kept in memory for this process",
            SymdiffCacheWarning,
            stacklevel=3,
        )

    # eviction -------------------------------------------------------------------------------------
    def prune(self) -> int:
        """Evict least-recently-used entries until the total is under 90% of the cap (if it is
        over the cap) and remove stale temporary files, under the inter-process lock.

        Returns the number of files removed; if the lock cannot be taken in time, does nothing.
        """
        try:
            with self._lock:
                removed, total = self._evict()
        except OSError as exc:  # includes filelock.Timeout: another process holds the lock
            log.debug("symdiff cache: eviction skipped: %s", exc)
            removed, total = 0, 0  # try again after SCAN_EVERY_PUTS puts or a cap's worth
        with self._mutex:
            self._estimate = total
            self._puts_until_scan = SCAN_EVERY_PUTS
        return removed

    def _evict(self) -> tuple[int, int]:
        """Do the work of :meth:`prune` (lock held); returns (files removed, bytes left)."""
        entries: list[tuple[float, str, int]] = []
        removed = 0
        stale_before = time.time() - STALE_TEMP_SECONDS
        for path, is_temp in _walk(self.path):
            try:
                st = os.stat(path, follow_symlinks=False)
            except OSError:
                continue
            if is_temp:
                if st.st_mtime < stale_before and _unlink(path):
                    removed += 1
            else:
                entries.append((st.st_mtime, path, st.st_size))
        total = sum(size for _, _, size in entries)
        if total > self.max_bytes:
            target = 0.9 * self.max_bytes
            entries.sort()
            for _, path, size in entries:
                if total <= target:
                    break
                if _unlink(path):
                    removed += 1
                    total -= size
        return removed, total

    # info / clear ---------------------------------------------------------------------------------
    def info(self) -> dict:
        """``path`` (the v1 directory), entries and bytes on disk, cap, ``kind`` "disk"."""
        entries = size = 0
        for path, is_temp in _walk(self.path):
            if is_temp:
                continue
            try:
                size += os.stat(path, follow_symlinks=False).st_size
            except OSError:
                continue
            entries += 1
        return {
            "path": str(self.path),
            "entries": entries,
            "bytes": size,
            "cap": self.max_bytes,
            "kind": "disk",
            "reason": None,
        }

    def clear(self) -> int:
        """Remove every entry of every namespace (under the lock when it can be had); returns
        the number removed, including entries held in memory after failed writes."""
        try:
            with self._lock:
                count = self._clear()
        except self._filelock.Timeout:
            log.debug("symdiff cache: lock busy, clearing without it")
            count = self._clear()
        count += self._fallback.clear()
        with self._mutex:
            self._estimate = 0
            self._puts_until_scan = SCAN_EVERY_PUTS
        return count

    def _clear(self) -> int:
        return sum(1 for path, is_temp in list(_walk(self.path)) if not is_temp and _unlink(path))


def _walk(top: Path) -> Iterator[tuple[str, bool]]:
    """``(path, is_temp)`` for every entry file and temp file under ``top`` (the v1 directory).

    Only names the store itself creates are listed: anything else is left alone.
    """
    for ns in _scandir(top):
        if not (ns.is_dir(follow_symlinks=False) and _NAMESPACE_RE.fullmatch(ns.name)):
            continue
        for shard in _scandir(ns.path):
            if not shard.is_dir(follow_symlinks=False) or len(shard.name) != 2:
                continue
            for item in _scandir(shard.path):
                if item.name.startswith(TEMP_PREFIX):
                    yield item.path, True
                elif _ENTRY_NAME_RE.fullmatch(item.name):
                    yield item.path, False


def _scandir(path: str | Path) -> list[os.DirEntry]:
    try:
        with os.scandir(path) as it:
            return list(it)
    except OSError:
        return []


def _unlink(path: str | Path) -> bool:
    try:
        os.unlink(path)
    except OSError:
        return False
    return True


def _read_entry(path: Path) -> tuple[str | None, os.stat_result | None, str | None]:
    """``(text, stat, None)`` for a verified entry, ``(None, None, None)`` if there is none, or
    ``(None, stat or None, why)`` if the file is there but does not verify."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None, None, None
    except OSError as exc:
        return None, None, f"unreadable ({exc})"
    st = None
    try:
        with os.fdopen(fd, "rb") as handle:
            st = os.fstat(handle.fileno())
            if not stat.S_ISREG(st.st_mode):
                return None, st, "not a regular file"
            return _decode_entry(handle.read()), st, None
    except (OSError, ValueError) as exc:
        return None, st, str(exc) or type(exc).__name__


def _write_atomic(path: Path, data: bytes) -> None:
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
        _unlink(tmp)
        raise


def _make_dirs(base: Path, target: Path) -> None:
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


def _prepare_dir(root: Path, v1: Path) -> None:
    """Create ``root`` and ``v1`` (0o700) and check they are safe and writable.

    Raises OSError whose message is the reason the cache cannot be used.
    """
    for base, directory in ((Path(root.anchor), root), (root, v1)):
        try:
            _make_dirs(base, directory)
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


# -- the process-wide store ------------------------------------------------------------------------
_STORE: Store | None = None
_STORE_LOCK = threading.Lock()


def open_store() -> Store:
    """The process-wide store: created on the first call from the environment, then reused.

    - ``SYMDIFF_DISABLE_CACHE`` = ``1``/``true``/``yes``: a :class:`MemoryStore` with reason
      "disabled by SYMDIFF_DISABLE_CACHE".
    - root: ``$SYMDIFF_CACHE_DIR``, else ``platformdirs.user_cache_dir("symdiff")``.
    - cap: ``$SYMDIFF_CACHE_MAX_MB`` (float MiB; an invalid value warns and uses
      :data:`DEFAULT_MAX_MB`).
    - a directory that cannot be created or written, or is unsafe: one
      :class:`SymdiffCacheWarning` and a :class:`MemoryStore` whose ``reason`` says why.
    """
    global _STORE
    with _STORE_LOCK:
        if _STORE is None:
            _STORE = _make_store()
        return _STORE


def reset_store() -> None:
    """Forget the process-wide store, so the next :func:`open_store` re-reads the environment."""
    global _STORE
    with _STORE_LOCK:
        _STORE = None


def _make_store() -> Store:
    cap = _cap_from_env()
    if os.environ.get("SYMDIFF_DISABLE_CACHE", "").strip().lower() in _TRUE:
        return MemoryStore(cap, reason="disabled by SYMDIFF_DISABLE_CACHE")
    root = os.environ.get("SYMDIFF_CACHE_DIR", "").strip()
    if not root:
        import platformdirs  # deferred: only needed when no directory is given

        root = platformdirs.user_cache_dir("symdiff")
    try:
        return DiskStore(root, cap)
    except OSError as exc:
        reason = str(exc.strerror or exc)
    warnings.warn(
        f"symdiff: not using the disk cache: {reason}; results are kept in memory for this "
        "process only",
        SymdiffCacheWarning,
        stacklevel=3,
    )
    return MemoryStore(cap, reason=reason)


def _cap_from_env() -> int:
    """The cap in bytes from ``SYMDIFF_CACHE_MAX_MB`` (warns on an invalid value)."""
    raw = os.environ.get("SYMDIFF_CACHE_MAX_MB", "").strip()
    if not raw:
        return DEFAULT_MAX_MB * MB
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        warnings.warn(
            f"symdiff: ignoring invalid SYMDIFF_CACHE_MAX_MB={raw!r} (expected a non-negative "
            f"number of MiB); using {DEFAULT_MAX_MB}",
            SymdiffCacheWarning,
            stacklevel=4,
        )
        return DEFAULT_MAX_MB * MB
    return int(value * MB)
