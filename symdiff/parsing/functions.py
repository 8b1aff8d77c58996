"""The names a string expression may call or use as constants: the function table (with the
NumPy-style aliases), ``FUNCTIONS``, ``pi`` and ``e``, and which functions need numeric care."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sympy as sp

from ..functions import relu, sigmoid, softplus

_CONSTANTS: dict[str, sp.Expr] = {"pi": sp.pi, "e": sp.E}


@dataclass(frozen=True)
class _Function:
    """How one function name is built: ``build(*args)`` with ``min_args..max_args`` arguments."""

    build: Callable[..., sp.Expr]
    min_args: int = 1
    max_args: int | None = 1  # None: any number
    usage: str = "one argument"


def _unary(func: Callable[..., sp.Expr]) -> _Function:
    return _Function(func)


def _log(x: sp.Expr, base: sp.Expr | None = None) -> sp.Expr:
    return sp.log(x) if base is None else sp.log(x, base)


_FUNCTION_TABLE: dict[str, _Function] = {
    "sin": _unary(sp.sin),
    "cos": _unary(sp.cos),
    "tan": _unary(sp.tan),
    "asin": _unary(sp.asin),
    "acos": _unary(sp.acos),
    "atan": _unary(sp.atan),
    "atan2": _Function(sp.atan2, 2, 2, "two arguments (y, x)"),
    "sinh": _unary(sp.sinh),
    "cosh": _unary(sp.cosh),
    "tanh": _unary(sp.tanh),
    "asinh": _unary(sp.asinh),
    "acosh": _unary(sp.acosh),
    "atanh": _unary(sp.atanh),
    "exp": _unary(sp.exp),
    "log": _Function(_log, 1, 2, "one or two arguments (x[, base]) or the keyword base="),
    "sqrt": _unary(sp.sqrt),
    "abs": _unary(sp.Abs),
    "sign": _unary(sp.sign),
    "erf": _unary(sp.erf),
    "gamma": _unary(sp.gamma),
    "loggamma": _unary(sp.loggamma),
    "min": _Function(sp.Min, 2, None, "two or more arguments"),
    "max": _Function(sp.Max, 2, None, "two or more arguments"),
    "relu": _unary(relu),
    "sigmoid": _unary(sigmoid),
    "softplus": _unary(softplus),
    "where": _Function(
        lambda cond, a, b: sp.Piecewise((a, cond), (b, True)),
        3,
        3,
        "three arguments (condition, value if true, value if false)",
    ),
}
_ALIASES = {
    "ln": "log",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "arctan2": "atan2",
    "arcsinh": "asinh",
    "arccosh": "acosh",
    "arctanh": "atanh",
}
_FUNCTION_TABLE.update({alias: _FUNCTION_TABLE[name] for alias, name in _ALIASES.items()})

FUNCTIONS: frozenset[str] = frozenset(_FUNCTION_TABLE)

#: Operations of the tensor layer (``shapes=``) that are not scalar functions, or that take an
#: ``axis`` there (``max(a, axis=0)``): the scalar parser names ``shapes=`` when it meets them.
#: Kept equal to :data:`symdiff.tensor.parse.TENSOR_FUNCTIONS` (tested).
TENSOR_FUNCTIONS: frozenset[str] = frozenset(
    {"sum", "mean", "max", "min", "logsumexp", "prod", "softmax", "transpose", "reshape", "repeat"}
)

# Functions whose value grows at least exponentially with a numeric argument.
_GROWING = frozenset({sp.exp, sp.sinh, sp.cosh, sp.gamma, sp.loggamma})
# Functions that SymPy evaluates numerically through a rewrite two levels deep.
_DOUBLE_NESTING = frozenset({"sigmoid", "softplus"})
