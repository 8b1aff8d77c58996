"""What the disk cache holds and how it is kept under its cap, for every process at once: the
layout walk (:func:`walk`), the shared byte count (``<top>/.usage``), the scan that removes
the temp files of dead writers and the lock files of dead builders and evicts the
least-recently-used entries (:func:`scan`), and :func:`clear`.

Every writer adds what it is about to write to the shared count under the cache's lock before
writing (so the temp files of writers that were killed count too); the count is measured
again by a scan when it is missing or unreadable, when it would pass the cap, and every
:data:`SCAN_EVERY_PUTS` puts of a process (the first one included).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from .entries import ENTRY_NAME_RE, NAMESPACE_RE
from .files import TEMP_PREFIX, read_file, scan_dir, try_rmdir, try_unlink
from .locks import remove_if_unlocked

LOCK_PREFIX = ".lock-"
"""A build lock in a shard directory: ``.lock-<key>`` (removed by its holder)."""
USAGE_NAME = ".usage"
SCAN_EVERY_PUTS = 64
"""A process measures the tree again at least once every this many puts."""
EVICT_TO = 0.9
"""An eviction removes least-recently-used entries until this fraction of the cap is left."""


def walk(top: Path) -> Iterator[tuple[str, str]]:
    """``(path, kind)`` for every file the store made under ``top`` (the version directory):
    kind ``"entry"``, ``"temp"`` or ``"lock"``. Only names the store itself creates, in
    directories (not symlinks) it creates, are listed: anything else is left alone."""
    for ns in scan_dir(top):
        if not (ns.is_dir(follow_symlinks=False) and NAMESPACE_RE.fullmatch(ns.name)):
            continue
        for shard in scan_dir(ns.path):
            if not shard.is_dir(follow_symlinks=False) or len(shard.name) != 2:
                continue
            for item in scan_dir(shard.path):
                name = item.name
                if name.startswith(TEMP_PREFIX):
                    yield item.path, "temp"
                elif name.startswith(LOCK_PREFIX):
                    yield item.path, "lock"
                elif ENTRY_NAME_RE.fullmatch(name):
                    yield item.path, "entry"


def read_usage(top: Path) -> int | None:
    """The shared byte count, or None when it is missing or not a plain count."""
    try:
        data, _ = read_file(top / USAGE_NAME, 32)
        value = int(data.decode("ascii").strip())
    except (OSError, ValueError):
        return None
    return value if value >= 0 else None


def write_usage(top: Path, value: int) -> None:
    """Store the shared byte count (under the cache's lock; a torn write reads as missing)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    with contextlib.suppress(OSError):
        fd = os.open(top / USAGE_NAME, flags | getattr(os, "O_NONBLOCK", 0), 0o600)
        try:
            os.write(fd, b"%d\n" % max(0, value))
        finally:
            os.close(fd)


def scan(top: Path, cap: int, pending: int = 0) -> tuple[int, int]:
    """Measure the tree (entries and the temp files of live writers, plus ``pending`` bytes
    about to be written), removing the temp files of dead writers and unheld build locks; if
    that is over ``cap``, evict least-recently-used entries (oldest mtime: a hit touches its
    file) down to :data:`EVICT_TO` of it. Returns (files removed, bytes counted after)."""
    entries: list[tuple[float, str, int]] = []
    removed = 0
    total = pending
    for path, kind in walk(top):
        if kind != "entry":
            if remove_if_unlocked(path):
                removed += kind == "temp"
                continue
            if kind == "lock":
                continue
        try:
            st = os.stat(path, follow_symlinks=False)
        except OSError:
            continue
        total += st.st_size
        if kind == "entry":
            entries.append((st.st_mtime, path, st.st_size))
    if total > cap:
        target = EVICT_TO * cap
        entries.sort()
        for _, path, size in entries:
            if total <= target:
                break
            if try_unlink(path):
                removed += 1
                total -= size
    return removed, total


def measure(top: Path) -> tuple[int, int]:
    """(entries, bytes of entries) under ``top``, touching nothing."""
    count = size = 0
    for path, kind in walk(top):
        if kind != "entry":
            continue
        try:
            size += os.stat(path, follow_symlinks=False).st_size
        except OSError:
            continue
        count += 1
    return count, size


def clear(top: Path) -> int:
    """Remove every entry, the temp files of dead writers, unheld build locks, the shared
    count, and the shard and namespace directories left empty; returns the entries removed."""
    count = 0
    for path, kind in list(walk(top)):
        if kind == "entry":
            count += try_unlink(path)
        else:
            remove_if_unlocked(path)
    try_unlink(top / USAGE_NAME)
    for ns in scan_dir(top):
        if ns.is_dir(follow_symlinks=False) and NAMESPACE_RE.fullmatch(ns.name):
            for shard in scan_dir(ns.path):
                if shard.is_dir(follow_symlinks=False) and len(shard.name) == 2:
                    try_rmdir(shard.path)
            try_rmdir(ns.path)
    return count
