"""Gallery entries: building arrays from traced values (``np.stack``, ``np.concatenate``,
``np.hstack``, ``np.vstack``, ``np.column_stack``, ``np.append``), rearranging (``np.roll``,
``np.triu``/``tril``, ``np.rot90``, ``np.fliplr``, ``np.tile``, ``np.broadcast_to``,
``np.swapaxes``, ``ravel``, ``squeeze``), scans (``np.cumprod``, ``np.diff``) and statistics
(``np.var``, ``np.std``), written the way JAX/autograd users write them."""

from __future__ import annotations

import numpy as np

from .entry import Entry


def rosenbrock_residuals(x):
    r = np.stack([10.0 * (x[1] - x[0] ** 2), 1.0 - x[0]])
    return np.sum(r**2)


def residuals_from_a_loop(x):
    r = np.stack([x[i + 1] - x[i] ** 2 for i in range(len(x) - 1)])
    return r @ r


def polynomial_features(X, w, y):
    features = np.concatenate([X, X**2, np.sin(X)], axis=1)
    return np.mean((features @ w - y) ** 2)


def smoothness_penalty(x, y):
    return np.sum((x - y) ** 2) + 0.5 * np.sum(np.diff(x) ** 2)


def total_variation_from_zero(x):
    return np.sum(np.sqrt(np.diff(x, prepend=0.0) ** 2 + 1e-3))


def curvature_penalty(x):
    return np.sum(np.diff(x, n=2) ** 2) + np.sum(np.diff(x, axis=0) ** 4)


def standardized_cubes(x):
    z = (x - x.mean()) / x.std()
    return np.sum(z**3)


def layer_norm_loss(X, w):
    mu = X.mean(axis=-1, keepdims=True)
    var = X.var(axis=-1, keepdims=True)
    H = (X - mu) / np.sqrt(var + 1e-5)
    return np.sum(np.tanh(H @ w))


def unbiased_variance_ratio(a, b):
    return np.var(a, ddof=1) / np.var(b, ddof=1) + np.std(a, axis=0, ddof=1).sum()


def pairwise_upper_triangle(x):
    diffs = x[:, None] - x[None, :]
    return np.sum(np.triu(diffs**2, 1))


def repulsion_energy(P):
    gram = P @ P.T
    return np.sum(np.triu(np.exp(-gram), k=1))


def cholesky_factor_loss(A, B):
    L = np.tril(A)
    return np.sum((L @ L.T) * B)


def circular_smoothness(x):
    return np.sum((x - np.roll(x, 1)) ** 2)


def periodic_laplacian_energy(U):
    lap = (np.roll(U, 1, axis=0) + np.roll(U, -1, axis=0) + np.roll(U, 1, axis=1)
           + np.roll(U, -1, axis=1) - 4 * U)
    return 0.5 * np.sum(lap**2)


def stacked_parameters(w, b):
    theta = np.hstack([w, b])
    return np.sum(theta**2) + np.prod(theta[:2])


def appended_bias(w, b, X):
    theta = np.append(w, b)
    return np.sum(np.log1p(np.exp(X @ theta[:-1] + theta[-1])))


def two_rows(a, b):
    M = np.vstack([a, b])
    return np.sum((M @ M.T) ** 2)


def column_features(x):
    F = np.column_stack([x, np.exp(-x), x**3])
    return np.sum(F.T @ F)


def discounted_returns(p, r):
    return np.sum(np.cumprod(p) * r)


def flattened_weights(W, x):
    return np.sum(W.ravel() ** 2) + np.sum(W.flatten() * np.tile(x, 2))


def tiled_bias(b, X):
    return np.sum((np.tile(b, (3, 1)) - X) ** 2) + np.sum(np.broadcast_to(b, (2, 4)) ** 3)


def symmetry_penalty(A):
    return np.sum((A - np.rot90(A)) ** 2) + np.sum((A - np.fliplr(A)) * np.flipud(A))


def batch_gram(A):
    return np.sum(np.swapaxes(A, 1, 2) @ A) + np.sum(np.moveaxis(A, 0, -1) ** 2)


def squeezed_predictions(X, w, y):
    pred = np.squeeze(X @ np.expand_dims(w, 1))
    return np.mean((pred - y) ** 2)


GALLERY = [
    Entry("np.stack of scalars", rosenbrock_residuals, {"x": (2,)}),
    Entry("np.stack in a loop", residuals_from_a_loop, {"x": (4,)}),
    Entry("concatenated features", polynomial_features, {"X": (5, 2), "w": (6,), "y": (5,)},
          wrt=("X", "w")),
    Entry("np.diff smoothness", smoothness_penalty, {"x": (6,), "y": (6,)}, wrt=("x",)),
    Entry("np.diff with prepend", total_variation_from_zero, {"x": (6,)}),
    Entry("np.diff order 2 and axis 0", curvature_penalty, {"x": (3, 5)}),
    Entry("standardized by std", standardized_cubes, {"x": (7,)}),
    Entry("layer norm", layer_norm_loss, {"X": (3, 4), "w": (4,)}),
    Entry("var with ddof", unbiased_variance_ratio, {"a": (4, 2), "b": (5,)}),
    Entry("triu of pairwise terms", pairwise_upper_triangle, {"x": (5,)}),
    Entry("triu repulsion", repulsion_energy, {"P": (4, 2)}),
    Entry("tril factor", cholesky_factor_loss, {"A": (3, 3), "B": (3, 3)}),
    Entry("np.roll smoothness", circular_smoothness, {"x": (6,)}),
    Entry("periodic laplacian", periodic_laplacian_energy, {"U": (4, 3)}),
    Entry("np.hstack parameters", stacked_parameters, {"w": (3,), "b": ()}),
    Entry("np.append bias", appended_bias, {"w": (3,), "b": (), "X": (4, 3)}, wrt=("w", "b")),
    Entry("np.vstack rows", two_rows, {"a": (3,), "b": (3,)}),
    Entry("np.column_stack", column_features, {"x": (4,)}),
    Entry("np.cumprod discounts", discounted_returns, {"p": (5,), "r": (5,)}),
    Entry("ravel flatten tile", flattened_weights, {"W": (2, 3), "x": (3,)}),
    Entry("tile and broadcast_to", tiled_bias, {"b": (4,), "X": (3, 4)}),
    Entry("rot90 fliplr flipud", symmetry_penalty, {"A": (3, 3)}),
    Entry("swapaxes moveaxis", batch_gram, {"A": (2, 3, 2)}),
    Entry("squeeze expand_dims", squeezed_predictions, {"X": (4, 3), "w": (3,), "y": (4,)},
          wrt=("w",)),
]
