"""The ``backend="array_api"`` dialect of generated code: NumPy's names -> the Array API
standard's, in one table, and the printer of that backend.

Both emitters (scalar and tensor) write NumPy code (``_np.arcsin(x)``,
``_np.add.reduce(x, axis=0)``, ``_np.exp(_t1, out=_t1)``); for the Array API backend every
statement goes through :func:`standard_code`, which renames each ``_np.<name>`` to the
standard's ``_xp.<name>`` (``_xp`` is the namespace of the arguments, found at run time by the
``_xp_namespace`` helper), writes ``out=`` as a plain assignment and a copy as
``asarray(..., copy=True)``, and refuses, with an :class:`~symdiff.errors.UnsupportedError`
naming it, any NumPy function the standard does not have (``einsum``, ``bincount``,
``add.at``, ...): such an operation is never emitted as wrong code. :data:`STANDARD_NAMES` is
the verifier's allow-list of ``_xp.<name>`` for modules of this backend.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

import sympy as sp

from .. import registry
from ..errors import UnsupportedError
from .printer import ArrayCodePrinter, CodePrinter

#: The namespace variable of an Array API module (bound by its first statement).
NAMESPACE = "_xp"

#: NumPy name (as generated code writes it after ``_np.``) -> the Array API standard's name.
STANDARD: dict[str, str] = {
    # the elementwise functions of the registry rows (``arcsin`` -> ``asin``; rows the
    # standard lacks are not here)
    **registry.standard_names(),
    **{name: name for name in (
        # structure, constants and logic
        "where", "logical_and", "logical_or", "logical_not", "pi", "e", "inf", "nan", "sqrt",
        "asarray", "broadcast_to", "empty", "eye", "full", "zeros", "reshape", "squeeze",
        "stack", "repeat", "max", "min", "mean", "prod", "sum", "flip", "roll", "tril", "triu",
        "take", "take_along_axis", "argsort", "isfinite", "var",
        # the linear algebra extension (``xp.linalg``)
        "linalg.det", "linalg.inv", "linalg.slogdet", "linalg.solve", "linalg.cholesky",
        "linalg.eigh", "linalg.svd",
    )},
    "concatenate": "concat", "cumsum": "cumulative_sum", "cumprod": "cumulative_prod",
    "transpose": "permute_dims",
    # the ufuncs' reductions that tensor code calls (``_np.add.reduce(x, axis=0)``)
    "add.reduce": "sum", "maximum.reduce": "max", "minimum.reduce": "min",
    "multiply.reduce": "prod",
}

#: The ``_xp.<name>`` an Array API module may use: the verifier's allow-list for this backend.
STANDARD_NAMES = frozenset(STANDARD.values()) | {"float64", "asarray"}

#: Runtime helpers an Array API module may call (the others use NumPy).
STANDARD_HELPERS = frozenset({
    "_xp_namespace", "_xp_float_dtype", "_xp_float_arrays", "_xp_common_shape", "_xp_as_output",
    "_xp_in_blocks", "_xp_vector", "_xp_elementwise", "_check_shapes",
})

#: NumPy helpers of the scalar printer with a standard-only formula (``{0}``: the argument).
STANDARD_FORMS = {"_sigmoid": "(1/(1 + _np.exp(-({0}))))", "_softplus": "_np.logaddexp(0.0, {0})"}

_NUMPY_NAME = re.compile(r"(?<![\w.])_np\.((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*)")
_OUT = re.compile(r",\s*out=(\w+)\)")


def _unsupported(what: str, where: str) -> UnsupportedError:
    place = f" in {where}" if where else ""
    return UnsupportedError(
        f"{what}{place} has no equivalent in the Array API standard, so it cannot be emitted "
        "with backend='array_api'; use the default backend='numpy' for this function"
    )


def _copies(code: str) -> str:
    """``_np.copy(A)`` -> ``_np.asarray(A, copy=True)`` (the closing parenthesis matched)."""
    start = code.find("_np.copy(")
    while start >= 0:
        depth, i = 0, start + len("_np.copy")
        for i in range(start + len("_np.copy"), len(code)):
            depth += {"(": 1, ")": -1}.get(code[i], 0)
            if depth == 0:
                break
        inner = code[start + len("_np.copy(") : i]
        code = f"{code[:start]}_np.asarray({inner}, copy=True){code[i + 1:]}"
        start = code.find("_np.copy(", start + 1)
    return code


def standard_code(code: str, target: str | None = None, where: str = "") -> str:
    """NumPy statement text -> the same computation with the standard's functions only.

    ``target`` is the name the statement assigns (``_t1 = _np.exp(_t1, out=_t1)`` becomes
    ``_t1 = _xp.exp(_t1)``; ``out=`` into anything else is refused); ``where`` names the
    function for messages. A NumPy function without a standard equivalent raises
    :class:`~symdiff.errors.UnsupportedError` naming it.
    """
    for name in _OUT.findall(code):
        if name != target:
            raise _unsupported(f"writing into {name} (out=)", where)
    code = _copies(_OUT.sub(")", code))

    def rename(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in STANDARD:
            raise _unsupported(f"numpy.{name}", where)
        return f"{NAMESPACE}.{STANDARD[name]}"

    code = _NUMPY_NAME.sub(rename, code)
    return code.replace("ddof=", "correction=")  # ``var``: the standard's name of the keyword


def _real_value(expr: sp.Expr) -> float | None:
    """The value of constant ``expr`` as a float, if it is real and finite (else None: it
    prints as it would, ``nan`` and ``inf`` by name)."""
    try:
        value = complex(sp.N(expr, 17))
    except (TypeError, ValueError):
        return None
    if value.imag != 0 or not math.isfinite(value.real):
        return None
    return value.real


class _Standard:
    """Printer overrides for the Array API backend: numeric constants as float literals (the
    standard's functions take arrays, not Python numbers: ``sqrt(pi)`` is folded to
    ``1.7724538509055159``), helpers by their standard-only formula or refused, Heaviside
    written with ``sign``."""

    helpers: set[str]
    #: Basic indices name every axis (``x[1:, ...]``), as the standard requires.
    full_index = True

    def _print(self, expr, **kwargs) -> str:
        if isinstance(expr, sp.Expr) and expr.is_number and not expr.is_Rational:
            value = _real_value(expr)
            if value is not None:
                return repr(value) if value >= 0 else f"({value!r})"
        return super()._print(expr, **kwargs)  # type: ignore[misc]

    def helper_call(self, name: str, *args: str) -> str:
        if name in STANDARD_FORMS and len(args) == 1:
            return STANDARD_FORMS[name].format(*args)
        return super().helper_call(name, *args)  # type: ignore[misc]

    def number_default(self, value: sp.Expr) -> str:
        """The standard's ``where`` takes at most one Python number: the last value of a
        piecewise of numbers is an array."""
        text = super().number_default(value)  # type: ignore[misc]
        return text if text.startswith("_np.asarray(") else f"_np.asarray({text})"

    def _heaviside(self, expr: sp.Heaviside) -> str:
        at_zero = expr.args[1] if len(expr.args) > 1 else sp.S.Half
        if at_zero not in (0, sp.S.Half):
            raise _unsupported(f"Heaviside with value {at_zero} at 0", "")
        return super()._heaviside(expr)  # type: ignore[misc]


class StandardPrinter(_Standard, CodePrinter):
    """The scalar layer's printer for the Array API backend (still writes ``_np.``;
    :func:`standard_code` renames)."""


class StandardArrayPrinter(_Standard, ArrayCodePrinter):
    """The tensor layer's printer for the Array API backend."""


