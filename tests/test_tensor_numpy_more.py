"""NumPy functions users write in loss functions (families npmisc, matrices, quantiles,
signals, qr): traced gradients against central differences in both modes, values against
NumPy, Hessians against differences of the gradient, named dimensions, float32, the string
language, and the clear errors for what is refused."""

from __future__ import annotations

import re

import numpy as np
import pytest

import symdiff as sd
from symdiff.errors import ShapeError, SymdiffError, UnsupportedError

_E = 3 * np.eye(3)
_W = np.arange(12.0).reshape(4, 3) / 7
_XP = np.array([-0.8, -0.1, 0.3, 0.9])

# (name, function, shapes): functions of well-conditioned arguments drawn from (-1, 1)
CASES = [
    ("like", lambda x: np.sum(x * np.ones_like(x) + np.zeros_like(x) * x ** 2
                              + np.full_like(x, 2.0) * x ** 3), {"x": (3,)}),
    ("full_like traced", lambda x, y: np.sum(np.full_like(x, np.sum(y)) * x),
     {"x": (3,), "y": (2,)}),
    ("meshgrid", lambda x, y: np.sum(np.meshgrid(x, y)[0] * np.meshgrid(x, y)[1] ** 2),
     {"x": (3,), "y": (2,)}),
    ("ptp axis", lambda x: np.sum(np.ptp(x, axis=0) ** 2), {"x": (3, 2)}),
    ("average weights axis", lambda x, w: np.sum(np.average(x, axis=1, weights=np.exp(w)) ** 2),
     {"x": (3, 4), "w": (4,)}),
    ("trapezoid x", lambda y, x: np.trapezoid(y ** 2, x=np.cumsum(np.exp(x))),
     {"y": (5,), "x": (5,)}),
    ("trapezoid dx axis", lambda y: np.sum(np.trapezoid(np.sin(y), dx=0.3, axis=0)),
     {"y": (4, 3)}),
    ("polyval", lambda p, x: np.sum(np.polyval(p, x) ** 2), {"p": (4,), "x": (3,)}),
    ("nansum nanmean", lambda x: np.nansum(x ** 2) + np.nanmean(np.sin(x)), {"x": (5,)}),
    ("nanprod nancumsum nancumprod", lambda x: np.nanprod(x) + np.sum(np.nancumsum(x) ** 2)
     + np.sum(np.nancumprod(x, axis=0)), {"x": (3, 2)}),
    ("vdot", lambda x, y: np.vdot(x, y) ** 2, {"x": (2, 3), "y": (6,)}),
    ("kron", lambda a, c: np.sum(np.kron(a, c) ** 2 * np.arange(24.0).reshape(4, 6)),
     {"a": (2, 2), "c": (2, 3)}),
    ("cross axis", lambda x, y: np.sum(np.cross(x, y, axis=0) ** 2
                                       * np.arange(6.0).reshape(3, 2)),
     {"x": (3, 2), "y": (3, 2)}),
    # elements of overlapping slices: the slices' adjoints are scatters of scatters (their
    # inner ones were read and never built: ``_w_bar[1:] = _z0 + _z1``, a NameError)
    ("cross of overlapping slices", lambda w: np.sum(np.cross(w[:3], w[1:]) ** 2), {"w": (4,)}),
    ("elements of overlapping slices", lambda x: x[1:][0] * x[:2][1] + x[1:][1] ** 2
     + np.sum(np.stack([x[1:][0] * x[:2][1], x[:2][0] ** 2]) ** 2), {"x": (4,)}),
    # a comparison of a where() (leaky relu after leaky relu) was refused
    ("where of a where", lambda x: np.sum(np.where(
        np.where(x > 0, x, 0.01 * x) - 0.1 > 0, np.sin(x) ** 2, 2 * x)), {"x": (2, 3)}),
    ("multi_dot", lambda a, c: np.sum(np.linalg.multi_dot([a, c, a]) ** 2),
     {"a": (2, 3), "c": (3, 2)}),
    ("matrix_power", lambda a: np.sum(np.linalg.matrix_power(a, 5)
                                      * np.arange(9.0).reshape(3, 3)), {"a": (3, 3)}),
    ("matrix_power negative", lambda a: np.sum(np.linalg.matrix_power(a + _E, -2)),
     {"a": (3, 3)}),
    ("pinv wide", lambda a: np.sum(np.sin(np.linalg.pinv(a))), {"a": (2, 4)}),
    ("lstsq", lambda a, y: np.sum(np.linalg.lstsq(a, y)[0] ** 2)
     + np.sum(np.linalg.lstsq(a, y)[1]), {"a": (5, 2), "y": (5,)}),
    ("cond", lambda a: np.linalg.cond(a + _E), {"a": (3, 3)}),
    ("cond fro", lambda a: np.linalg.cond(a + _E, "fro"), {"a": (3, 3)}),
    ("quantile list axis", lambda x: np.sum(np.quantile(x, [0.2, 0.9], axis=1, keepdims=True)
                                           ** 2 * np.arange(1, 4.0).reshape(3, 1)),
     {"x": (3, 5)}),
    ("percentile", lambda x: np.percentile(np.sin(x), 70), {"x": (2, 3)}),
    ("median even", lambda x: np.median(x ** 3), {"x": (6,)}),
    ("median odd axis", lambda x: np.sum(np.median(x, axis=0) ** 2), {"x": (5, 2)}),
    ("argmax index", lambda x, y: y[np.argmax(x)] ** 2 + np.sum(x), {"x": (5,), "y": (5,)}),
    ("argmax rows", lambda x, y: np.sum(y[np.arange(3), np.argmax(x, axis=1)] ** 2),
     {"x": (3, 4), "y": (3, 4)}),
    ("argmin column", lambda x, y: np.sum(y[:, np.argmin(x)] ** 2), {"x": (3,), "y": (2, 3)}),
    ("take_along_axis argmax", lambda x: np.sum(np.take_along_axis(
        x, np.argmax(x, axis=1, keepdims=True), axis=1) ** 3), {"x": (3, 4)}),
    ("repeat flat", lambda x: np.sum(np.repeat(x, 2) * np.arange(12.0)), {"x": (2, 3)}),
    ("convolve", lambda a, v: np.sum(np.convolve(a, v) ** 2 * np.arange(7.0)),
     {"a": (5,), "v": (3,)}),
    ("correlate same swapped", lambda a, v: np.sum(np.correlate(a, v, "same") ** 2
                                                   * np.arange(4.0)), {"a": (3,), "v": (4,)}),
    ("interp", lambda x, fp: np.sum(np.interp(1.2 * x, _XP, fp, left=0.5) ** 2),
     {"x": (2, 3), "fp": (4,)}),
    ("qr", lambda a: np.sum(np.sin(np.linalg.qr(a).Q) * _W) + np.sum(np.linalg.qr(a).R ** 3),
     {"a": (4, 3)}),
]


