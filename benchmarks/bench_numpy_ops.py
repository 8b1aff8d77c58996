"""The gradients of the NumPy operations symdiff traces at a small and a realistic size: symdiff's
emitted code against a hand-written NumPy closed form, ``jax.grad`` without ``jit`` and PyTorch
autograd on CPU (each when installed; "-" otherwise).

Run: ``python benchmarks/bench_numpy_ops.py [--repeat R]``. Every entry is timed in this one
process on the same float64 arrays; the table gives medians of R runs and symdiff's ratio to
the hand-written closed form (target <= 1.5) and to JAX and PyTorch (below 1 = symdiff faster).
Each function's value is a scalar (a loss), written once with ``np`` and evaluated with
``jax.numpy`` by rebinding ``np``; PyTorch gets its own spelling. ``OMP_NUM_THREADS=1`` gives
steadier ratios on a shared machine.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import time
import types
from collections.abc import Callable
from typing import Any

import numpy as np

import symdiff as sd

HAVE_JAX = importlib.util.find_spec("jax") is not None
HAVE_TORCH = importlib.util.find_spec("torch") is not None


def _median(fn: Callable[[], Any], repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _case(name: str, fn: Callable, hand: Callable, torch_fn: Callable | None,
          make: Callable[[int], tuple[np.ndarray, ...]], sizes: tuple[int, int]) -> dict:
    return dict(name=name, fn=fn, hand=hand, torch=torch_fn, make=make, sizes=sizes)


def _cases(rng: np.random.Generator) -> list[dict[str, Any]]:
    def vec(n: int) -> tuple[np.ndarray, ...]:
        return (rng.normal(size=n),)

    def vec2(n: int) -> tuple[np.ndarray, ...]:
        return rng.normal(size=n), rng.normal(size=n)

    def mat(n: int) -> tuple[np.ndarray, ...]:
        return (rng.normal(size=(n, n)) + np.sqrt(n) * np.eye(n),)

    def mat_vec(n: int) -> tuple[np.ndarray, ...]:
        return rng.normal(size=(n, n)) + np.sqrt(n) * np.eye(n), rng.normal(size=n)

    def mat2(n: int) -> tuple[np.ndarray, ...]:
        return rng.normal(size=(n, n)), rng.normal(size=(n, n))

    def table(n: int) -> tuple[np.ndarray, ...]:
        return (rng.normal(size=(n, 8)),)

    idx = rng.integers(0, 100, size=64)

    def hand_cumsum(x):
        return (np.flip(np.cumsum(np.flip(2 * np.cumsum(x)))),)

    def hand_var(x):
        return (2 * (x - x.mean()) / x.size,)

    def hand_sort(x):
        order = np.argsort(x)
        g = np.empty_like(x)
        g[order] = 2 * x[order] * np.arange(x.size)
        return (g,)

    def hand_solve(A, b):
        s = np.linalg.solve(A, b)
        c = np.linalg.solve(A.T, s)
        return -np.outer(c, s), c

    def hand_take(W):
        g = np.zeros_like(W)
        np.add.at(g, idx, 1.0)
        return (g,)

    import_torch = None
    if HAVE_TORCH:
        import torch as import_torch
    t = import_torch
    return [
        _case("sum(cumsum(x)**2)", lambda x: np.sum(np.cumsum(x) ** 2), hand_cumsum,
              t and (lambda x: (t.cumsum(x, 0) ** 2).sum()), vec, (100, 1_000_000)),
        _case("sum(roll(x, 3) * x)", lambda x: np.sum(np.roll(x, 3) * x),
              lambda x: (np.roll(x, 3) + np.roll(x, -3),),
              t and (lambda x: (t.roll(x, 3) * x).sum()), vec, (100, 1_000_000)),
        _case("sum(concat([x, y])**2)", lambda x, y: np.sum(np.concatenate([x, y]) ** 2),
              lambda x, y: (2 * x, 2 * y), t and (lambda x, y: (t.cat([x, y]) ** 2).sum()),
              vec2, (100, 1_000_000)),
        _case("var(x)", lambda x: np.var(x), hand_var, t and (lambda x: x.var(unbiased=False)),
              vec, (100, 1_000_000)),
        _case("sum(sort(x)**2 * k)",
              lambda x: np.sum(np.sort(x) ** 2 * np.arange(x.shape[0])), hand_sort,
              t and (lambda x: (t.sort(x).values ** 2 * t.arange(x.shape[0])).sum()),
              vec, (100, 1_000_000)),
        _case("sum(W[idx]) (64 rows)", lambda W: np.sum(W[idx]), hand_take,
              t and (lambda W: W[t.as_tensor(idx)].sum()), table, (100, 100_000)),
        _case("sum(triu(A) * A)", lambda A: np.sum(np.triu(A) * A),
              lambda A: (np.triu(A) + np.triu(A),), t and (lambda A: (t.triu(A) * A).sum()),
              lambda n: (rng.normal(size=(n, n)),), (10, 1000)),
        _case("det(A)", lambda A: np.linalg.det(A),
              lambda A: (np.linalg.det(A) * np.linalg.inv(A).T,),
              t and (lambda A: t.linalg.det(A)), mat, (10, 200)),
        _case("sum(inv(A))", lambda A: np.sum(np.linalg.inv(A)),
              lambda A: (-(np.linalg.inv(A).T @ np.ones_like(A) @ np.linalg.inv(A).T),),
              t and (lambda A: t.linalg.inv(A).sum()), mat, (10, 200)),
        _case("sum(solve(A, b)**2)/2", lambda A, b: np.sum(np.linalg.solve(A, b) ** 2) / 2,
              hand_solve, t and (lambda A, b: (t.linalg.solve(A, b) ** 2).sum() / 2),
              mat_vec, (10, 200)),
        _case("trace(A @ B)", lambda A, B: np.trace(A @ B), lambda A, B: (B.T.copy(), A.T.copy()),
              t and (lambda A, B: t.trace(A @ B)), mat2, (10, 200)),
        _case('einsum("ij,ij->", A, B)', lambda A, B: np.einsum("ij,ij->", A, B),
              lambda A, B: (B.copy(), A.copy()),
              t and (lambda A, B: t.einsum("ij,ij->", A, B)), mat2, (10, 1000)),
    ]


def _jax(fn: Callable, args: tuple[np.ndarray, ...]) -> Callable[[], Any] | None:
    if not HAVE_JAX:
        return None
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    jfn = types.FunctionType(fn.__code__, {**fn.__globals__, "np": jnp}, fn.__name__,
                             fn.__defaults__, fn.__closure__)
    jargs = tuple(jnp.asarray(a) for a in args)
    g = jax.grad(jfn, argnums=tuple(range(len(args))))
    return lambda: [r.block_until_ready() for r in g(*jargs)]


def _torch(fn: Callable | None, args: tuple[np.ndarray, ...]) -> Callable[[], Any] | None:
    if fn is None:
        return None
    import torch

    def run() -> Any:
        targs = [torch.tensor(a, requires_grad=True) for a in args]
        return torch.autograd.grad(fn(*targs), targs)

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=9)
    options = parser.parse_args()
    rng = np.random.default_rng(0)
    head = (f"{'gradient of':26} {'size':>9} {'hand':>9} {'symdiff':>9} {'/hand':>6} "
            f"{'jax.grad':>9} {'/jax':>6} {'torch':>9} {'/torch':>6}")
    print(head)
    print("-" * len(head))
    for case in _cases(rng):
        for n in case["sizes"]:
            args = case["make"](n)
            names = [f"a{i}" for i in range(len(args))]
            shapes = {k: a.shape for k, a in zip(names, args, strict=True)}
            fn = case["fn"]
            g = sd.grad(_named(fn, names), wrt=names, shapes=shapes)
            got, want = g(*args), case["hand"](*args)
            for a, b in zip(got, want, strict=True):
                if not np.allclose(a, b, rtol=1e-7, atol=1e-9):
                    raise AssertionError(f"{case['name']}: symdiff and the closed form disagree")
            ours = _median(lambda g=g, args=args: g(*args), options.repeat)
            hand = _median(lambda args=args, case=case: case["hand"](*args), options.repeat)
            cols = [f"{case['name']:26} {n:>9} {hand * 1e3:7.3f}ms {ours * 1e3:7.3f}ms "
                    f"{ours / hand:6.2f}"]
            for run in (_jax(fn, args), _torch(case["torch"], args)):
                if run is None:
                    cols.append(f"{'-':>9} {'-':>6}")
                else:
                    peer = _median(run, options.repeat)
                    cols.append(f"{peer * 1e3:7.3f}ms {ours / peer:6.2f}")
            print(" ".join(cols))
    print(f"\nmedians of {options.repeat} runs, float64; jax.grad without jit"
          f"{'' if HAVE_JAX else ' (not installed)'}, PyTorch CPU autograd"
          f"{'' if HAVE_TORCH else ' (not installed)'}")


def _named(fn: Callable, names: list[str]) -> Callable:
    """``fn`` as a function whose parameters are ``names`` (what ``shapes=`` declares)."""
    namespace = {"fn": fn}
    exec(f"def f({', '.join(names)}):\n    return fn({', '.join(names)})", namespace)
    return namespace["f"]


if __name__ == "__main__":
    main()
