"""Gallery entries: losses built on sorting (``np.sort``, ``np.partition``)."""

from __future__ import annotations

import numpy as np

from .entry import Entry


def trimmed_mean_loss(r):
    s = np.sort(r ** 2)
    return np.mean(s[1:-1])


def top_k_hinge(scores):
    return np.sum(np.sort(np.maximum(0.0, 1.0 - scores))[-3:])


def sorted_l1_penalty(w, lam):
    return np.sum(lam * np.sort(np.abs(w))[::-1])


def median_of_five(x):
    return np.partition(x, 2)[2] ** 2


GALLERY = [
    Entry("trimmed mean of squares", trimmed_mean_loss, {"r": (8,)}),
    Entry("top-3 hinge", top_k_hinge, {"scores": (6,)}),
    Entry("sorted L1 (SLOPE)", sorted_l1_penalty, {"w": (5,), "lam": (5,)}, wrt=("w",),
          positive=True),
    Entry("median by partition", median_of_five, {"x": (5,)}),
]
