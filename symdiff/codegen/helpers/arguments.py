"""The argument checks of a generated function: broadcast shape (``_common_shape``), float
dtype (``_float_dtype``, ``_float_arrays``), a direction vector (``_as_vector``) and a tensor
function's declared shapes (``_check_shapes``). Pasted verbatim into generated modules: the
rules of :mod:`symdiff.codegen.helpers` hold for every function here; the two error classes are
bound
as that docstring says."""

import numpy as _np

from ...errors import ArgumentError as _ArgumentError
from ...errors import ShapeError as _ShapeError


def _common_shape(names, *arrays):
    """The broadcast shape of ``arrays`` (the arguments ``names``); quick when they all have one
    shape (the usual call). Arguments that do not broadcast together raise ``_ShapeError``
    naming two of them and their shapes."""
    shape = arrays[0].shape
    for array in arrays:
        if array.shape != shape:
            break
    else:
        return shape
    seen = []
    for name, array in zip(names, arrays, strict=True):
        for other, before in seen:
            try:
                _np.broadcast_shapes(before.shape, array.shape)
            except ValueError:
                raise _ShapeError(
                    f"arguments {other!r} with shape {before.shape} and {name!r} with shape "
                    f"{array.shape} do not broadcast together (the arguments broadcast like "
                    "those of a NumPy ufunc)"
                ) from None
        seen.append((name, array))
    return _np.broadcast_shapes(*(a.shape for a in arrays))


def _float_dtype(names, *arrays):
    """The float dtype a call computes in: the promoted dtype of the argument arrays with
    ``1.0``, so integers and bools give float64 and float32 stays float32. An argument that is
    not real numbers (None, a string, complex numbers, an object array, a datetime) raises
    ``_ArgumentError`` naming it (``names`` are the arguments' names)."""
    try:
        dtype = _np.result_type(*arrays, 1.0)
    except TypeError:  # strings, datetimes, records: no common dtype with a float
        dtype = None
    if dtype is not None and dtype.kind == "f":
        return dtype
    for name, array in zip(names, arrays, strict=True):
        kind = array.dtype.kind
        if kind in "biuf":
            continue
        hint = ""
        if kind == "O" and array.ndim == 0 and array[()] is None:
            what = "is None"
        elif kind == "c":
            what = f"is complex (dtype {array.dtype})"
            hint = ": the functions are real; pass real and imaginary parts as separate arguments"
        elif kind in "US":
            what = f"is {'a string' if array.ndim == 0 else 'an array of strings'} ({array.dtype})"
        elif kind in "Mm":
            what = f"is a {'datetime' if kind == 'M' else 'timedelta'} ({array.dtype})"
            hint = ": convert it to numbers first, e.g. (t - t0) / np.timedelta64(1, 's')"
        elif kind == "O":
            what = "has dtype object (None, ints beyond int64, Decimal, Fraction, ... inside)"
            hint = ": convert it with np.asarray(..., dtype=float)"
        else:
            what = f"has dtype {array.dtype}"
        raise _ArgumentError(
            f"argument {name!r} {what}, not a real number or an array of them "
            f"(float, int or bool){hint}"
        )
    raise _ArgumentError(f"arguments {', '.join(names)} have no common float dtype ({dtype})")


def _float_arrays(names, *arrays):
    """``arrays`` (the arguments ``names``) as NumPy arrays of one float dtype (see
    ``_float_dtype``: integers and bools give float64, float32 stays float32, anything that is
    not real numbers is refused). The slow path of a tensor function's argument prelude, taken
    unless every argument is a float64 ndarray."""
    converted = []
    for name, array in zip(names, arrays, strict=True):
        try:
            converted.append(_np.asarray(array))
        except ValueError as error:  # nested lists of different lengths
            raise _ShapeError(f"argument {name!r} is not an array of one shape: {error}") from None
    dtype = _float_dtype(names, *converted)
    return tuple(a.astype(dtype, copy=False) for a in converted)


def _as_vector(v, n):
    """``v`` as an array whose first axis has the ``n`` components of a direction vector."""
    v = _np.asarray(v)
    if v.ndim == 0 or v.shape[0] != n:
        raise _ShapeError(
            f"argument '_v' must have the {n} components of the direction along its first axis, "
            f"got shape {v.shape}"
        )
    return v


def _check_shapes(names, arrays, shapes, needs):
    """Check the arguments of a tensor function against their declared shapes.

    ``shapes[i]`` declares ``arrays[i]`` (named ``names[i]``): an int is a fixed size, a string
    a named dimension, which must have one size wherever it appears. ``needs`` pairs a named
    dimension with the least size the expression's literal indices require. Returns the sizes of
    the named dimensions in order of first appearance; raises ``_ShapeError`` naming the
    argument, its shape and the declared one.
    """
    sizes = {}
    source = {}
    for name, array, declared in zip(names, arrays, shapes, strict=True):
        actual = tuple(array.shape)  # arrays of any kind: both backends' modules call this
        clash = None
        fits = len(actual) == len(declared)
        for size, dim in zip(actual, declared, strict=True) if fits else ():
            if dim.__class__ is not str:
                fits = size == dim
            elif dim not in sizes:
                sizes[dim] = size
                source[dim] = name
            elif sizes[dim] != size:
                fits, clash = False, dim
            if not fits:
                break
        if not fits:
            inner = ", ".join(str(d) for d in declared)
            text = f"({inner},)" if len(declared) == 1 else f"({inner})"
            why = "" if clash is None else (
                f", but dimension {clash!r} is {sizes[clash]} (from argument {source[clash]!r})"
            )
            raise _ShapeError(f"argument {name!r} has shape {actual}, expected {text}{why}")
    for dim, least in needs:
        if sizes[dim] < least:
            raise _ShapeError(
                f"dimension {dim!r} is {sizes[dim]} (from argument {source[dim]!r}), but the "
                f"expression indexes it up to {least}"
            )
    return tuple(sizes.values())
