"""Every gallery entry (:mod:`tests.gallery`): the traced function's gradient against central
differences at a random point, and the compiled value against the plain NumPy call."""

from __future__ import annotations

import numpy as np
import pytest

import symdiff as sd
from tests.gallery import GALLERY, Entry


def _point(entry: Entry, rng: np.random.Generator) -> dict[str, np.ndarray]:
    low, high = (0.5, 2.0) if entry.positive else (-1.0, 1.0)
    return {name: rng.uniform(low, high, size=shape) for name, shape in entry.shapes.items()}


def _central(fn, args: dict[str, np.ndarray], name: str, eps: float = 1e-6) -> np.ndarray:
    base = args[name]
    grad = np.zeros_like(base, dtype=float)
    for i in np.ndindex(base.shape):
        plus, minus = base.copy(), base.copy()
        plus[i] += eps
        minus[i] -= eps
        grad[i] = (fn(**{**args, name: plus}) - fn(**{**args, name: minus})) / (2 * eps)
    return grad


def test_gallery_is_large_enough():
    names = [entry.name for entry in GALLERY]
    assert len(names) == len(set(names)), "gallery names must be unique"
    assert len(names) >= 40  # at least 40 ordinary NumPy functions


@pytest.mark.parametrize("entry", GALLERY, ids=lambda e: e.name)
def test_gallery_gradient(entry: Entry):
    rng = np.random.default_rng(len(entry.name))
    args = _point(entry, rng)
    wrt = entry.wrt or tuple(entry.shapes)
    g = sd.value_and_grad(entry.fn, wrt=list(wrt), shapes=entry.shapes)
    value, grads = g(**args)
    np.testing.assert_allclose(value, entry.fn(**args), rtol=1e-10, atol=1e-12)
    for name, got in zip(wrt, grads, strict=True):
        want = _central(entry.fn, args, name)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=name)
