"""The on-disk cache of generated Python modules (text), shared between processes.

Building a module takes SymPy seconds; its text is stored here so that the next process loads it
instead. Entries live at ``<root>/v{FORMAT_VERSION}/<namespace>/<key[:2]>/<key>.py``; each file
is one header line naming its namespace, key and length with an HMAC-SHA256 under a per-user
secret (``<root>/secret``, mode 0o600), followed by the body (UTF-8). A read checks every
directory and the file on the way (this user's or root's, not writable by others, no symlinks,
a regular file opened without blocking, of bounded size), then the header and the MAC: a
truncated, edited, copied, swapped or foreign file is a miss (and is deleted), never a wrong
answer. Writes go to a locked temporary file in the same directory and are moved into place
with :func:`os.replace`, so a reader never sees half a file. A lock per key lets one process
build an entry while the others wait for it. The total size is capped for all processes at
once: least-recently-used entries (oldest mtime; a hit touches the file) are evicted.

Configuration, read by :func:`open_store`:

- ``SYMDIFF_DISABLE_CACHE=1`` (or ``true``/``yes``): keep results in memory only.
- ``SYMDIFF_CACHE_DIR``: the root directory (default: ``platformdirs.user_cache_dir("symdiff")``).
- ``SYMDIFF_CACHE_MAX_MB``: the size cap in MiB (a float; default :data:`DEFAULT_MAX_MB`);
  ``0`` means no disk cache at all.

A directory or file that cannot be created or written, or that is unsafe (writable by group or
others, owned by another user, a symlink below the root, a secret others can read), is never
used: one :class:`SymdiffCacheWarning` says why and results are kept in memory.

This package imports only the standard library and ``platformdirs`` (``fcntl`` or
``filelock`` when it first takes a lock, on a write), and does no I/O at import time.

Modules
-------
``protocol`` (:class:`Store`, :class:`SymdiffCacheWarning`, ``MB``, :data:`DEFAULT_MAX_MB`) and
``entries`` (:func:`cache_key`, the header format and its MAC) <- ``memory``
(:class:`MemoryStore`); ``lru`` (:class:`LRU`, the bounded memo of compiled functions);
``modules`` (:func:`pack_module`, :func:`unpack_module`: a module entry is its source plus the
JSON record of what it is); ``locks`` (inter-process file locks) <- ``files`` (safety checks,
bounded reads, atomic writes) <- ``secret`` (the MAC's key) and ``usage`` (the layout walk, the
shared byte count, scans and eviction) <- ``disk`` (:class:`DiskStore`, and
``LOCK_WAIT_SECONDS``, ``BUILD_WAIT_SECONDS``, ``STUCK_SECONDS``: patch those on
``symdiff.cache.disk``) <- this package (:func:`open_store`, :func:`reset_store`), which
re-exports the public names.
"""

from __future__ import annotations

import math
import os
import threading
import warnings

from .disk import DiskStore as DiskStore
from .entries import FORMAT_VERSION as FORMAT_VERSION
from .entries import cache_key as cache_key
from .entries import is_key as is_key
from .lru import LRU as LRU
from .lru import MEMO_SIZE as MEMO_SIZE
from .memory import MemoryStore as MemoryStore
from .modules import pack_module as pack_module
from .modules import unpack_module as unpack_module
from .protocol import DEFAULT_MAX_MB as DEFAULT_MAX_MB
from .protocol import MB as MB
from .protocol import Store as Store
from .protocol import SymdiffCacheWarning as SymdiffCacheWarning

__all__ = [
    "DEFAULT_MAX_MB",
    "FORMAT_VERSION",
    "LRU",
    "MEMO_SIZE",
    "DiskStore",
    "MemoryStore",
    "Store",
    "SymdiffCacheWarning",
    "cache_key",
    "is_key",
    "open_store",
    "pack_module",
    "reset_store",
    "unpack_module",
]

_TRUE = {"1", "true", "yes"}


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
    - ``SYMDIFF_CACHE_MAX_MB=0``: a :class:`MemoryStore` with reason "disabled by
      SYMDIFF_CACHE_MAX_MB=0" (no disk cache; kept in memory up to the default cap).
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
    if cap == 0:
        return MemoryStore(DEFAULT_MAX_MB * MB, reason="disabled by SYMDIFF_CACHE_MAX_MB=0")
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
