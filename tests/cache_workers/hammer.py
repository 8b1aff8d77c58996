"""Worker: put and get the same keys as its siblings, many times; report on stdout as JSON.

Usage: ``python hammer.py ROUNDS SEED`` with ``SYMDIFF_CACHE_DIR`` set. Prints ``ready``, waits
for a line on stdin (so that all workers start together), then works and prints one JSON line.
"""

from __future__ import annotations

import json
import logging
import random
import sys
import time
import warnings

from common import N_KEYS, entry_text, key

from symdiff.cache import SymdiffCacheWarning, open_store


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "discarding" in message:  # an entry that did not verify (not a busy lock)
            self.messages.append(message)


def main() -> int:
    rounds, seed = int(sys.argv[1]), int(sys.argv[2])
    warnings.simplefilter("error", SymdiffCacheWarning)  # any cache warning is a failure
    records = _Records()
    logger = logging.getLogger("symdiff.cache")
    logger.setLevel(logging.DEBUG)
    logger.addHandler(records)
    store = open_store()
    kind = store.info()["kind"]
    print("ready", flush=True)
    sys.stdin.readline()
    rng = random.Random(seed)
    errors: list[str] = []
    hits = misses = 0
    start = time.perf_counter()
    for _ in range(rounds):
        order = list(range(N_KEYS))
        rng.shuffle(order)
        for k in order:
            expected = entry_text(k)
            got = store.get("module", key(k))
            if got is None:
                misses += 1
            elif got == expected:
                hits += 1
            else:
                errors.append(f"key {k}: wrong text before put ({len(got)} chars)")
            store.put("module", key(k), expected)
            if store.get("module", key(k)) != expected:
                errors.append(f"key {k}: wrong text right after put")
    seconds = time.perf_counter() - start
    report = {
        "kind": kind,
        "errors": errors,
        "hits": hits,
        "misses": misses,
        "discarded": records.messages,
        "seconds": seconds,
    }
    print(json.dumps(report), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
