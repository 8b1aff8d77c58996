"""The disk store: :class:`DiskStore` (atomic puts, verified gets, LRU eviction under an
inter-process lock, stale temp-file cleanup) and the layout it reads (:func:`_walk`,
:func:`_read_entry`). Its tuning constants are patched here, on this module."""

from __future__ import annotations

import contextlib
import os
import stat
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

from .entries import (
    ENTRY_NAME_RE,
    FORMAT_VERSION,
    NAMESPACE_RE,
    check_key,
    check_text,
    decode_entry,
    encode_entry,
)
from .files import TEMP_PREFIX, make_dirs, prepare_dir, scan_dir, try_unlink, write_atomic
from .memory import MemoryStore
from .protocol import SymdiffCacheWarning

STALE_TEMP_SECONDS = 600.0
"""A ``.tmp-*`` file older than this was left by a killed writer and is removed on eviction."""
SCAN_EVERY_PUTS = 64
"""A disk store re-measures the tree at least once every this many puts."""
LOCK_TIMEOUT = 10.0


def _log():  # (logging is imported when there is something to say: not on a warm start)
    import logging

    return logging.getLogger(__package__)  # "symdiff.cache", as before the split


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
        prepare_dir(self.root, self.path)
        self._file_lock = None  # made by _lock when first needed (a read never needs it)

    @property
    def _lock(self):
        """The inter-process lock of evictions and clears (``filelock``, imported on first
        use: loading a cached function never takes it)."""
        if self._file_lock is None:
            import filelock

            self._file_lock = filelock.FileLock(str(self.path / ".lock"), timeout=LOCK_TIMEOUT,
                                                mode=0o600)
        return self._file_lock

    def __repr__(self) -> str:
        return f"DiskStore({str(self.root)!r}, max_bytes={self.max_bytes})"

    def _entry(self, namespace: str, key: str) -> Path:
        return self.path / namespace / key[:2] / f"{key}.py"

    # get ------------------------------------------------------------------------------------------
    def get(self, namespace: str, key: str) -> str | None:
        """The verified text of an entry, or ``None``. An entry that does not verify is deleted.

        A hit touches the file's mtime (the LRU clock).
        """
        check_key(namespace, key)
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
        _log().debug("symdiff cache: discarding %s: %s", path, why)
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
        check_key(namespace, key)
        check_text(text)
        try:
            body = text.encode("utf-8")
        except UnicodeEncodeError:
            _log().debug("symdiff cache: %s/%s is not encodable, kept in memory", namespace, key)
            self._fallback.put(namespace, key, text)
            return
        data = encode_entry(body)
        if len(data) > self.max_bytes:
            _log().debug("symdiff cache: %s/%s is larger than the cap, kept in memory",
                         namespace, key)
            self._fallback.put(namespace, key, text)
            return
        path = self._entry(namespace, key)
        try:
            make_dirs(self.path, path.parent)
            write_atomic(path, data)
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
            _log().debug("symdiff cache: eviction skipped: %s", exc)
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
                if st.st_mtime < stale_before and try_unlink(path):
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
                if try_unlink(path):
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
        import filelock

        try:
            with self._lock:
                count = self._clear()
        except filelock.Timeout:
            _log().debug("symdiff cache: lock busy, clearing without it")
            count = self._clear()
        count += self._fallback.clear()
        with self._mutex:
            self._estimate = 0
            self._puts_until_scan = SCAN_EVERY_PUTS
        return count

    def _clear(self) -> int:
        entries = list(_walk(self.path))
        return sum(1 for path, is_temp in entries if not is_temp and try_unlink(path))


def _walk(top: Path) -> Iterator[tuple[str, bool]]:
    """``(path, is_temp)`` for every entry file and temp file under ``top`` (the v1 directory).

    Only names the store itself creates are listed: anything else is left alone.
    """
    for ns in scan_dir(top):
        if not (ns.is_dir(follow_symlinks=False) and NAMESPACE_RE.fullmatch(ns.name)):
            continue
        for shard in scan_dir(ns.path):
            if not shard.is_dir(follow_symlinks=False) or len(shard.name) != 2:
                continue
            for item in scan_dir(shard.path):
                if item.name.startswith(TEMP_PREFIX):
                    yield item.path, True
                elif ENTRY_NAME_RE.fullmatch(item.name):
                    yield item.path, False


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
            return decode_entry(handle.read()), st, None
    except (OSError, ValueError) as exc:
        return None, st, str(exc) or type(exc).__name__
