"""Gallery entries: matrix decompositions as JAX/autograd users write them
(``np.linalg.cholesky``, ``eigh``, ``eigvalsh``, ``svd``, and the nuclear and spectral norms)."""

from __future__ import annotations

import numpy as np

from .entry import Entry


def gaussian_log_likelihood_cholesky(L0, x):
    """Log-density of the rows of ``x`` under N(0, S), S = L0 L0^T + I, through its Cholesky
    factor: a triangular solve (here ``solve``) and ``logdet = 2 sum(log(diag(L)))``."""
    S = L0 @ L0.T + np.eye(3)
    L = np.linalg.cholesky(S)
    z = np.linalg.solve(L, x.T)
    n = x.shape[0]
    return -0.5 * np.sum(z ** 2) - n * np.sum(np.log(np.diag(L))) - 1.5 * n * np.log(2 * np.pi)


def top_eigenvalues(X):
    """The sum of the two largest eigenvalues of the covariance of ``X`` (Ky Fan)."""
    C = X.T @ X / X.shape[0]
    return np.sum(np.linalg.eigvalsh(C)[-2:])


def nuclear_norm_regularizer(W, Y):
    """A low-rank matrix completion loss: squared error plus the nuclear norm."""
    return 0.5 * np.sum((W - Y) ** 2) + 0.1 * np.linalg.norm(W, "nuc")


def spectral_norm(W):
    """The largest singular value (a Lipschitz constant of ``x -> W x``)."""
    return np.linalg.norm(W, 2)


def pca_reconstruction_loss(X):
    """Squared error of projecting the rows on the top-2 principal axes (right singular
    vectors of the centered data)."""
    Xc = X - np.mean(X, axis=0)
    _, _, Vh = np.linalg.svd(Xc, full_matrices=False)
    P = Vh[:2].T @ Vh[:2]
    return np.sum((Xc - Xc @ P) ** 2)


def eigenvector_alignment(A, u):
    """How well ``u`` aligns with the leading eigenvector of a symmetric matrix (sign-free)."""
    S = (A + A.T) / 2
    w, V = np.linalg.eigh(S)
    return (V[:, -1] @ u) ** 2 + 0.1 * w[-1]


def condition_number_log(W):
    """``log`` of the condition number from the singular values."""
    s = np.linalg.svd(W, compute_uv=False)
    return np.log(s[0]) - np.log(s[-1])


GALLERY = [
    Entry("gaussian log-likelihood via cholesky", gaussian_log_likelihood_cholesky,
          {"L0": (3, 3), "x": (4, 3)}),
    Entry("sum of top eigenvalues", top_eigenvalues, {"X": (6, 3)}),
    Entry("nuclear norm regularizer", nuclear_norm_regularizer, {"W": (3, 4), "Y": (3, 4)}),
    Entry("spectral norm", spectral_norm, {"W": (4, 3)}),
    Entry("pca reconstruction loss", pca_reconstruction_loss, {"X": (6, 4)}),
    Entry("leading eigenvector alignment", eigenvector_alignment, {"A": (3, 3), "u": (3,)}),
    Entry("log condition number", condition_number_log, {"W": (3, 3)}),
]
