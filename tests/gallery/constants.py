"""Gallery entries: functions that close over data or build constant arrays, as JAX/autograd
users write them (``X`` and ``y`` from the enclosing scope, ``np.eye`` inside, a mask). Each
array becomes a bound constant of the compiled function (:mod:`symdiff.constants`)."""

from __future__ import annotations

import numpy as np

from .entry import Entry

_rng = np.random.default_rng(15)
X = _rng.normal(size=(8, 3))
y = _rng.normal(size=8)
labels = np.where(_rng.normal(size=8) > 0, 1.0, -1.0)
mask = np.arange(5) > 1
A = _rng.normal(size=(4, 4))
weights = np.array([1.0, 2.0, 3.0])
counts = np.arange(1, 6)  # integers: captured as float64


def least_squares(w):
    return np.sum((X @ w - y) ** 2)


def logistic_regression(w):
    return np.mean(np.log(1 + np.exp(-labels * (X @ w)))) + 0.01 * np.sum(w ** 2)


def ridge_with_eye(w):
    gram = X.T @ X + 0.1 * np.eye(3)
    return 0.5 * w @ gram @ w - w @ (X.T @ y)


def masked_squares(x):
    return np.sum((x * mask) ** 2)


def where_on_a_mask(x):
    return np.sum(np.where(mask, np.exp(x), -x))


def weighted_literal(x):
    return np.sum(np.array([1.0, 2.0, 3.0]) * x ** 2)


def quadratic_form(x):
    return x @ A @ x + np.sum(np.ones(4) * x)


def poisson_counts(t):
    return np.sum(np.exp(t) - counts * t)


def linspace_grid(x):
    grid = np.linspace(0.0, 1.0, 5)
    return np.sum(np.sin(grid * x) / (1 + grid))


def softmax_cross_entropy(W):
    logits = X @ W
    onehot = np.eye(4)[np.arange(8) % 4]
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_probs = shifted - np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.sum(onehot * log_probs) / 8


def shared_weights(x, b):
    return np.sum(weights * np.tanh(x + b)) + np.sum(weights * x)


GALLERY = [
    Entry("closure least squares", least_squares, {"w": (3,)}),
    Entry("closure logistic regression", logistic_regression, {"w": (3,)}),
    Entry("ridge with np.eye", ridge_with_eye, {"w": (3,)}),
    Entry("boolean mask multiplier", masked_squares, {"x": (5,)}),
    Entry("where on a constant mask", where_on_a_mask, {"x": (5,)}),
    Entry("np.array literal weights", weighted_literal, {"x": (3,)}),
    Entry("closure quadratic form", quadratic_form, {"x": (4,)}),
    Entry("integer counts", poisson_counts, {"t": (5,)}),
    Entry("np.linspace grid", linspace_grid, {"x": ()}),
    Entry("softmax cross-entropy with one-hot", softmax_cross_entropy, {"W": (3, 4)}),
    Entry("constant used twice", shared_weights, {"x": (3,), "b": ()}),
]
