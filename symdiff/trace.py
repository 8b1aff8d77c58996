"""Tracing: an ordinary Python function as a SymPy expression (the "dynamic graph" entry).

:func:`trace` calls the function once with one :class:`Traced` value per parameter, each
wrapping ``Symbol(name, real=True)``. Arithmetic, :mod:`symdiff.math` and the NumPy functions in
:data:`UFUNCS` and :data:`ARRAY_FUNCTIONS` build the SymPy expression as the body runs, so the
result is the expression the function computes, ready for the same pipeline as a string::

    def f(x, y):
        return np.sin(x) * np.exp(y) + sd.math.relu(x - y)

    trace(f)   # -> (exp(y)*sin(x) + relu(x - y), ('x', 'y'))

The compiled function keeps ``f``'s signature (:func:`signature`): its arguments are the
parameters in the ``def``'s order, used or not, with their defaults and keyword-only markers;
``*args`` and ``**kwargs`` are refused. A Jacobian may trace a function that returns a tuple or
list of scalars (:func:`trace_function` with ``many``).

What cannot be traced is an :class:`~symdiff.errors.UnsupportedError` that names it: Python
control flow on a traced value (``if x > 0:``, ``bool(x)``; use ``where(cond, a, b)``),
``float(x)``/``int(x)`` and the standard library's :mod:`math` (use :mod:`symdiff.math` or
NumPy), NumPy functions outside the tables (``np.rint``), indexing, iteration, ``len``, unknown
attributes, operators other than ``+ - * / **`` and unary ``- +``, and ``==``/``!=``. A
comparison ``< <= > >=`` gives a :class:`Condition`, usable only as the condition of ``where``
(``symdiff.math.where`` or ``np.where``).

Numbers met while tracing become exact SymPy numbers the way :func:`symdiff.parsing.parse` reads
them (``0.1`` is ``1/10``); a float equal to ``math.pi`` or ``math.e`` (``np.pi``,
``symdiff.math.pi``) becomes the constant ``pi`` or ``E``. Python evaluates arithmetic between
plain numbers before symdiff sees it: ``2*np.pi*x`` traces ``6.283185307179586*x`` as an exact
rational, ``np.pi*2*x`` gives ``2*pi*x``.
"""

from __future__ import annotations

import inspect
import math
import numbers
import operator
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np
import sympy as sp

from . import registry
from .codegen import naming
from .errors import SymdiffError, UnsupportedError
from .parsing import check_identifier, parse

__all__ = [
    "ARRAY_FUNCTIONS",
    "DIRECTION",
    "FUNCTIONS",
    "UFUNCS",
    "Condition",
    "Traced",
    "apply",
    "call_signature",
    "call_with",
    "combine_signatures",
    "parameters",
    "signature",
    "signature_text",
    "trace",
    "trace_function",
    "traced_name",
    "traced_names",
    "where",
    "with_direction",
]

