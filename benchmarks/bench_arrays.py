"""Gradients of the array families (building, rearranging, scans, statistics) emitted by symdiff
vs the closed forms a person writes by hand in NumPy.

Run: ``python benchmarks/bench_arrays.py [--repeat R] [--quick]``. Each case is a loss
``sum(w * op(x))`` (so the gradient is the op's adjoint applied to ``w``) on 1e6 elements (a
1000 x 1000 matrix for the triangles), timed in rounds interleaved with the hand-written
version; the table gives the median time and the median ratio to hand-written NumPy (lower is
better; 1.00 = as fast). ``cumprod``'s hand-written form is the textbook
``flip(cumsum(flip(w * out))) / x``, which is nan at zeros; symdiff's is exact there and pays for
it (two reversed cumsums and the zero counting).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
from timing import interleaved_medians

import symdiff as sd


def _rev_cumsum(a: np.ndarray, axis: int) -> np.ndarray:
    return np.flip(np.cumsum(np.flip(a, axis), axis), axis)


def _centred(x: np.ndarray) -> np.ndarray:
    return x - x.mean(axis=0, keepdims=True)


#: (label, loss text, shape of x, shape of w, hand-written gradient with respect to x)
CASES: list[tuple[str, str, tuple[int, ...], tuple[int, ...], Callable]] = [
    ("concatenate", "sum(w * concat([x, x ** 2], axis=0))", (500, 1000), (1000, 1000),
     lambda x, w: w[:len(x)] + 2 * x * w[len(x):]),
    ("stack", "sum(w * stack([x, x ** 2], axis=1))", (1000, 1000), (1000, 2, 1000),
     lambda x, w: w[:, 0] + 2 * x * w[:, 1]),
    ("roll", "sum(w * roll(x, 3, axis=1))", (1000, 1000), (1000, 1000),
     lambda x, w: np.roll(w, -3, axis=1)),
    ("triu", "sum(w * triu(x, 1))", (1000, 1000), (1000, 1000), lambda x, w: np.triu(w, 1)),
    ("diff", "sum(w * diff(x, axis=0))", (1000, 1000), (999, 1000),
     lambda x, w: np.concatenate([-w[:1], w[:-1] - w[1:], w[-1:]])),
    ("tile", "sum(w * tile(x, (1, 4)))", (1000, 250), (1000, 1000),
     lambda x, w: w.reshape(len(w), 4, -1).sum(axis=1)),
    ("cumsum", "sum(w * cumsum(x, axis=0))", (1000, 1000), (1000, 1000),
     lambda x, w: _rev_cumsum(w, 0)),
    ("cumprod (x != 0)", "sum(w * cumprod(x, axis=0))", (1000, 1000), (1000, 1000),
     lambda x, w: _rev_cumsum(w * np.cumprod(x, axis=0), 0) / x),
    ("var", "sum(w * var(x, axis=0, ddof=1))", (1000, 1000), (1000,),
     lambda x, w: 2 * w * _centred(x) / (x.shape[0] - 1)),
    ("std", "sum(w * std(x, axis=0))", (1000, 1000), (1000,),
     lambda x, w: w * _centred(x) / (x.shape[0] * x.std(axis=0))),
]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--quick", action="store_true", help="a tenth of the rows")
    options = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"numpy {np.__version__}; median of {options.repeat} interleaved rounds")
    print(f"{'case':<18} {'symdiff':>11} {'by hand':>11} {'ratio':>7}")
    for label, text, x_shape, w_shape, hand in CASES:
        if options.quick:
            scale = lambda s: (max(s[0] // 10, 2), *s[1:]) if len(s) > 1 else s  # noqa: E731
            x_shape, w_shape = scale(x_shape), scale(w_shape)
        x = rng.uniform(0.5, 1.5, x_shape)
        w = rng.uniform(-1, 1, w_shape)
        grad = sd.grad(text, shapes={"x": x_shape, "w": w_shape}, wrt="x")
        np.testing.assert_allclose(grad(x=x, w=w), hand(x, w), rtol=1e-8, atol=1e-10)
        peers = [("symdiff", lambda x, w, g=grad: g(x=x, w=w)), ("hand", hand)]
        mine, theirs = interleaved_medians(peers, (x, w), options.repeat)
        print(f"{label:<18} {mine * 1e3:>8.2f} ms {theirs * 1e3:>8.2f} ms "
              f"{mine / theirs:>6.2f}x")


if __name__ == "__main__":
    main()
