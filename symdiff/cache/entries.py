"""Keys and the entry format: :func:`cache_key`, the checks on a namespace, key and text, and the
header line that binds an entry to its key and authenticates it, so that a truncated, edited,
copied, swapped or foreign file is a miss. Pure functions of their arguments: no I/O.

An entry is one header line, then the body (UTF-8)::

    # symdiff-cache v3 <namespace>/<key> bytes=<length of the body> hmac-sha256=<hex>

The MAC is HMAC-SHA256, keyed by the cache's secret (:mod:`symdiff.cache.secret`), of the
header without its MAC (version, namespace, key, length), a newline, and the body. A file is
accepted only under the namespace and key it was written for, and only if whoever wrote it
could read the secret: a plain hash recomputed after an edit does not pass.
"""

from __future__ import annotations

import hashlib
import hmac
import re

FORMAT_VERSION: int = 3
"""Version of the on-disk format; entries live under ``<root>/v{FORMAT_VERSION}/``. (2: the
authenticated header; 3: the generated modules import their helpers from ``symdiff.runtime``.
Entries of another version are never read.)"""

NAMESPACE_RE = re.compile(r"[a-z]+")
"""What a namespace (a directory under ``v{FORMAT_VERSION}/``) must fully match."""
_KEY_RE = re.compile(r"[0-9a-f]{16,64}")
ENTRY_NAME_RE = re.compile(r"([0-9a-f]{16,64})\.py")
"""What an entry's file name must fully match; group 1 is the key."""
_HEADER_RE = re.compile(
    rb"# symdiff-cache v([0-9]{1,9}) ([a-z]{1,32})/([0-9a-f]{16,64}) bytes=([0-9]{1,15}) "
    rb"hmac-sha256=([0-9a-f]{64})"
)
_MAX_HEADER = 256


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


def is_key(key: object) -> bool:
    """Whether ``key`` is a valid entry key (16 to 64 lowercase hex digits)."""
    return isinstance(key, str) and _KEY_RE.fullmatch(key) is not None


def check_text(text: str) -> None:
    """Raise TypeError unless ``text`` (the value to store) is a ``str``."""
    if not isinstance(text, str):
        raise TypeError(f"cache text must be str, not {type(text).__name__}")


# -- entry format ----------------------------------------------------------------------------------
def _signed(namespace: str, key: str, length: int) -> bytes:
    """The header without its MAC: what the MAC covers before the body."""
    return f"# symdiff-cache v{FORMAT_VERSION} {namespace}/{key} bytes={length}".encode("ascii")


def _mac(secret: bytes, signed: bytes, body: bytes | memoryview) -> bytes:
    mac = hmac.new(secret, signed, "sha256")
    mac.update(b"\n")
    mac.update(body)
    return mac.hexdigest().encode("ascii")


def encode_entry(body: bytes, namespace: str, key: str, secret: bytes) -> bytes:
    """The file contents for ``body`` stored under ``namespace``/``key``: header line, newline,
    body."""
    signed = _signed(namespace, key, len(body))
    return signed + b" hmac-sha256=" + _mac(secret, signed, body) + b"\n" + body


def decode_entry(data: bytes, namespace: str, key: str, secret: bytes) -> str:
    """The verified text of a file's contents read for ``namespace``/``key``; raises
    ValueError saying what is wrong (another version, another key, a wrong length or MAC)."""
    newline = data.find(b"\n", 0, _MAX_HEADER)
    if newline < 0:
        raise ValueError("no header line")
    match = _HEADER_RE.fullmatch(data[:newline])
    if match is None:
        raise ValueError("malformed header")
    version, space, name, length, mac = match.groups()
    if int(version) != FORMAT_VERSION:
        raise ValueError(f"format version {int(version)}, expected {FORMAT_VERSION}")
    if (space.decode("ascii"), name.decode("ascii")) != (namespace, key):
        raise ValueError(f"written for {space.decode()}/{name.decode()}, not for this key")
    body = memoryview(data)[newline + 1 :]  # (no copy of a large body)
    if len(body) != int(length):
        raise ValueError(f"body is {len(body)} bytes, header says {int(length)}")
    if not hmac.compare_digest(_mac(secret, _signed(namespace, key, len(body)), body), mac):
        raise ValueError("MAC mismatch: edited, or written with another secret")
    return str(body, "utf-8")  # UnicodeDecodeError is a ValueError
