"""Recurrent models as users write them in NumPy, for the tests and benchmarks of loops over
time: an LSTM over ``T`` steps and the forward algorithm of a hidden Markov model (in log
space, with ``logsumexp``). Each is a plain function of its parameter arrays that runs on NumPy
arrays as it is and is traced by symdiff with ``shapes=``; the data are closed over (bound
constants of the compiled function)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

import symdiff as sd


def lstm(steps: int, hidden: int = 8, inputs: int = 4, seed: int = 0):
    """``(loss, shapes, params)``: an LSTM cell (input, forget, output gates through sigmoid,
    candidate through tanh) run over ``steps`` inputs, read out by ``v`` at every step, with a
    squared error against targets."""
    rng = np.random.default_rng(seed)
    xs = rng.normal(size=(steps, inputs))
    targets = rng.normal(size=steps)
    h4 = 4 * hidden

    def loss(W, U, b, v):
        h = np.zeros(hidden)
        c = np.zeros(hidden)
        total = 0.0
        for t in range(steps):
            z = W @ xs[t] + U @ h + b
            i = sd.math.sigmoid(z[:hidden])
            f = sd.math.sigmoid(z[hidden:2 * hidden])
            o = sd.math.sigmoid(z[2 * hidden:3 * hidden])
            g = np.tanh(z[3 * hidden:])
            c = f * c + i * g
            h = o * np.tanh(c)
            total = total + (np.sum(v * h) - targets[t]) ** 2
        return total / steps

    shapes = {"W": (h4, inputs), "U": (h4, hidden), "b": (h4,), "v": (hidden,)}
    params = {"W": 0.3 * rng.normal(size=(h4, inputs)), "U": 0.3 * rng.normal(size=(h4, hidden)),
              "b": 0.1 * rng.normal(size=h4), "v": rng.normal(size=hidden)}
    return loss, shapes, params


def hmm(steps: int, states: int = 4, symbols: int = 5, seed: int = 0):
    """``(log_likelihood, shapes, params)``: the forward algorithm of a hidden Markov model in
    log space over ``steps`` observations, its transition, emission and initial probabilities
    the softmax of unconstrained logits."""
    rng = np.random.default_rng(seed)
    observed = rng.integers(0, symbols, size=steps)

    def log_likelihood(logits_a, logits_b, logits_p):
        log_a = logits_a - sd.math.logsumexp(logits_a, axis=1)[:, None]  # rows: from state i
        log_b = logits_b - sd.math.logsumexp(logits_b, axis=1)[:, None]  # rows: emissions
        alpha = logits_p - sd.math.logsumexp(logits_p, axis=0) + log_b[:, observed[0]]
        for t in range(1, steps):
            alpha = sd.math.logsumexp(alpha[:, None] + log_a, axis=0) + log_b[:, observed[t]]
        return sd.math.logsumexp(alpha, axis=0)

    shapes = {"logits_a": (states, states), "logits_b": (states, symbols),
              "logits_p": (states,)}
    params = {"logits_a": rng.normal(size=(states, states)),
              "logits_b": rng.normal(size=(states, symbols)), "logits_p": rng.normal(size=states)}
    return log_likelihood, shapes, params


def central_gradient(f: Callable[..., float], params: dict[str, np.ndarray], name: str,
                     eps: float = 1e-6) -> np.ndarray:
    """The gradient of ``f(**params)`` by ``params[name]``, by central differences."""
    base = params[name]
    out = np.zeros_like(base)
    for index in np.ndindex(base.shape):
        step = np.zeros_like(base)
        step[index] = eps
        up = f(**{**params, name: base + step})
        down = f(**{**params, name: base - step})
        out[index] = (up - down) / (2 * eps)
    return out
