"""The values a traced function sees: :class:`Traced` (a scalar) and :class:`Condition` (a
comparison), their Python operators, and what NumPy and :mod:`symdiff.math` do with them.

Each value wraps the SymPy expression computed so far (``.expr``). Arithmetic builds a new
:class:`Traced` value; a comparison ``< <= > >=`` a :class:`Condition`, usable only as the
condition of ``where``. NumPy reaches a traced value through ``__array_ufunc__`` (the ufuncs of
:data:`~symdiff.trace.tables.UFUNCS`) and ``__array_function__`` (:data:`ARRAY_FUNCTIONS`);
:mod:`symdiff.math` through :func:`apply` and :func:`where`. Everything else is refused with a
message saying what to write instead (:mod:`symdiff.trace.refusals`).
"""

from __future__ import annotations

import inspect
import math
import numbers
from collections.abc import Callable
from typing import Any, NoReturn

import numpy as np
import sympy as sp

from ..errors import UnsupportedError
from ..functions import held
from ..parsing import parse
from ..simplify.dag import distinct_nodes, has_type, larger_than, replace
from .logic import JoinsConditions
from .refusals import (
    CONDITION_ONLY,
    GIVE_SHAPES,
    NO_NUMBER,
    NO_TRUTH,
    SCALAR_ONLY,
    refuse,
    unsupported_numpy,
    unsupported_operator,
)
from .tables import FUNCTIONS, ROW_ARRAY_FUNCTIONS, UFUNCS, divide, power, ufunc_builder

_CONSTANTS: dict[float, sp.Expr] = {math.pi: sp.pi, math.e: sp.E}


# -- numbers and expressions ---------------------------------------------------------------------
#: A traced sum or product with more operations than this is held (:func:`held_state`) when
#: it is read again.
HOLD_MIN_OPS = 24


def held_state(value: Traced) -> sp.Expr:
    """The expression of ``value`` as an operand: a large sum or product is first made
    ``held(...)`` (:class:`symdiff.functions.held`), and ``value`` keeps it so, so that a loop
    that reads its state (``x = r*x*(1 - x)``) builds one expression per step, each reading
    the last, instead of merging every step into one sum or product. Holds of values read
    only once are taken away again when tracing ends (:func:`release_single_holds`)."""
    expr = value.expr
    if (expr.is_Add or expr.is_Mul) and larger_than(expr, HOLD_MIN_OPS):
        expr = value.expr = held(expr)
    return expr


def release_single_holds(exprs: tuple[sp.Expr, ...]) -> tuple[sp.Expr, ...]:
    """``exprs`` with each ``held(u)`` that only one node (or output) reads replaced by ``u``:
    a value read once has nothing to share, and merging it into its reader keeps the forms
    people and the stable rewrites expect (``log(1 + exp(u))``)."""
    readers: dict[sp.Basic, int] = {}
    for node in distinct_nodes(exprs):
        for arg in set(node.args):
            readers[arg] = readers.get(arg, 0) + 1
    for expr in exprs:
        readers[expr] = readers.get(expr, 0) + 1
    single = {node: node.args[0] for node in readers
              if isinstance(node, held) and readers[node] == 1}
    if not single:
        return exprs
    return tuple(replace(e, lambda n: n in single, lambda n: n.args[0]) for e in exprs)


#: Expressions with more operations than this in their tree keep their holds in
#: :func:`without_holds`: taking them away merges every step of a long loop into one sum or
#: product, which SymPy then evaluates over the whole tree.
RELEASE_MAX_OPS = 5_000


def without_holds(expr: sp.Expr) -> sp.Expr:
    """``expr`` with every ``held(u)`` replaced by ``u`` (when it is not too large to write
    out, :data:`RELEASE_MAX_OPS`: then as it is; ``held(u)`` prints as ``(u)``)."""
    if not has_type(expr, held) or larger_than(expr, RELEASE_MAX_OPS):
        return expr
    return replace(expr, lambda n: isinstance(n, held), lambda n: n.args[0])


def operand(value: object) -> sp.Expr:
    """``value`` (a traced value, a SymPy expression or a number) as a SymPy expression."""
    if isinstance(value, Traced):
        return held_state(value)
    if isinstance(value, Condition):
        raise UnsupportedError(CONDITION_ONLY)
    if isinstance(value, sp.Expr):
        return value
    if isinstance(value, np.ndarray):
        if value.ndim:
            raise UnsupportedError(
                f"a NumPy array of shape {value.shape} cannot be combined with a traced value: "
                + SCALAR_ONLY
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
        "the condition of where(cond, a, b) must be a comparison (< <= > >=) of traced values "
        f"(or comparisons joined by &, |, ~), not a {type(value).__name__}"
    )


