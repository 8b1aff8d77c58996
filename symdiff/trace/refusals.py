"""What a traced value refuses, and the messages that say what to write instead.

Python's own ``TypeError`` would not say what to do instead, so every refused operation is a
method that raises :class:`~symdiff.errors.UnsupportedError` with one of these messages
(:func:`refuse`). The tensor tracer (:mod:`symdiff.tensor.traced`) shares :data:`CONDITION_ONLY`,
:func:`refuse` and :func:`unsupported_numpy`, which suggests the closest supported NumPy function
from the tracer's own tables (so the suggestion stays true as functions are added)::

    numpy function 'nanmax' is not supported when tracing arrays; did you mean np.amax?
    numpy function 'linalg.eig' is not supported when tracing arrays; no numpy.linalg function
    is supported yet

A function of a NumPy submodule (``np.linalg.eig``) is matched only against the supported
functions of the same submodule; when none is close, those are listed.
"""

from __future__ import annotations

import difflib
import linecache
from collections.abc import Callable, Iterable
from types import CodeType
from typing import Any, NoReturn

import numpy as np

from ..errors import UnsupportedError

#: Why ``if x:`` / ``bool(x)`` was refused.
NO_TRUTH = (
    "a traced value has no truth value: use where(cond, a, b) instead of if, & | ~ instead "
    "of and / or / not between comparisons ((x > 0) & (y < 1)), and symdiff.math.max/min "
    "instead of the built-in max/min; a while loop on a traced value cannot be traced: loop "
    "a fixed number of times (for _ in range(n))"
)
#: Why ``float(x)``, ``int(x)``, ``round(x)`` and the standard library's math were refused.
NO_NUMBER = (
    "a traced value has no numeric value while tracing: float(), int() and the standard "
    "library's math functions cannot take it; use symdiff.math or NumPy functions "
    "(np.sin, np.exp, ...) instead"
)
#: Why a comparison was refused: it can only be the condition of ``where`` (shared with the
#: tensor tracer).
CONDITION_ONLY = (
    "a comparison such as x > 0 can only be the condition of where(cond, a, b) "
    "(symdiff.math.where or np.where)"
)
#: Why arrays, indexing, iteration and ``len`` were refused.
SCALAR_ONLY = "each parameter of a traced function is a scalar (tracing has no shapes=)"

#: What to write instead of an operator tracing refuses, when there is something.
_OPERATOR_HINTS = {
    "^": " (for a power write **)",
    "%": " (use mod(a, b) of symdiff.math or np.mod)",
}


def refuse(message: str) -> Callable[..., NoReturn]:
    """A method that raises ``UnsupportedError(message)`` whatever its arguments."""

    def method(self: object, *args: object) -> NoReturn:
        raise UnsupportedError(message)

    return method


def unsupported_operator(symbol: str) -> str:
    """The message for an operator tracing refuses (``//``, ``%``, ``@``, ...), with a hint."""
    return f"operator {symbol!r} is not supported when tracing{_OPERATOR_HINTS.get(symbol, '')}"


def numpy_name(func: Callable[..., Any] | np.ufunc) -> tuple[str, str]:
    """``(submodule, name)`` of a NumPy function: ``("", "sum")``, ``("linalg", "det")``."""
    name = str(getattr(func, "__name__", repr(func)))
    module = str(getattr(func, "__module__", None) or "numpy")
    if isinstance(func, np.ufunc) or module in ("numpy", "numpy._core", "numpy.core") or (
        getattr(np, name, None) is func
    ):
        return "", name
    parts = module.split(".")
    return (parts[1] if len(parts) > 1 and parts[0] == "numpy" else module), name


#: NumPy functions of arrays (along axes, products, shapes) that tracing with ``shapes=``
#: follows: without ``shapes=`` every parameter is a scalar, and the refusal says so.
ARRAY_ONLY = frozenset({
    "dot", "vdot", "inner", "outer", "matmul", "tensordot", "einsum", "kron", "cross", "trace",
    "max", "min", "amax", "amin", "sum", "mean", "prod", "std", "var", "average", "median",
    "cumsum", "cumprod", "diff", "ptp", "argmax", "argmin", "sort", "concatenate", "stack",
    "hstack", "vstack", "column_stack", "reshape", "ravel", "transpose", "swapaxes",
    "moveaxis", "squeeze", "expand_dims", "repeat", "tile", "diagonal", "diag", "triu", "tril",
    "flip", "roll", "take", "split", "broadcast_to", "ones_like", "zeros_like", "full_like",
})


