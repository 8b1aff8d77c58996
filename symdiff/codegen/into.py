"""The one statement of an output: its last operation written as the NumPy ufunc the operator
stands for, with ``out=`` where the output goes (NumPy's ``out=``).

``_in_blocks`` (:mod:`symdiff.runtime.blocks`) gives a module's ``_formulas`` the rows of the
full output arrays for each block after the first (``_out``: one per output; None for the
first block, one call on short arrays, and a point). An output computed as a temporary and
then copied into the full array makes one pass more than needed; :func:`out_statement` writes
the output's last operation as the ufunc, so that one statement serves every call::

    _x_bar = _np.divide(_t0*_t2, _t1, out=_out[0])

With ``out=None`` the ufunc returns a new array, as the operator does; at a point the runtime
runs the formulas with the operators themselves standing for these ufuncs
(:func:`symdiff.runtime.points._point_numpy`). The ufunc is exactly the one the operator calls
(``*`` is ``multiply``, ``-a`` is ``negative``, ``a**2`` is ``square``), so the numbers are the
same bit for bit.
"""

from __future__ import annotations

import ast
import functools

import numpy as np

from .naming import OUT

#: Binary operators and the ufuncs that ``ndarray`` calls for them.
_BINARY = {ast.Mult: "multiply", ast.Add: "add", ast.Sub: "subtract", ast.Div: "divide"}


def slot(index: int) -> str:
    """Where output ``index`` (depth-first in the returned structure) goes: ``_out[index]``."""
    return f"{OUT}[{index}]"


def out_statement(target: str, code: str, out: str, operators: bool = False) -> str | None:
    """``target = _np.<ufunc>(<operands>, out=<out>)``: the assignment of ``code`` to
    ``target`` with its last operation written into ``out``, or None when that operation is
    not a ufunc of one output (a helper, ``where``, a general power) or reads no array.
    ``operators``: only the ufuncs of the arithmetic operators (an entry of an array result,
    whose ``out`` is a NumPy scalar at a point, where only those ignore it)."""
    found = last_operation(code, operators)
    if found is None:
        return None
    name, operands = found
    return f"{target} = _np.{name}({', '.join(operands)}, out={out})"


def last_operation(code: str, operators: bool = False) -> tuple[str, list[str]] | None:
    """``(ufunc name, printed operands)`` of the last operation of ``code`` (a printed
    expression), or None when that operation is not a ufunc (``operators``: one of the
    arithmetic operators') or reads no array."""
    tree = ast.parse(code, mode="eval").body

    def text(node: ast.AST) -> str:
        segment = ast.get_source_segment(code, node)
        assert segment is not None
        return segment

    if not _reads_a_name(tree):
        return None
    if isinstance(tree, ast.BinOp) and type(tree.op) in _BINARY:
        name, args = _BINARY[type(tree.op)], [tree.left, tree.right]
    elif (
        isinstance(tree, ast.BinOp)
        and isinstance(tree.op, ast.Pow)
        and isinstance(tree.right, ast.Constant)
        and type(tree.right.value) is int
        and tree.right.value == 2
    ):
        name, args = "square", [tree.left]  # what ``a**2`` calls
    elif isinstance(tree, ast.UnaryOp) and isinstance(tree.op, ast.USub):
        name, args = "negative", [tree.operand]
    elif (
        isinstance(tree, ast.Call)
        and isinstance(tree.func, ast.Attribute)
        and isinstance(tree.func.value, ast.Name)
        and tree.func.value.id == "_np"
        and not tree.keywords
        and _ufunc_arity(tree.func.attr) == len(tree.args)
        and (tree.func.attr in _POINT_UFUNCS or not operators)
    ):
        name, args = tree.func.attr, list(tree.args)
    else:
        return None
    return name, [text(a) for a in args]


#: The ufuncs an output's last operation may be written as: those of the arithmetic operators,
#: which the point path runs as the operators (:func:`symdiff.runtime.points._point_numpy`).
_POINT_UFUNCS = frozenset({"add", "subtract", "multiply", "divide", "negative", "square"})


def _reads_a_name(node: ast.AST) -> bool:
    """Whether ``node`` reads a variable or temporary (is an array), not only numbers."""
    return any(isinstance(n, ast.Name) and n.id != "_np" for n in ast.walk(node))


@functools.cache
def _ufunc_arity(name: str) -> int | None:
    """The number of inputs of NumPy's ufunc ``name`` with one output, else None."""
    value = getattr(np, name, None)
    if isinstance(value, np.ufunc) and value.nout == 1:
        return value.nin
    return None