_NO_TRUTH = (
    "a traced value has no truth value: use where(cond, a, b) instead of if, and "
    "symdiff.math.max/min instead of the built-in max/min"
)
_NO_NUMBER = (
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
_SCALAR_ONLY = "each parameter of a traced function is a scalar (tracing has no shapes=)"
_CONSTANTS: dict[float, sp.Expr] = {math.pi: sp.pi, math.e: sp.E}


# -- numbers and expressions ---------------------------------------------------------------------
def operand(value: object) -> sp.Expr:
    """``value`` (a traced value, a SymPy expression or a number) as a SymPy expression."""
    if isinstance(value, Traced):
        return value.expr
    if isinstance(value, Condition):
        raise UnsupportedError(CONDITION_ONLY)
    if isinstance(value, sp.Expr):
        return value
    if isinstance(value, np.ndarray):
        if value.ndim:
            raise UnsupportedError(
                f"a NumPy array of shape {value.shape} cannot be combined with a traced value: "
                + _SCALAR_ONLY
            )
        value = value[()]
    if isinstance(value, bool | np.bool_):
        return sp.Integer(int(value))
    if isinstance(value, float | np.floating) and float(value) in _CONSTANTS:
        return _CONSTANTS[float(value)]
    if isinstance(value, numbers.Real):
        return parse(value)
    if isinstance(value, numbers.Complex):
        raise UnsupportedError(f"complex number {value} cannot be combined with a traced value")
    raise UnsupportedError(
        f"a value of type {type(value).__name__} cannot be combined with a traced value"
    )


def _condition(value: object) -> sp.Basic:
    """The SymPy condition of ``where``: a traced comparison, a SymPy relational or a bool."""
    if isinstance(value, Condition):
        return value.expr
    if isinstance(value, sp.logic.boolalg.Boolean) and not isinstance(value, sp.Expr):
        return value  # a relational or true/false (a Symbol is a Boolean too)
    if isinstance(value, bool | np.bool_):
        return sp.true if value else sp.false
    raise UnsupportedError(
        "the condition of where(cond, a, b) must be a comparison (< <= > >=) of traced values, "
        f"not a {type(value).__name__}"
    )


def _wrap(expr: sp.Basic) -> Traced | Condition:
    """A SymPy result as a traced value, or a condition when it is a comparison."""
    return Traced(expr) if isinstance(expr, sp.Expr) else Condition(expr)


def divide(a: sp.Expr, b: sp.Expr) -> sp.Expr:
    """``a / b``; dividing by an exact zero raises ``ZeroDivisionError``, as Python does."""
    if b.is_zero:
        raise ZeroDivisionError("division by zero")
    return a / b


def power(a: sp.Expr, b: sp.Expr) -> sp.Expr:
    """``a ** b``; zero to a negative power raises ``ZeroDivisionError``, as Python does."""
    if a.is_zero and b.is_negative:
        raise ZeroDivisionError("0.0 cannot be raised to a negative power")
    return a**b


def _symbolic(args: tuple[object, ...]) -> bool:
    return any(isinstance(a, Symbolic) for a in args)


def refuse(message: str) -> Callable[..., NoReturn]:
    """A method that raises ``UnsupportedError(message)`` whatever its arguments."""

    def method(self: object, *args: object) -> NoReturn:
        raise UnsupportedError(message)

    return method


# -- traced values -------------------------------------------------------------------------------
class Symbolic:
    """What traced values and traced conditions share: NumPy dispatch, and the refusals."""

    __slots__ = ("expr",)
    #: NumPy defers to us in ``np.float64(2.0) * x`` and ``array_scalar + x``.
    __array_priority__ = 1000.0
    #: Lets :mod:`symdiff.math` recognise a traced value without importing this module.
    _symdiff_symbolic = True

    def __init__(self, expr: sp.Basic):
        self.expr = expr

    def __repr__(self) -> str:
        return f"{type(self).__name__}({sp.sstr(self.expr)})"

    def __str__(self) -> str:
        return sp.sstr(self.expr)

    def __bool__(self) -> NoReturn:
        raise UnsupportedError(_NO_TRUTH)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        name = getattr(ufunc, "__name__", repr(ufunc))
        if method != "__call__":
            raise UnsupportedError(
                f"numpy function '{name}.{method}' is not supported when tracing"
            )
        if kwargs:
            raise UnsupportedError(
                f"keyword arguments of numpy function '{name}' ({', '.join(kwargs)}) are not "
                "supported when tracing"
            )
        build = UFUNCS.get(ufunc)
        if build is None:
            raise UnsupportedError(f"numpy function '{name}' is not supported when tracing")
        return _wrap(build(*map(operand, inputs)))

    def __array_function__(
        self, func: Callable[..., Any], types: object, args: tuple[Any, ...], kwargs: dict
    ) -> Any:
        handler = ARRAY_FUNCTIONS.get(func)
        if handler is None:
            name = getattr(func, "__name__", repr(func))
            raise UnsupportedError(f"numpy function '{name}' is not supported when tracing")
        return handler(*args, **kwargs)

    def __array__(self, *args: object, **kwargs: object) -> NoReturn:
        raise UnsupportedError(
            f"a traced value cannot be converted to a NumPy array: {_SCALAR_ONLY}"
        )

    def __getattr__(self, name: str) -> NoReturn:
        if name.startswith("_"):  # protocol probes (copy, NumPy, IPython) see a plain object
            raise AttributeError(name)
        raise TracedAttributeError(
            f"attribute {name!r} of a traced value is not supported: {_SCALAR_ONLY}; "
            "use symdiff.math or NumPy functions"
        )

    __float__ = __int__ = __index__ = __complex__ = refuse(_NO_NUMBER)
    __round__ = __trunc__ = __floor__ = __ceil__ = refuse(_NO_NUMBER)
    __getitem__ = refuse(f"indexing a traced value (x[i]) is not supported: {_SCALAR_ONLY}")
    __iter__ = refuse(f"iterating over a traced value is not supported: {_SCALAR_ONLY}")
    __len__ = refuse(f"len() of a traced value is not supported: {_SCALAR_ONLY}")
    __eq__ = refuse("comparison '==' of traced values is not supported; " + CONDITION_ONLY)
    __ne__ = refuse("comparison '!=' of traced values is not supported; " + CONDITION_ONLY)
    __hash__ = None  # type: ignore[assignment]


class TracedAttributeError(UnsupportedError, AttributeError):
    """An unknown attribute of a traced value: an UnsupportedError that ``hasattr`` understands."""


class Traced(Symbolic):
    """A scalar value seen while tracing: wraps the SymPy expression computed so far (``.expr``).

    Supports ``+ - * / **`` with numbers on either side, unary ``-``/``+``, ``abs()``, the
    comparisons ``< <= > >=`` (giving a :class:`Condition`), :mod:`symdiff.math` and the NumPy
    functions of :data:`UFUNCS` and :data:`ARRAY_FUNCTIONS`.
    """

    __slots__ = ()

    def __add__(self, other: object) -> Traced:
        return Traced(self.expr + operand(other))

    def __radd__(self, other: object) -> Traced:
        return Traced(operand(other) + self.expr)

    def __sub__(self, other: object) -> Traced:
        return Traced(self.expr - operand(other))

    def __rsub__(self, other: object) -> Traced:
        return Traced(operand(other) - self.expr)

    def __mul__(self, other: object) -> Traced:
        return Traced(self.expr * operand(other))

    def __rmul__(self, other: object) -> Traced:
        return Traced(operand(other) * self.expr)

    def __truediv__(self, other: object) -> Traced:
        return Traced(divide(self.expr, operand(other)))

    def __rtruediv__(self, other: object) -> Traced:
        return Traced(divide(operand(other), self.expr))

    def __pow__(self, other: object, modulo: object = None) -> Traced:
        if modulo is not None:
            raise UnsupportedError("pow() with a modulus is not supported when tracing")
        return Traced(power(self.expr, operand(other)))

    def __rpow__(self, other: object) -> Traced:
        return Traced(power(operand(other), self.expr))

    def __neg__(self) -> Traced:
        return Traced(-self.expr)

    def __pos__(self) -> Traced:
        return self

    def __abs__(self) -> Traced:
        return Traced(sp.Abs(self.expr))

    def __lt__(self, other: object) -> Condition:
        return Condition(sp.Lt(self.expr, operand(other)))

    def __le__(self, other: object) -> Condition:
        return Condition(sp.Le(self.expr, operand(other)))

    def __gt__(self, other: object) -> Condition:
        return Condition(sp.Gt(self.expr, operand(other)))

    def __ge__(self, other: object) -> Condition:
        return Condition(sp.Ge(self.expr, operand(other)))


class Condition(Symbolic):
    """A traced comparison (``x > 0``): only usable as the condition of ``where(cond, a, b)``."""

    __slots__ = ()


# Every other operator refuses with a message naming it (Python's own TypeError would not say
# what to do instead); a condition takes part in no arithmetic at all.
_OPERATORS = {
    "floordiv": "//",
    "mod": "%",
    "matmul": "@",
    "divmod": "divmod()",
    "and": "&",
    "or": "|",
    "xor": "^",
    "lshift": "<<",
    "rshift": ">>",
}
for _name, _symbol in _OPERATORS.items():
    _hint = {"^": " (for a power write **)", "%": " (use mod(a, b) of symdiff.math or np.mod)"}.get(
        _symbol, ""
    )
    _message = f"operator {_symbol!r} is not supported when tracing{_hint}"
    for _dunder in (f"__{_name}__", f"__r{_name}__"):
        setattr(Traced, _dunder, refuse(_message))
        setattr(Condition, _dunder, refuse(f"{_message}; {CONDITION_ONLY}"))
Traced.__invert__ = refuse("operator '~' is not supported when tracing")  # type: ignore[method-assign]
for _dunder in ("add", "sub", "mul", "truediv", "pow", "radd", "rsub", "rmul", "rtruediv", "rpow"):
    setattr(Condition, f"__{_dunder}__", refuse(CONDITION_ONLY))
for _dunder in ("neg", "pos", "abs", "invert", "lt", "le", "gt", "ge"):
    setattr(Condition, f"__{_dunder}__", refuse(CONDITION_ONLY))
del _name, _symbol, _hint, _message, _dunder


# -- functions -----------------------------------------------------------------------------------
#: The math namespace (:mod:`symdiff.math`) by name: each row's canonical name with the
#: parser's builder (``registry.build_fn``), and the binary ``maximum``/``minimum`` of NumPy.
FUNCTIONS: dict[str, Callable[..., sp.Expr]] = {
    **{row.names[0]: registry.build_fn(row) for row in registry.ROWS if row.names},
    "minimum": sp.Min,
    "maximum": sp.Max,
}


def apply(name: str, *args: object) -> Any:
    """``FUNCTIONS[name]`` of traced values, SymPy expressions and numbers.

    The result is a :class:`Traced` value if any argument is one, else a SymPy expression.
    """
    result = FUNCTIONS[name](*map(operand, args))
    return Traced(result) if _symbolic(args) else result


def where(cond: object, a: object, b: object) -> Any:
    """``a`` where ``cond`` holds, else ``b``: a :class:`sympy.Piecewise` (as the parser's
    ``where``). Traced in, traced out; SymPy in, SymPy out.

    As in strings, the condition may not itself contain a ``where`` (SymPy would solve it as a
    set, in exponential time)."""
    condition = _condition(cond)
    if condition.has(sp.Piecewise):
        raise UnsupportedError(
            "a where() inside the condition of a where() is not supported; "
            "nest where() in the values instead"
        )
    result = sp.Piecewise((operand(a), condition), (operand(b), True))
    return Traced(result) if _symbolic((cond, a, b)) else result


#: NumPy ufuncs a traced value understands, as SymPy builders (of SymPy arguments): arithmetic
#: and comparisons here, the functions from the registry rows (``np.<ufunc>`` and ``traced``).
UFUNCS: dict[np.ufunc, Callable[..., sp.Basic]] = {
    np.add: operator.add,
    np.subtract: operator.sub,
    np.multiply: operator.mul,
    np.divide: divide,  # also np.true_divide
    np.power: power,
    np.float_power: power,
    np.negative: operator.neg,
    np.positive: operator.pos,
    np.reciprocal: lambda a: divide(sp.S.One, a),
    np.square: lambda a: a**2,
    np.deg2rad: lambda a: a * sp.pi / 180,
    np.radians: lambda a: a * sp.pi / 180,
    np.rad2deg: lambda a: a * 180 / sp.pi,
    np.degrees: lambda a: a * 180 / sp.pi,
    **{
        getattr(np, name): registry.build_fn(row)
        for name, row in registry.traced_numpy().items()
        if isinstance(getattr(np, name), np.ufunc)
    },
    np.greater: sp.Gt,
    np.greater_equal: sp.Ge,
    np.less: sp.Lt,
    np.less_equal: sp.Le,
}


def _np_where(condition: object, x: object = None, y: object = None) -> Any:
    if x is None or y is None:
        raise UnsupportedError("np.where(cond) with one argument is not supported when tracing")
    return where(condition, x, y)


def _np_clip(a: object, a_min: object = None, a_max: object = None) -> Any:
    result = a
    if a_min is not None:
        result = apply("max", result, a_min)
    if a_max is not None:
        result = apply("min", result, a_max)
    return result


def _np_row(name: str) -> Callable[..., Any]:
    return lambda *args: apply(name, *args)


#: NumPy functions (``__array_function__``) a traced value understands: ``where`` and ``clip``,
#: and the rows' NumPy functions that are not ufuncs (``np.sinc``).
ARRAY_FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.where: _np_where,
    np.clip: _np_clip,
    **{
        getattr(np, name): _np_row(row.names[0])
        for name, row in registry.traced_numpy().items()
        if not isinstance(getattr(np, name), np.ufunc)
    },
}