def _args(shapes: dict, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, shape) for shape in shapes.values()]


def _central(fn, args: list[np.ndarray], i: int, eps: float = 1e-6) -> np.ndarray:
    out = np.zeros_like(args[i])
    for index in np.ndindex(args[i].shape):
        up = [a.copy() for a in args]
        down = [a.copy() for a in args]
        up[i][index] += eps
        down[i][index] -= eps
        out[index] = (fn(*up) - fn(*down)) / (2 * eps)
    return out


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("name, fn, shapes", CASES, ids=[c[0] for c in CASES])
def test_gradient_against_central_differences(name, fn, shapes, mode):
    args = _args(shapes, len(name))
    g = sd.value_and_grad(fn, wrt=list(shapes), shapes=shapes, mode=mode)
    value, grads = g(*args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-10, atol=1e-12)
    grads = grads if isinstance(grads, tuple | list) else (grads,)
    for i, got in enumerate(grads):
        np.testing.assert_allclose(got, _central(fn, args, i), rtol=1e-5, atol=1e-6)


HESSIANS = [c for c in CASES if c[0] in (
    "average weights axis", "polyval", "kron", "nanprod nancumsum nancumprod",
    "matrix_power negative", "cond", "lstsq",
    "median even", "argmax index", "convolve", "interp", "qr", "cross axis", "pinv wide",
    "trapezoid x",
)]


