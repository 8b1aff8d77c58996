"""Worker: write large entries in an endless loop until killed.

Usage: ``python writer.py`` with ``SYMDIFF_CACHE_DIR`` set. Prints ``wrote`` after the first
complete put, then keeps overwriting; the test kills it with SIGKILL at some point.
"""

from __future__ import annotations

import itertools
import sys

from common import big_text, key

from symdiff.cache import open_store

N_BIG = 3


def main() -> int:
    store = open_store()
    texts = [big_text(k) for k in range(N_BIG)]
    for i in itertools.count():
        k = i % N_BIG
        store.put("module", key(k, "big"), texts[k])
        if i == 0:
            print("wrote", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
