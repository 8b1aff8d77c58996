"""Worker: put, get and prune entries of known texts in an endless loop until killed.

Usage: ``python crasher.py SEED`` with ``SYMDIFF_CACHE_DIR`` (and ``SYMDIFF_CACHE_MAX_MB``)
set. Prints ``ready`` once its store is open, then works; the test kills it with SIGKILL at a
random moment: while writing a temp file, moving it into place, counting bytes under the
cache's lock, scanning, evicting or reading.
"""

from __future__ import annotations

import random
import sys

from common import crash_text, key

from symdiff.cache import open_store

N_CRASH_KEYS = 6


def main() -> int:
    rng = random.Random(int(sys.argv[1]))
    store = open_store()
    print("ready", flush=True)
    while True:
        k = rng.randrange(N_CRASH_KEYS)
        namespace = "module" if k % 2 else "index"
        action = rng.random()
        if action < 0.7:
            store.put(namespace, key(k, "crash"), crash_text(k))
        elif action < 0.9:
            got = store.get(namespace, key(k, "crash"))
            if got is not None and got != crash_text(k):
                print(f"wrong text for {k}", flush=True)
                return 1
        else:
            store.prune()


if __name__ == "__main__":
    sys.exit(main())
