"""Tensor expressions several test modules share (logistic regression, a 2-layer MLP) and the
central-difference reference their gradients are checked against."""

import numpy as np

LOGISTIC = "sum(log(1 + exp(-y * (X @ w))))"
LOGISTIC_SHAPES = {"X": ("n", "d"), "y": ("n",), "w": ("d",)}
MLP = (
    "mean(logsumexp(tanh(X @ W1 + b1) @ W2 + b2, axis=1)"
    " - sum(Y * (tanh(X @ W1 + b1) @ W2 + b2), axis=1))"
)
MLP_SHAPES = {"X": ("n", "d"), "Y": ("n", "k"), "W1": ("d", "h"), "b1": ("h",),
              "W2": ("h", "k"), "b2": ("k",)}


def central_gradient(f, values, name, h=1e-6):
    """Central differences of the scalar ``f`` in every entry of ``values[name]``."""
    x = values[name]
    out = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[index] += h
        down[index] -= h
        out[index] = (f(**{**values, name: up}) - f(**{**values, name: down})) / (2 * h)
    return out