def _wrap(expr: sp.Basic) -> Traced | Condition:
    """A SymPy result as a traced value, or a condition when it is a comparison."""
    return Traced(expr) if isinstance(expr, sp.Expr) else Condition(expr)


def _symbolic(args: tuple[object, ...]) -> bool:
    return any(isinstance(a, Symbolic) for a in args)


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
        raise UnsupportedError(NO_TRUTH)

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
        build = ufunc_builder(ufunc)
        if build is None:
            raise UnsupportedError(unsupported_numpy(ufunc, [*UFUNCS, *ARRAY_FUNCTIONS]))
        return _wrap(build(*map(operand, inputs)))

    def __array_function__(
        self, func: Callable[..., Any], types: object, args: tuple[Any, ...], kwargs: dict
    ) -> Any:
        handler = ARRAY_FUNCTIONS.get(func)
        if handler is None:
            raise UnsupportedError(unsupported_numpy(func, [*UFUNCS, *ARRAY_FUNCTIONS]))
        return handler(*args, **kwargs)

    def __array__(self, *args: object, **kwargs: object) -> NoReturn:
        raise UnsupportedError(
            f"a traced value cannot be converted to a NumPy array: {SCALAR_ONLY}"
        )

    def __getattr__(self, name: str) -> NoReturn:
        if name.startswith("_"):  # protocol probes (copy, NumPy, IPython) see a plain object
            raise AttributeError(name)
        raise TracedAttributeError(
            f"attribute {name!r} of a traced value is not supported: {SCALAR_ONLY}; "
            "use symdiff.math or NumPy functions"
        )

    __float__ = __int__ = __index__ = __complex__ = refuse(NO_NUMBER)
    __round__ = __trunc__ = __floor__ = __ceil__ = refuse(NO_NUMBER)
    __getitem__ = refuse(f"indexing a traced value (x[i]) is not supported: {SCALAR_ONLY}; "
                         f"{GIVE_SHAPES}")
    __iter__ = refuse(f"iterating over a traced value is not supported: {SCALAR_ONLY}; "
                      f"{GIVE_SHAPES}")
    __len__ = refuse(f"len() of a traced value is not supported: {SCALAR_ONLY}")
    __eq__ = refuse("comparison '==' of traced values is not supported; " + CONDITION_ONLY)
    __ne__ = refuse("comparison '!=' of traced values is not supported; " + CONDITION_ONLY)
    __hash__ = None  # type: ignore[assignment]


class TracedAttributeError(UnsupportedError, AttributeError):
    """An unknown attribute of a traced value: an UnsupportedError that ``hasattr`` understands."""


