"""Gallery entries: linear algebra as JAX/autograd users write it (``np.linalg.det``,
``slogdet``, ``inv``, ``solve``, ``norm``, ``np.einsum``, ``np.trace``, ``np.outer``, ...)."""

from __future__ import annotations

import numpy as np

from .entry import Entry


def gaussian_log_likelihood(mu, L, s, x):
    """Log-density of ``x`` under N(mu, S), S = L L^T + diag(exp(s)) (logdet and a solve)."""
    S = L @ L.T + np.diag(np.exp(s))
    r = x - mu
    return -0.5 * (np.linalg.slogdet(S)[1] + r @ np.linalg.solve(S, r) + 3 * np.log(2 * np.pi))


def ridge_closed_form(X, y, lam):
    """The ridge solution through an explicit inverse, as in a textbook."""
    w = np.linalg.inv(X.T @ X + np.diag(lam)) @ (X.T @ y)
    return np.sum(w ** 2)


def bilinear_form(x, A, y):
    return np.einsum("i,ij,j->", x, A, y)


def batched_quadratic(X, A):
    return np.sum(np.einsum("ni,ij,nj->n", X, A, X))


def trace_of_product(A, B):
    return np.trace(A @ B.T)


def frobenius_distance(A, B):
    return np.linalg.norm(A - B)


def row_norms(X):
    return np.sum(np.linalg.norm(X, axis=1))


def lasso_penalty(w):
    return np.linalg.norm(w, 1) + np.linalg.norm(w, np.inf)


def outer_rank_one(u, v):
    return np.sum(np.sin(np.outer(u, v)))


def log_det_covariance(X):
    C = X.T @ X / X.shape[0]
    return np.linalg.slogdet(C)[1]


def determinant(A):
    return np.linalg.det(A)


def diag_weights(w, x):
    return x @ np.diag(w ** 2) @ x


def tensor_contraction(T, v):
    return np.sum(np.tensordot(T, v, axes=([2], [0])) ** 2)


def mahalanobis(x, A):
    return np.dot(x, np.linalg.solve(A, x))


def inner_products(X, Y):
    return np.sum(np.inner(X, Y) ** 2)


def diagonal_of_gram(X):
    return np.sum(np.sqrt(np.diagonal(X @ X.T)))


GALLERY = [
    Entry("gaussian log-likelihood (slogdet, solve)", gaussian_log_likelihood,
          {"mu": (3,), "L": (3, 3), "s": (3,), "x": (3,)}),
    Entry("ridge regression (inv)", ridge_closed_form, {"X": (5, 2), "y": (5,), "lam": (2,)},
          positive=True),
    Entry("einsum bilinear form", bilinear_form, {"x": (3,), "A": (3, 4), "y": (4,)}),
    Entry("einsum batched quadratic", batched_quadratic, {"X": (4, 3), "A": (3, 3)}),
    Entry("trace of a product", trace_of_product, {"A": (3, 4), "B": (3, 4)}),
    Entry("frobenius distance", frobenius_distance, {"A": (2, 3), "B": (2, 3)}),
    Entry("row norms", row_norms, {"X": (4, 3)}),
    Entry("l1 and max norms", lasso_penalty, {"w": (5,)}),
    Entry("outer product", outer_rank_one, {"u": (3,), "v": (4,)}),
    Entry("log-det of a covariance", log_det_covariance, {"X": (6, 3)}),
    Entry("determinant", determinant, {"A": (3, 3)}, positive=True),
    Entry("diag weights", diag_weights, {"w": (3,), "x": (3,)}),
    Entry("tensordot", tensor_contraction, {"T": (2, 3, 4), "v": (4,)}),
    Entry("mahalanobis (dot, solve)", mahalanobis, {"x": (3,), "A": (3, 3)}, wrt=("x",),
          positive=True),
    Entry("inner products", inner_products, {"X": (2, 3), "Y": (4, 3)}),
    Entry("diagonal of a gram matrix", diagonal_of_gram, {"X": (3, 2)}),
]
