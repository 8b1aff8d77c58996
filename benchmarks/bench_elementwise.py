"""Gradient run time over 1e6 points: symdiff vs SymPy lambdify (cse on/off) vs hand-written NumPy.

Run: ``python benchmarks/bench_elementwise.py [--points N] [--repeat R]``. Every peer is timed in
this one process on the same arrays; the table gives the median time of each and its ratio to the
hand-written NumPy gradient (lower is better; 1.00 = as fast as hand-written).

The last column, "fused", is a reference for what plain NumPy can reach at best: the same
gradients written by hand as cache-sized blocks with every operation writing into preallocated
buffers (``out=``, no temporaries at all). Where that column is well above 0.7, so is any code
generator that emits NumPy calls: the transcendental functions (``sin``, ``cos``, ``arctan2``,
which NumPy evaluates without SIMD in float64) cost the same in every version.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np
import sympy as sp

import symdiff as sd

X, Y = sp.symbols("x y", real=True)


def _hand_quotient(x, y):
    e, s, q = np.exp(y), np.sin(x), 1 / (1 + x**2)
    v = e * s * q
    return e * q * np.cos(x) - 2 * x * q * v, v


def _hand_logistic(x, y):
    t = np.exp(x * y)
    s = t / (1 + t)
    return y * s, x * s


def _hand_polar(x, y):
    r = np.sqrt(x**2 + y**2)
    a = np.arctan2(y, x)
    r2 = r * r
    return x / r * a - y * r / r2, y / r * a + x * r / r2


def _hand_gauss(x, y):
    d = x - y
    g = np.exp(-(d**2) / 2)
    c = np.cos(3 * x)
    t = -d * g * c
    return t - 3 * g * np.sin(3 * x), -t


BLOCK = 8192


def _fused(kernel: Callable, buffers: int) -> Callable:
    """``kernel(x, y, work, out_x, out_y)`` applied block by block, every result written into
    ``buffers`` preallocated work arrays or straight into the outputs."""

    def gradient(x, y):
        dx, dy, work = np.empty_like(x), np.empty_like(x), np.empty((buffers, BLOCK))
        for i in range(0, len(x), BLOCK):
            a, b = x[i:i + BLOCK], y[i:i + BLOCK]
            kernel(a, b, [w[:len(a)] for w in work], dx[i:i + BLOCK], dy[i:i + BLOCK])
        return dx, dy

    return gradient


def _fused_quotient(x, y, w, dx, dy):
    e, q, s, c, t = w
    np.exp(y, out=e)
    np.square(x, out=q)
    q += 1
    np.sin(x, out=s)
    np.cos(x, out=c)
    c *= q
    np.multiply(s, x, out=t)
    t *= 2
    c -= t
    c *= e
    np.square(q, out=t)
    np.divide(c, t, out=dx)
    np.multiply(e, s, out=t)
    np.divide(t, q, out=dy)


def _fused_logistic(x, y, w, dx, dy):
    (s,) = w
    np.multiply(x, y, out=s)
    np.exp(s, out=s)
    np.divide(s, s + 1, out=s)  # s + 1 is the one temporary; exp(xy) is finite for these points
    np.multiply(s, y, out=dx)
    np.multiply(s, x, out=dy)


def _fused_polar(x, y, w, dx, dy):
    r, a, t = w
    np.square(x, out=r)
    np.square(y, out=a)
    r += a
    np.sqrt(r, out=r)
    np.reciprocal(r, out=r)
    np.arctan2(y, x, out=a)
    np.multiply(a, x, out=t)
    t -= y
    np.multiply(r, t, out=dx)
    np.multiply(a, y, out=t)
    t += x
    np.multiply(r, t, out=dy)


def _fused_gauss(x, y, w, dx, dy):
    d, g, u, c, t = w
    np.subtract(x, y, out=d)
    np.square(d, out=g)
    g *= -0.5
    np.exp(g, out=g)
    np.multiply(x, 3, out=u)
    np.cos(u, out=c)
    np.sin(u, out=u)
    u *= 3
    np.multiply(d, c, out=t)
    np.negative(t, out=t)
    t -= u
    np.multiply(g, t, out=dx)
    np.multiply(d, g, out=t)
    np.multiply(t, c, out=dy)


FUSED = [_fused(_fused_quotient, 5), _fused(_fused_logistic, 1), _fused(_fused_polar, 3),
         _fused(_fused_gauss, 5)]

CASES: list[tuple[str, sp.Expr, Callable]] = [
    ("sin(x)*exp(y)/(1 + x**2)", sp.sin(X) * sp.exp(Y) / (1 + X**2), _hand_quotient),
    ("log(1 + exp(x*y))", sp.log(1 + sp.exp(X * Y)), _hand_logistic),
    ("sqrt(x**2 + y**2)*atan2(y, x)", sp.sqrt(X**2 + Y**2) * sp.atan2(Y, X), _hand_polar),
    ("exp(-(x - y)**2/2)*cos(3*x)", sp.exp(-((X - Y) ** 2) / 2) * sp.cos(3 * X), _hand_gauss),
]


def median_time(fn: Callable, *args, repeat: int) -> float:
    fn(*args)  # warm up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=15)
    options = parser.parse_args()
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 2.0, options.points)
    y = rng.uniform(0.5, 2.0, options.points)

    header = (f"{'expression':32} {'hand ms':>8} {'symdiff':>8} {'lambdify cse':>13} "
              f"{'lambdify':>9} {'fused':>6}")
    print(f"gradient over {options.points:.0e} points, median of {options.repeat}; ratios to hand")
    print(header)
    print("-" * len(header))
    found: dict[str, list[float]] = {}
    for (text, expr, hand), fused in zip(CASES, FUSED, strict=True):
        derivs = [sp.diff(expr, X), sp.diff(expr, Y)]
        peers = {
            "symdiff": sd.grad(text, wrt=["x", "y"]),
            "lambdify cse": sp.lambdify((X, Y), derivs, modules="numpy", cse=True),
            "lambdify": sp.lambdify((X, Y), derivs, modules="numpy"),
            "fused": fused,
        }
        for name, fn in peers.items():  # same numbers before timing anything
            for ours, ref in zip(fn(x[:1000], y[:1000]), hand(x[:1000], y[:1000]), strict=True):
                np.testing.assert_allclose(ours, ref, rtol=1e-10, err_msg=f"{name}: {text}")
        base = median_time(hand, x, y, repeat=options.repeat)
        ratios = {n: median_time(f, x, y, repeat=options.repeat) / base for n, f in peers.items()}
        for name, ratio in ratios.items():
            found.setdefault(name, []).append(ratio)
        print(
            f"{text:32} {base * 1e3:8.2f} {ratios['symdiff']:8.2f} "
            f"{ratios['lambdify cse']:13.2f} {ratios['lambdify']:9.2f} {ratios['fused']:6.2f}"
        )
    means = {n: statistics.geometric_mean(r) for n, r in found.items()}
    print(
        f"{'geometric mean':32} {'':8} {means['symdiff']:8.2f} {means['lambdify cse']:13.2f} "
        f"{means['lambdify']:9.2f} {means['fused']:6.2f}"
    )


if __name__ == "__main__":
    main()
