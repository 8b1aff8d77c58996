"""A masked array (``numpy.ma``) is refused with a clear error: a generated function computes
every element, so the mask would silently be ignored (``np.asarray`` drops it). Other
subclasses of ndarray convert as before."""

from __future__ import annotations

import numpy as np
import pytest

import symdiff as sd

X = np.ma.array([1.0, 2.0, 3.0], mask=[False, True, False])
Y = np.ones(3)


@pytest.mark.parametrize("build", [
    lambda: sd.grad("x*y + sin(x)"),
    lambda: sd.value_and_grad("x*y + sin(x)"),
    lambda: sd.hessian("x*y + sin(x)"),
    lambda: sd.grad("sum(x*y)", wrt="x", shapes={"x": ("n",), "y": ("n",)}),
], ids=["grad", "value_and_grad", "hessian", "tensor"])
@pytest.mark.parametrize("where", ["first", "second"])
def test_a_masked_argument_is_refused(build, where):
    g = build()
    args = (X, Y) if where == "first" else (Y, X)
    name = "x" if where == "first" else "y"
    with pytest.raises(sd.SymdiffError, match=f"argument '{name}' is a masked array") as caught:
        g(*args)
    assert isinstance(caught.value, TypeError)
    assert "filled" in str(caught.value) and "compressed" in str(caught.value)
    filled = g(*(a.filled(0.0) if np.ma.isMaskedArray(a) else a for a in args))
    assert filled is not None  # what the message suggests works


def test_a_masked_scalar_and_a_fully_unmasked_array_are_refused_too():
    g = sd.grad("x*y + sin(x)")
    with pytest.raises(sd.SymdiffError, match="masked array"):
        g(np.ma.masked, 1.0)
    with pytest.raises(sd.SymdiffError, match="masked array"):
        g(np.ma.array([1.0, 2.0]), np.ones(2))


def test_the_array_api_backend_refuses_a_masked_argument():
    pytest.importorskip("array_api_compat", reason="the Array API backend needs it")
    g = sd.grad("x*y + sin(x)", backend="array_api")
    with pytest.raises(sd.SymdiffError, match="masked array"):
        g(X, Y)


class Tagged(np.ndarray):
    """A subclass of ndarray that is not a masked array."""


def test_other_ndarray_subclasses_still_convert():
    g = sd.grad("x*y")
    gx, gy = g(np.array([[1.0, 2.0]]).view(Tagged), np.ones((1, 2)))
    assert np.array_equal(gx, [[1.0, 1.0]]) and np.array_equal(gy, [[1.0, 2.0]])
    assert np.array_equal(g(np.arange(3.0).view(Tagged), 2.0)[1], [0.0, 1.0, 2.0])