# -- tracing -------------------------------------------------------------------------------------
_REFUSED_KINDS = {
    inspect.Parameter.VAR_POSITIONAL: "*{}",
    inspect.Parameter.VAR_KEYWORD: "**{}",
}


def _describe(fn: object) -> str:
    return str(getattr(fn, "__name__", None) or type(fn).__name__)


def _check_parameter(parameter: inspect.Parameter, fn: object) -> str:
    kind = _REFUSED_KINDS.get(parameter.kind)
    if kind is not None:
        raise UnsupportedError(
            f"cannot trace {_describe(fn)}: parameter {kind.format(parameter.name)} is not "
            "supported; each variable of a traced function must be one named parameter "
            "(pass the values as separate parameters, or use shapes= for an array)"
        )
    default = parameter.default
    if default is not parameter.empty and (
        not isinstance(default, numbers.Real) or isinstance(default, bool)
    ):
        raise UnsupportedError(
            f"cannot trace {_describe(fn)}: parameter {parameter.name!r} has the default "
            f"{default!r}, which is not a number"
        )
    return check_identifier(parameter.name, "parameter name")


def signature(fn: Callable[..., Any]) -> inspect.Signature:
    """``inspect.signature(fn)``, checked for tracing: the signature of the compiled function.

    Every parameter is a variable, in the function's order: positional-only, positional-or-
    keyword and keyword-only parameters are allowed, with numbers as defaults (a default does not
    make a constant: the parameter is still a variable, and the compiled function fills the
    default in when the argument is left out). ``*args`` and ``**kwargs`` are refused (an
    :class:`~symdiff.errors.UnsupportedError` naming them), and each name must be a valid symdiff
    variable name (:func:`symdiff.parsing.check_identifier`).
    """
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise UnsupportedError(
            f"cannot trace {_describe(fn)}: its parameters cannot be read ({exc})"
        ) from exc
    for parameter in sig.parameters.values():
        _check_parameter(parameter, fn)
    return sig


