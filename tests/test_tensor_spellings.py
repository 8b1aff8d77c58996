"""Every tensor spelling (symdiff/tensor/families: each name a user writes for an operation),
through the whole pipeline, as tests/test_registry_rows.py does for the elementwise rows.

One case per spelling below (a new spelling without a case fails
``test_every_spelling_has_a_case``): a NumPy function using it, traced with ``shapes=`` and also
run on plain arrays. The traced value equals NumPy's, the gradient agrees with central
differences in every array argument, and where it applies the Hessian agrees with central
differences of the gradient. A spelling built from other operations says its backward rule in
``identity=`` (``derive`` heads its parts' steps with it); one whose node has a row of its own
shows that row's rule, which the case names (``shows=``) when it is not the spelling's name.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest

import symdiff as sd
from symdiff import nn
from symdiff.tensor import families

from .tensor_cases import central_gradient


@dataclass(frozen=True)
class Case:
    fn: Callable[..., object]
    shapes: dict[str, tuple[int, ...]]
    hessian: bool = True  # smooth to second order at the case's point
    shows: str | None = None  # the rule derive() shows for it, when not the spelling's name
    reason: str = ""  # why a spelling without identity= and without a rule of its own needs none
    positive: bool = False  # arguments drawn from (0.5, 2) instead of (-1, 1)
    data: dict[str, np.ndarray] = field(default_factory=dict)  # fixed non-float arguments


V3, V4, M23, M33, M34 = {"a": (3,)}, {"a": (4,)}, {"a": (2, 3)}, {"a": (3, 3)}, {"a": (3, 4)}
TWO3 = {"a": (3,), "b": (3,)}


def _spd(a):
    return a @ a.T + 3.0 * np.eye(a.shape[0])


CASES: dict[str, Case] = {
    # scans, products
    "cumsum": Case(lambda a: np.cumsum(a, axis=1), M23),
    "cumulative_sum": Case(lambda a: np.cumulative_sum(a, axis=0), M23, shows="cumsum"),
    "diff": Case(lambda a: np.diff(a, n=2), V4,
                reason="a difference of slices, a[1:] - a[:-1]: the slice rules are its rule"),
    "flip": Case(lambda a: np.flip(a, axis=0), M23),
    "cumprod": Case(lambda a: np.cumprod(a), V4),
    "cumulative_prod": Case(lambda a: np.cumulative_prod(a, axis=0), V4, shows="cumprod"),
    # building
    "concatenate": Case(lambda a, b: np.concatenate([a, b]), TWO3),
    "concat": Case(lambda a, b: np.concatenate([a, b], axis=0), TWO3, shows="concatenate"),
    "stack": Case(lambda a, b: np.stack([a, b], axis=1), TWO3),
    "hstack": Case(lambda a, b: np.hstack([a, b]), TWO3, shows="concatenate"),
    "vstack": Case(lambda a, b: np.vstack([a, b]), TWO3, shows="concatenate"),
    "append": Case(lambda a, b: np.append(a, b), TWO3, shows="concatenate"),
    "atleast_1d": Case(lambda a: np.atleast_1d(a) * a, V3, shows="sum"),
    "atleast_2d": Case(lambda a: np.atleast_2d(a), V3,
                reason="a reshape adding axes of length 1: no step of its own"),
    "atleast_3d": Case(lambda a: np.atleast_3d(a), M23, shows="reshape"),
    "split": Case(lambda a: np.split(a, 2)[1] * 2.0, V4, shows="slice"),
    "array_split": Case(lambda a: np.array_split(a, 3)[0], V4, shows="slice"),
    "dstack": Case(lambda a, b: np.dstack([a, b]), TWO3, shows="concatenate"),
    "column_stack": Case(lambda a, b: np.column_stack([a, b]), TWO3, shows="concatenate"),
    # rearranging
    "roll": Case(lambda a: np.roll(a, 1, axis=1), M23),
    "triu": Case(lambda a: np.triu(a, 1), M33, shows="triangle"),
    "tril": Case(lambda a: np.tril(a), M33, shows="triangle"),
    "fliplr": Case(lambda a: np.fliplr(a), M23, shows="flip"),
    "flipud": Case(lambda a: np.flipud(a), M23, shows="flip"),
    "rot90": Case(lambda a: np.rot90(a), M23, shows="flip"),
    "ravel": Case(lambda a: np.ravel(a) * np.arange(6.0), M23, shows="reshape"),
    "flatten": Case(lambda a: a.flatten() * np.arange(6.0), M23, shows="reshape"),
    "squeeze": Case(lambda a: np.squeeze(a), {"a": (1, 3)}, shows="reshape"),
    "expand_dims": Case(lambda a: np.expand_dims(a, 0) * a[:, None], V3, shows="reshape"),
    "moveaxis": Case(lambda a: np.moveaxis(a, 0, 1) * np.arange(6.0).reshape(3, 2), M23,
                     shows="transpose"),
    "swapaxes": Case(lambda a: np.swapaxes(a, 0, 1) @ a, M23, shows="transpose"),
    "broadcast_to": Case(lambda a: np.broadcast_to(a, (2, 3)) * np.arange(6.0).reshape(2, 3),
                         V3, shows="unbroadcast"),
    "tile": Case(lambda a: np.tile(a, 2) * np.arange(6.0), V3, shows="broadcast"),
    # statistics
    "var": Case(lambda a: np.var(a, axis=0, ddof=1), M34),
    "std": Case(lambda a: np.std(a, axis=1), M34),
    # contractions
    "einsum": Case(lambda a, b: np.einsum("ij,j->i", a, b), {"a": (2, 3), "b": (3,)},
                   shows="matmul"),
    "trace": Case(lambda a: np.trace(a @ a), M33, shows="einsum"),
    "diagonal": Case(lambda a: np.diagonal(a, 1), M33, shows="einsum"),
    "diag": Case(lambda a: np.diag(a) @ np.diag(a * a), V3, shows="matmul"),
    "outer": Case(lambda a, b: np.outer(a, b), TWO3, shows="einsum"),
    "inner": Case(lambda a, b: np.inner(a, b), TWO3, shows="matmul"),
    "dot": Case(lambda a, b: np.dot(a, b), {"a": (2, 3), "b": (3, 2)}, shows="matmul"),
    "tensordot": Case(lambda a, b: np.tensordot(a, b, axes=1), {"a": (2, 3), "b": (3, 2)},
                      shows="matmul"),
    # linear algebra
    "det": Case(lambda a: np.linalg.det(a), M33),
    "logdet": Case(lambda a: np.linalg.slogdet(_spd(a))[1], M33, shows="log determinant"),
    "slogdet": Case(lambda a: np.linalg.slogdet(_spd(a))[1], M33, shows="log determinant"),
    "inv": Case(lambda a: np.linalg.inv(_spd(a)), M33),
    "solve": Case(lambda a, b: np.linalg.solve(_spd(a), b), {"a": (3, 3), "b": (3,)}),
    "norm": Case(lambda a: np.linalg.norm(a, axis=1), M23),
    # sorting and gathering
    "sort": Case(lambda a: np.sort(a) * np.arange(4.0), V4),
    "partition": Case(lambda a: np.partition(a, 2)[2], V4, shows="sort"),
    "take": Case(lambda a: np.take(a, [2, 0, 2]), V3, shows="gather"),
    # numeric guards
    "nan_to_num": Case(lambda a: np.nan_to_num(np.log(a)), V3, positive=True),
    "real": Case(lambda a: np.real(a) * a, V3,
                reason="the identity on real arrays: no step of its own"),
    "imag": Case(lambda a: np.imag(a) + a, V3,
                reason="zero on real arrays: a constant, no gradient flows"),
    "real_if_close": Case(lambda a: np.real_if_close(a) * a, V3,
                reason="the identity on real arrays: no step of its own"),
    "angle": Case(lambda a: np.angle(a) + a, V3, hessian=False,
                reason="0 or pi on real arrays: piecewise constant, no gradient flows"),
    ".astype": Case(lambda a: a.astype(np.float64) * a, V3,
                reason="a float dtype is the identity here: no step of its own"),
    "linspace": Case(lambda a: np.linspace(a[0], a[1], 4) * np.arange(4.0), V3,
                     reason="start + (stop - start) * t for fixed t: the slice rules say it"),
    # decompositions
    "cholesky": Case(lambda a: np.linalg.cholesky(_spd(a)), M33, shows="Cholesky factor"),
    "eigvalsh": Case(lambda a: np.linalg.eigvalsh(_spd(a)), M33, shows="symmetric eigenvalues"),
    "eigh": Case(lambda a: np.linalg.eigh(_spd(a))[0], M33, shows="symmetric eigenvalues"),
    "svdvals": Case(lambda a: np.linalg.svd(a, compute_uv=False), M23, shows="singular values"),
    "svd": Case(lambda a: np.linalg.svd(a, full_matrices=False)[1], M23, shows="singular values"),
    # convolutional layers
    "conv1d": Case(lambda x, w: nn.conv1d(x, w, padding=1), {"x": (1, 2, 5), "w": (2, 2, 3)},
                   shows="convolution"),
    "conv2d": Case(lambda x, w: nn.conv2d(x, w), {"x": (1, 1, 4, 4), "w": (2, 1, 2, 2)},
                   shows="convolution"),
    "pad": Case(lambda a: np.pad(a, 1) * np.arange(5.0), V3),
    "max_pool1d": Case(lambda a: nn.max_pool1d(a, 2), {"a": (1, 1, 4)}),
    "max_pool2d": Case(lambda a: nn.max_pool2d(a, 2), {"a": (1, 1, 4, 4)}),
    "avg_pool1d": Case(lambda a: nn.avg_pool1d(a, 2), {"a": (1, 1, 4)}),
    "avg_pool2d": Case(lambda a: nn.avg_pool2d(a, 2), {"a": (1, 1, 4, 4)}),
    "batch_norm": Case(lambda a: nn.batch_norm(a), {"a": (3, 2, 2)}),
    "layer_norm": Case(lambda a: nn.layer_norm(a), M34),
    # array-building helpers and statistics
    "ones_like": Case(lambda a: np.ones_like(a) * a, V3,
                reason="a constant: no gradient flows through it"),
    "zeros_like": Case(lambda a: np.zeros_like(a) + a, V3,
                reason="a constant: no gradient flows through it"),
    "full_like": Case(lambda a: np.full_like(a, 2.0) * a, V3,
                reason="a constant: no gradient flows through it"),
    "meshgrid": Case(lambda a, b: np.meshgrid(a, b)[0] * np.meshgrid(a, b)[1], TWO3,
                     shows="broadcast",
                reason="each output is its input broadcast: the broadcasting rule"),
    "ptp": Case(lambda a: np.ptp(a), V4, shows="max"),
    "average": Case(lambda a: np.average(a, weights=np.array([1.0, 2.0, 3.0])), V3,
                reason="sum(a * w) / sum(w): the sum and elementwise rules"),
    "trapezoid": Case(lambda a: np.trapezoid(a), V4,
                reason="a sum of averaged neighbours: slices and a sum"),
    "polyval": Case(lambda a, b: np.polyval(a, b), TWO3,
                reason="Horner's scheme over the coefficients: slices and products"),
    "nansum": Case(lambda a: np.nansum(a * a), V3, shows="sum"),
    "nanprod": Case(lambda a: np.nanprod(a), V3, shows="prod"),
    "nancumsum": Case(lambda a: np.nancumsum(a), V3, shows="cumsum"),
    "nancumprod": Case(lambda a: np.nancumprod(a), V3, shows="cumprod"),
    "nanmean": Case(lambda a: np.nanmean(a * a), V3, shows="sum"),
    "vdot": Case(lambda a, b: np.vdot(a, b), TWO3, shows="matmul"),
    "kron": Case(lambda a, b: np.kron(a, b), TWO3),
    "cross": Case(lambda a, b: np.cross(a, b), TWO3),
    "multi_dot": Case(lambda a, b: np.linalg.multi_dot([a, b, a]),
                      {"a": (3, 3), "b": (3, 3)}, shows="matmul"),
    "matrix_power": Case(lambda a: np.linalg.matrix_power(a, 3), M33, shows="matmul"),
    "pinv": Case(lambda a: np.linalg.pinv(a), {"a": (4, 2)}, shows="solve"),
    "lstsq": Case(lambda a, b: np.linalg.lstsq(a, b)[0], {"a": (4, 2), "b": (4,)},
                  shows="solve"),
    "cond": Case(lambda a: np.linalg.cond(_spd(a)), M33,
                reason="the ratio of the largest to the smallest singular value"),
    "quantile": Case(lambda a: np.quantile(a, 0.3), V4,
                reason="a sort, then a linear blend of two order statistics (slices)"),
    "percentile": Case(lambda a: np.percentile(a, 40.0), V4,
                reason="quantile of q / 100: a sort and two slices"),
    "median": Case(lambda a: np.median(a), V4,
                reason="the quantile 0.5: a sort and two slices"),
    "argmax": Case(lambda a, b: b[np.argmax(a)], TWO3, shows="pick at an index"),
    "argmin": Case(lambda a, b: b[np.argmin(a)], TWO3, shows="pick at an index"),
    "take_along_axis": Case(
        lambda a, b: np.take_along_axis(b, np.argmax(a, axis=1, keepdims=True), axis=1),
        {"a": (2, 3), "b": (2, 3)}, shows="pick at an index"),
    "convolve": Case(lambda a, b: np.convolve(a, b), TWO3,
                     reason="windows of the signal times the flipped kernel: windows and matmul"),
    "correlate": Case(lambda a, b: np.correlate(a, b, mode="full"), TWO3,
                reason="convolve with the kernel not flipped: windows and matmul"),
    "interp": Case(lambda a: np.interp(a, np.array([-2.0, 0.0, 2.0]), np.array([1.0, 3.0, 2.0])),
                   V3, hessian=False,
                   reason="a piecewise-linear blend: each point's segment (constant) and matmul"),
    "qr": Case(lambda a: np.linalg.qr(a)[1], {"a": (3, 2)}, shows="QR triangular factor"),
}


def _key(spelling) -> str:
    """The case key of a spelling: its name, else its NumPy function's, else ``.method``."""
    if spelling.name:
        return spelling.name
    if spelling.numpy:
        return spelling.numpy[0].__name__
    return "." + spelling.methods[0]


