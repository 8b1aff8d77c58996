"""What a traced value refuses, and the messages that say what to write instead.

Python's own ``TypeError`` would not say what to do instead, so every refused operation is a
method that raises :class:`~symdiff.errors.UnsupportedError` with one of these messages
(:func:`refuse`). The tensor tracer (:mod:`symdiff.tensor.traced`) shares :data:`CONDITION_ONLY`
and :func:`refuse`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

from ..errors import UnsupportedError

#: Why ``if x:`` / ``bool(x)`` was refused.
NO_TRUTH = (
    "a traced value has no truth value: use where(cond, a, b) instead of if, and "
    "symdiff.math.max/min instead of the built-in max/min"
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
