"""Gradients through gathers (indexing by constant integer arrays) vs hand-written NumPy.

Run: ``python benchmarks/bench_gather.py [--repeat R]``. Each row: the median time of the
generated gradient, of the hand-written closed form, and their ratio (1.00 = as fast):

* an embedding lookup ``sum(tanh(W[tokens])**2)``, W (1000, 64), 4096 tokens (``_np.add.at``);
* a vector gather ``sum(sin(x[idx])**2)``, x of 1e5, 4096 indices (``_np.bincount``);
* a selected-class log-likelihood ``-sum(logp[arange(n), labels])``, (2048, 10);
* a large vector gather ``sum(sin(x[big])**2)``, x of 1e5, 1e5 indices.

Index arrays of more than 64 entries are bound constants (int64 positions passed to the
module, :mod:`symdiff.constants`), so no call converts literals; the last row indexes with
100,000 positions (more than the 4096 literals the string language allows).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import numpy as np

import symdiff as sd


def _median(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    repeat = parser.parse_args(argv).repeat
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, 1000, 4096)
    idx = rng.integers(0, 100_000, 4096)
    labels = rng.integers(0, 10, 2048)
    rows = np.arange(2048)
    big = rng.integers(0, 100_000, 100_000)

    def embedding(W):
        return np.sum(np.tanh(W[tokens]) ** 2)

    def hand_embedding(W):
        t = np.tanh(W[tokens])
        out = np.zeros_like(W)
        np.add.at(out, tokens, 2 * t * (1 - t * t))
        return out

    def vector(x):
        return np.sum(np.sin(x[idx]) ** 2)

    def hand_vector(x):
        t = x[idx]
        return np.bincount(idx, weights=np.sin(2 * t), minlength=x.size)

    def selected(z):
        logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
        return -np.sum(logp[rows, labels])

    def hand_selected(z):
        e = np.exp(z - z.max(axis=1, keepdims=True))
        out = e / e.sum(axis=1, keepdims=True)
        out[rows, labels] -= 1.0
        return out

    def large(x):
        return np.sum(np.sin(x[big]) ** 2)

    def hand_large(x):
        return np.bincount(big, weights=np.sin(2 * x[big]), minlength=x.size)

    cases = [
        ("embedding W[tokens]", embedding, hand_embedding, "W", rng.standard_normal((1000, 64))),
        ("vector x[idx]", vector, hand_vector, "x", rng.standard_normal(100_000)),
        ("logp[arange(n), labels]", selected, hand_selected, "z", rng.standard_normal((2048, 10))),
        ("vector x[big], 1e5 indices", large, hand_large, "x", rng.standard_normal(100_000)),
    ]
    print(f"{'case':<26}{'symdiff':>12}{'hand':>12}{'ratio':>8}")
    for label, fn, hand, name, value in cases:
        grad = sd.grad(fn, wrt=name, shapes={name: value.shape})
        np.testing.assert_allclose(grad(value), hand(value), rtol=1e-9, atol=1e-12)
        ours = _median(lambda g=grad, v=value: g(v), repeat)
        theirs = _median(lambda h=hand, v=value: h(v), repeat)
        print(f"{label:<26}{ours * 1e6:>10.0f}us{theirs * 1e6:>10.0f}us{ours / theirs:>8.2f}")


if __name__ == "__main__":
    main()
