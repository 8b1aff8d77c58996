"""Hessians of matrix and vector variables: symdiff vs the hand-written closed form (and
``jax.hessian`` under ``jit`` when installed).

Run: ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_hessians.py
[--repeat R] [--n N --d D --k K]``. Every entry is timed in this one process on the same
float64 arrays (n=3000, d=40, k=10 by default): the median of R calls, and the ratio to the
closed form (1.00 = as fast; the targets are <= 1.5x for softmax regression and logsumexp,
<= 1.1x for least squares). Each result is checked against the closed form first.

* softmax regression ``sum(logsumexp(X @ W, axis=1) - sum(Y * (X @ W), axis=1))`` in ``W``
  (d, k): ``P = softmax(XW)``, ``M = (X[:, :, None] * P[:, None, :]).reshape(n, d*k)``,
  ``H = blockdiag_i(X.T @ (P_i * X)) - M.T @ M``;
* logsumexp ``sum(logsumexp(X @ W, axis=1))`` in ``W``: the same Hessian (the linear term of
  the regression has none);
* least squares ``sum((A @ x - b)**2)`` in ``x`` (d,): ``2 * A.T @ A``;
* logsumexp over the rows ``logsumexp(A @ x)`` in ``x`` (d,): ``A.T @ (p * A) - outer(g, g)``
  with ``p = softmax(A @ x)``, ``g = A.T @ p``. Not row by row (the softmax couples the rows),
  so symdiff takes the general path: shown for what is left to do.
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

SOFTMAX = "sum(logsumexp(X @ W, axis=1) - sum(Y * (X @ W), axis=1))"
LOGSUMEXP = "sum(logsumexp(X @ W, axis=1))"
LEAST_SQUARES = "sum((A @ x - b)**2)"
LSE_ROWS = "logsumexp(A @ x)"


def _median(fn: Callable[[], Any], repeat: int) -> float:
    fn()  # warm up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def softmax_hessian(X: np.ndarray, W: np.ndarray) -> np.ndarray:
    """The closed form a person writes: blocks ``X.T diag(P_i) X`` minus ``M.T @ M``."""
    n, d = X.shape
    k = W.shape[1]
    Z = X @ W
    E = np.exp(Z - Z.max(axis=1, keepdims=True))
    P = E / E.sum(axis=1, keepdims=True)
    M = (X[:, :, None] * P[:, None, :]).reshape(n, d * k)
    H = M.T @ M
    np.negative(H, out=H)
    H = H.reshape(d, k, d, k)
    for i in range(k):
        H[:, i, :, i] += X.T @ (X * P[:, i:i + 1])
    return H


def least_squares_hessian(A: np.ndarray) -> np.ndarray:
    """``2 * A.T @ A``."""
    return 2.0 * (A.T @ A)


def lse_rows_hessian(A: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``A.T @ (p * A) - outer(g, g)``."""
    z = A @ x
    p = np.exp(z - z.max())
    p /= p.sum()
    g = A.T @ p
    return A.T @ (p[:, None] * A) - np.outer(g, g)


def _jax_cases(cases: list[dict[str, Any]]) -> None:
    """``jax.jit(jax.hessian(f))`` for each case (float64), if JAX is installed."""
    if importlib.util.find_spec("jax") is None:
        return
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)

    def softmax_loss(W, X, Y):
        Z = X @ W
        return jnp.sum(jax.nn.logsumexp(Z, axis=1) - jnp.sum(Y * Z, axis=1))

    def lse_loss(W, X):
        return jnp.sum(jax.nn.logsumexp(X @ W, axis=1))

    def ls_loss(x, A, b):
        return jnp.sum((A @ x - b) ** 2)

    def lse_rows_loss(x, A):
        return jax.nn.logsumexp(A @ x)

    peers = {SOFTMAX: (softmax_loss, ("W", "X", "Y")), LOGSUMEXP: (lse_loss, ("W", "X")),
             LEAST_SQUARES: (ls_loss, ("x", "A", "b")), LSE_ROWS: (lse_rows_loss, ("x", "A"))}
    for case in cases:
        loss, names = peers[case["expr"]]
        hess = jax.jit(jax.hessian(loss))
        arrays = [jnp.asarray(case["args"][name]) for name in names]
        case["jax"] = lambda hess=hess, arrays=arrays: hess(*arrays).block_until_ready()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--n", type=int, default=3000)
    parser.add_argument("--d", type=int, default=40)
    parser.add_argument("--k", type=int, default=10)
    options = parser.parse_args()
    n, d, k = options.n, options.d, options.k
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    W = 0.1 * rng.normal(size=(d, k))
    Y = np.eye(k)[rng.integers(0, k, n)]
    A, x, b = rng.normal(size=(n, d)), rng.normal(size=d), rng.normal(size=n)
    shapes = {"X": ("n", "d"), "W": ("d", "k"), "Y": ("n", "k"), "A": ("n", "d"), "x": ("d",),
              "b": ("n",)}
    cases: list[dict[str, Any]] = [
        dict(name="softmax regression", expr=SOFTMAX, wrt="W", args={"W": W, "X": X, "Y": Y},
             hand=lambda: softmax_hessian(X, W)),
        dict(name="logsumexp", expr=LOGSUMEXP, wrt="W", args={"W": W, "X": X},
             hand=lambda: softmax_hessian(X, W)),
        dict(name="least squares", expr=LEAST_SQUARES, wrt="x", args={"x": x, "A": A, "b": b},
             hand=lambda: least_squares_hessian(A)),
        dict(name="logsumexp(A @ x)", expr=LSE_ROWS, wrt="x", args={"x": 0.1 * x, "A": A},
             hand=lambda: lse_rows_hessian(A, 0.1 * x)),
    ]
    _jax_cases(cases)
    print(f"Hessians at n={n}, d={d}, k={k}; median of {options.repeat} calls; "
          "ratio = time / hand-written closed form")
    print(f"{'problem':22s} {'hand (ms)':>10s} {'symdiff':>9s} {'ratio':>7s} {'jax.jit':>9s} "
          f"{'ratio':>7s}")
    for case in cases:
        hessian = sd.hessian(case["expr"], wrt=case["wrt"], shapes=shapes)
        arrays = case["args"]
        expected = case["hand"]()
        got = hessian(**arrays)
        if not np.allclose(got, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max()):
            raise SystemExit(f"{case['name']}: symdiff's Hessian differs from the closed form")
        hand = _median(case["hand"], options.repeat)
        ours = _median(lambda hessian=hessian, arrays=arrays: hessian(**arrays), options.repeat)
        line = (f"{case['name']:22s} {hand * 1e3:10.2f} {ours * 1e3:9.2f} {ours / hand:7.2f}")
        if "jax" in case:
            theirs = _median(case["jax"], options.repeat)
            line += f" {theirs * 1e3:9.2f} {theirs / hand:7.2f}"
        else:
            line += f" {'-':>9s} {'-':>7s}"
        print(line)


if __name__ == "__main__":
    main()
