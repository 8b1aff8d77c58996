"""Handlers of NumPy functions for traced arrays (entries of
:data:`symdiff.tensor.traced.ARRAY_FUNCTIONS`, each ``handler(tracer, *args, **kwargs)``) that
need only the tracer, not the traced-array classes: the reductions, ``np.reshape``,
``np.clip``, ``np.where``; and the spellings traced by rewriting them into operations a traced
array already understands: the ufunc methods ``np.add.reduce`` / ``np.multiply.accumulate`` /
``np.subtract.outer``, ``np.round(x, decimals)`` and ``np.ediff1d``.

A rewrite calls NumPy functions on the traced arrays again (``np.add.reduce(x)`` is
``np.sum(x, axis=0)``), so it reaches the same handlers as code written that way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import sympy as sp

from ..errors import UnsupportedError
from .families import gather
from .shapes import broadcast

#: :class:`symdiff.tensor.trace.Tracer` (not imported: the tracer imports the traced arrays,
#: which import this module).
Tracer = Any

# -- functions ---------------------------------------------------------------------------------
def reduction(kind: str) -> Callable[..., Any]:
    """The handler of ``np.sum`` (``kind`` "sum"), ``np.mean``, ``np.max``, ... ."""
    def handler(tracer: Tracer, a: object, axis: Any = None, keepdims: Any = False,
                **extra: Any) -> Any:
        if keepdims is np._NoValue:
            keepdims = False
        return tracer.reduce(kind, a, axis, keepdims, **extra)

    return handler


def reshape(tracer: Tracer, a: object, shape: Any = None, order: str = "C",
            newshape: Any = None, copy: Any = None) -> Any:
    """``np.reshape`` (C order only)."""
    if order != "C":
        raise UnsupportedError("reshape: only order='C' is supported when tracing")
    return tracer.reshape(a, shape if shape is not None else newshape)


def clip(tracer: Tracer, a: object, a_min: object = None, a_max: object = None,
         out: object = None, *, min: object = None, max: object = None
         ) -> Any:
    """``np.clip`` (also ``min=`` / ``max=`` as NumPy 2 spells them): a max, then a min."""
    if out is not None:
        raise UnsupportedError("np.clip: out= is not supported when tracing")
    a_min, a_max = (a_min if min is None else min), (a_max if max is None else max)
    result = a
    if a_min is not None:
        result = tracer.elementwise("clip", sp.Max, result, a_min)
    if a_max is not None:
        result = tracer.elementwise("clip", sp.Min, result, a_max)
    return result  # type: ignore[return-value]


def where(tracer: Tracer, condition: object, x: object = None, y: object = None) -> Any:
    """``np.where(cond, x, y)``: a traced comparison or a constant boolean mask as ``cond``."""
    if x is None or y is None:
        raise UnsupportedError("np.where(cond) with one argument is not supported when tracing")
    if isinstance(condition, np.ndarray | list) and np.asarray(condition).dtype == bool:
        mask = np.asarray(condition)  # a constant mask: gathers (exact, no mask * x)
        if isinstance(condition, np.ndarray) and _large(tracer, mask, x, y):
            return tracer.where_(mask, x, y)  # a bound constant mask, tested in _np.where
        return tracer.wrap(gather.select(tracer.b, mask, tracer.node(x), tracer.node(y),
                                         tracer.where()))
    return tracer.where_(condition, x, y)


def _large(tracer: Tracer, mask: np.ndarray, x: object, y: object) -> bool:
    """Whether ``np.where(mask, x, y)`` selects more than :data:`gather.LITERAL_INDICES`
    entries (or a number unknown until called): then the mask is a bound constant rather than
    positions written into the source."""
    shape = broadcast("where", mask.shape, *(tracer.operand(v).shape for v in (x, y)))
    count = 1
    for dim in shape:
        if not isinstance(dim, int):
            return True
        count *= dim
    return count > gather.LITERAL_INDICES



# -- rewrites ----------------------------------------------------------------------------------
#: ``ufunc.reduce`` -> the reduction it is (NumPy's default axis for both is 0, not None).
REDUCE: dict[np.ufunc, Callable[..., Any]] = {
    np.add: np.sum, np.multiply: np.prod, np.maximum: np.max, np.minimum: np.min,
}
#: ``ufunc.accumulate`` -> the scan it is.
ACCUMULATE: dict[np.ufunc, Callable[..., Any]] = {np.add: np.cumsum, np.multiply: np.cumprod}

_SUPPORTED = ("supported when tracing: reduce of np.add / np.multiply / np.maximum / "
              "np.minimum (as np.sum / np.prod / np.max / np.min), accumulate of np.add / "
              "np.multiply (as np.cumsum / np.cumprod), and outer of a binary ufunc")


def ufunc_method(ufunc: np.ufunc, method: str, inputs: tuple[Any, ...],
                 kwargs: dict[str, Any], supported: Callable[[np.ufunc], bool]) -> Any:
    """``ufunc.<method>(*inputs, **kwargs)`` (NumPy's ``__array_ufunc__`` arguments) rewritten
    into traced operations; ``supported(ufunc)`` says whether the tracer applies ``ufunc``
    elementwise. Anything else is an :class:`UnsupportedError` naming what is supported."""
    name = f"{getattr(ufunc, '__name__', repr(ufunc))}.{method}"
    if method == "reduce" and ufunc in REDUCE:
        axis, keepdims = _options(name, kwargs, default_axis=0, keepdims=True)
        return REDUCE[ufunc](inputs[0], axis=axis, keepdims=keepdims)
    if method == "accumulate" and ufunc in ACCUMULATE:
        axis, _ = _options(name, kwargs, default_axis=0, keepdims=False)
        if axis is None and np.ndim(inputs[0]) != 1:  # NumPy allows it on one axis only
            raise UnsupportedError(f"np.{name}: axis=None needs a 1-d array (NumPy's rule: "
                                   "accumulate does not allow multiple axes); flatten first "
                                   "with np.ravel")
        axis = 0 if axis is None else axis
        return ACCUMULATE[ufunc](inputs[0], axis=axis)
    if method == "outer" and ufunc.nin == 2 and supported(ufunc):
        if kwargs:
            raise UnsupportedError(f"keyword arguments of np.{name} ({', '.join(kwargs)}) are "
                                   "not supported when tracing")
        a, b = (v if hasattr(v, "ndim") else np.asarray(v) for v in inputs)
        return ufunc(a[(Ellipsis, *(None,) * b.ndim)], b)  # out[i..., j...] = a[i...] op b[j...]
    raise UnsupportedError(f"numpy function 'np.{name}' is not supported when tracing; "
                           f"{_SUPPORTED}")


def _options(name: str, kwargs: dict[str, Any], default_axis: int,
             keepdims: bool) -> tuple[Any, bool]:
    """``axis`` and ``keepdims`` of a reduce or accumulate; any other option but a ``dtype``
    of None or a float type is refused."""
    options = dict(kwargs)
    axis = options.pop("axis", default_axis)
    keep = bool(options.pop("keepdims", False)) if keepdims else False
    dtype = options.pop("dtype", None)
    if dtype is not None and np.dtype(dtype).kind != "f":
        raise UnsupportedError(f"np.{name}: dtype={dtype!r} is not supported when tracing "
                               "(a traced array is float)")
    if options:
        raise UnsupportedError(f"keyword arguments of np.{name} ({', '.join(options)}) are not "
                               "supported when tracing")
    return axis, keep


def rounded(rint: Callable[[Any], Any]) -> Callable[..., Any]:
    """``np.round(a, decimals)`` as NumPy computes it: ``rint(a * 10**d) / 10**d``, and
    ``rint(a / 10**-d) * 10**-d`` for ``d < 0`` (the same operations in the same order, so the
    value is NumPy's bit for bit); ``rint`` is the traced ``np.rint``. Its derivative is 0
    almost everywhere, as ``rint``'s."""

    def handler(tracer: Any, a: Any, decimals: Any = 0, out: Any = None) -> Any:
        if out is not None:
            raise UnsupportedError("np.round: out= is not supported when tracing")
        if hasattr(decimals, "_symdiff_symbolic"):
            raise UnsupportedError("np.round: decimals must be a constant int, not a traced "
                                   "value")
        d, ndim = int(decimals), np.ndim(a)
        if d == 0:
            return rint(a)
        scale = 10.0**abs(d)
        # the divisor is a bound constant: SymPy would make a / 100 the product a * (1/100),
        # which rounds differently; a 1-element array broadcasts to a's shape
        divisor = np.full((1,) * max(ndim, 1), scale)
        result = rint(a * scale) / divisor if d > 0 else rint(a / divisor) * scale
        return result if ndim else result[0]

    return handler


def ediff1d(tracer: Any, ary: Any, to_end: Any = None, to_begin: Any = None) -> Any:
    """``np.ediff1d``: ``np.diff`` of the flattened array, with ``to_begin`` and ``to_end``
    (flattened) put before and after."""
    parts = [np.diff(np.ravel(ary))]
    if to_begin is not None:
        parts.insert(0, np.ravel(to_begin))
    if to_end is not None:
        parts.append(np.ravel(to_end))
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


__all__ = [
    "ACCUMULATE", "REDUCE", "clip", "ediff1d", "reduction", "reshape", "rounded", "ufunc_method",
    "where",
]
