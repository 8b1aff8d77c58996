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

import functools
import math as _math
import sys
from collections.abc import Callable
from typing import Any, TypeAlias

import numpy as np

from . import runtime as _runtime

__all__ = [
    "abs",
    "acos",
    "acosh",
    "asin",
    "asinh",
    "atan",
    "atan2",
    "atanh",
    "cos",
    "cosh",
    "e",
    "erf",
    "exp",
    "gamma",
    "log",
    "loggamma",
    "logsumexp",
    "max",
    "maximum",
    "min",
    "minimum",
    "pi",
    "relu",
    "sigmoid",
    "sign",
    "sin",
    "sinh",
    "softmax",
    "softplus",
    "sqrt",
    "tan",
    "tanh",
    "where",
]

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


def _log(x: Value, base: Value) -> Value:
    return np.log(x) / np.log(base)


def _relu(x: Value) -> Value:
    return np.maximum(x, 0.0)


def _softplus(x: Value) -> Value:
    return np.logaddexp(0.0, x)


# -- trigonometric and hyperbolic ----------------------------------------------------------------
def sin(x: Value) -> Value:
    """Sine (``np.sin`` on numbers)."""
    return _call("sin", np.sin, x)


def cos(x: Value) -> Value:
    """Cosine (``np.cos`` on numbers)."""
    return _call("cos", np.cos, x)


def tan(x: Value) -> Value:
    """Tangent (``np.tan`` on numbers)."""
    return _call("tan", np.tan, x)


def asin(x: Value) -> Value:
    """Inverse sine (``np.arcsin`` on numbers)."""
    return _call("asin", np.arcsin, x)


def acos(x: Value) -> Value:
    """Inverse cosine (``np.arccos`` on numbers)."""
    return _call("acos", np.arccos, x)


def atan(x: Value) -> Value:
    """Inverse tangent (``np.arctan`` on numbers)."""
    return _call("atan", np.arctan, x)


def atan2(y: Value, x: Value) -> Value:
    """The angle of the point ``(x, y)``, in ``(-pi, pi]`` (``np.arctan2(y, x)`` on numbers)."""
    return _call("atan2", np.arctan2, y, x)


def sinh(x: Value) -> Value:
    """Hyperbolic sine (``np.sinh`` on numbers)."""
    return _call("sinh", np.sinh, x)


def cosh(x: Value) -> Value:
    """Hyperbolic cosine (``np.cosh`` on numbers)."""
    return _call("cosh", np.cosh, x)


def tanh(x: Value) -> Value:
    """Hyperbolic tangent (``np.tanh`` on numbers)."""
    return _call("tanh", np.tanh, x)


def asinh(x: Value) -> Value:
    """Inverse hyperbolic sine (``np.arcsinh`` on numbers)."""
    return _call("asinh", np.arcsinh, x)


def acosh(x: Value) -> Value:
    """Inverse hyperbolic cosine (``np.arccosh`` on numbers)."""
    return _call("acosh", np.arccosh, x)


def atanh(x: Value) -> Value:
    """Inverse hyperbolic tangent (``np.arctanh`` on numbers)."""
    return _call("atanh", np.arctanh, x)


# -- exponential, logarithm, powers --------------------------------------------------------------
def exp(x: Value) -> Value:
    """Exponential (``np.exp`` on numbers)."""
    return _call("exp", np.exp, x)


def log(x: Value, base: Value | None = None) -> Value:
    """Natural logarithm, or the logarithm to ``base`` (``np.log(x) / np.log(base)``)."""
    if base is None:
        return _call("log", np.log, x)
    return _call("log", _log, x, base)


def sqrt(x: Value) -> Value:
    """Square root (``np.sqrt`` on numbers)."""
    return _call("sqrt", np.sqrt, x)


# -- piecewise -----------------------------------------------------------------------------------
def abs(x: Value) -> Value:
    """Absolute value (``np.abs`` on numbers); by convention ``abs'(0) = 0``."""
    return _call("abs", np.abs, x)


def sign(x: Value) -> Value:
    """Sign: -1, 0 or 1 (``np.sign`` on numbers); its derivative is 0."""
    return _call("sign", np.sign, x)


def minimum(a: Value, b: Value) -> Value:
    """The smaller of two values (``np.minimum`` on numbers); ties split the gradient evenly."""
    return _call("minimum", np.minimum, a, b)


def maximum(a: Value, b: Value) -> Value:
    """The larger of two values (``np.maximum`` on numbers); ties split the gradient evenly."""
    return _call("maximum", np.maximum, a, b)


def min(*args: Value) -> Value:
    """The smallest of two or more values (or of one list of them), elementwise."""
    values = _nary("min", args)
    return _call("min", lambda *v: functools.reduce(np.minimum, v), *values)


def max(*args: Value) -> Value:
    """The largest of two or more values (or of one list of them), elementwise."""
    values = _nary("max", args)
    return _call("max", lambda *v: functools.reduce(np.maximum, v), *values)


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


# -- special functions and activations -------------------------------------------------------------
def erf(x: Value) -> Value:
    """Error function (vectorized, as in generated code)."""
    return _call("erf", _runtime._erf, x)


def gamma(x: Value) -> Value:
    """Gamma function (vectorized, as in generated code)."""
    return _call("gamma", _runtime._gamma, x)


def loggamma(x: Value) -> Value:
    """``log(gamma(x))`` for ``x > 0`` (vectorized, as in generated code)."""
    return _call("loggamma", _runtime._loggamma, x)


def relu(x: Value) -> Value:
    """Rectified linear unit ``max(x, 0)``; by convention ``relu'(0) = 0``."""
    return _call("relu", _relu, x)


def sigmoid(x: Value) -> Value:
    """Logistic function ``1 / (1 + exp(-x))``, computed without overflow."""
    return _call("sigmoid", _runtime._sigmoid, x)


def softplus(x: Value) -> Value:
    """``log(1 + exp(x))``, computed without overflow (``np.logaddexp(0, x)``)."""
    return _call("softplus", _softplus, x)


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
