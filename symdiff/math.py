"""symdiff's math namespace: functions that work on numbers, NumPy arrays and traced values.

Write a function once with these and it both runs normally and can be traced::

    import symdiff as sd
    from symdiff.math import exp, sin, where

    def f(x, y):
        return sin(x) * exp(y) + where(x > 0, x, 0)

    f(0.5, 1.0)          # a number, computed with NumPy
    sd.grad(f)(0.5, 1.0) # its gradient, from the traced expression

On numbers and arrays each function computes with NumPy (``np.sin``, ...; ``erf``, ``gamma``
and ``loggamma`` with the vectorized helpers that generated code uses). On a traced value (see
:mod:`symdiff.trace`) it returns a traced value; on SymPy expressions it returns a SymPy
expression. The names and meanings are those of expression strings: ``log(x, base)``, n-ary
``min``/``max`` next to the two-argument ``minimum``/``maximum``, ``where(cond, a, b)`` with a
comparison ``< <= > >=`` as the condition, and the constants ``pi`` and ``e`` (plain floats;
next to a traced value they become SymPy's exact ``pi`` and ``E``).

Importing this module is cheap: it needs NumPy only; SymPy loads when a traced or SymPy
value is met.
"""

from __future__ import annotations

import math as _math
import sys
from collections.abc import Callable
from typing import Any, TypeAlias

import numpy as np

from . import registry as _registry
from . import runtime as _runtime

#: The rows' canonical names, the binary ``minimum``/``maximum``, ``where``, the axis functions
#: and the constants.
__all__ = sorted(
    {row.names[0] for row in _registry.ROWS if row.names}
    | {"minimum", "maximum", "where", "logsumexp", "softmax", "pi", "e"}
)

#: A number, a NumPy array, a traced value or a SymPy expression.
Value: TypeAlias = Any

pi: float = _math.pi
e: float = _math.e


def _symbolic(args: tuple[object, ...]) -> bool:
    """Whether any argument is a traced value or a SymPy object (SymPy is not imported here)."""
    if any(getattr(type(a), "_symdiff_symbolic", False) for a in args):
        return True
    sympy = sys.modules.get("sympy")
    return sympy is not None and any(isinstance(a, sympy.Basic) for a in args)


def _tensor(args: tuple[object, ...]) -> bool:
    """Whether any argument is an array traced with ``shapes=`` (:mod:`symdiff.tensor.trace`)."""
    return any(getattr(type(a), "_symdiff_tensor", False) for a in args)


def _call(name: str, numeric: Callable[..., Any], *args: Value) -> Value:
    """``numeric(*args)`` on numbers; the SymPy function ``name`` on traced or SymPy values."""
    if _tensor(args):
        from .tensor.trace import apply

        return apply(name, *args)
    if _symbolic(args):
        from . import trace

        return trace.apply(name, *args)
    return numeric(*args)


def _nary(name: str, args: tuple[Value, ...]) -> tuple[Value, ...]:
    """The arguments of ``min``/``max``: two or more values, or one list or tuple of them."""
    if len(args) == 1 and isinstance(args[0], list | tuple):
        args = tuple(args[0])
    if len(args) < 2:
        raise TypeError(f"{name}() takes two or more arguments ({len(args)} given)")
    return args




def _function(name: str) -> Callable[..., Value]:
    """The function ``name`` of the registry row of that name: its parameters, its docstring,
    and on numbers the row's ``numeric``, its NumPy ufunc or its runtime helper."""
    row = _registry.by_name()[name]
    numeric = row.numeric or (
        getattr(np, row.ufunc) if row.ufunc else getattr(_runtime, row.helper)
    )
    function = _SHAPES[row.params](name, numeric)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = row.doc
    function.__module__ = __name__
    return function


def _unary(name: str, numeric: Callable[..., Any]) -> Callable[..., Value]:
    def function(x: Value) -> Value:
        return _call(name, numeric, x)

    return function


def _angle(name: str, numeric: Callable[..., Any]) -> Callable[..., Value]:
    def function(y: Value, x: Value) -> Value:
        return _call(name, numeric, y, x)

    return function


def _pair(name: str, numeric: Callable[..., Any]) -> Callable[..., Value]:
    def function(a: Value, b: Value) -> Value:
        return _call(name, numeric, a, b)

    return function


def _step(name: str, numeric: Callable[..., Any]) -> Callable[..., Value]:
    def function(x1: Value, x2: Value) -> Value:
        return _call(name, numeric, x1, x2)

    return function


def _with_base(name: str, numeric: Callable[..., Any]) -> Callable[..., Value]:
    def function(x: Value, base: Value | None = None) -> Value:
        return _call(name, numeric, x) if base is None else _call(name, numeric, x, base)

    return function


def _any_number(name: str, numeric: Callable[..., Any]) -> Callable[..., Value]:
    def function(*args: Value) -> Value:  # two or more values, or one list or tuple of them
        return _call(name, numeric, *_nary(name, args))

    return function


