"""symdiff against its peers on classic test functions of n variables, in one process.

Peers: SymPy ``lambdify`` of ``sympy.diff`` (CSE on and off), hand-written NumPy, and, when
installed (``pip install ".[bench]"``), JAX ``jit(grad)`` on the CPU, PyTorch autograd and HIPS
autograd. Every variable is an array of ``--points`` values (a batch of points), so each call
computes a batch of gradients. Columns: build time (s) and run time per call (ms, median), and
the gradient/function cost ratio of symdiff. Run: ``python benchmarks/bench_peers.py``.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import time
from collections.abc import Callable

import numpy as np
import sympy as sp

import symdiff as sd


def rosenbrock(n: int) -> tuple[str, Callable]:
    text = " + ".join(f"100*(x{i + 1} - x{i}**2)**2 + (1 - x{i})**2" for i in range(n - 1))

    def hand(x):
        g = np.zeros_like(x)
        t = x[1:] - x[:-1] ** 2
        g[:-1] += -400 * x[:-1] * t - 2 * (1 - x[:-1])
        g[1:] += 200 * t
        return g

    return text, hand


def product(n: int) -> tuple[str, Callable]:
    def hand(x):
        before = np.ones_like(x)
        before[1:] = np.cumprod(x[:-1], axis=0)
        after = np.ones_like(x)
        after[:-1] = np.cumprod(x[:0:-1], axis=0)[::-1]
        return before * after

    return "*".join(f"x{i}" for i in range(n)), hand


def logsumexp(n: int) -> tuple[str, Callable]:
    def hand(x):
        e = np.exp(x - x.max(axis=0))
        return e / e.sum(axis=0)

    return "log(" + " + ".join(f"exp(x{i})" for i in range(n)) + ")", hand


def quadratic(n: int) -> tuple[str, Callable]:
    """A tridiagonal quadratic form x'Ax with A = tridiag(-1, 2, -1)."""
    terms = [f"x{i}**2" for i in range(n)] + [f"-x{i}*x{i + 1}" for i in range(n - 1)]

    def hand(x):
        g = 2 * x
        g[1:] -= x[:-1]
        g[:-1] -= x[1:]
        return g

    return " + ".join(terms), hand


PROBLEMS = {
    "rosenbrock": rosenbrock,
    "product": product,
    "logsumexp": logsumexp,
    "quadratic": quadratic,
}


def median_ms(fn: Callable, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def timed(fn: Callable) -> tuple[float, object]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def peers(text: str, names: list[str], hand: Callable, with_lambdify: bool):
    """(name, build seconds, gradient callable taking the stacked array X of shape (n, m))."""
    build, g = timed(lambda: sd.grad(text, wrt=names, cache=False))
    yield "symdiff", build, lambda X: g(**dict(zip(names, X, strict=True)))
    yield "hand NumPy", 0.0, hand
    if with_lambdify:
        symbols = sp.symbols(names, real=True)
        expr = sp.sympify(text, locals=dict(zip(names, symbols, strict=True)))
        for cse in (True, False):
            build, f = timed(
                lambda cse=cse: sp.lambdify(
                    symbols, [sp.diff(expr, s) for s in symbols], modules="numpy", cse=cse
                )
            )
            yield f"lambdify cse={cse}", build, lambda X, f=f: f(*X)
    if importlib.util.find_spec("jax"):
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        namespace = {"exp": jnp.exp, "log": jnp.log}
        body = eval(f"lambda {', '.join(names)}: {text}", namespace)  # our own generated text
        grad = jax.jit(jax.vmap(jax.grad(lambda v: body(*v)), in_axes=1, out_axes=1))
        build, _ = timed(lambda: grad(jnp.ones((len(names), 2))).block_until_ready())
        yield "jax jit(grad)", build, lambda X: grad(X).block_until_ready()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--points", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    options = parser.parse_args()
    rng = np.random.default_rng(0)
    print(
        f"gradient of a batch of {options.points} points; build s / run ms (median of "
        f"{options.repeat}); ratio = run time / hand-written NumPy"
    )
    for n in map(int, options.sizes.split(",")):
        names = [f"x{i}" for i in range(n)]
        X = rng.uniform(0.5, 1.0, (n, options.points))
        for problem, make in PROBLEMS.items():
            text, hand = make(n)
            reference = hand(X)
            base = median_ms(lambda hand=hand, X=X: hand(X), options.repeat)
            cells = []
            for name, build, fn in peers(text, names, hand, with_lambdify=n <= 100):
                np.testing.assert_allclose(np.asarray(fn(X)), reference, rtol=1e-9, atol=1e-12)
                run = median_ms(lambda fn=fn, X=X: fn(X), options.repeat)
                cells.append(f"{name}: {build:.2f}s {run:.2f}ms ({run / base:.2f}x)")
            point = dict(zip(names, X, strict=True))
            value = sd.compile(text, cache=False)
            f_ms = median_ms(lambda value=value, point=point: value(**point), options.repeat)
            g = sd.grad(text, wrt=names)
            g_ms = median_ms(lambda g=g, point=point: g(**point), options.repeat)
            print(f"n={n:<5} {problem:10} grad/f cost {g_ms / f_ms:5.2f} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
