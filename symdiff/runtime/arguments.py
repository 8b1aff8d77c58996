"""The argument checks of a generated function: arguments as NumPy arrays (``_as_arrays``,
which refuses Dask collections and other libraries' arrays instead of copying them), broadcast
shape (``_common_shape``), float dtype (``_float_dtype``, ``_float_arrays``), a direction
vector (``_as_vector``) and a tensor function's declared shapes (``_check_shapes``)."""

import numpy as _np

from ..errors import ArgumentError as _ArgumentError
from ..errors import ShapeError as _ShapeError


def _as_arrays(names, *values):
    """``values`` (the arguments ``names``) as NumPy arrays, in a list: the slow path of an
    argument prelude, taken unless every argument is an ndarray. A Dask collection, or an
    array of another library (``__array_namespace__`` or ``__dlpack__``: PyTorch, CuPy, JAX),
    raises ``_ArgumentError`` before ``_np.asarray`` would compute every chunk into this
    process or copy a GPU array to the host; so does a masked array (``numpy.ma``), whose
    mask ``_np.asarray`` would drop; nested lists of different lengths raise
    ``_ShapeError``. Anything else converts with ``_np.asarray``."""
    plain = (_np.ndarray, _np.generic, float, int)  # nothing to look at: converted at once
    for value in values:
        if not isinstance(value, plain) or (
            value.__class__ is not _np.ndarray and isinstance(value, _np.ndarray)
        ):
            break  # (a subclass of ndarray, such as a masked array, is looked at below)
    else:
        return list(map(_np.asarray, values))
    arrays = []
    for name, value in zip(names, values, strict=True):
        kind = value.__class__
        if any(k.__name__ == "MaskedArray" and k.__module__.startswith("numpy.ma")
               for k in kind.__mro__):
            raise _ArgumentError(
                f"argument {name!r} is a masked array ({kind.__module__}.{kind.__qualname__}): "
                "this function computes every element and would ignore the mask. Pass "
                f"{name}.filled(value) to choose the masked elements' values, or "
                f"{name}.compressed() (of every argument alike) to leave them out"
            )
        graph = getattr(value, "__dask_graph__", None)
        if graph is not None and graph() is not None:
            raise _ArgumentError(
                f"argument {name!r} is a Dask collection ({kind.__module__}.{kind.__qualname__}"
                "): this function runs NumPy code, and converting it would compute every chunk "
                "into this one process. Build the function with backend='array_api' to compute "
                f"on the chunks, lazily (a Dask array back), or pass {name}.compute() to use NumPy"
            )
        numpy = isinstance(value, (_np.ndarray, _np.generic))  # (an instance's lookups are quick)
        if not numpy and (hasattr(value, "__array_namespace__") or hasattr(value, "__dlpack__")):
            raise _ArgumentError(
                f"argument {name!r} is an array of another library than NumPy "
                f"({kind.__module__}.{kind.__qualname__}): this function runs NumPy code, and "
                "converting it would copy it into a NumPy array in this process (a GPU array to "
                "the host) and return NumPy arrays. Build the function with backend='array_api' "
                "to compute on it where it is and get arrays of its kind back, or convert it to "
                "a NumPy array yourself"
            )
        try:
            arrays.append(_np.asarray(value))
        except ValueError as error:  # nested lists of different lengths
            raise _ShapeError(f"argument {name!r} is not an array of one shape: {error}") from None
    return arrays


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
    not real numbers is refused; Dask collections and other libraries' arrays too, by
    ``_as_arrays``). The slow path of a tensor function's argument prelude, taken unless every
    argument is a float64 ndarray."""
    converted = _as_arrays(names, *arrays)
    dtype = _float_dtype(names, *converted)
    return tuple(a.astype(dtype, copy=False) for a in converted)


def _as_vector(v, n):
    """``v`` as an array whose first axis has the ``n`` components of a direction vector."""
    (v,) = _as_arrays(("_v",), v)
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