def parameters(fn: Callable[..., Any]) -> tuple[str, ...]:
    """The names of ``fn``'s parameters, the variables of its trace, in the function's order
    (see :func:`signature` for what is allowed)."""
    return tuple(signature(fn).parameters)


def signature_text(sig: inspect.Signature) -> str:
    """``sig`` as text without annotations (names, kinds, defaults): what a cache key needs."""
    bare = [p.replace(annotation=p.empty) for p in sig.parameters.values()]
    return str(sig.replace(parameters=bare, return_annotation=sig.empty))


#: The direction parameter of a Hessian-vector product: the last argument.
DIRECTION = naming.DIRECTION


def call_signature(sig: inspect.Signature | None, kind: str) -> inspect.Signature | None:
    """The compiled function's signature: a traced function's ``sig`` (with :data:`DIRECTION`
    last for a Hessian-vector product), or None (strings and SymPy input: the generated
    function's own)."""
    if sig is None or kind != "hvp":
        return sig
    return with_direction(sig, DIRECTION)


def with_direction(sig: inspect.Signature, name: str) -> inspect.Signature:
    """``sig`` with one more parameter ``name`` at the end (the direction ``_v`` of a
    Hessian-vector product): positional when it can follow the others, else keyword-only (after
    a parameter with a default or a keyword-only one)."""
    params = list(sig.parameters.values())
    positional = all(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
        for p in params
    )
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD if positional else inspect.Parameter.KEYWORD_ONLY
    return sig.replace(parameters=[*params, inspect.Parameter(name, kind)])


