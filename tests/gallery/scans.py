"""Gallery entries: scans and reversals (``np.cumsum``, ``np.flip``)."""

from __future__ import annotations

import numpy as np

from .entry import Entry


def running_total_loss(x):
    return np.sum(np.cumsum(x) ** 2)


def reversed_weights(x, w):
    return np.sum(x * np.flip(w))


def column_running_mean(X):
    return np.sum(X.cumsum(axis=0) / np.arange(1, 4).shape[0])


GALLERY = [
    Entry("cumsum squared", running_total_loss, {"x": (6,)}),
    Entry("flip weights", reversed_weights, {"x": (5,), "w": (5,)}),
    Entry("cumsum method", column_running_mean, {"X": (3, 4)}),
]