def check_helpers(helpers: set[str] | frozenset[str], where: str = "") -> None:
    """Refuse runtime helpers that only have a NumPy version (``_erf``, ``_gamma``, ...)."""
    for helper in sorted(set(helpers) - STANDARD_HELPERS):
        raise _unsupported(f"{helper.lstrip('_')} (symdiff's NumPy runtime helper {helper})", where)


def printer_for(backend: str, array: bool = False) -> CodePrinter:
    """The printer of ``backend``'s code (``array``: the tensor layer's)."""
    if backend == "array_api":
        return StandardArrayPrinter() if array else StandardPrinter()
    return ArrayCodePrinter() if array else CodePrinter()


def inline_constants(
    assignments: Sequence[tuple[sp.Symbol, sp.Expr]], outputs: Sequence[sp.Expr]
) -> tuple[list[tuple[sp.Symbol, sp.Expr]], list[sp.Expr]]:
    """Temporaries whose value is a number, substituted into the expressions that read them:
    the Array API backend prints each constant subexpression as one float literal, since the
    standard's functions take arrays, not Python numbers (``tanh(_t1)`` of ``_t1 = 3.0``)."""
    constants: dict[sp.Symbol, sp.Expr] = {}
    kept: list[tuple[sp.Symbol, sp.Expr]] = []
    for name, value in assignments:
        value = value.xreplace(constants) if constants else value
        if value.is_number:
            constants[name] = value
        else:
            kept.append((name, value))
    if not constants:
        return kept, list(outputs)
    return kept, [sp.sympify(e).xreplace(constants) for e in outputs]
