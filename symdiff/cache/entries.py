"""Keys and the entry format: :func:`cache_key`, the checks on a namespace, key and text, and the
header line with the body's length and SHA-256 that makes a truncated, edited or foreign file a
miss. Pure functions of their arguments: no I/O."""

from __future__ import annotations

import hashlib
import re

FORMAT_VERSION: int = 2
"""Version of the on-disk format; entries live under ``<root>/v{FORMAT_VERSION}/``. (2: the
generated modules import their helpers from ``symdiff.runtime``; the entries of 1, which embed
them, are never read.)"""

NAMESPACE_RE = re.compile(r"[a-z]+")
"""What a namespace (a directory under ``v{FORMAT_VERSION}/``) must fully match."""
_KEY_RE = re.compile(r"[0-9a-f]{16,64}")
ENTRY_NAME_RE = re.compile(r"([0-9a-f]{16,64})\.py")
"""What an entry's file name must fully match; group 1 is the key."""
_HEADER_RE = re.compile(rb"# symdiff-cache v([0-9]+) sha256=([0-9a-f]{64}) bytes=([0-9]+)")
_MAX_HEADER = 128


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


def check_key(namespace: str, key: str) -> None:
    """Raise ValueError unless ``namespace`` is ``[a-z]+`` and ``key`` is ``[0-9a-f]{16,64}``."""
    if not isinstance(namespace, str) or not NAMESPACE_RE.fullmatch(namespace):
        raise ValueError(f"invalid cache namespace {namespace!r}: expected [a-z]+")
    if not isinstance(key, str) or not _KEY_RE.fullmatch(key):
        raise ValueError(f"invalid cache key {key!r}: expected 16 to 64 lowercase hex digits")


def check_text(text: str) -> None:
    """Raise TypeError unless ``text`` (the value to store) is a ``str``."""
    if not isinstance(text, str):
        raise TypeError(f"cache text must be str, not {type(text).__name__}")


# -- entry format ----------------------------------------------------------------------------------
def encode_entry(body: bytes) -> bytes:
    """The file contents for ``body``: header line, newline, body."""
    header = f"# symdiff-cache v{FORMAT_VERSION} sha256={hashlib.sha256(body).hexdigest()} "
    return header.encode("ascii") + b"bytes=%d\n" % len(body) + body


def decode_entry(data: bytes) -> str:
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
