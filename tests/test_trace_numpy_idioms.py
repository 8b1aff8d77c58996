"""Ordinary NumPy idioms traced with ``shapes=``: iterating over a traced array (``sum(x ** 2)``,
``a, b, c = theta``, ``for row in X``), the ufunc methods (``np.add.reduce``,
``np.multiply.accumulate``, ``np.subtract.outer``), the ndarray methods that are a NumPy
function (``x.clip``, ``x.round``), ``np.round(x, decimals)``, ``np.ediff1d``; and the clear
errors of what cannot be static (``x[x > 0.5]``, ``y[1:3] = x[:2]``).

Every loss is plain NumPy: its gradient must match central differences of the same function run
by NumPy, and its value NumPy's own (``np.round`` bit for bit). JAX runs the same cases in
``test_trace_numpy_idioms_vs_jax.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

import symdiff as sd

from .numeric import central

_RNG = np.random.default_rng(7)
_W44 = _RNG.normal(size=(4, 4))
_T = np.linspace(0.0, 2.0, 7)
_Y = 1.5 * np.exp(-0.7 * _T) + 0.2


def _unpack(x):
    a, b, c, d = x
    return a * b + c ** 2 * d


def _rows(x):
    total = 0.0
    for i, row in enumerate(x):
        total = total + (i + 1) * np.sum(np.sin(row) * row)
    return total


def _decay(theta):
    amplitude, rate, offset = theta  # the common way to name a model's parameters
    return np.sum((amplitude * np.exp(-rate * _T) + offset - _Y) ** 2)


#: (name, loss, declared shape of x, shape of the test point)
CASES = [
    # iterating over a first axis of fixed size
    ("builtin sum", lambda x: sum(x ** 2), (4,), (4,)),
    ("unpack 4", _unpack, (4,), (4,)),
    ("unpack model parameters", lambda x: _decay(x), (3,), (3,)),
    ("for row in X (3, d)", _rows, (3, "d"), (3, 5)),
    ("zip", lambda x: sum(a * b for a, b in zip(x, x[::-1], strict=True)), (4,), (4,)),
    ("list of rows", lambda x: np.sum(np.stack(list(x)[::-1]) ** 3 * _W44[:3]), (3, 4), (3, 4)),
    ("generator in sum", lambda x: sum(np.exp(v) for v in x), (4,), (4,)),
    # ufunc methods
    ("add.reduce (axis 0)", lambda x: np.sum(np.add.reduce(x ** 2) * _W44[0]), (3, 4), (3, 4)),
    ("add.reduce axis=None", lambda x: np.add.reduce(np.sin(x), axis=None), (3, 4), (3, 4)),
    ("add.reduce keepdims", lambda x: np.sum(np.add.reduce(x, axis=1, keepdims=True)
                                             * np.arange(1.0, 4.0)[:, None] * x), (3, 4), (3, 4)),
    ("add.reduce dtype=float", lambda x: np.add.reduce(x ** 3, dtype=float), (4,), (4,)),
    ("multiply.reduce axis 1", lambda x: np.sum(np.multiply.reduce(x, axis=1)), (3, 4), (3, 4)),
    ("maximum.reduce", lambda x: np.sum(np.maximum.reduce(x) ** 2), (3, 4), (3, 4)),
    ("minimum.reduce positional axis", lambda x: np.sum(np.minimum.reduce(x, 1) ** 2),
     (3, 4), (3, 4)),
    ("add.accumulate", lambda x: np.sum(np.add.accumulate(x) ** 2 * _W44[:3]), (3, 4), (3, 4)),
    ("multiply.accumulate axis 1", lambda x: np.sum(np.multiply.accumulate(x, axis=1)),
     (3, 4), (3, 4)),
    ("add.accumulate axis=None 1-d", lambda x: np.sum(np.add.accumulate(x, axis=None) ** 2),
     (4,), (4,)),
    ("multiply.outer", lambda x: np.sum(np.multiply.outer(x, x) * _W44), (4,), (4,)),
    ("subtract.outer constant first", lambda x: np.sum(np.subtract.outer(np.arange(3.0), x) ** 2
                                                       * _W44[:3]), (4,), (4,)),
    ("maximum.outer", lambda x: np.sum(np.maximum.outer(x, 2 * x[:2])), (4,), (4,)),
    ("power.outer 2-d", lambda x: np.sum(np.power.outer(np.abs(x[0]) + 1, x[1])), (2, 3), (2, 3)),
    ("add.outer number", lambda x: np.sum(np.add.outer(x, 2.0) ** 2), (4,), (4,)),
    ("greater.outer as a condition",
     lambda x: np.sum(np.where(np.greater.outer(x, x), x[:, None] - x, 0.0) ** 2), (4,), (4,)),
    # ndarray methods
    ("x.clip", lambda x: np.sum(x.clip(-0.5, 0.8) * x), (4,), (4,)),
    ("x.clip(min=)", lambda x: np.sum(x.clip(min=0.0) ** 2), (4,), (4,)),
    ("np.clip(max=)", lambda x: np.sum(np.clip(x, max=0.5) ** 2), (4,), (4,)),
    ("x.round(1)", lambda x: np.sum(x.round(1) * x), (4,), (4,)),
    ("x.round(decimals=2)", lambda x: np.sum(x.round(decimals=2) * x), (4,), (4,)),
    ("x.conj / conjugate", lambda x: np.sum(x.conj() * x.conjugate() * x), (4,), (4,)),
    ("x.copy", lambda x: np.sum(x.copy() ** 3), (4,), (4,)),
    ("x.real / x.imag", lambda x: np.sum(x.real ** 2 + x.imag), (4,), (4,)),
    ("flatten ravel squeeze", lambda x: np.sum(x.flatten() * x.ravel()) + np.sum(
        x[None].squeeze() ** 3), (3, 4), (3, 4)),
    ("sum mean std var", lambda x: x.sum() * x.mean(axis=0).sum() + x.std() + x.var(axis=1)[0],
     (3, 4), (3, 4)),
    ("max min prod cumsum", lambda x: x.max() - x.min(axis=1).sum() + x.prod()
     + x.cumsum(axis=1).sum(), (3, 4), (3, 4)),
    # np.round with decimals, np.ediff1d
    ("np.round(x, 2)", lambda x: np.sum(np.round(x, 2) * x), (4,), (4,)),
    ("np.around(x, -1)", lambda x: np.sum(np.around(100 * x, -1) * x), (4,), (4,)),
    ("np.round(x) 0 decimals", lambda x: np.sum(np.round(4 * x) * x), (4,), (4,)),
    ("np.round 0-d", lambda x: np.round(x, 1) * x ** 2, (), ()),
    ("ediff1d", lambda x: np.sum(np.ediff1d(x) ** 2), (3, 4), (3, 4)),
    ("ediff1d to_begin to_end", lambda x: np.sum(
        np.ediff1d(x, to_begin=x[0], to_end=np.array([1.0, 2.0])) ** 2), (4,), (4,)),
]


def _point(shape):
    return _RNG.normal(size=shape) + 0.3


@pytest.mark.parametrize(("name", "fn", "declared", "shape"), CASES, ids=[c[0] for c in CASES])
def test_idiom_matches_numpy_and_central_differences(name, fn, declared, shape):
    x0 = _point(shape)
    value, grad = sd.value_and_grad(fn, wrt="x", shapes={"x": declared})(x=x0)
    np.testing.assert_allclose(value, fn(x0), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad, central(fn, x0), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("decimals", [-3, -2, -1, 0, 1, 2, 3, 5, 9])
def test_round_with_decimals_is_numpys_value_bit_for_bit(decimals):
    # halfway cases (k + 0.5) / 10**d as floats, and random values across magnitudes
    halves = (np.arange(-60, 60) + 0.5) / 10.0 ** decimals
    x0 = np.concatenate([halves, _RNG.normal(size=300) * 10.0 ** _RNG.integers(-3, 4, 300)])
    f = sd.compile(lambda x: np.round(x, decimals), shapes={"x": (x0.size,)})
    out = f(x=x0)
    expected = np.round(x0, decimals)
    assert np.array_equal(out, expected), (out != expected).sum()
    grad = sd.grad(lambda x: np.sum(np.round(x, decimals) * x), wrt="x",
                   shapes={"x": (x0.size,)})(x=x0)
    assert np.array_equal(grad, expected)  # d/dx round(x) = 0 almost everywhere


def test_round_of_a_multiplied_value_differs_from_the_reciprocal_form():
    # why the divisor is a bound constant: x * (1/100) is not x / 100 in floating point, so
    # the test above would catch a rewrite into a product
    x = np.arange(1, 2000) * 1.0
    assert not np.array_equal(x * (1 / 100), x / 100)


def _second_differences(f, x, h=1e-4):
    n = x.size
    hess = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            ei, ej = np.eye(n)[i] * h, np.eye(n)[j] * h
            hess[i, j] = (f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej) + f(x - ei - ej)) / (
                4 * h * h)
    return hess


@pytest.mark.parametrize(("fn", "x0"), [
    (_decay, np.array([1.3, 0.6, 0.1])),
    (lambda x: sum(np.exp(v) * v for v in x), np.array([0.2, -0.4, 0.9])),
    (lambda x: np.sum(np.multiply.outer(x, x) ** 2) + np.add.reduce(x ** 3),
     np.array([0.5, -1.1, 0.7])),
], ids=["unpacked model", "builtin sum", "outer and reduce"])
def test_hessians_of_idioms(fn, x0):
    hess = sd.hessian(fn, wrt="x" if fn is not _decay else "theta",
                      shapes={("x" if fn is not _decay else "theta"): (3,)})
    got = hess(**{"x" if fn is not _decay else "theta": x0})
    np.testing.assert_allclose(got, _second_differences(fn, x0), rtol=1e-5, atol=1e-5)


# -- what stays refused, with a clear error -------------------------------------------------------
def _assign(x):
    y = np.zeros(4)
    y[1:3] = x[:2]
    return np.sum(y * x)


def _assign_one(x):
    y = np.zeros(4)
    y[1] = x[0]
    return np.sum(y * x)


def _sort_in_place(x):
    y = x * 2.0
    y.sort()
    return np.sum(y[:2])


@pytest.mark.parametrize(("fn", "shape", "message"), [
    (lambda x: sum(x), ("n",), r"first dimension of fixed size; here it is n, so len\(\) is "
                               "unknown"),
    (lambda x: [v for v in x], (), "iteration over a 0-d array"),
    (lambda x: sum(v for v in x > 0), (4,), "iterating over a traced array is not supported"),
    (lambda x: sum(x), (2000,), "makes one node per row .at most 1024"),
    (lambda x: sum(x), (100_000,), "100000 rows makes one node per row"),  # before any row
    (lambda x: np.sum(x[x > 0.5]), (4,), r"mask from a traced comparison .* depends on the "
                                         r"values.*np\.where\(x > 0\.5, x, 0\)"),
    (_assign, (4,), r"Assigning a traced value into a NumPy array.*np\.concatenate.*np\.stack"
                    r".*np\.pad.*np\.where"),
    (_assign_one, (4,), r"no numeric value.*y\[1\] = x\[0\].*np\.concatenate.*NumPy then raised"),
    (lambda x: np.sum(np.subtract.reduce(x)), (4,), "'np.subtract.reduce' is not supported"),
    (lambda x: np.sum(np.add.reduceat(x, [0, 2])), (4,), "reduce of np.add"),
    (lambda x: np.sum(np.add.reduce(x, initial=1.0)), (4,), r"keyword arguments .*\(initial\)"),
    (lambda x: np.sum(np.add.reduce(x, dtype=int)), (4,), "dtype="),
    (lambda x: np.sum(np.add.accumulate(x, axis=None)), (2, 2), "axis=None needs a 1-d array"),
    (lambda x: np.sum(np.round(x, 2, out=np.zeros(4))), (4,), "out="),
    (lambda x: np.sum(np.nextafter.outer(x, x)), (4,), "'np.nextafter.outer' is not supported"),
    (_sort_in_place, (4,), r"x\.sort\(\) changes the array in place.*x = np\.sort\(x, axis\)"),
    (lambda x: x.fill(0.0), (4,), r"x\.fill\(\) changes the array in place.*np\.full_like"),
])
def test_refusals_are_clear(fn, shape, message):
    with pytest.raises(sd.UnsupportedError, match=message) as error:
        sd.grad(fn, wrt="x", shapes={"x": shape})
    assert isinstance(error.value, sd.SymdiffError)


def test_a_constant_boolean_mask_still_indexes():
    mask = np.array([True, False, True, True])
    fn = lambda x: np.sum(x[mask] ** 2)  # noqa: E731
    x0 = _point(4)
    np.testing.assert_allclose(sd.grad(fn, wrt="x", shapes={"x": (4,)})(x=x0), central(fn, x0),
                               rtol=1e-6, atol=1e-8)

