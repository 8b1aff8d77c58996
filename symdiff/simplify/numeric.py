"""Float64 against high precision: whether a simplified form is as accurate as its original.

:func:`faithful_form` decides between an expression as derived (its DAG, computed step by step
as the rules made it) and a simplified form of it: both are evaluated in float64 at a few
seeded random points, node by node over the DAG (:class:`Values`); where they agree, the
simplified form is kept. Where they do not, both are compared against the original evaluated
with mpmath at :data:`REFERENCE_DIGITS` digits (when the expression has at most
:data:`REFERENCE_MAX_NODES` distinct nodes; beyond, the original wins), and the simplified form
is kept only if it is at least about as accurate.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Callable, Mapping, Sequence

import mpmath
import numpy as np
import sympy as sp
from sympy.functions.elementary.piecewise import ExprCondPair

from .. import registry
from .dag import distinct_nodes, free_symbols, node_count

#: Digits of the high-precision reference.
REFERENCE_DIGITS = 40
#: Expressions with more distinct operations than this are not evaluated in high precision.
REFERENCE_MAX_NODES = 3_000
#: Expressions with more distinct operations than this are not checked at all.
CHECK_MAX_NODES = 50_000
#: Random points per check, and the relative difference under which two float64 values agree.
POINTS = 4
AGREE = 1e-9

_RELATIONS: dict[type, Callable[[object, object], bool]] = {
    sp.StrictLessThan: lambda a, b: a < b, sp.LessThan: lambda a, b: a <= b,
    sp.StrictGreaterThan: lambda a, b: a > b, sp.GreaterThan: lambda a, b: a >= b,
    sp.Equality: lambda a, b: a == b, sp.Unequality: lambda a, b: a != b,
}


@functools.cache
def _float_functions() -> dict[str, Callable[..., object]]:
    """The float function of each registry row's node, by class name (``symdiff.math``'s
    function of the row's name; a row without a name, its ``numeric``)."""
    from .. import math as numbers  # (imported here: symdiff.math imports the code printer)

    found = {}
    for name, row in registry.by_class_name().items():
        function = getattr(numbers, row.names[0], None) if row.names else row.numeric
        if function is not None:
            found[name] = function
    return found


class Values:
    """Values of SymPy expressions at one point, each distinct node computed once: in float64
    (NumPy scalars, inf and nan where NumPy gives them) or, with ``digits``, in mpmath
    (``nan`` where the value is not a finite real number). In float64 a function is its
    ``symdiff.math`` function (from the registry rows); in high precision, and for functions
    without a row, it is evaluated by SymPy (``evalf``) from its arguments' values."""

    def __init__(self, point: Mapping[sp.Symbol, float], digits: int | None = None):
        self.point, self.digits = point, digits
        self.known: dict[sp.Basic, object] = {}

    def number(self, value: object) -> object:
        if self.digits is None:
            return np.float64(value)
        return mpmath.mpf(value)

    def __call__(self, exprs: Sequence[sp.Basic]) -> list[object]:
        context = mpmath.workdps(self.digits) if self.digits else _nothing()
        with context, np.errstate(all="ignore"):
            for node in distinct_nodes(exprs):
                if node not in self.known:
                    self.known[node] = self._value(node)
        return [self.known[e] for e in exprs]

    def _nan(self) -> object:
        return self.number("nan")

    def _value(self, node: sp.Basic) -> object:
        known = self.known
        if node.is_Symbol:
            return self.number(self.point[node])
        if node.is_Rational:
            if self.digits is None:
                return np.float64(float(sp.Float(node, 17)))
            return mpmath.mpf(int(node.p)) / int(node.q)
        if node.is_Number or isinstance(node, sp.NumberSymbol):
            text = str(sp.Float(node, (self.digits or 17) + 5))
            return self.number(text)
        if node in (sp.true, sp.false):
            return bool(node)
        args = [known[a] for a in node.args]
        try:
            return self._apply(node, args)
        except (ArithmeticError, ValueError, TypeError, OverflowError):
            return self._nan()

    def _apply(self, node: sp.Basic, args: list) -> object:
        if node.is_Add:
            total = args[0]
            for a in args[1:]:
                total = total + a
            return total
        if node.is_Mul:
            total = args[0]
            for a in args[1:]:
                total = total * a
            return total
        if node.is_Pow:
            base, exponent = args
            if self.digits is None:
                return np.power(base, exponent)
            result = mpmath.power(base, exponent)
            return result if isinstance(result, mpmath.mpf) else self._nan()
        relation = _RELATIONS.get(type(node))
        if relation is not None:
            return bool(relation(*args))
        if isinstance(node, sp.And):
            return all(args)
        if isinstance(node, sp.Or):
            return any(args)
        if isinstance(node, sp.Not):
            return not args[0]
        if isinstance(node, sp.Piecewise):
            for value, condition in (a for a in args):
                if condition:
                    return value
            return self._nan()
        if isinstance(node, ExprCondPair):
            return tuple(args)
        if self.digits is None:
            function = _float_functions().get(type(node).__name__)
            if function is not None:
                return self.number(function(*args))
        return self._by_sympy(node, args)

    def _by_sympy(self, node: sp.Basic, args: list) -> object:
        digits = (self.digits or 17) + 5
        floats = [sp.Float(str(a), digits) if not isinstance(a, bool) else a for a in args]
        value = node.func(*floats).evalf(digits)
        if not value.is_real or not value.is_finite:
            return self._nan()
        return self.number(str(value))


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def random_points(symbols: Sequence[sp.Symbol], count: int = POINTS,
                  seed: int = 0) -> list[dict[sp.Symbol, float]]:
    """``count`` seeded points, each coordinate in (0.3, 2.5) (positive: inside the domain of
    logarithms and roots), with a few coordinates negated from the second point on."""
    rng = random.Random(seed)
    points = []
    for k in range(count):
        point = {}
        for s in symbols:
            value = rng.uniform(0.3, 2.5)
            point[s] = -value if k and rng.random() < 0.3 else value
        points.append(point)
    return points


def _relative(value: object, reference: object) -> float:
    """``|value - reference| / |reference|`` (absolute below 1e-300); inf for a non-finite
    value where the reference is finite."""
    v, r = float(value), float(reference)
    if not math.isfinite(r):
        return 0.0
    if not math.isfinite(v):
        return math.inf
    return abs(v - r) / max(abs(r), 1e-300)


def faithful_form(original: sp.Expr, simplified: sp.Expr, seed: int = 0) -> sp.Expr:
    """``simplified`` where it is about as accurate in float64 as ``original`` (the form it was
    simplified from) at seeded random points (see the module notes), else ``original``."""
    if simplified == original or not isinstance(original, sp.Expr):
        return simplified
    size = node_count([original, simplified])
    if size > CHECK_MAX_NODES:
        return original
    symbols = sorted(free_symbols([original, simplified]), key=lambda s: s.name)
    points = random_points(symbols, seed=seed)
    disagree = []
    for point in points:
        a, b = Values(point)([original, simplified])
        if _relative(b, a) > AGREE and (math.isfinite(float(a)) or math.isfinite(float(b))):
            disagree.append(point)
    if not disagree:
        return simplified
    if size > REFERENCE_MAX_NODES:
        return original
    for point in disagree:
        (reference,) = Values(point, REFERENCE_DIGITS)([original])
        a, b = Values(point)([original, simplified])
        worse, base = _relative(b, reference), _relative(a, reference)
        if worse > max(10 * base, 1e-12):
            return original
    return simplified
