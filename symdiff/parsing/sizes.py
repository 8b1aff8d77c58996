"""Sizes of exact numbers and constant expressions: digit counts, magnitudes and nesting, so that
the numeric limits are checked before SymPy does the expensive work."""

from __future__ import annotations

import ast
import math
import re

import sympy as sp

from ..simplify.dag import tree_size
from .functions import FUNCTION_SPECS
from .limits import LIMITS
from .syntax import CHAINS

_FLOAT = re.compile(r"(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?(?:[eE](?P<exp>[+-]?[0-9]+))?\Z")
_LOG2_10 = math.log2(10)
#: SymPy values that are not finite real numbers; a parsed expression never holds them.
NON_FINITE = (sp.zoo, sp.oo, -sp.oo, sp.nan)


def _digits(n: int) -> int:
    """Number of decimal digits of ``n`` (without building its decimal string)."""
    n = abs(n)
    return 1 if n < 10 else math.floor(log10_int(n)) + 1


def rational_digits(value: sp.Rational) -> int:
    """Decimal digits of the larger of numerator and denominator."""
    return max(_digits(int(value.p)), _digits(int(value.q)))


def exact_float(literal: str) -> sp.Rational | None:
    """The exact value of a decimal float literal, or None if it is too large to build."""
    match = _FLOAT.match(literal.replace("_", ""))
    if match is None:
        return None
    whole, frac = match.group("int") or "", match.group("frac") or ""
    exponent = int(match.group("exp") or 0) - len(frac)
    mantissa = int(whole + frac or "0")
    if mantissa == 0:
        return sp.Integer(0)
    limit = LIMITS["max_constant_digits"]
    if abs(exponent) > limit + len(whole + frac):
        return None
    if exponent >= 0:
        return sp.Integer(mantissa * 10**exponent)
    return sp.Rational(mantissa, 10**-exponent)


def log10_abs(value: sp.Expr) -> float:
    """log10 of ``|value|`` for a tame numeric expression (``-inf`` for zero)."""
    if value.is_Rational:
        if value.p == 0:
            return -math.inf
        return log10_int(abs(int(value.p))) - log10_int(int(value.q))
    approx = value.evalf(15)
    if approx.is_Float:
        parts = [approx]
    else:
        parts = [p for p in approx.as_real_imag() if p.is_Float]
        if not parts:
            raise ValueError(f"cannot estimate the size of {short_expr(value)}")
    best = -math.inf
    for part in parts:
        _sign, man, exp, bc = part._mpf_
        if man:
            best = max(best, (exp + bc) / _LOG2_10)
        elif exp:  # mpmath's special values: inf, -inf, nan
            raise ValueError(f"{short_expr(value)} is not finite")
    return best


def numerically_real(value: sp.Expr) -> bool:
    """Whether a constant SymPy cannot classify, such as ``(-2)**pi``, evaluates to a real."""
    try:
        real, imag = (float(part) for part in value.evalf(15).as_real_imag())
    except (TypeError, ValueError, ArithmeticError):
        return True  # no numeric verdict: leave it to evaluation time
    return math.isfinite(real) and abs(imag) <= 1e-9 * max(1.0, abs(real))


def log10_int(n: int) -> float:
    """``log10(n)`` of a positive int of any size (no float overflow)."""
    bits = n.bit_length()
    if bits < 1000:
        return math.log10(n)
    return math.log10(n >> (bits - 53)) + (bits - 53) / _LOG2_10


def short_expr(expr: sp.Basic, limit: int = 60) -> str:
    """``expr`` as text for a message, cut to ``limit`` characters with ``...`` (an expression
    too large to print in full is described by its size)."""
    if tree_size(expr, 10**5) >= 10**5:
        return f"an expression of {tree_size(expr):,} operations"
    text = str(expr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def root_digits(expr: sp.Expr) -> int:
    """Digits of the rational numbers under fractional powers among the factors of ``expr``."""
    total = 0
    for factor in sp.Mul.make_args(expr):
        base, exponent = factor.as_base_exp()
        if base.is_Rational and exponent.is_Rational and not exponent.is_Integer:
            total += _digits(int(base.p)) + _digits(int(base.q))
    return total


def node_nesting(node: ast.AST) -> int:
    """How much ``node`` adds to the nesting of a constant (see ``max_constant_depth``)."""
    if isinstance(node, ast.Call):
        func = node.func
        spec = FUNCTION_SPECS.get(func.id) if isinstance(func, ast.Name) else None
        return spec.nesting if spec else 1
    if isinstance(node, ast.Compare):
        return 1
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Pow):
            return 1
        while isinstance(node, ast.BinOp) and CHAINS.get(type(node.op)) == "multiplicative":
            if isinstance(node.op, ast.Div):
                return 1
            node = node.left
    return 0


def value_depth(expr: sp.Basic) -> int:
    """Nesting of function applications and powers in a SymPy expression (iteratively)."""
    deepest = 0
    stack = [(expr, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, sp.Function | sp.Pow):
            depth += 1
        deepest = max(deepest, depth)
        stack.extend((arg, depth) for arg in node.args)
    return deepest
