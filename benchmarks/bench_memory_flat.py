"""Memory of one process over thousands of builds: resident set size (RSS), the functions held
in memory, the modules linecache serves and the directory of source copies, with the disk
cache on and off.

Run: ``python benchmarks/bench_memory_flat.py [--builds N] [--every K] [--mode on|off|both]``.
Each mode runs in a fresh process with a fresh cache directory and source-copy directory (in
a temporary directory). Every build is of a new expression (a gradient, Hessian, value and
gradient or Jacobian, in turn) and is called once, then dropped. Reported: RSS after
``import symdiff``, after the first build (SymPy and the rest imported), every K builds, and
the growth from the first build to the last, in MB and KB per build.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def rss_mb() -> float:
    """Resident set size now, in MiB (Linux: /proc; elsewhere the peak from getrusage)."""
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / (2**20 if sys.platform == "darwin" else 2**10)


def build(sd, k: int, cache: bool) -> None:
    """Build (and call once) the k-th new function."""
    expr = f"sin(x + {k})*y + x**{k % 7 + 2}/{k + 1}"
    kind = k % 4
    if kind == 0:
        g = sd.grad(expr, wrt=["x", "y"], cache=cache)
    elif kind == 1:
        g = sd.hessian(expr, wrt=["x", "y"], cache=cache)
    elif kind == 2:
        g = sd.value_and_grad(expr, wrt=["x", "y"], cache=cache)
    else:
        g = sd.jacobian([expr, f"x*y + {k}"], wrt=["x", "y"], cache=cache)
    g(0.5, 0.25)


def child(builds: int, every: int, cache: bool) -> None:
    """One mode, in this process: prints one JSON line."""
    start = rss_mb()
    import symdiff as sd
    from symdiff.codegen import load, sources

    imported = rss_mb()
    build(sd, 0, cache)
    first = rss_mb()
    samples, started = [], time.perf_counter()
    for k in range(1, builds):
        build(sd, k, cache)
        if k % every == 0 or k == builds - 1:
            samples.append((k + 1, round(rss_mb(), 1)))
    seconds = time.perf_counter() - started
    import gc

    gc.collect()
    end = rss_mb()
    directory = sources.source_dir()
    copies = [p for p in directory.iterdir()] if directory.is_dir() else []
    print(json.dumps({
        "cache": cache, "builds": builds, "seconds": round(seconds, 1),
        "rss_start": round(start, 1), "rss_imported": round(imported, 1),
        "rss_first_build": round(first, 1), "rss_end": round(end, 1), "samples": samples,
        "growth_mb": round(end - first, 1),
        "kb_per_build": round((end - first) * 1024 / max(1, builds - 1), 2),
        "linecache_modules": load.registered(),
        "source_copies": len(copies),
        "source_bytes": sum(p.stat().st_size for p in copies),
        "source_cap_mb": sources.SOURCES_MAX_MB,
        "disk": sd.cache_info(),
    }))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--builds", type=int, default=5000)
    parser.add_argument("--every", type=int, default=500)
    parser.add_argument("--mode", choices=["on", "off", "both"], default="both")
    parser.add_argument("--child", choices=["on", "off"], help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.child:
        child(options.builds, options.every, options.child == "on")
        return
    modes = ["on", "off"] if options.mode == "both" else [options.mode]
    for mode in modes:
        with tempfile.TemporaryDirectory() as scratch:
            env = {**os.environ, "SYMDIFF_CACHE_DIR": os.path.join(scratch, "cache"),
                   "SYMDIFF_SOURCE_DIR": os.path.join(scratch, "sources"),
                   "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get(
                       "PYTHONPATH")]))}
            env.pop("SYMDIFF_DISABLE_CACHE", None)
            done = subprocess.run(
                [sys.executable, __file__, "--child", mode, "--builds", str(options.builds),
                 "--every", str(options.every)],
                env=env, capture_output=True, text=True, check=True)
            report = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"cache {mode}: {report['builds']} builds in {report['seconds']} s")
        print(f"  RSS: start {report['rss_start']} MB, after import {report['rss_imported']} MB,"
              f" after the first build {report['rss_first_build']} MB,"
              f" after the last {report['rss_end']} MB")
        print(f"  growth from the first build: {report['growth_mb']} MB"
              f" ({report['kb_per_build']} KB per build)")
        print("  RSS by builds: " + ", ".join(f"{k}: {mb}" for k, mb in report["samples"]))
        print(f"  modules in linecache: {report['linecache_modules']};"
              f" source copies: {report['source_copies']} files,"
              f" {report['source_bytes'] / 2**20:.1f} MB (cap {report['source_cap_mb']} MB)")
        disk = report["disk"]
        print(f"  disk cache: {disk['kind']}, {disk['entries']} entries,"
              f" {disk['bytes'] / 2**20:.1f} MB")


if __name__ == "__main__":
    main()
