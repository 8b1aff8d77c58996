"""What a printed line costs: the number of passes over arrays it makes (:func:`line_passes`).

Elementwise NumPy code makes one pass over its operands per operation whose operands include an
array: ``a*b + c`` makes two, ``-a*b`` three (the negation is a pass of its own), ``2*a`` one
(``2`` is a Python number), ``-1/2*a`` one (``-1/2`` is computed on Python numbers first). The
count is read off the printed text with :mod:`ast`, so it is exactly what the generated line
does. Operations do not all cost alike: a ``pow`` of an array by anything but the exponents NumPy
special-cases (``x**2`` squares) costs about :data:`POW_PASSES` multiplications, and calls cost
what :data:`CALL_PASSES` gives for the NumPy function (``exp`` about three multiplications,
``expm1`` five: forms that differ in their calls, such as one ``exp`` reused against two, are
told apart), :data:`DEFAULT_CALL_PASSES` for others, or the entry of :data:`HELPER_PASSES` for
a runtime helper of several passes. Every name in a line is taken to be an array (arguments
and temporaries are); ``_np`` attributes (``_np.pi``) and literals are numbers.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from .. import registry

#: Passes a ``pow`` by a general exponent costs, in multiplications (NumPy 2 on x86-64: about
#: 8-9x a multiplication over a cached block of float64).
POW_PASSES = 8
#: Passes of a NumPy function call on an array, in multiplications: the registry rows'
#: ``passes`` (NumPy 2.4 on x86-64 with AVX-512, float64 blocks of 16384 elements written into
#: a buffer, rounded). Functions not listed cost :data:`DEFAULT_CALL_PASSES`.
CALL_PASSES = registry.call_passes()
DEFAULT_CALL_PASSES = 1
#: Runtime helpers that make several passes.
HELPER_PASSES = {"_sigmoid": 3, "_softplus": 13}
#: Exponents NumPy's power computes with a cheap special case (square, reciprocal, identity).
_QUICK_EXPONENTS = {2, 1, -1, 0}

_NUMPY = "_np"


def line_passes(code: str) -> int:
    """Array passes made by evaluating the Python expression ``code`` (see the module notes)."""
    return _passes(ast.parse(code, mode="eval").body)[1]


def total_passes(lines: Iterable[str]) -> int:
    """Sum of :func:`line_passes` over printed expressions."""
    return sum(line_passes(code) for code in lines)


def _passes(node: ast.AST) -> tuple[bool, int]:
    """(whether ``node`` is an array, passes to evaluate it)."""
    if isinstance(node, ast.Constant):
        return False, 0
    if isinstance(node, ast.Name):
        return node.id != _NUMPY, 0
    if isinstance(node, ast.Attribute):
        return _passes(node.value)
    if isinstance(node, ast.UnaryOp):
        array, cost = _passes(node.operand)
        return array, cost + (array and not isinstance(node.op, ast.UAdd))
    if isinstance(node, ast.BinOp):
        left_array, left = _passes(node.left)
        right_array, right = _passes(node.right)
        array = left_array or right_array
        cost = left + right
        if array:
            cost += _pow_cost(node.right) if isinstance(node.op, ast.Pow) else 1
        return array, cost
    if isinstance(node, ast.Call):
        parts = [_passes(arg) for arg in node.args]
        array = any(a for a, _ in parts)
        cost = sum(c for _, c in parts)
        if array:
            cost += _call_passes(node.func)
        return array, cost
    if isinstance(node, (ast.Tuple, ast.List)):
        parts = [_passes(e) for e in node.elts]
        return any(a for a, _ in parts), sum(c for _, c in parts)
    parts = [_passes(child) for child in ast.iter_child_nodes(node)]
    array = any(a for a, _ in parts)
    return array, sum(c for _, c in parts) + array


def _call_passes(func: ast.AST) -> int:
    if isinstance(func, ast.Name):
        return HELPER_PASSES.get(func.id, DEFAULT_CALL_PASSES)
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and (
        func.value.id == _NUMPY
    ):
        return CALL_PASSES.get(func.attr, DEFAULT_CALL_PASSES)
    return DEFAULT_CALL_PASSES


def _pow_cost(exponent: ast.AST) -> int:
    value = _number(exponent)
    return 1 if value in _QUICK_EXPONENTS else POW_PASSES


def _number(node: ast.AST) -> float | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _number(node.operand)
        return None if inner is None else -inner
    return None
