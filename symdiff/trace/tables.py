"""What tracing builds for a function name or a NumPy ufunc: SymPy builders of SymPy arguments.

The functions come from the registry rows (:mod:`symdiff.registry`); this module adds only
arithmetic and comparisons, which are no rows. The builders know nothing of traced values:
:mod:`symdiff.trace.values` turns the arguments into SymPy expressions first and wraps the
result, and the tensor tracer applies the same builders elementwise.
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable

import numpy as np
import sympy as sp
from sympy.codegen.cfunctions import log1p

from .. import functions as F
from .. import registry
from ..simplify.quick import power as quick_power


def _zero(a: sp.Expr) -> bool:
    """Whether ``a`` is an exact zero: asked of SymPy for a constant, compared structurally
    for an expression in variables (SymPy's assumption query derives every fact of the
    expression from scratch, which on an unrolled recurrence takes time exponential in its
    depth)."""
    return bool(a.is_zero) if a.is_number else a == 0


def divide(a: sp.Expr, b: sp.Expr) -> sp.Expr:
    """``a / b``; dividing by an exact zero raises ``ZeroDivisionError``, as Python does."""
    if _zero(b):
        raise ZeroDivisionError("division by zero")
    return a / b


def power(a: sp.Expr, b: sp.Expr) -> sp.Expr:
    """``a ** b``; zero to a negative power raises ``ZeroDivisionError``, as Python does."""
    if _zero(a) and b.is_negative:
        raise ZeroDivisionError("0.0 cannot be raised to a negative power")
    return quick_power(a, b) if isinstance(a, sp.Expr) and isinstance(b, sp.Expr) else a**b


#: The math namespace (:mod:`symdiff.math`) by name: each row's canonical name with the
#: parser's builder (``registry.build_fn``), and the binary ``maximum``/``minimum`` of NumPy.
FUNCTIONS: dict[str, Callable[..., sp.Expr]] = {
    **{row.names[0]: registry.build_fn(row) for row in registry.ROWS if row.names},
    "minimum": sp.Min,
    "maximum": sp.Max,
}

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
    np.conjugate: operator.pos,  # traced values are real: the conjugate is the value
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

#: ``scipy.special`` ufuncs that are compositions of rows (as ``np.deg2rad`` above is one of
#: arithmetic), by the ufunc's ``__name__`` (``scipy.special.digamma`` is named ``psi``). Those
#: that are one row are the rows' ``scipy`` names (``expit`` is ``sigmoid``).
SCIPY_FORMS: dict[str, Callable[..., sp.Basic]] = {
    "psi": lambda x: sp.polygamma(0, x),
    "logit": lambda p: sp.log(p) - log1p(-p),
    "log_expit": lambda x: -F.softplus(-x),
    "ndtr": lambda x: F.erfc(-x / sp.sqrt(2)) / 2,
    "betaln": lambda a, b: sp.loggamma(a) + sp.loggamma(b) - sp.loggamma(a + b),
    "xlogy": lambda x, y: x * sp.log(y),
    "xlog1py": lambda x, y: x * log1p(y),
}


#: The rows traced from ``scipy.special`` ufuncs, by name (their ``scipy`` names).
SCIPY_ROWS = registry.traced_scipy()


def ufunc_builder(ufunc: np.ufunc) -> Callable[..., sp.Basic] | None:
    """The SymPy builder of a ufunc called on traced values: one of :data:`UFUNCS`, or a
    ``scipy.special`` ufunc (a row's ``scipy`` name or one of :data:`SCIPY_FORMS`), recognised
    only as the very object ``scipy.special`` holds, in a process that imported it (SciPy is
    not a dependency); None for any other."""
    build = UFUNCS.get(ufunc)
    if build is not None:
        return build
    special = sys.modules.get("scipy.special")
    name = getattr(ufunc, "__name__", None)
    if special is None or not isinstance(name, str) or getattr(special, name, None) is not ufunc:
        return None
    row = SCIPY_ROWS.get(name)
    return registry.build_fn(row) if row is not None else SCIPY_FORMS.get(name)


#: The rows' NumPy functions that are not ufuncs (``np.sinc``: NumPy hands them to
#: ``__array_function__``), with the canonical name of their row.
ROW_ARRAY_FUNCTIONS: dict[Callable[..., object], str] = {
    getattr(np, name): row.names[0]
    for name, row in registry.traced_numpy().items()
    if not isinstance(getattr(np, name), np.ufunc)
}
