"""Numerical references shared by the tests: central differences."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def central(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """The gradient of the scalar ``f`` at ``x`` by central differences, entry by entry."""
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        out[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return out


def central_tree(f: Callable[[object], float], tree: object, eps: float = 1e-6) -> object:
    """The gradient of the scalar ``f`` of a parameter tree (lists, tuples and dicts of arrays
    and numbers) by central differences, as a tree of the same structure."""
    from symdiff.trees import flatten

    vector, unflatten = flatten(tree)
    return unflatten(central(lambda v: f(unflatten(v)), vector, eps))
