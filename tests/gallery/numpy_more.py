"""Gallery entries: more of NumPy as JAX/autograd users write it in losses (``np.median``,
``np.quantile``, ``np.average(weights=)``, ``np.trapezoid``, ``np.polyval``, ``np.interp``,
``np.convolve``, ``np.kron``, ``np.cross``, ``np.linalg.matrix_power``/``multi_dot``/``pinv``/
``lstsq``/``cond``/``qr``, ``np.argmax`` as an index, ``np.meshgrid``, ``np.nansum``)."""

from __future__ import annotations

import numpy as np

from .entry import Entry

_T = np.linspace(-1.0, 1.0, 7)
_Y = np.sin(2 * _T)
_KNOTS = np.array([-1.0, -0.3, 0.2, 0.6, 1.0])
_SMOOTH = np.array([0.25, 0.5, 0.25])
_X = np.random.default_rng(0).normal(size=(8, 3))


def median_absolute_deviation(r):
    """A robust scale estimate, as in robust regression."""
    return np.median(np.abs(r - np.median(r)))


def pinball_quantile(e):
    """The 90th percentile of squared errors (a tail-risk loss)."""
    return np.quantile(e ** 2, 0.9)


def weighted_mse(w, b, sample_weight):
    residual = _X @ w + b - _X[:, 0] ** 2
    return np.average(residual ** 2, weights=np.exp(sample_weight))


def kinetic_energy(v):
    """The trapezoidal integral of a velocity profile's energy over time."""
    return np.trapezoid(0.5 * v ** 2, dx=0.1)


def polynomial_fit(coef):
    return np.mean((np.polyval(coef, _T) - _Y) ** 2)


def calibration_curve(values, x):
    """A piecewise-linear calibration learned at fixed knots, applied to the inputs."""
    return np.sum((np.interp(x, _KNOTS, values) - x) ** 2)


def smoothness_penalty(x):
    smoothed = np.convolve(x, _SMOOTH, mode="same")
    return np.sum((x - smoothed) ** 2)


def kronecker_quadratic(A, B, v):
    return v @ np.kron(A, B) @ v


def torque_norm(r, f):
    return np.sum(np.cross(r, f) ** 2)


def markov_four_steps(P, p0):
    return np.sum(np.linalg.matrix_power(np.exp(P), 4) @ np.exp(p0))


def chained_products(A, B, x):
    return np.linalg.multi_dot([x, A, B, A.T, x])


def pseudo_inverse_fit(X):
    return np.sum((np.linalg.pinv(X) @ _X[:, 0]) ** 2)


def least_squares_coefficients(y):
    coef, residuals, _rank, _sv = np.linalg.lstsq(_X, y, rcond=None)
    return np.sum(coef ** 2) + residuals[0]


def condition_regulariser(A):
    return np.linalg.cond(A + 3 * np.eye(3))


def qr_log_volume(A):
    """log |det| of a tall matrix's column space, from R's diagonal."""
    R = np.linalg.qr(A)[1]
    return np.sum(np.log(np.abs(np.diag(R))))


def predicted_class_logit(logits, scores):
    """The score of the class each row predicts (argmax: an index, no gradient through it)."""
    return np.sum(scores[np.arange(4), np.argmax(logits, axis=1)])


def field_energy(x, y):
    X, Y = np.meshgrid(x, y)
    return np.sum(np.sin(X) * Y ** 2)


def nan_safe_sum(x):
    return np.nansum(x ** 2) + np.nanmean(x) + np.ptp(x)


GALLERY = [
    Entry("median absolute deviation", median_absolute_deviation, {"r": (8,)}),
    Entry("quantile of squared errors", pinball_quantile, {"e": (9,)}),
    Entry("average with weights", weighted_mse, {"w": (3,), "b": (), "sample_weight": (8,)}),
    Entry("trapezoid energy", kinetic_energy, {"v": (6,)}),
    Entry("polyval fit", polynomial_fit, {"coef": (4,)}),
    Entry("interp calibration", calibration_curve, {"values": (5,), "x": (6,)}),
    Entry("convolve smoothness", smoothness_penalty, {"x": (8,)}),
    Entry("kron quadratic form", kronecker_quadratic, {"A": (2, 2), "B": (2, 2), "v": (4,)}),
    Entry("cross product torque", torque_norm, {"r": (4, 3), "f": (4, 3)}),
    Entry("matrix_power markov", markov_four_steps, {"P": (3, 3), "p0": (3,)}),
    Entry("multi_dot chain", chained_products, {"A": (3, 2), "B": (2, 2), "x": (3,)}),
    Entry("pinv fit", pseudo_inverse_fit, {"X": (8, 3)}),
    Entry("lstsq coefficients", least_squares_coefficients, {"y": (8,)}),
    Entry("cond regulariser", condition_regulariser, {"A": (3, 3)}),
    Entry("qr log volume", qr_log_volume, {"A": (5, 3)}),
    Entry("argmax predicted class", predicted_class_logit, {"logits": (4, 3), "scores": (4, 3)}),
    Entry("meshgrid field", field_energy, {"x": (3,), "y": (4,)}),
    Entry("nansum nanmean ptp", nan_safe_sum, {"x": (5,)}),
]
