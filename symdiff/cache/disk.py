"""The disk store: :class:`DiskStore` (atomic puts, gets that check every directory and file
they read and verify its MAC, a lock per key for builds, a size cap kept by every process).
Its tuning constants are patched here, on this module."""

from __future__ import annotations

import contextlib
import os
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path

from . import usage
from .entries import FORMAT_VERSION, check_key, check_text, decode_entry, encode_entry
from .files import (
    OddFile,
    UnsafePath,
    check_below,
    make_dirs,
    prepare_dir,
    read_file,
    write_atomic,
)
from .locks import FileLock
from .memory import MemoryStore
from .protocol import DEFAULT_MAX_MB, MB, SymdiffCacheWarning
from .secret import load_secret

LOCK_WAIT_SECONDS = 0.5
"""How long a put waits for the cache's lock (to count its bytes, or to evict) before it goes
on without it; a clear waits as long, then clears without it."""
BUILD_WAIT_SECONDS = 300.0
"""How long a process waits for another that builds the same key before it builds itself."""
STUCK_SECONDS = 5.0
"""A builder seen stopped (Ctrl-Z, a debugger) this long is given up on: the waiter builds."""

def _log():  # (logging is imported when there is something to say: not on a warm start)
    import logging

    return logging.getLogger(__package__)  # "symdiff.cache"