def combine_signatures(
    signatures: list[inspect.Signature], functions: list[object]
) -> inspect.Signature:
    """One signature for the traced functions of a Jacobian's list: theirs if they agree, else
    their parameters in order of first appearance, which is allowed only when every parameter
    is positional-or-keyword without a default (otherwise an UnsupportedError)."""
    first = signatures[0]
    if all(sig == first for sig in signatures):
        return first
    params = [p for sig in signatures for p in sig.parameters.values()]
    if any(p.kind is not p.POSITIONAL_OR_KEYWORD or p.default is not p.empty for p in params):
        names = ", ".join(_describe(f) for f in functions)
        raise UnsupportedError(
            f"the functions {names} of the jacobian list have different signatures with "
            "defaults or keyword-only/positional-only parameters; give one function that "
            "returns a tuple of values"
        )
    merged = dict.fromkeys(p.name for p in params)
    return inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in merged]
    )


def traced_name(functions: list[object], alone: bool) -> str:
    """How a message names the traced function(s) of a request."""
    return _describe(functions[0]) if alone and len(functions) == 1 else "the traced functions"


def traced_names(expr: object) -> tuple[str, ...] | None:
    """The parameter names of a function input (see :func:`parameters`); None for any other
    input (a string, a SymPy expression, a number)."""
    if callable(expr) and not isinstance(expr, sp.Basic):
        return parameters(expr)
    return None


