"""Tensor gradients emitted by symdiff vs hand-written NumPy (and PyTorch, when installed).

Run: ``python benchmarks/bench_tensor.py [--repeat R] [--quick]``. Every entry is timed in this
one process on the same arrays; the table gives the median time and the ratio to the
hand-written NumPy version (lower is better; 1.00 = as fast as hand-written):

* the logistic-regression gradient ``sum(log(1 + exp(-y * (X @ w))))`` for X of (2000, 100),
  (10000, 500) and (200000, 4) (target <= 1.1x), and its ``value_and_grad`` as a ratio to ``grad``
  (target <= 1.1 + the ratio of the value's last operation);
* its Hessian (closed form ``X.T @ (X * s(1 - s)[:, None])``), also against
  ``torch.autograd.functional.hessian`` and ``jax.jit(jax.hessian(...))`` (CPU, float64) when
  installed (``pip install ".[bench]"``); the gradient also against ``jax.jit(jax.grad(...))``;
* its Hessian-vector product (``sd.hvp``, forward over reverse with one direction) against the
  hand-written ``X.T @ (s(1 - s) * (X @ v))`` and against forming the Hessian first;
* the gradient of a 2-layer MLP (batch 256, 64-128-10, tanh, softmax cross-entropy) against
  hand-written backpropagation (target <= 1.2x).

Where Numba is installed, the gradients and the Hessian-vector product are also timed with
``backend="numba"`` ("symdiff numba": each elementwise statement one compiled ufunc, the
matrix products the same BLAS calls); without it a note says they are left out.

On a shared or small machine, single-threaded BLAS (``OMP_NUM_THREADS=1``) gives steadier
ratios: a multithreaded BLAS competing with other processes times very erratically.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
from collections.abc import Callable

import numpy as np
from timing import interleaved_times

import symdiff as sd

LOGISTIC = "sum(log(1 + exp(-y * (X @ w))))"
LOGISTIC_SHAPES = {"X": ("n", "d"), "y": ("n",), "w": ("d",)}
MLP = (
    "mean(logsumexp(tanh(X @ W1 + b1) @ W2 + b2, axis=1)"
    " - sum(Y * (tanh(X @ W1 + b1) @ W2 + b2), axis=1))"
)
MLP_SHAPES = {"X": ("n", "d"), "Y": ("n", "k"), "W1": ("d", "h"), "b1": ("h",),
              "W2": ("h", "k"), "b2": ("k",)}


def hand_logistic_grad(X, w, y):
    """What a person writes: ``-X.T @ (y * sigmoid(-y * (X @ w)))``."""
    z = y * (X @ w)
    return X.T @ (-y / (1.0 + np.exp(z)))


def hand_logistic_hessian(X, w, y):
    s = 1.0 / (1.0 + np.exp(-y * (X @ w)))
    return X.T @ (X * (s * (1.0 - s))[:, None])


def hand_logistic_hvp(X, w, y, v):
    """The Hessian times ``v`` without forming it: ``X.T @ (s(1 - s) * (X @ v))``."""
    s = 1.0 / (1.0 + np.exp(-y * (X @ w)))
    return X.T @ (s * (1.0 - s) * (X @ v))


def hand_mlp_grad(W1, W2, X, Y, b1, b2):
    """Backpropagation of the mean softmax cross-entropy of a tanh MLP."""
    n = X.shape[0]
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    d_logits = (p - Y) / n
    d_h = (d_logits @ W2.T) * (1.0 - h * h)
    return X.T @ d_h, d_h.sum(axis=0), h.T @ d_logits, d_logits.sum(axis=0)


def compare(label: str, peers: list[tuple[str, Callable]], args: tuple, repeat: int) -> list[str]:
    """Time every peer once per round, rounds interleaved (so load from other processes hits
    them alike); report the median time and the median per-round ratio to the first peer.

    The order rotates from round to round: a peer timed right after another one finds the
    arrays in cache, or evicted, depending on who ran before it, and rotating spreads that
    evenly (a fixed order made symdiff look 25% faster than it is whenever it followed
    hand-written NumPy and JAX preceded the latter)."""
    times = interleaved_times(peers, args, repeat)
    rows = []
    for (peer, _), row in zip(peers, times, strict=True):
        ratio = statistics.median(t / r for t, r in zip(row, times[0], strict=True))
        rows.append(f"{label:<34} {peer:<24} {statistics.median(row) * 1e3:>10.3f} ms "
                    f"{ratio:>7.2f}x")
    return rows


def bench_logistic(n: int, d: int, repeat: int, rng: np.random.Generator) -> list[str]:
    X, y, w = rng.normal(size=(n, d)), rng.choice([-1.0, 1.0], size=n), rng.normal(size=d) * 0.1
    grad = sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)
    hess = sd.hessian(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)
    np.testing.assert_allclose(grad(X, w, y), hand_logistic_grad(X, w, y), rtol=1e-9)
    np.testing.assert_allclose(hess(X, w, y), hand_logistic_hessian(X, w, y), rtol=1e-9)
    grad_peers = [("hand-written NumPy", hand_logistic_grad), ("symdiff", grad),
                  *_numba_peer(sd.grad, hand_logistic_grad(X, w, y), X, w, y)]
    peers = [("hand-written NumPy", hand_logistic_hessian), ("symdiff", hess)]
    if importlib.util.find_spec("jax") is not None:
        jax_grad, jax_hessian = _jax_logistic(X, w, y)
        grad_peers.append(("jax.jit(grad)", jax_grad))
        peers.append(("jax.jit(hessian)", jax_hessian))
    rows = compare(f"logistic grad X({n}, {d})", grad_peers, (X, w, y), repeat)
    rows += bench_value_and_grad(grad, X, w, y, repeat)
    if importlib.util.find_spec("torch") is not None:
        import torch

        Xt, yt = torch.tensor(X), torch.tensor(y)

        def torch_hessian(X, w, y):
            return torch.autograd.functional.hessian(
                lambda u: torch.sum(torch.nn.functional.softplus(-yt * (Xt @ u))),
                torch.tensor(w),
            )

        peers.append(("torch.autograd hessian", torch_hessian))
    rows += compare(f"logistic Hessian X({n}, {d})", peers, (X, w, y), max(3, repeat // 10))
    hvp = sd.hvp(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)
    v = rng.normal(size=d)
    np.testing.assert_allclose(hvp(X, w, y, v), hand_logistic_hvp(X, w, y, v), rtol=1e-9)
    hvp_peers = [("hand-written NumPy", hand_logistic_hvp), ("symdiff", hvp),
                 ("Hessian @ v (symdiff)", lambda X, w, y, v: hess(X, w, y) @ v),
                 *_numba_peer(sd.hvp, hand_logistic_hvp(X, w, y, v), X, w, y, v)]
    return rows + compare(f"logistic hvp X({n}, {d})", hvp_peers, (X, w, y, v), repeat)


def _numba_peer(builder, expected, *args, expr=LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES):
    """``[("symdiff numba", f)]`` for ``builder`` with ``backend="numba"``, checked against
    ``expected`` on ``args``; ``[]`` where Numba is not installed."""
    if importlib.util.find_spec("numba") is None:
        return []
    function = builder(expr, wrt=wrt, shapes=shapes, backend="numba")
    got = function(*args)
    for mine, theirs in zip(got if isinstance(got, tuple) else (got,),
                            expected if isinstance(expected, tuple) else (expected,),
                            strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-12)
    return [("symdiff numba", function)]


def hand_logistic_value_and_grad(X, w, y):
    z = y * (X @ w)
    return np.logaddexp(0.0, -z).sum(), X.T @ (-y / (1.0 + np.exp(z)))


def bench_value_and_grad(grad, X, w, y, repeat: int) -> list[str]:
    """``value_and_grad`` over ``grad`` (target: at most 1.1 + the value's last operation,
    ``sum(logaddexp(0, -z))``, whose ratio to ``grad`` is the row "value's last operation")."""
    vg = sd.value_and_grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)
    value, gradient = vg(X, w, y)
    hand_value, hand_gradient = hand_logistic_value_and_grad(X, w, y)
    np.testing.assert_allclose(value, hand_value, rtol=1e-12)
    np.testing.assert_allclose(gradient, hand_gradient, rtol=1e-9)
    z = y * (X @ w)
    peers = [("symdiff grad", grad), ("symdiff value_and_grad", vg),
             ("hand-written value_and_grad", hand_logistic_value_and_grad),
             ("value's last operation", lambda X, w, y: np.logaddexp(0.0, -z).sum())]
    n, d = X.shape
    return compare(f"logistic value_and_grad X({n}, {d})", peers, (X, w, y), repeat)


def _jax_logistic(X, w, y) -> tuple[Callable, Callable]:
    """``jax.jit`` of JAX's gradient and Hessian of the same loss, checked against NumPy; the
    timed calls include moving the result back to NumPy (``np.asarray``), as a user would."""
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    def loss(u, X, y):
        return jnp.sum(jnp.logaddexp(0.0, -y * (X @ u)))

    grad, hess = jax.jit(jax.grad(loss)), jax.jit(jax.hessian(loss))
    np.testing.assert_allclose(np.asarray(grad(w, X, y)), hand_logistic_grad(X, w, y), rtol=1e-9)
    np.testing.assert_allclose(np.asarray(hess(w, X, y)), hand_logistic_hessian(X, w, y),
                               rtol=1e-9)
    Xj, yj = jnp.asarray(X), jnp.asarray(y)  # on the device once, like the NumPy arrays
    return (lambda X, w, y: np.asarray(grad(w, Xj, yj)),
            lambda X, w, y: np.asarray(hess(w, Xj, yj)))


def bench_mlp(repeat: int, rng: np.random.Generator) -> list[str]:
    n, d, h, k = 256, 64, 128, 10
    values = {"W1": rng.normal(size=(d, h)) * 0.1, "W2": rng.normal(size=(h, k)) * 0.1,
              "X": rng.normal(size=(n, d)), "Y": np.eye(k)[rng.integers(0, k, n)],
              "b1": np.zeros(h), "b2": np.zeros(k)}
    grad = sd.grad(MLP, wrt=["W1", "b1", "W2", "b2"], shapes=MLP_SHAPES)
    args = tuple(values[a] for a in grad.args)
    for mine, theirs in zip(grad(*args), hand_mlp_grad(*args), strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-12)
    peers = [("hand-written backprop", hand_mlp_grad), ("symdiff", grad),
             *_numba_peer(sd.grad, hand_mlp_grad(*args), *args, expr=MLP,
                          wrt=["W1", "b1", "W2", "b2"], shapes=MLP_SHAPES)]
    return compare(f"MLP grad batch {n}, {d}-{h}-{k}", peers, args, repeat)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=101)
    parser.add_argument("--quick", action="store_true", help="only the small problem sizes")
    options = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    threads = os.environ.get("OMP_NUM_THREADS", "default")
    print(f"numpy {np.__version__}, BLAS threads: {threads}; gradients: median of "
          f"{options.repeat} interleaved rounds, Hessians: {max(3, options.repeat // 10)}")
    if importlib.util.find_spec("numba") is None:
        print('note: Numba is not installed (pip install "symdiff[numba]"): no numba peers')
    print(f"load average: {os.getloadavg()[0]:.2f}")
    print(f"{'case':<34} {'peer':<24} {'time':>13} {'ratio':>8}")
    # (the last: few features and many rows, where the elementwise part dominates)
    sizes = [(2000, 100)] if options.quick else [(2000, 100), (10000, 500), (200000, 4)]
    for n, d in sizes:
        for row in bench_logistic(n, d, options.repeat, rng):
            print(row)
    for row in bench_mlp(options.repeat, rng):
        print(row)


if __name__ == "__main__":
    main()
