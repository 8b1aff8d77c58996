"""What checking an entry costs on a warm load: ``DiskStore.get`` (the directory and file
checks, a bounded read, the header and the HMAC-SHA256 under the cache's secret) and the MAC
alone (``decode_entry``), for entries from 2 KB (a small gradient) to 1 MB (a module of 1,000
names).

Run: ``python benchmarks/bench_cache_mac.py [--repeat R]``: medians of R x 200 calls, in one
process, in a temporary cache directory.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

from symdiff.cache import DiskStore, cache_key
from symdiff.cache.entries import decode_entry, encode_entry

SIZES = {"2 KB": 2_000, "20 KB": 20_000, "200 KB": 200_000, "1 MB": 1_000_000}


def median_us(call, calls: int) -> float:
    call()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()
    calls = 200 * options.repeat
    store = DiskStore(tempfile.mkdtemp(), 100 * 2**20)
    print(f"load: {os.getloadavg()[0]:.1f} (1-minute average)")
    print(f"{'entry':>8} {'get() us':>10} {'MAC only us':>12}")
    for label, size in SIZES.items():
        key = cache_key("bench", label)
        text = ("x = 1.0  # " + "y" * 60 + "\n") * (size // 72)
        store.put("module", key, text)
        assert store.get("module", key) == text
        data = encode_entry(text.encode(), "module", key, store._secret)
        get = median_us(lambda k=key: store.get("module", k), calls)
        mac = median_us(lambda d=data, k=key: decode_entry(d, "module", k, store._secret), calls)
        print(f"{label:>8} {get:10.1f} {mac:12.1f}")


if __name__ == "__main__":
    main()
