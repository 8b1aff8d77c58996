"""Many processes asking for the same new function at once: one builds it, the others wait for
its entry. Total CPU time of N processes against one process that builds alone, and against N
processes that only load it warm (the floor: N interpreters starting and importing symdiff).

Run: ``python benchmarks/bench_cache_concurrency.py [--processes N] [--repeat R] [--terms T]``.
Every round uses a fresh cache directory and a new expression (a constant no process has seen),
a sum of T terms (the more terms, the longer one build against starting an interpreter). CPU time is
each process's user + system time (``os.wait4``), summed; each figure is the median of R
rounds, the rounds of the three kinds interleaved. Every result is checked against
``sympy.diff``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKER = """
import sys
sys.stdin.readline()
import symdiff as sd
g = sd.grad(sys.argv[1], wrt=["x", "y"])
gx, gy = g(0.3, 0.7)
print(repr(float(gx)), repr(float(gy)), "sympy" in sys.modules)
"""
TEMPLATE = ("sin(x + {k})*exp(y/{k}) + log(1 + x**2*y**2)/{k} + atan(x*y - {k})*cosh(y/3) "
            "+ erf(x - y)*tanh({k}*y) + sqrt(1 + x**2 + y**4)")


def reference(expr: str) -> tuple[float, float]:
    import sympy as sp

    x, y = sp.symbols("x y")
    e = sp.sympify(expr)
    at = {x: sp.Rational(3, 10), y: sp.Rational(7, 10)}
    return float(sp.diff(e, x).subs(at).evalf(30)), float(sp.diff(e, y).subs(at).evalf(30))


def run(n: int, expr: str, cache_dir: str) -> tuple[float, float, list[str]]:
    """N processes started together on ``expr``: (total CPU s, wall s, their outputs)."""
    env = {**os.environ, "SYMDIFF_CACHE_DIR": cache_dir,
           "PYTHONPATH": os.pathsep.join(filter(None, [ROOT, os.environ.get("PYTHONPATH")]))}
    env.pop("SYMDIFF_DISABLE_CACHE", None)
    processes = [subprocess.Popen([sys.executable, "-c", WORKER, expr], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, env=env)
                 for _ in range(n)]
    start = time.perf_counter()
    for process in processes:
        process.stdin.write("go\n")
        process.stdin.flush()
        process.stdin.close()
    cpu, outputs = 0.0, []
    for process in processes:
        out = process.stdout.read()
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        if process.returncode != 0:
            raise RuntimeError(f"a process failed ({process.returncode})")
        cpu += usage.ru_utime + usage.ru_stime
        outputs.append(out)
    return cpu, time.perf_counter() - start, outputs


def check(outputs: list[str], expected: tuple[float, float]) -> int:
    """Raise unless every output is the reference gradient; returns how many derived it."""
    derived = 0
    for out in outputs:
        gx, gy, imported = out.split()
        for got, want in zip((float(gx), float(gy)), expected, strict=True):
            if abs(got - want) > 1e-10 * max(1.0, abs(want)):
                raise AssertionError(f"wrong gradient {got} != {want}")
        derived += imported == "True"
    return derived


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--processes", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--terms", type=int, default=1)
    options = parser.parse_args()
    n = options.processes
    alone, together, warm, walls, derived = [], [], [], [], []
    for _ in range(options.repeat):
        for kind in ("alone", "together", "warm"):
            base = 2 + uuid.uuid4().int % 1000
            expr = " + ".join(TEMPLATE.format(k=base + t) for t in range(options.terms))
            expected = reference(expr)
            with tempfile.TemporaryDirectory() as cache_dir:
                if kind == "alone":
                    cpu, _, outputs = run(1, expr, cache_dir)
                    alone.append(cpu)
                elif kind == "together":
                    cpu, wall, outputs = run(n, expr, cache_dir)
                    together.append(cpu)
                    walls.append(wall)
                    derived.append(check(outputs, expected))
                else:
                    run(1, expr, cache_dir)  # built first: the others only load it
                    cpu, _, outputs = run(n, expr, cache_dir)
                    warm.append(cpu)
                check(outputs, expected)
    one, many, floor = (statistics.median(v) for v in (alone, together, warm))
    print(f"load: {os.getloadavg()[0]:.1f} (1-minute average), {os.cpu_count()} cores")
    print(f"one process building alone: {one:.2f} CPU-s (median of {options.repeat})")
    print(f"{n} processes, same new expression at once: {many:.2f} CPU-s in all "
          f"({statistics.median(walls):.1f} s wall); processes that derived it: {derived}")
    print(f"{n} processes loading it warm (the floor): {floor:.2f} CPU-s")
    print(f"ratio to one build: {many / one:.2f}x; above the floor: "
          f"{(many - floor) / one:.2f}x one build")


if __name__ == "__main__":
    main()
