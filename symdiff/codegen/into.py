"""The last operation of an output written straight into its block (NumPy's ``out=``).

``_in_blocks`` (:mod:`symdiff.codegen.helpers.blocks`) gives a module's ``_formulas`` the
slices of the full output arrays for each block after the first (``_into``, None otherwise).
An output line computed as a temporary and then copied into the full array makes one pass more
than needed; :func:`blocked_statement` writes the line's last operation as the NumPy ufunc the
operator stands for, with ``out=`` the output's slice, in a statement that states the formula
once: its compound operands first, as temporaries, then the last operation both ways::

    _t5 = D*_t2*a
    if _into is None:
        _r_bar = _as_output(_t5*_t0, _shape, _dtype)
    else:
        _r_bar = _np.multiply(_t5, _t0, out=_into[0])
    del _t5

The ufunc is exactly the one the operator calls (``*`` is ``multiply``, ``-a`` is
``negative``, ``a**2`` is ``square``), so the numbers are the same bit for bit; without a slice
(one call, the first block, a point of Python floats) the operator itself runs, as quick as
ever. A statement may span lines (the templates indent its continuation lines).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Sequence

import numpy as np

from .naming import INTO, temporaries

#: Binary operators and the ufuncs that ``ndarray`` calls for them.
_BINARY = {ast.Mult: "multiply", ast.Add: "add", ast.Sub: "subtract", ast.Div: "divide"}


def slot(index: int) -> str:
    """The slice of output ``index`` (depth-first in the returned structure) in ``_formulas``."""
    return f"{INTO}[{index}]"


def fresh_names(taken: set[str], variables: Sequence[str]) -> Callable[[], str]:
    """A source of temporaries' names (``_t<n>``) that are not in ``taken``."""
    names = (name for name in temporaries(variables) if name not in taken)
    return lambda: next(names)


def when_blocked(plain: str, into: str) -> str:
    """``plain`` for a block without slices (the first, or an unblocked call), else ``into``."""
    return f"{plain} if {INTO} is None else {into}"


#: The operator text of the ufuncs an operator calls (operands are names or numbers here).
_OPERATOR_TEXT = {
    "multiply": "{0}*{1}", "add": "{0} + {1}", "subtract": "{0} - {1}", "divide": "{0}/{1}",
    "square": "{0}**2", "negative": "-{0}",
}


def statement(target: str, code: str) -> str:
    """The statement text of an assignment ``(target, code)`` of the printed formulas: an
    empty target marks ``code`` as a whole statement (:func:`blocked_statement`)."""
    return f"{target} = {code}" if target else code


def blocked_statement(
    target: str, code: str, out: str, fresh: Callable[[], str], plain: str = "{}"
) -> str | None:
    """The statement that assigns ``code`` to ``target``, its last operation writing into the
    slice ``out`` when ``_into`` is given (see the module notes), or None when that operation
    is not a ufunc (a helper, ``where``, a general power). ``fresh`` names the temporaries of
    compound operands; ``plain`` wraps the value computed without a slice
    (``_as_output({}, _shape, _dtype)``)."""
    found = last_operation(code)
    if found is None:
        return None
    name, operands = found
    lines, names = [], []
    for operand in operands:
        if _simple(operand):
            names.append(operand)
        else:
            names.append(fresh())
            lines.append(f"{names[-1]} = {operand}")
    text = _OPERATOR_TEXT.get(name)
    value = text.format(*names) if text else f"_np.{name}({', '.join(names)})"
    written = f"_np.{name}({', '.join(names)}, out={out})"
    hoisted = [name for name, operand in zip(names, operands, strict=True) if name != operand]
    lines += [f"if {INTO} is None:", f"    {target} = {plain.format(value)}", "else:",
              f"    {target} = {written}"]
    if hoisted:  # freed at once, as the operands of a nested expression are: the next
        lines.append(f"del {', '.join(hoisted)}")  # block-sized array reuses cached memory
    return "\n".join(lines)


def _simple(operand: str) -> bool:
    """A name or a number, which reads as well twice as once (``x``, ``2``, ``-1/2``)."""
    tree = ast.parse(operand, mode="eval").body
    if isinstance(tree, ast.Name | ast.Constant | ast.Attribute):
        return True
    return isinstance(tree, ast.UnaryOp) and isinstance(tree.operand, ast.Constant)


def last_operation(code: str) -> tuple[str, list[str]] | None:
    """``(ufunc name, printed operands)`` of the last operation of ``code`` (a printed
    expression), or None when that operation is not a ufunc or reads no array."""
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
    return name, [text(a) for a in args]


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
