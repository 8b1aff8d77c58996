"""Gallery entries: indexing by integer arrays, lists and masks, ``np.take``, ``np.where`` (the
gather family), and NumPy's numeric helpers on traced values (``np.linspace`` with traced ends,
``%``, ``np.nan_to_num``, ``np.sinc``)."""

from __future__ import annotations

import numpy as np

from .entry import Entry

TOKENS = np.array([3, 0, 3, 5, 1])  # a sentence as ids into an embedding table
LABELS = np.array([2, 0, 1, 1])  # one class per example
FIRST, SECOND = np.triu_indices(4, k=1)  # every pair of 4 points once
BATCH = np.array([4, 1, 1, 0])  # a minibatch drawn with replacement


def embedding_lookup(W):
    return np.sum(np.tanh(W[TOKENS]) ** 2)


def selected_log_likelihood(z):
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(len(LABELS)), LABELS])


def masked_mean(x):
    mask = np.arange(6) % 2 == 0
    return np.sum(x[mask] ** 2) / mask.sum()


def pairwise_energy(X):
    diff = X[FIRST] - X[SECOND]
    return np.sum(1.0 / np.sqrt(np.sum(diff ** 2, axis=1) + 0.1))


def take_columns(X):
    return np.sum(np.take(X, [2, 0], axis=1) * X[:, :2])


def where_traced_condition(x):
    return np.sum(np.where(x > 0, x ** 2, 0.5 * x))


def where_constant_mask(X):
    upper = np.triu(np.ones((3, 3), dtype=bool), k=1)
    return np.sum(np.where(upper, X ** 2, 0.0)) + np.sum(np.where(upper.T, np.cos(X), X))


def periodic_smoothness(x):
    following = np.roll(np.arange(x.shape[0]), -1)
    return np.sum((x[following] - x) ** 2)


def minibatch_least_squares(X, w):
    return np.mean((X[BATCH] @ w - 1.0) ** 2)


def multiclass_hinge(scores):
    n = scores.shape[0]
    correct = scores[np.arange(n), LABELS]
    return np.sum(np.maximum(0.0, scores - correct[:, None] + 1.0)) - n


def last_entries(x):
    return np.sum(np.exp(x[[-1, -2, -1]])) + x.take([0, 0]).sum()


def column_list(X):
    return np.sum(np.log(1.0 + X[:, [0, 2]] ** 2))


def linspace_between(x):
    return np.sum(np.sin(np.linspace(x[0], x[1], 7)) * x[2])


def sawtooth(x):
    return np.sum((3.0 * x) % 1.0 * x + np.sinc(x) + np.nan_to_num(x ** 3))


GALLERY = [
    Entry("embedding lookup", embedding_lookup, {"W": (6, 3)}),
    Entry("selected log-likelihood", selected_log_likelihood, {"z": (4, 3)}),
    Entry("masked mean", masked_mean, {"x": (6,)}),
    Entry("pairwise energy", pairwise_energy, {"X": (4, 2)}),
    Entry("take columns", take_columns, {"X": (3, 3)}),
    Entry("where traced condition", where_traced_condition, {"x": (5,)}),
    Entry("where constant mask", where_constant_mask, {"X": (3, 3)}),
    Entry("periodic smoothness", periodic_smoothness, {"x": (5,)}),
    Entry("minibatch least squares", minibatch_least_squares, {"X": (5, 3), "w": (3,)}),
    Entry("multiclass hinge", multiclass_hinge, {"scores": (4, 3)}),
    Entry("last entries", last_entries, {"x": (4,)}),
    Entry("column list", column_list, {"X": (2, 3)}),
    Entry("linspace between traced ends", linspace_between, {"x": (3,)}),
    Entry("sawtooth remainder sinc", sawtooth, {"x": (4,)}),
]
