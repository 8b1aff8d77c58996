"""Generated functions refuse arguments that are not real numbers and shapes that do not fit,
with a SymdiffError that names the argument and is also the matching built-in (ShapeError is a
ValueError, ArgumentError a TypeError): never a silent wrong answer, never an error from deep
inside the formulas. Scalar and tensor modules alike, and a saved module on its own."""

from __future__ import annotations

import datetime
import decimal
import fractions
import importlib.util

import numpy as np
import pytest

import symdiff as sd
from symdiff.verify import VerificationError, check_module

SHAPES = {"X": ("n", "d"), "y": ("n",), "w": ("d",)}


def _scalar():
    return sd.grad("x*y", wrt=["x"])


def _tensor():
    return sd.grad("sum(log(1 + exp(-y * (X @ w))))", wrt="w", shapes=SHAPES)


def test_argument_error_is_a_symdiff_error_and_a_type_error():
    assert issubclass(sd.ArgumentError, sd.SymdiffError)
    assert issubclass(sd.ArgumentError, TypeError) and issubclass(sd.ArgumentError, ValueError)
    assert "ArgumentError" in sd.__all__


NOT_NUMBERS = [
    (None, "is None"),
    ("text", "is a string"),
    (b"bytes", "is a string"),
    (np.array(["a", "b"]), "is an array of strings"),
    (1 + 2j, "is complex"),
    (np.array([1.0, 2.0 + 0j]), "is complex"),
    (np.array([1.0, None]), "has dtype object"),
    ([1.0, None], "has dtype object"),
    (decimal.Decimal("1.5"), "has dtype object"),
    (fractions.Fraction(1, 3), "has dtype object"),
    (10**30, "has dtype object"),
    (np.datetime64("2024-01-01"), "is a datetime"),
    (datetime.datetime(2024, 1, 1), "has dtype object"),
    (np.timedelta64(3, "s"), "is a timedelta"),
    (np.zeros(2, dtype=[("a", float)]), "has dtype"),
]


@pytest.mark.parametrize(("value", "fragment"), NOT_NUMBERS)
def test_scalar_functions_refuse_what_is_not_real_numbers(value, fragment, backend):
    g = _scalar()
    for args in ((value, 1.0), (1.0, value)):  # differentiated or not
        name = "x" if args[0] is value else "y"
        with pytest.raises(sd.ArgumentError, match=f"argument '{name}' {fragment}"):
            g(*args)
    with pytest.raises(TypeError):  # also the built-in a caller would catch
        g(1.0, value)


def test_a_string_for_a_variable_that_is_not_differentiated_is_refused(backend):
    """It used to come back as an array of strings."""
    with pytest.raises(sd.ArgumentError, match="argument 'y' is a string"):
        sd.grad("x*y", wrt=["x"])(1.0, "text")
    with pytest.raises(sd.ArgumentError, match="argument 'y' is None"):
        sd.grad("x*y", wrt=["x"])(y=None, x=1.0)


def test_complex_arguments_are_refused_not_returned_as_complex_results(backend):
    for builder in (sd.compile, sd.grad, sd.value_and_grad, sd.hessian):
        with pytest.raises(sd.ArgumentError, match="complex"):
            builder("sin(x)")(1 + 1j)


def test_bools_count_as_integers_and_give_float64(backend):
    g = sd.grad("x**2*y", wrt=["x", "y"])
    dx, dy = g(np.array([True, False]), True)
    assert dx.dtype == np.float64 and dy.dtype == np.float64
    np.testing.assert_array_equal(dx, [2.0, 0.0])
    np.testing.assert_array_equal(dy, [1.0, 0.0])


def test_shape_mismatches_name_both_arguments_and_shapes(backend):
    g = sd.grad("x*y + z", wrt=["x"])
    with pytest.raises(sd.ShapeError, match=r"arguments 'x' with shape \(3,\) and 'y' with "
                       r"shape \(4,\) do not broadcast together"):
        g(np.ones(3), np.ones(4), 1.0)
    with pytest.raises(ValueError):
        g(np.ones(3), np.ones(4), 1.0)
    with pytest.raises(sd.ShapeError, match=r"'y' with shape \(2, 1\) and 'z' with shape \(3, 5\)"):
        g(1.0, np.ones((2, 1)), np.ones((3, 5)))