#: What to write instead of a NumPy function tracing does not follow.
INSTEAD = ("write it with the NumPy functions symdiff follows, or compute it outside the "
           "traced function and pass the result as an argument (it is then data, not "
           "differentiated)")

#: Where a parameter without a shape is indexed or iterated: how to give it one.
GIVE_SHAPES = ("for arrays give shapes=, and for a parameter that is a list, tuple or dict of "
               "arrays (layers of (W, b)) give example=(params, ...) or shapes= as a tree of "
               "shapes")


def code_line(name: str, code: CodeType, lineno: int) -> str:
    """`` (in f, line 3: 'return X @ v')``: line ``lineno`` of ``code`` (a function named
    ``name``), shortened to 60 characters."""
    line = " ".join(linecache.getline(code.co_filename, lineno).split())
    if not line:  # code typed at a prompt or given to python -c: no source to show
        return f" (in {name}, line {lineno})"
    line = line if len(line) <= 60 else line[:57] + "..."
    return f" (in {name}, line {lineno}: {line!r})"


def locate(exc: BaseException, fn: object) -> None:
    """Add to the refusal ``exc`` raised while tracing ``fn`` the line of ``fn`` it came from
    (the deepest frame of ``fn``'s code on its traceback), unless its message already says
    where or ``fn`` has no such frame."""
    code = getattr(fn, "__code__", None)
    if not isinstance(exc, UnsupportedError) or code is None or len(exc.args) != 1:
        return
    message, tb, lineno = str(exc.args[0]), exc.__traceback__, None
    while tb is not None:
        if tb.tb_frame.f_code is code:
            lineno = tb.tb_lineno
        tb = tb.tb_next
    if lineno is not None and " (in " not in message:
        exc.args = (message + code_line(str(getattr(fn, "__name__", "")), code, lineno),)


def unsupported_numpy(func: Callable[..., Any] | np.ufunc,
                      supported: Iterable[Callable[..., Any] | np.ufunc],
                      context: str = "when tracing") -> str:
    """The refusal of the NumPy function ``func`` with the closest of the ``supported`` ones
    (for a function of arrays refused by the scalar tracer: that ``shapes=`` traces it)."""
    group, name = numpy_name(func)
    message = f"numpy function '{group + '.' if group else ''}{name}' is not supported {context}"
    if context == "when tracing" and (group == "linalg" or (not group and name in ARRAY_ONLY)):
        return (f"{message} without shapes= (each parameter is then a scalar); it works on "
                "arrays: give shapes= (e.g. shapes={'x': (3,)}; () for a scalar) or example= "
                "with the arguments' values")
    names = sorted({n for g, n in map(numpy_name, supported) if g == group})
    close = difflib.get_close_matches(name.lower(), names, n=1, cutoff=0.7)
    if close:
        return f"{message}; did you mean np.{group + '.' if group else ''}{close[0]}?"
    if not group:
        return f"{message}; {INSTEAD}"
    if not names:
        return f"{message}; no numpy.{group} function is supported yet; {INSTEAD}"
    listed = ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")
    return f"{message}; the numpy.{group} functions supported are: {listed}"


#: What a compiled function called on traced values where tracing did not see it raises.
NOT_COMPOSED = (
    "a compiled symdiff function was called on traced values, where the traced function "
    "reaches it other than by name (an attribute, an item of a container, an argument), so "
    "symdiff could not compose it: call it by a name the function reads (a global or a "
    "closed-over variable), or give it to the builder itself (sd.grad(g) of a compiled g)")


def from_generated_code(exc: BaseException) -> bool:
    """Whether ``exc`` was raised inside a module symdiff generated (a compiled function called
    on traced values it could not take)."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__") == "symdiff.generated":
            return True
        tb = tb.tb_next
    return False