def call_with(fn: Callable[..., Any], sig: inspect.Signature, values: list[Any]) -> object:
    """``fn`` called with one value per parameter of ``sig``, in order: keyword-only ones by
    name, the others positionally."""
    positional, keywords = [], {}
    for parameter, value in zip(sig.parameters.values(), values, strict=True):
        if parameter.kind is parameter.KEYWORD_ONLY:
            keywords[parameter.name] = value
        else:
            positional.append(value)
    return fn(*positional, **keywords)


def _call(fn: Callable[..., Any], sig: inspect.Signature, arguments: list[Traced]) -> object:
    """``fn`` on the traced arguments; a failure that is not symdiff's own becomes an
    UnsupportedError."""
    try:
        return call_with(fn, sig, arguments)
    except SymdiffError:
        raise
    except Exception as exc:
        hint = "; use symdiff.math or NumPy functions on traced values"
        hint = hint if isinstance(exc, TypeError) else ""
        raise UnsupportedError(
            f"tracing {_describe(fn)} failed: {type(exc).__name__}: {exc}{hint}"
        ) from exc


def _result(value: object, fn: object) -> sp.Expr:
    """What a traced function returned, as a SymPy expression."""
    if isinstance(value, Condition):
        raise UnsupportedError(f"{_describe(fn)} returned a comparison; {CONDITION_ONLY}")
    if isinstance(value, np.ndarray) and value.ndim:
        raise UnsupportedError(
            f"{_describe(fn)} returned an array of shape {value.shape}; a traced function must "
            "return one scalar"
        )
    if isinstance(value, Symbolic | sp.Expr | numbers.Real | np.ndarray):
        return operand(value)
    returned = (
        "None (is a return statement missing?)" if value is None else (f"a {type(value).__name__}")
    )
    hint = " (for a function returning several values, use sd.jacobian)" if isinstance(
        value, tuple | list
    ) else ""
    raise UnsupportedError(
        f"{_describe(fn)} returned {returned}; a traced function must return one scalar: a number "
        f"or an expression of its parameters{hint}"
    )


def trace_function(
    fn: Callable[..., Any], many: bool = False
) -> tuple[tuple[sp.Expr, ...], inspect.Signature]:
    """Run ``fn`` on symbols: the SymPy expression(s) it computes and its checked signature.

    With ``many`` (a Jacobian), ``fn`` may return a non-empty tuple or list of scalars, one
    expression each; otherwise (and for a single scalar) the result is one expression.
    """
    sig = signature(fn)
    arguments = [Traced(sp.Symbol(name, real=True)) for name in sig.parameters]
    value = _call(fn, sig, arguments)
    if many and isinstance(value, tuple | list):
        if not value:
            raise UnsupportedError(f"{_describe(fn)} returned an empty {type(value).__name__}")
        return tuple(_result(item, fn) for item in value), sig
    return (_result(value, fn),), sig


def trace(fn: Callable[..., Any]) -> tuple[sp.Expr, tuple[str, ...]]:
    """Run ``fn`` on symbols: the SymPy expression it computes and its parameter names.

    Each parameter is a :class:`Traced` value wrapping ``Symbol(name, real=True)`` (keyword-only
    ones passed by name); the names are in the function's order. Raises
    :class:`~symdiff.errors.UnsupportedError` for what cannot be traced (see the module
    docstring), naming it.
    """
    (expr,), sig = trace_function(fn)
    return expr, tuple(sig.parameters)