def _order(name: str, numeric: Callable[..., Any]) -> Callable[..., Value]:
    def function(n: Value, x: Value) -> Value:
        return _call(name, numeric, n, x)

    return function


#: A row's ``params`` -> the Python function of that signature (a row with new ``params``
#: adds its shape here; tests/test_registry.py checks every public row has one).
_SHAPES = {
    "x": _unary,
    "y, x": _angle,
    "a, b": _pair,
    "x1, x2": _step,
    "x, base=None": _with_base,
    "a, b, *more": _any_number,
    "n, x": _order,
}

# -- the rows' functions (each row's canonical name; symdiff.math has no aliases) ------------------
sin = _function("sin")
cos = _function("cos")
tan = _function("tan")
asin = _function("asin")
acos = _function("acos")
atan = _function("atan")
sec = _function("sec")
csc = _function("csc")
cot = _function("cot")
acot = _function("acot")
atan2 = _function("atan2")
sinh = _function("sinh")
cosh = _function("cosh")
tanh = _function("tanh")
asinh = _function("asinh")
acosh = _function("acosh")
atanh = _function("atanh")
exp = _function("exp")
exp2 = _function("exp2")
log = _function("log")
log2 = _function("log2")
log10 = _function("log10")
sqrt = _function("sqrt")
cbrt = _function("cbrt")
log1p = _function("log1p")
expm1 = _function("expm1")
logaddexp = _function("logaddexp")
logaddexp2 = _function("logaddexp2")
hypot = _function("hypot")
abs = _function("abs")
sign = _function("sign")
heaviside = _function("heaviside")
floor = _function("floor")
ceil = _function("ceil")
rint = _function("rint")
trunc = _function("trunc")
mod = _function("mod")
fmod = _function("fmod")
copysign = _function("copysign")
erf = _function("erf")
erfc = _function("erfc")
log_ndtr = _function("log_ndtr")
sinc = _function("sinc")
gamma = _function("gamma")
loggamma = _function("loggamma")
digamma = _function("digamma")
polygamma = _function("polygamma")
max = _function("max")
min = _function("min")
relu = _function("relu")
sigmoid = _function("sigmoid")
softplus = _function("softplus")


# -- beyond the rows -------------------------------------------------------------------------------
def minimum(a: Value, b: Value) -> Value:
    """The smaller of two values (``np.minimum`` on numbers); ties split the gradient evenly."""
    return _call("minimum", np.minimum, a, b)


def maximum(a: Value, b: Value) -> Value:
    """The larger of two values (``np.maximum`` on numbers); ties split the gradient evenly."""
    return _call("maximum", np.maximum, a, b)



def where(cond: Value, a: Value, b: Value) -> Value:
    """``a`` where ``cond`` holds, else ``b`` (``np.where`` on numbers).

    When tracing, ``cond`` is a comparison ``< <= > >=`` of traced values, such as ``x > 0``;
    the derivative is that of the branch taken.
    """
    if _tensor((cond, a, b)):
        from .tensor.trace import apply

        return apply("where", cond, a, b)
    if _symbolic((cond, a, b)):
        from . import trace

        return trace.where(cond, a, b)
    return np.where(cond, a, b)



# -- along an axis (arrays, and arrays traced with shapes=) ---------------------------------------
def logsumexp(a: Value, axis: Any = None, keepdims: bool = False) -> Value:
    """``log(sum(exp(a), axis))`` without overflow (the largest entry is factored out).

    On an array traced with ``shapes=`` it records the tensor operation (whose gradient is
    ``softmax``); scalar traced values have no axes.
    """
    if _tensor((a,)):
        from .tensor.trace import apply

        return apply("logsumexp", a, axis=axis, keepdims=keepdims)
    _no_scalar_trace("logsumexp", a)
    a = np.asarray(a)
    peak = np.max(a, axis=axis, keepdims=True)
    peak = np.where(np.isfinite(peak), peak, 0)
    total = np.log(np.sum(np.exp(a - peak), axis=axis, keepdims=True)) + peak
    return total if keepdims else np.squeeze(total, axis=axis)


def softmax(a: Value, axis: int = -1) -> Value:
    """``exp(a) / sum(exp(a), axis)`` without overflow (the largest entry is subtracted first).

    On an array traced with ``shapes=`` it records the tensor operation.
    """
    if _tensor((a,)):
        from .tensor.trace import apply

        return apply("softmax", a, axis=axis)
    _no_scalar_trace("softmax", a)
    a = np.asarray(a)
    e = np.exp(a - np.max(a, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def _no_scalar_trace(name: str, a: Value) -> None:
    if _symbolic((a,)):
        from .errors import UnsupportedError

        raise UnsupportedError(f"{name} works along an axis of an array: trace with shapes=")