def test_hvp_direction_is_checked(backend):
    h = sd.hvp("x**2*y", wrt=["x", "y"])
    with pytest.raises(sd.ShapeError, match="'_v' must have the 2 components"):
        h(1.0, 2.0, np.ones(3))
    with pytest.raises(sd.ArgumentError, match="argument '_v' is an array of strings"):
        h(1.0, 2.0, ["a", "b"])
    np.testing.assert_array_equal(h(1.0, 2.0, [1.0, 0.0]), [4.0, 2.0])


# -- tensor modules ------------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "fragment"), NOT_NUMBERS)
def test_tensor_functions_refuse_what_is_not_real_numbers(value, fragment, backend):
    t = _tensor()
    X, y = np.ones((4, 3)), np.ones(4)
    with pytest.raises(sd.ArgumentError, match=f"argument 'w' {fragment}"):
        t(X, value, y)


def test_tensor_shape_errors_are_shape_errors(backend):
    t = _tensor()
    X, w, y = np.ones((4, 3)), np.ones(3), np.ones(4)
    with pytest.raises(sd.ShapeError, match=r"argument 'w' has shape \(4,\), expected \(d,\)"):
        t(X, np.ones(4), y)
    with pytest.raises(sd.ShapeError, match="argument 'X' is not an array of one shape"):
        t([[1.0, 2.0, 3.0], [1.0]], w, y)
    assert t(X, w, y).shape == (3,)
    assert t(X.astype(bool), w.astype(int), y).dtype == np.float64


def test_tensor_hvp_direction_is_checked(backend):
    h = sd.hvp("sum(x**3)", wrt="x", shapes={"x": ("n",)})
    with pytest.raises(sd.ShapeError, match="'_v'"):
        h(np.ones(3), np.ones(4))
    with pytest.raises(sd.ArgumentError, match="'_v' is complex"):
        h(np.ones(3), np.ones(3) * 1j)


# -- a saved module on its own raises the built-ins ----------------------------------------------


def test_a_saved_module_raises_the_built_in_errors(tmp_path):
    for g in (_scalar(), _tensor()):
        path = g.save(tmp_path / f"{g.name}_{len(g.args)}.py")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        function = getattr(module, g.name)
        args = [np.ones(2)] * len(g.args)
        args[0] = "text"
        with pytest.raises(TypeError) as info:
            function(*args)
        assert not isinstance(info.value, sd.SymdiffError) and "is a string" in str(info.value)


# -- the verifier accepts the names only where the checks use them -------------------------------


SOURCE = sd.grad("sin(x)*y").source
TENSOR = sd.grad("sum(w*x)", wrt="w", shapes={"w": ("n",), "x": ("n",)}).source


@pytest.mark.parametrize(
    ("source", "old", "new"),
    [
        (SOURCE, "_elementwise(_formulas, (x, y),", "_elementwise(_formulas, (x, 'os'),"),
        (SOURCE, "_elementwise(_formulas, (x, y),", "_elementwise(_formulas, [x, y],"),
        (SOURCE, "_elementwise(_formulas, (x, y),", "_elementwise((x, y), _formulas,"),
        (SOURCE, "_elementwise(_formulas, (x, y),", "_elementwise(_formulas, (x, _np),"),
        (SOURCE, "import _elementwise", "import _as_output, _elementwise"),
        (TENSOR, "_float_arrays(('w', 'x'), w, x)", "_float_arrays(('w', 'os'), w, x)"),
        (TENSOR, "_float_arrays(('w', 'x'), w, x)", "_float_arrays(('w', 'x;'), w, x)"),
        (TENSOR, "_float_arrays(('w', 'x'), w, x)", "_float_arrays(['w', 'x'], w, x)"),
        (TENSOR, "_float_arrays(('w', 'x'), w, x)", "_float_arrays(w, ('w', 'x'), x)"),
        (TENSOR, '_FLOAT64 = _np.dtype("float64")', '_FLOAT64 = __import__("os")'),
    ],
)
def test_tampered_argument_checks_are_refused(source, old, new):
    assert old in source
    check_module(source)
    with pytest.raises(VerificationError):
        check_module(source.replace(old, new, 1))