class Traced(Symbolic):
    """A scalar value seen while tracing: wraps the SymPy expression computed so far (``.expr``).

    Supports ``+ - * / **`` with numbers on either side, unary ``-``/``+``, ``abs()``, the
    comparisons ``< <= > >=`` (giving a :class:`Condition`), :mod:`symdiff.math` and the NumPy
    functions of :data:`~symdiff.trace.tables.UFUNCS` and :data:`ARRAY_FUNCTIONS`.
    """

    __slots__ = ()

    def __add__(self, other: object) -> Traced:
        return Traced(operand(self) + operand(other))

    def __radd__(self, other: object) -> Traced:
        return Traced(operand(other) + operand(self))

    def __sub__(self, other: object) -> Traced:
        return Traced(operand(self) - operand(other))

    def __rsub__(self, other: object) -> Traced:
        return Traced(operand(other) - operand(self))

    def __mul__(self, other: object) -> Traced:
        return Traced(operand(self) * operand(other))

    def __rmul__(self, other: object) -> Traced:
        return Traced(operand(other) * operand(self))

    def __truediv__(self, other: object) -> Traced:
        return Traced(divide(operand(self), operand(other)))

    def __rtruediv__(self, other: object) -> Traced:
        return Traced(divide(operand(other), operand(self)))

    def __pow__(self, other: object, modulo: object = None) -> Traced:
        if modulo is not None:
            raise UnsupportedError("pow() with a modulus is not supported when tracing")
        return Traced(power(operand(self), operand(other)))

    def __rpow__(self, other: object) -> Traced:
        return Traced(power(operand(other), operand(self)))

    def __neg__(self) -> Traced:
        return Traced(-operand(self))

    def __pos__(self) -> Traced:
        return self

    def __abs__(self) -> Traced:
        return Traced(sp.Abs(operand(self)))

    def __lt__(self, other: object) -> Condition:
        return Condition(sp.Lt(operand(self), operand(other)))

    def __le__(self, other: object) -> Condition:
        return Condition(sp.Le(operand(self), operand(other)))

    def __gt__(self, other: object) -> Condition:
        return Condition(sp.Gt(operand(self), operand(other)))

    def __ge__(self, other: object) -> Condition:
        return Condition(sp.Ge(operand(self), operand(other)))

    # Every other operator refuses with a message naming it.
    __floordiv__ = __rfloordiv__ = refuse(unsupported_operator("//"))
    __mod__ = __rmod__ = refuse(unsupported_operator("%"))
    __matmul__ = __rmatmul__ = refuse(unsupported_operator("@"))
    __divmod__ = __rdivmod__ = refuse(unsupported_operator("divmod()"))
    __and__ = __rand__ = refuse(unsupported_operator("&"))
    __or__ = __ror__ = refuse(unsupported_operator("|"))
    __xor__ = __rxor__ = refuse(unsupported_operator("^"))
    __lshift__ = __rlshift__ = refuse(unsupported_operator("<<"))
    __rshift__ = __rrshift__ = refuse(unsupported_operator(">>"))
    __invert__ = refuse("operator '~' is not supported when tracing")


def _in_condition(symbol: str) -> Callable[..., NoReturn]:
    return refuse(f"{unsupported_operator(symbol)}; {CONDITION_ONLY}")


class Condition(JoinsConditions, Symbolic):
    """A traced comparison (``x > 0``), or comparisons joined by ``&``, ``|``, ``~`` or
    ``np.logical_and`` / ``np.logical_or`` / ``np.logical_not``: only usable as the condition
    of ``where(cond, a, b)``.

    It takes part in no arithmetic and no comparison: every other operator refuses."""

    __slots__ = ()

    def _join(self, join: Callable[..., sp.Basic], *conditions: object) -> Condition:
        return Condition(join(*map(_condition, conditions)))

    __add__ = __sub__ = __mul__ = __truediv__ = __pow__ = refuse(CONDITION_ONLY)
    __radd__ = __rsub__ = __rmul__ = __rtruediv__ = __rpow__ = refuse(CONDITION_ONLY)
    __neg__ = __pos__ = __abs__ = refuse(CONDITION_ONLY)
    __lt__ = __le__ = __gt__ = __ge__ = refuse(CONDITION_ONLY)
    __floordiv__ = __rfloordiv__ = _in_condition("//")
    __mod__ = __rmod__ = _in_condition("%")
    __matmul__ = __rmatmul__ = _in_condition("@")
    __divmod__ = __rdivmod__ = _in_condition("divmod()")
    __xor__ = __rxor__ = _in_condition("^")
    __lshift__ = __rlshift__ = _in_condition("<<")
    __rshift__ = __rrshift__ = _in_condition(">>")


# -- functions -----------------------------------------------------------------------------------
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


def _np_row(function: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``function`` (a NumPy function, not a ufunc) of a traced value as the row ``name`` of its
    first argument; its other parameters may only have their defaults (``np.round(x, 0)``)."""
    signature = inspect.signature(function)
    first, *others = signature.parameters.values()

    def handler(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind(*args, **kwargs)
        for parameter in others:
            value = bound.arguments.get(parameter.name, parameter.default)
            if value is not parameter.default and not (
                isinstance(value, int | float) and value == parameter.default
            ):
                raise UnsupportedError(
                    f"np.{function.__name__}(..., {parameter.name}={value!r}) is not supported "
                    f"when tracing scalars (only {parameter.name}={parameter.default!r}); with "
                    "shapes= it is traced as NumPy computes it"
                )
        return apply(name, bound.arguments[first.name])

    return handler


#: NumPy functions (``__array_function__``) a traced value understands: ``where`` and ``clip``,
#: and the rows' NumPy functions that are not ufuncs (``np.sinc``).
ARRAY_FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.where: _np_where,
    np.clip: _np_clip,
    **{function: _np_row(function, name) for function, name in ROW_ARRAY_FUNCTIONS.items()},
}
