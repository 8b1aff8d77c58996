"""What every store shares: the :class:`Store` protocol, :class:`SymdiffCacheWarning`, and the
size unit and default cap."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

DEFAULT_MAX_MB: int = 200
"""Default size cap of the disk cache, in MiB (overridden by ``SYMDIFF_CACHE_MAX_MB``)."""

MB = 1024 * 1024


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

    def building(self, namespace: str, key: str) -> AbstractContextManager[bool]:
        """A context in which this process builds the entry while others wait for it (where
        the store is shared); it gives whether the lock is held."""
        ...

    def info(self) -> dict:
        """``{"path", "entries", "bytes", "cap", "kind", "reason"}``."""
        ...

    def clear(self) -> int:
        """Remove every entry; returns how many were removed."""
        ...