ALL = [s for family in families._FAMILIES for s in family.SPELLINGS]


def test_every_spelling_has_a_case():
    assert sorted(_key(s) for s in ALL) == sorted(CASES)


def _loss(case: Case) -> Callable[..., object]:
    """A scalar of the spelling's outputs with weights that break symmetries."""

    def loss(*args, **kwargs):
        out = case.fn(*args, **kwargs)
        parts = out if isinstance(out, tuple | list) else (out,)
        total = 0.0
        for part in parts:
            weights = np.cos(1.0 + np.arange(np.size(part))).reshape(np.shape(part))
            total = total + np.sum(np.sin(part) * weights)
        return total

    loss.__signature__ = inspect.signature(case.fn)  # traced with the case's parameter names
    return loss


def _point(case: Case, seed: int = 7) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    lo, hi = (0.5, 2.0) if case.positive else (-1.0, 1.0)
    return {name: rng.uniform(lo, hi, shape) for name, shape in case.shapes.items()}


@pytest.mark.parametrize("key", sorted(CASES))
def test_spelling_value_gradient_and_hessian(key):
    case = CASES[key]
    loss = _loss(case)
    point = _point(case)
    names = list(case.shapes)
    f = sd.value_and_grad(loss, wrt=names, shapes=case.shapes)
    value, grads = f(**point)
    assert float(value) == pytest.approx(float(loss(**point)), rel=1e-10, abs=1e-12)
    for name, grad in zip(names, grads, strict=True):
        np.testing.assert_allclose(grad, central_gradient(loss, point, name), rtol=1e-5, atol=1e-7,
                                   err_msg=f"{key}: d/d{name}")
    if case.hessian:
        first = names[0]
        g = sd.grad(loss, wrt=first, shapes=case.shapes)
        H = np.asarray(sd.hessian(loss, wrt=first, shapes=case.shapes)(**point))
        n = point[first].size
        columns = [central_gradient(lambda i=i, **p: np.ravel(g(**p))[i], point, first).ravel()
                   for i in range(n)]
        np.testing.assert_allclose(H.reshape(n, n), np.array(columns), rtol=1e-4, atol=1e-6,
                                   err_msg=f"{key}: Hessian")


@pytest.mark.parametrize("spelling", [pytest.param(s, id=_key(s)) for s in ALL])
def test_derive_names_the_spelling_or_its_rows_rule(spelling):
    """A spelling built from other operations heads its parts' steps with its ``identity``, or
    its case states why its parts' rules say it (``reason``); any other shows the rule of the
    row its node has (the case's ``shows``)."""
    case = CASES[_key(spelling)]
    text = str(sd.derive(_loss(case), wrt=next(iter(case.shapes)), shapes=case.shapes))
    if spelling.identity:
        assert spelling.identity in text, _key(spelling)
    elif not case.reason:
        assert f"[{case.shows or _key(spelling)}" in text, text