@pytest.mark.parametrize("name, fn, shapes", HESSIANS, ids=[c[0] for c in HESSIANS])
def test_hessian_against_differences_of_the_gradient(name, fn, shapes):
    args = _args(shapes, len(name))
    first = next(iter(shapes))
    hessian = sd.hessian(fn, wrt=first, shapes=shapes)(*args)
    grad = sd.grad(fn, wrt=first, shapes=shapes)
    x, n = args[0], args[0].size
    want = np.zeros((n, n))
    for k in range(n):
        step = np.zeros(n)
        step[k] = 1e-5
        step = step.reshape(x.shape)
        want[:, k] = ((grad(x + step, *args[1:]) - grad(x - step, *args[1:])) / 2e-5).ravel()
    np.testing.assert_allclose(np.reshape(hessian, (n, n)), want, rtol=1e-4, atol=1e-5)


def test_values_match_numpy_for_every_correlate_mode_and_order():
    rng = np.random.default_rng(0)
    for m, n in ((5, 3), (4, 4), (2, 5), (4, 1)):
        a, v = rng.normal(size=m), rng.normal(size=n)
        for mode in ("full", "same", "valid"):
            for fn in (np.convolve, np.correlate):
                f = sd.value_and_grad(_weighted(fn, mode, m + n), wrt="a",
                                      shapes={"a": (m,), "v": (n,)})
                value, _ = f(a, v)
                np.testing.assert_allclose(value, _weighted(fn, mode, m + n)(a, v),
                                           rtol=1e-12)


def _weighted(fn, mode: str, length: int):
    weights = np.arange(1.0, length + 1)

    def loss(a, v):
        out = fn(a, v, mode)
        return np.sum(out * weights[:out.shape[0]])

    return loss


def test_quantile_ties_give_one_sided_subgradient():
    """At a tie the gradient goes whole to one of the tied elements (the one argsort puts
    there), not split as max splits it; the gradient still sums to the quantile's total
    weight."""
    x = np.array([0.3, 1.0, 1.0, -2.0])
    (g,) = sd.grad(lambda x: np.median(x), shapes={"x": (4,)})(x)
    assert g.sum() == pytest.approx(1.0)
    assert set(np.round(g, 12)) <= {0.0, 0.5, 1.0}
    assert g[3] == 0


def test_nan_elements_get_zero_gradient():
    x = np.array([1.0, np.nan, 2.0, 3.0])
    for mode in ("reverse", "forward"):
        g = sd.grad(lambda x: np.nansum(x) * 2 + np.nanmean(x), shapes={"x": (4,)}, mode=mode)
        np.testing.assert_allclose(g(x)[0], [2 + 1 / 3, 0, 2 + 1 / 3, 2 + 1 / 3])
    (g,) = sd.grad(lambda x: np.sum(np.nancumsum(x)) + np.nanprod(x), shapes={"x": (4,)})(x)
    np.testing.assert_allclose(g, [4 + 6, 0, 2 + 3, 1 + 2])


NAMED = [
    ("average", lambda x, w: np.average(x, axis=0, weights=np.exp(w)),
     {"x": ("n",), "w": ("n",)}),
    ("trapezoid", lambda x: np.trapezoid(x ** 2), {"x": ("n",)}),
    ("multi_dot", lambda a, x: np.linalg.multi_dot([x, a, a, x]), {"a": ("n", "n"), "x": ("n",)}),
    ("cross", lambda a, c: np.sum(np.cross(a, c) ** 2), {"a": ("n", 3), "c": ("n", 3)}),
    ("argmax", lambda x, y: y[np.argmax(x)] * np.sum(x), {"x": ("n",), "y": ("n",)}),
]


@pytest.mark.parametrize("name, fn, shapes", NAMED, ids=[c[0] for c in NAMED])
def test_named_dimensions(name, fn, shapes):
    g = sd.grad(fn, wrt=list(shapes), shapes=shapes)
    for size in (3, 5):
        fixed = {k: tuple(size if d == "n" else d for d in s) for k, s in shapes.items()}
        args = _args(fixed, size)
        for i, got in enumerate(g(*args)):
            np.testing.assert_allclose(got, _central(fn, args, i), rtol=1e-5, atol=1e-6)


