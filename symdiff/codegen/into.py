"""The last operation of an output written straight into its block (NumPy's ``out=``).

``_in_blocks`` (:mod:`symdiff.codegen.helpers.blocks`) gives a module's ``_formulas`` the
slices of the full output arrays for each block after the first (``_into``, None otherwise).
An output line computed as a temporary and then copied into the full array makes one pass more
than needed; :func:`into_slot` rewrites the line's last operation as the NumPy ufunc the
operator stands for, with ``out=`` the output's slice: ``_t1*x`` becomes
``_np.multiply(_t1, x, out=_into[0])``. The ufunc is exactly the one the operator calls
(``*`` is ``multiply``, ``-a`` is ``negative``, ``a**2`` is ``square``), so the numbers are the
same bit for bit; the printed operands are kept as they are.
"""

from __future__ import annotations

import ast
import functools

import numpy as np

from .naming import INTO

#: Binary operators and the ufuncs that ``ndarray`` calls for them.
_BINARY = {ast.Mult: "multiply", ast.Add: "add", ast.Sub: "subtract", ast.Div: "divide"}


def slot(index: int) -> str:
    """The slice of output ``index`` (depth-first in the returned structure) in ``_formulas``."""
    return f"{INTO}[{index}]"


def when_blocked(plain: str, into: str) -> str:
    """``plain`` for a block without slices (the first, or an unblocked call), else ``into``."""
    return f"{plain} if {INTO} is None else {into}"


def into_slot(code: str, target: str) -> str | None:
    """``code`` (a printed expression) with its last operation writing into ``target``, or
    None when that operation is not a ufunc (a helper, ``where``, a general power)."""
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
    ):
        name, args = tree.func.attr, list(tree.args)
    else:
        return None
    inner = ", ".join(text(a) for a in args)
    return f"_np.{name}({inner}, out={target})"


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
