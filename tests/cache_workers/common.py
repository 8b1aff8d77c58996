"""Keys and deterministic texts shared by the cache worker scripts and ``tests/test_cache.py``.

The text of key ``k`` is the same in every process, so a reader can check any entry exactly.
"""

from __future__ import annotations

import hashlib

N_KEYS = 20


def key(k: int, tag: str = "hammer") -> str:
    """The hex key of entry ``k`` (computed without symdiff, so it is independent of it)."""
    return hashlib.sha256(f"{tag}:{k}".encode()).hexdigest()


def entry_text(k: int) -> str:
    """A generated-module-like text for entry ``k``; sizes grow from ~1 KB to ~25 KB."""
    lines = [f"# entry {k}\n", "import numpy as np\n"]
    for i in range(30 * (k + 1)):
        lines.append(f"v{k}_{i} = np.float64({k}) * {i}  # {'x' * (i % 13)}\n")
    return "".join(lines)


def big_text(k: int, megabytes: int = 4) -> str:
    """A large deterministic text (``megabytes`` MiB) for the killed-writer test."""
    line = f"w{k} = {k}  # {'y' * 50}\n"
    return line * (megabytes * 1024 * 1024 // len(line))


def crash_text(k: int) -> str:
    """The text of entry ``k`` of the crash test: from 20 KB to about 1.5 MB."""
    line = f"c{k} = {k}  # {'z' * 60}\n"
    return line * (300 * (1 + 25 * (k % 3)))
