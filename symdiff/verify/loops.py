"""The check of a Numba module's compiled functions (``backend="numba"``,
:mod:`symdiff.codegen.loops`): the one decorator each may carry, and the exact shape of the
loop ``_loop``::

    @_numba.njit(cache=True, nogil=True, fastmath=False, error_model="numpy")
    def _loop(x, y, _out, _start, _stop):
        \"\"\"...\"\"\"
        for _i in range(_start, _stop):
            _out[0][_i], _out[1][_i] = _formulas(_at(x, _i), _at(y, _i))

(``_out`` a tuple of one array per output), or, filling an array result's entries,
``_out[0, 0, _i], _out[0, 1, _i] = _formulas(...)`` and mirrored entries copied,
``_out[1, 0, _i] = _out[0, 1, _i]``.
"""

from __future__ import annotations

import ast
import functools
import keyword

from .allowed import (
    BLOCK_SLICES,
    FORMULAS,
    INTERNAL,
    MODULE_NAMES,
    NUMBA_AT,
    NUMBA_LOOPS,
    PARAM,
    VECTOR,
)
from .errors import refuse

INDEX, START, STOP = "_i", "_start", "_stop"


@functools.cache
def _decorator_dump(text: str) -> str:
    return ast.dump(ast.parse(text[1:], mode="eval").body)


@functools.cache
def _range_dump() -> str:
    return ast.dump(ast.parse(f"range({START}, {STOP})", mode="eval").body)


def check_decorator(func: ast.FunctionDef, *texts: str) -> None:
    """Refuse ``func`` unless its one decorator is one of ``texts`` (``@_numba.njit(...)``)."""
    if len(func.decorator_list) != 1 or ast.dump(func.decorator_list[0]) not in {
            _decorator_dump(text) for text in texts}:
        raise refuse(func, f"{func.name} takes exactly the decorator {' or '.join(texts)}")


def check_loop(func: ast.FunctionDef, helpers: set[str]) -> None:
    """Refuse a loop function unless it has the shape shown in this module's docstring."""
    check_decorator(func, NUMBA_LOOPS[func.name])
    args = func.args
    if (args.vararg or args.kwarg or args.posonlyargs or args.kwonlyargs or args.defaults
            or func.returns or [a.arg for a in args.args[-3:]] != [BLOCK_SLICES, START, STOP]
            or any(a.annotation for a in args.args[-3:])):
        raise refuse(func, "a loop takes plain parameters, the last _out, _start and _stop")
    params = set()
    for arg in args.args[:-3]:
        name = arg.arg
        plain = PARAM.match(name) and not keyword.iskeyword(name)
        internal = INTERNAL.match(name) and name not in helpers and name not in MODULE_NAMES
        if arg.annotation or not (plain or internal or name == VECTOR) or name in (
                INDEX, BLOCK_SLICES, FORMULAS, START, STOP) or name in params:
            raise refuse(arg, f"bad parameter {name!r}")
        params.add(name)
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.For):
        raise refuse(func, "a loop's body is one for statement")
    loop = body[0]
    if (not isinstance(loop.target, ast.Name) or loop.target.id != INDEX or loop.orelse
            or ast.dump(loop.iter) != _range_dump() or not loop.body):
        raise refuse(loop, f"a loop runs {INDEX} over range({START}, {STOP})")
    first, *mirrors = loop.body
    if not (isinstance(first, ast.Assign) and len(first.targets) == 1
            and _outputs(first.targets[0]) and _formulas_call(first.value, params)
            and (NUMBA_AT in helpers or not first.value.args)):
        raise refuse(first, f"a loop writes what {FORMULAS} returns into _out")
    for statement in mirrors:
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and _out_entry(statement.targets[0]) and _out_entry(statement.value)):
            raise refuse(statement, "a loop copies entries of _out only")


def _out_entry(node: ast.AST) -> bool:
    """``_out[1, 0, _i]`` (integer literals, then the index) or ``_out[1][_i]``."""
    if (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Name)
            and node.slice.id == INDEX and isinstance(node.value, ast.Subscript)
            and isinstance(node.value.value, ast.Name) and node.value.value.id == BLOCK_SLICES
            and isinstance(node.value.slice, ast.Constant)
            and type(node.value.slice.value) is int):
        return True
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
            and node.value.id == BLOCK_SLICES and isinstance(node.slice, ast.Tuple)):
        return False
    *fixed, last = node.slice.elts
    return (bool(fixed) and isinstance(last, ast.Name) and last.id == INDEX
            and all(isinstance(i, ast.Constant) and type(i.value) is int for i in fixed))


def _outputs(node: ast.AST) -> bool:
    """One entry of ``_out``, or a tuple of them."""
    if isinstance(node, ast.Tuple):
        return bool(node.elts) and all(_out_entry(e) for e in node.elts)
    return _out_entry(node)


def _formulas_call(node: ast.AST, params: set[str]) -> bool:
    """``_formulas(_at(x, _i), _at(y, _i))``: each argument a parameter at the index."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == FORMULAS and not node.keywords
            and all(_at_index(a, params) for a in node.args))


def _at_index(node: ast.AST, params: set[str]) -> bool:
    """``_at(x, _i)`` of a parameter ``x``."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == NUMBA_AT and not node.keywords and len(node.args) == 2
            and isinstance(node.args[0], ast.Name) and node.args[0].id in params
            and isinstance(node.args[1], ast.Name) and node.args[1].id == INDEX)

