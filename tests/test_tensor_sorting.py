"""The sorting family (``sort``, ``partition``): gradients against central differences in both
modes, Hessians, the string language against tracing, the emitted permutation, clear errors."""

from __future__ import annotations

import numpy as np
import pytest

import symdiff as sd
from symdiff.errors import ShapeError
from tests.numeric import central as _central

CASES = [
    ("sort last axis", lambda x, w: np.sum(np.sort(x) * w), (3, 7)),
    ("sort axis 0", lambda x, w: np.sum(np.sort(x, axis=0) ** 2 * w), (3, 7)),
    ("sort flattened", lambda x, w: np.sum(np.sort(x, axis=None)[:5] ** 3), (3, 7)),
    ("partition", lambda x, w: np.sum(np.partition(x, 3) * w), (3, 7)),
    ("partition several", lambda x, w: np.sum(np.partition(x, (1, 4), axis=0) * w), (6, 2)),
    ("1-element axis", lambda x, w: np.sum(np.sort(x, axis=0) * w), (1, 4)),
]


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("name, f, shape", CASES, ids=[c[0] for c in CASES])
def test_gradient_against_central_differences(name, f, shape, mode):
    rng = np.random.default_rng(len(name))
    x, w = rng.normal(size=shape), rng.normal(size=shape)
    g = sd.grad(f, wrt="x", shapes={"x": shape, "w": shape}, mode=mode)
    np.testing.assert_allclose(g(x, w), _central(lambda v: f(v, w), x), rtol=1e-6, atol=1e-8)


def test_hessian_of_the_smallest_three():
    def f(x):
        return np.sum(np.sort(x)[:3] ** 3)

    x = np.random.default_rng(1).normal(size=6)
    want = np.zeros((6, 6))
    for i in np.argsort(x)[:3]:
        want[i, i] = 6 * x[i]
    got = np.asarray(sd.hessian(f, shapes={"x": (6,)})(x)).reshape(6, 6)
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_string_language_matches_tracing_and_float32():
    x = np.random.default_rng(2).normal(size=(4, 5)).astype(np.float32)
    parsed = sd.grad("sum(sort(x, axis=0) * cumsum(sort(x, axis=0), axis=0))", shapes={"x": (4, 5)})
    traced = sd.grad(lambda x: np.sum(np.sort(x, axis=0) * np.cumsum(np.sort(x, axis=0), axis=0)),
                     shapes={"x": (4, 5)})
    got = parsed(x)[0]
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, traced(x)[0], rtol=1e-6)


def test_the_permutation_is_computed_once_and_its_adjoint_put_back():
    g = sd.grad(lambda x, c: np.sum(np.sort(x) * c), wrt="x", shapes={"x": (7,), "c": (7,)})
    body = g.source.split("# Helpers")[0]
    assert body.count("_np.argsort(") == 1  # no second argsort to invert the permutation
    assert "_np.put_along_axis(_x_bar, _t0, c, axis=0)" in body  # c put back where it came from


@pytest.mark.parametrize("line", [
    "_np.put_along_axis(x, _t0, c, axis=0)",  # the caller's array
    "_np.put_along_axis(_np, _t0, c, axis=0)",
    "_np.put_along_axis(_x_bar, _t0, c, axis=n)",
    "_np.put_along_axis(_x_bar, _t0, c)",
    "_np.put_along_axis(_x_bar, _t0, __import__, axis=0)",
    "_np.put_along_axis(_x_bar, open, c, axis=0)",
    "_np.put_along_axis(_x_bar, _t0, c, axis=0, mode='wrap')",
])
def test_hostile_variants_of_put_along_axis_are_refused(line):
    from symdiff.verify import VerificationError, check_module

    source = sd.grad(lambda x, c: np.sum(np.sort(x) * c), wrt="x",
                     shapes={"x": (7,), "c": (7,)}, cache=False).source
    original = next(s.strip() for s in source.splitlines() if "_np.put_along_axis(" in s)
    check_module(source)
    with pytest.raises(VerificationError):
        check_module(source.replace(original, line, 1))


def test_steps_name_the_rule():
    text = str(sd.derive("sum(sort(x) ** 2)", wrt="x", shapes={"x": (4,)}))
    assert "sort (permute back)" in text


def test_bad_calls_are_clear():
    with pytest.raises(ShapeError, match="partition: kth 9 is out of range"):
        sd.grad(lambda x: np.sum(np.partition(x, 9)), shapes={"x": (5,)})
    with pytest.raises(ShapeError, match="sort: axis 1 is out of range"):
        sd.grad("sum(sort(x, axis=1))", shapes={"x": (5,)})