class DiskStore:
    """A :class:`Store` of authenticated files under ``<root>/v{FORMAT_VERSION}/``, capped at
    ``max_bytes``.

    The constructor creates the directories (mode 0o700), checks that they are safe and
    writable and reads (or creates) the secret; it raises :class:`OSError` with a readable
    message otherwise (:func:`open_store` turns that into a warning and a
    :class:`MemoryStore`). After construction nothing raises on I/O trouble: a failed write
    warns once and keeps the text in memory for this process; a directory or file found
    unsafe later (someone else's, writable by others, a symlink) warns once and turns the
    whole store to memory for this process.
    """

    def __init__(self, root: str | os.PathLike, max_bytes: int):
        self.root = Path(os.path.realpath(os.path.expanduser(os.fspath(root))))
        self.path = self.root / f"v{FORMAT_VERSION}"
        self.max_bytes = max(0, int(max_bytes))
        self._fallback = MemoryStore(max(self.max_bytes, DEFAULT_MAX_MB * MB))
        self._mutex = threading.Lock()
        self._puts_until_scan = 0  # the first put measures the tree
        self._uncounted = 0  # bytes written while the lock was busy, counted at the next put
        self._warned = False
        self._unsafe: str | None = None
        self._held = threading.local()  # the build locks each thread holds
        prepare_dir(self.root, self.path)
        self._secret = load_secret(self.root)

    def __repr__(self) -> str:
        return f"DiskStore({str(self.root)!r}, max_bytes={self.max_bytes})"

    def _entry(self, namespace: str, key: str) -> Path:
        return self.path / namespace / key[:2] / f"{key}.py"

    # get ------------------------------------------------------------------------------------------
    def get(self, namespace: str, key: str) -> str | None:
        """The verified text of an entry, or ``None``. An entry that does not verify (another
        key's, edited, written with another secret, truncated, not a regular file) is deleted;
        a directory or file that is not safe turns the store to memory (one warning).

        A hit touches the file's mtime (the LRU clock).
        """
        check_key(namespace, key)
        text = self._fallback.get(namespace, key)
        if text is not None or self._unsafe is not None:
            return text
        path = self._entry(namespace, key)
        try:
            check_below(self.path, path.parent)
            data, st = read_file(path, self.max_bytes)
        except FileNotFoundError:
            return None
        except UnsafePath as exc:
            self._go_unsafe(exc)
            return None
        except OddFile as exc:
            self._drop(path, None, str(exc))
            return None
        except OSError as exc:
            _log().debug("symdiff cache: cannot read %s: %s", path, exc)
            return None
        try:
            text = decode_entry(data, namespace, key, self._secret)
        except ValueError as exc:
            self._drop(path, st, str(exc) or type(exc).__name__)
            return None
        with contextlib.suppress(OSError, NotImplementedError):
            os.utime(path, follow_symlinks=False)  # the LRU clock
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

    def _go_unsafe(self, exc: OSError) -> None:
        """Stop using the disk for this process: one warning saying why."""
        reason = str(exc.strerror or exc)
        with self._mutex:
            if self._unsafe is not None:
                return
            self._unsafe = reason
        warnings.warn(
            f"symdiff: not using the disk cache: {reason}; results are kept in memory for this "
            "process only",
            SymdiffCacheWarning,
            stacklevel=4,
        )

    # put ------------------------------------------------------------------------------------------
    def put(self, namespace: str, key: str, text: str) -> None:
        """Write an entry atomically (temp file, fsync, ``os.replace``), having counted its
        bytes against the cap (evicting if needed).

        On any OSError the text is kept in memory for this process and one
        :class:`SymdiffCacheWarning` per store is issued; nothing is raised.
        """
        check_key(namespace, key)
        check_text(text)
        if self._unsafe is not None:
            self._fallback.put(namespace, key, text)
            return
        try:
            body = text.encode("utf-8")
        except UnicodeEncodeError:
            _log().debug("symdiff cache: %s/%s is not encodable, kept in memory", namespace, key)
            self._fallback.put(namespace, key, text)
            return
        data = encode_entry(body, namespace, key, self._secret)
        if len(data) > self.max_bytes:
            _log().debug("symdiff cache: %s/%s is larger than the cap, kept in memory",
                         namespace, key)
            self._fallback.put(namespace, key, text)
            return
        path = self._entry(namespace, key)
        try:
            for attempt in range(2):
                make_dirs(self.path, path.parent)
                try:
                    old = os.lstat(path).st_size
                except OSError:
                    old = 0
                if attempt == 0:
                    self._count(len(data) - old)
                try:
                    write_atomic(path, data)
                    break
                except FileNotFoundError:  # its directory was removed by a clear meanwhile
                    if attempt:
                        raise
        except UnsafePath as exc:
            self._go_unsafe(exc)
            self._fallback.put(namespace, key, text)
            return
        except OSError as exc:
            self._write_failed(exc)
            self._fallback.put(namespace, key, text)
            return
        self._fallback.discard(namespace, key)

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

    # builds ---------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def building(self, namespace: str, key: str) -> Iterator[bool]:
        """Hold the build lock of an entry while the block builds it: one process builds a key
        while the others wait here for it (then find its entry), at most
        :data:`BUILD_WAIT_SECONDS`, and no longer than :data:`STUCK_SECONDS` once the builder
        is seen stopped. Yields whether the lock is held; the block runs in any case."""
        check_key(namespace, key)
        held = self._held.__dict__.setdefault("keys", set())
        if (namespace, key) in held:  # this thread builds it already (a nested request)
            yield True
            return
        lock = None
        try:
            if self._unsafe is None:
                path = self._entry(namespace, key)
                try:
                    make_dirs(self.path, path.parent)
                    lock = FileLock(path.parent / f"{usage.LOCK_PREFIX}{key}", remove=True,
                                    owner=True)
                    if not lock.acquire(BUILD_WAIT_SECONDS, stuck=STUCK_SECONDS):
                        _log().debug("symdiff cache: %s/%s: its builder is busy or stuck; "
                                     "building here too", namespace, key)
                except UnsafePath as exc:
                    self._go_unsafe(exc)
                except OSError as exc:
                    _log().debug("symdiff cache: no build lock for %s/%s: %s",
                                 namespace, key, exc)
            got = lock is not None and lock.held
            if got:
                held.add((namespace, key))
            yield got
        finally:
            held.discard((namespace, key))
            if lock is not None:
                lock.release()  # (nothing if it was not taken)

    # the cap --------------------------------------------------------------------------------------
    def _count(self, delta: int) -> None:
        """Add ``delta`` bytes (about to be written) to the shared count under the cache's
        lock, and scan (evicting if over the cap) when :mod:`usage` says so. Without the lock
        in :data:`LOCK_WAIT_SECONDS`, the bytes are counted at this process's next put."""

        def later() -> None:
            with self._mutex:
                self._uncounted += delta

        self._locked(lambda: self._counted(delta), "count", otherwise=later)

    def _counted(self, delta: int) -> int:
        with self._mutex:
            self._puts_until_scan -= 1
            due = self._puts_until_scan <= 0
            delta, self._uncounted = delta + self._uncounted, 0
        total = usage.read_usage(self.path)
        removed = 0
        if due or total is None or total + delta > self.max_bytes:
            removed, total = usage.scan(self.path, self.max_bytes, pending=delta)
            with self._mutex:
                self._puts_until_scan = usage.SCAN_EVERY_PUTS
        else:
            total += delta
        usage.write_usage(self.path, total)
        return removed

    def _locked(self, work, what: str, otherwise=None):
        """``work()`` under the cache's lock if it can be had within
        :data:`LOCK_WAIT_SECONDS`, else ``otherwise()`` (or nothing)."""
        lock = FileLock(self.path / ".lock")
        try:
            got = lock.acquire(LOCK_WAIT_SECONDS)
        except OSError as exc:
            _log().debug("symdiff cache: no lock to %s: %s", what, exc)
            got = False
        if not got:
            _log().debug("symdiff cache: lock busy, %s %s", what,
                         "skipped" if otherwise is None else "without it")
            return None if otherwise is None else otherwise()
        try:
            return work()
        finally:
            lock.release()

    def prune(self) -> int:
        """Measure the tree now, remove the temp files of dead writers and evict
        least-recently-used entries while over the cap (down to 90% of it), under the cache's
        lock; returns the number of files removed (0 if the lock is busy)."""
        if self._unsafe is not None:
            return 0

        def work() -> int:
            removed, total = usage.scan(self.path, self.max_bytes)
            usage.write_usage(self.path, total)
            with self._mutex:
                self._puts_until_scan = usage.SCAN_EVERY_PUTS
            return removed

        return self._locked(work, "prune") or 0

    # info / clear ---------------------------------------------------------------------------------
    def info(self) -> dict:
        """``path`` (the version directory), entries and bytes on disk, cap, ``kind`` "disk";
        once the store has turned to memory, :meth:`MemoryStore.info` with the reason."""
        if self._unsafe is not None:
            return {**self._fallback.info(), "reason": self._unsafe}
        entries, size = usage.measure(self.path)
        return {
            "path": str(self.path),
            "entries": entries,
            "bytes": size,
            "cap": self.max_bytes,
            "kind": "disk",
            "reason": None,
        }

    def clear(self) -> int:
        """Remove every entry of every namespace, the temp files of dead writers and the
        directories left empty (under the lock when it can be had); returns the number of
        entries removed, including entries held in memory after failed writes."""
        count = 0
        if self._unsafe is None:
            def work() -> int:
                return usage.clear(self.path)

            count = self._locked(work, "clear", otherwise=work)
        count += self._fallback.clear()
        with self._mutex:
            self._puts_until_scan = 0
        return count