def test_float32():
    def f(a, y):
        return np.median(np.linalg.lstsq(a, y)[0] ** 2) + np.nansum(np.kron(a, y[:2]))

    shapes = {"a": (5, 2), "y": (5,)}
    args = _args(shapes, 9)
    g = sd.grad(f, wrt=["a", "y"], shapes=shapes)
    got = g(*(a.astype(np.float32) for a in args))
    want = g(*args)
    for x, y in zip(got, want, strict=True):
        assert x.dtype == np.float32
        np.testing.assert_allclose(x, y, rtol=1e-3, atol=1e-4)


def test_string_language_names():
    shapes = {"a": (3,), "b": (3,)}
    text = ("vdot(a, b) + sum(cross(a, b) ** 2) + median(a) + quantile(b, 0.3) + ptp(a) "
            "+ trapezoid(b ** 2) + sum(polyval(a, b)) + sum(convolve(a, b)) + nansum(a * b)")

    def f(a, b):
        return (np.vdot(a, b) + np.sum(np.cross(a, b) ** 2) + np.median(a)
                + np.quantile(b, 0.3) + np.ptp(a) + np.trapezoid(b ** 2)
                + np.sum(np.polyval(a, b)) + np.sum(np.convolve(a, b)) + np.nansum(a * b))

    args = _args(shapes, 2)
    parsed = sd.grad(text, wrt=["a", "b"], shapes=shapes)(*args)
    traced = sd.grad(f, wrt=["a", "b"], shapes=shapes)(*args)
    for x, y in zip(parsed, traced, strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-12)


REFUSED = [
    (lambda x: np.quantile(x, 0.3, method="nearest"), {"x": (4,)}, "method='nearest'"),
    (lambda x: np.median(x, axis=(0, 1)), {"x": (2, 2)}, "axis must be an int"),
    (lambda x: np.convolve(x, x, mode="circular"), {"x": (4,)}, "mode must be"),
    (lambda x: np.sum(np.cross(x, x[:2])), {"x": (3,)}, "3-vectors"),
    (lambda a: np.sum(np.linalg.qr(a)[0]), {"a": (2, 3)}, "m >= n"),
    (lambda a: np.sum(np.linalg.qr(a, mode="raw")[0]), {"a": (3, 2)}, "mode='raw'"),
    (lambda a: np.sum(np.linalg.pinv(a, rcond=1e-3)), {"a": (3, 2)}, "rcond"),
    (lambda a: np.linalg.cond(a, 3), {"a": (2, 2)}, "p=3"),
    (lambda a: np.sum(np.linalg.matrix_power(a, 1.5)), {"a": (2, 2)}, "must be an int"),
    (lambda x: np.sum(np.zeros_like(x, dtype=int) + x), {"x": (2,)}, "dtype=int64"),
    (lambda x: np.sum(np.interp(x, x, x, period=1.0)), {"x": (3,)}, "period="),
    (lambda x, y: y[np.exp(x)], {"x": (3,), "y": (3,)}, "np.argmax"),
    (lambda x, y: np.sum(y[np.argmax(x, axis=0)]), {"x": (3, 2), "y": (3, 2)}, "argmax/argmin"),
    (lambda x: np.sum(np.average(x, axis=0, weights=np.ones(3))), {"x": (2, 2)}, "weights"),
]


@pytest.mark.parametrize("fn, shapes, message", REFUSED, ids=[r[2] for r in REFUSED])
def test_refusals_name_the_argument(fn, shapes, message):
    with pytest.raises((SymdiffError, ShapeError, UnsupportedError), match=re.escape(message)):
        sd.grad(fn, wrt=list(shapes), shapes=shapes)


def test_map_drops_an_operand_a_constant_cancelled():
    """``0 * x + p`` built from a zero fill (Horner's first step) is ``p`` broadcast: a map
    over ``x`` and ``p`` whose value had ``p``'s shape made forward mode print ``p[0][:, None]``
    (refused by the verifier) before the map dropped the cancelled operand."""
    from symdiff.tensor.ir import arg_symbol
    from symdiff.tensor.ops import Builder

    b = Builder()
    x, p = b.var("x", (3,)), b.var("p", ())
    y = b.map(arg_symbol(0) * arg_symbol(1) + arg_symbol(2), [b.fill(0, (3,)), x, p])
    assert y.op == "broadcast" and y.args[0] is p and y.shape == (3,)
