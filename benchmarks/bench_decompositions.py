"""Gradients through matrix decompositions (and ``sort``) vs hand-written closed forms.

Run: ``python benchmarks/bench_decompositions.py [--repeat R] [--n N]``. Each row: the median
time of symdiff's generated gradient, of a hand-written NumPy closed form, and their ratio
(1.00 = as fast; the target is <= 1.5), on one float64 N x N matrix (200 by default;
``sort`` on 1e6 elements). For ``cholesky`` two hand-written forms are timed: NumPy only (two
``np.linalg.solve`` with ``L^T``, what one writes without a triangular solve) and SciPy's
``solve_triangular`` (when installed): the ratio column is against the faster of the two.
Times are CPU time of this process (``time.process_time``), not wall-clock: on a shared
machine wall-clock medians mostly measure the other processes. Use ``OMP_NUM_THREADS=1``.
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


def _median(fn: Callable[[], Any], repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return statistics.median(times)


def _phi(n: int) -> np.ndarray:
    return np.tril(np.ones((n, n))) - 0.5 * np.eye(n)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--n", type=int, default=200)
    options = parser.parse_args(argv)
    n, repeat = options.n, options.repeat
    rng = np.random.default_rng(0)
    B = rng.normal(size=(n, n))
    A = B @ B.T + n * np.eye(n)
    W = rng.normal(size=(n, n))
    x = rng.normal(size=1_000_000)

    def chol(A):
        return np.sum(np.linalg.cholesky(A) * W)

    def hand_chol_numpy(A):
        L = np.linalg.cholesky(A)
        m = np.linalg.solve(L.T, (L.T @ W) * _phi(n))
        s = np.linalg.solve(L.T, m.T).T
        return (s + s.T) / 2

    hands_chol = [hand_chol_numpy]
    if importlib.util.find_spec("scipy") is not None:
        from scipy.linalg import solve_triangular

        def hand_chol_scipy(A):
            L = np.linalg.cholesky(A)
            m = solve_triangular(L, (L.T @ W) * _phi(n), trans="T", lower=True)
            s = solve_triangular(L, m.T, trans="T", lower=True).T
            return (s + s.T) / 2

        hands_chol.append(hand_chol_scipy)

    def logdet_chol(A):
        return 2 * np.sum(np.log(np.diagonal(np.linalg.cholesky(A))))

    def hand_logdet(A):
        return np.linalg.inv(A)  # = L^-T L^-1, symmetric

    def eig(A):
        return np.sum(np.linalg.eigvalsh(A) ** 2)

    def hand_eig(A):
        w, V = np.linalg.eigh(A)
        return (V * (2 * w)) @ V.T

    def svals(A):
        return np.sum(np.linalg.svd(A, compute_uv=False))

    def hand_svals(A):
        U, _, Vh = np.linalg.svd(A, full_matrices=False)
        return U @ Vh

    def sort(x):
        return np.sum(np.sort(x) ** 2 * np.arange(x.shape[0]))

    def hand_sort(x):
        order = np.argsort(x)
        g = np.empty_like(x)
        g[order] = 2 * x[order] * np.arange(x.size)
        return g

    cases = [
        (f"sum(cholesky(A) * W) {n}", chol, hands_chol, "A", A),
        (f"logdet via cholesky {n}", logdet_chol, [hand_logdet], "A", A),
        (f"sum(eigvalsh(A)**2) {n}", eig, [hand_eig], "A", A),
        (f"sum(svdvals(A)) {n}", svals, [hand_svals], "A", B),
        ("sum(sort(x)**2 * k) 1e6", sort, [hand_sort], "x", x),
    ]
    print(f"{'gradient of':<28}{'symdiff':>11}{'hand':>11}{'ratio':>7}   hand forms")
    for label, fn, hands, name, value in cases:
        grad = sd.grad(fn, wrt=name, shapes={name: value.shape})
        for hand in hands:
            np.testing.assert_allclose(grad(value), hand(value), rtol=1e-7, atol=1e-9)
        ours = _median(lambda g=grad, v=value: g(v), repeat)
        times = [_median(lambda h=h, v=value: h(v), repeat) for h in hands]
        shown = ", ".join(f"{h.__name__} {t * 1e3:.2f}ms" for h, t in zip(hands, times,
                                                                           strict=True))
        best = min(times)
        print(f"{label:<28}{ours * 1e3:>9.2f}ms{best * 1e3:>9.2f}ms{ours / best:>7.2f}   {shown}")


if __name__ == "__main__":
    main()
