"""The check of the packed point path (:mod:`symdiff.codegen.pack`): the module constants it
reads, the public function's point test that calls it and the packed function itself.

The packed function has one parameter, the register ``_r``; each statement but the last
stores one expression into a run of it (``_r[1000:1999] = 200*(_r[1:1000] - _r[0:999]**2)``,
or a call of a ufunc, or of an operator's ufunc, with ``out=`` that run:
``_np.subtract(_r[1:1000], _r[0:999]**2, out=_r[1000:1999])``) and the last returns an
expression. Its expressions are those of ``_formulas`` plus reads of
``_r`` at an int, a slice of ints or a module index array (``_r[_ix0]``) and the reductions
``_np.add.reduce(at)``/``_np.multiply.reduce(at)`` and ``accumulate`` (running sums and
products). Module constants are ``_ix<n>`` /
``_cv<n> = _np.array([<numbers>])``: a list of int or float literals, or one of them (a 0-d
array: ``_cv<n> = _np.array(200.0)``), nothing else.
"""

from __future__ import annotations

import ast
import re

from .allowed import OPERATOR_UFUNCS, PACKED, PACKED_HELPER, PACKED_REDUCTIONS, REGISTER, VECTOR
from .errors import refuse
from .expressions import ExpressionChecker
from .literals import literal_int
from .sizes import MAX_CONSTANT_ELEMENTS, constant_int

#: The names of a packed function's module constants: index arrays and constant arrays.
PACKED_CONSTANT = re.compile(r"_(ix|cv)\d+\Z")


def packed_constant(node: ast.stmt) -> str | None:
    """The name ``node`` binds if it is a packed function's module constant, else None."""
    if not (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and PACKED_CONSTANT.match(node.targets[0].id)
    ):
        return None
    value = node.value
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Attribute)
        and value.func.attr == "array"
        and isinstance(value.func.value, ast.Name)
        and value.func.value.id == "_np"
        and len(value.args) == 1
        and not value.keywords
        and (_number(value.args[0]) or (
            isinstance(value.args[0], ast.List)
            and value.args[0].elts
            and all(_number(e) for e in value.args[0].elts)))
    ):
        raise refuse(node, "a packed constant is _np.array of a number or a list of numbers")
    return node.targets[0].id


def _number(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def check_packed_call(value: ast.AST, params: set[str]) -> bool:
    """``_at_packed(_packed, (x, y, ...), <size>, <nest>)``: the packed function, every
    parameter once, an int size and a nest of int literals; or a Hessian-vector product's
    ``_at_packed(_packed, (x, y, *_v), <size>, None)``: the direction's components last."""
    if not (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == PACKED_HELPER
        and not value.keywords
        and len(value.args) == 4
        and isinstance(value.args[0], ast.Name)
        and value.args[0].id == PACKED
        and isinstance(value.args[1], ast.Tuple)
        and literal_int(value.args[2])
        and constant_int(value.args[2]) <= MAX_CONSTANT_ELEMENTS
    ):
        return False
    inputs, nest = value.args[1].elts, value.args[3]
    last = inputs[-1] if inputs else None
    if (isinstance(last, ast.Starred) and isinstance(last.value, ast.Name)
            and last.value.id == VECTOR):
        inputs = [*inputs[:-1], last.value]
        if not (isinstance(nest, ast.Constant) and nest.value is None):
            return False
    elif not _nest(nest):
        return False
    return (all(isinstance(a, ast.Name) for a in inputs)
            and sorted(a.id for a in inputs) == sorted(params))


def _nest(node: ast.AST) -> bool:
    if isinstance(node, ast.Tuple):
        return bool(node.elts) and all(_nest(e) for e in node.elts)
    return literal_int(node)


class _PackedChecker(ExpressionChecker):
    """Expressions of the packed function: reads of the register, the reductions."""

    def __init__(self, helpers: set[str], constants: set[str]) -> None:
        super().__init__({REGISTER}, helpers)
        self.constants = constants

    def visit_Name(self, node: ast.Name) -> list[ast.AST]:
        if PACKED_CONSTANT.match(node.id) and node.id not in self.constants:
            raise refuse(node, f"unknown packed constant {node.id!r}")
        return super().visit_Name(node)

    def visit_Subscript(self, node: ast.Subscript) -> list[ast.AST]:
        if register_read(node, self.constants):
            return []
        raise refuse(node, "unexpected subscript")

    def visit_Attribute(self, node: ast.Attribute, callee: bool = False) -> list[ast.AST]:
        owner = node.value
        if (
            callee
            and node.attr in ("reduce", "reduceat", "accumulate")
            and isinstance(owner, ast.Attribute)
            and owner.attr in PACKED_REDUCTIONS
            and isinstance(owner.value, ast.Name)
            and owner.value.id == "_np"
        ):
            return []
        return super().visit_Attribute(node, callee)


def register_read(node: ast.AST, constants: set[str]) -> bool:
    """``_r[3]``, ``_r[0:999]``, ``_r[998::-1]`` or ``_r[_ix0]``."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
            and node.value.id == REGISTER):
        return False
    item = node.slice
    if isinstance(item, ast.Slice):
        return all(p is None or literal_int(p) for p in (item.lower, item.upper, item.step))
    if isinstance(item, ast.Name):
        return item.id in constants and item.id.startswith("_ix")
    return literal_int(item)


def check_packed_function(func: ast.FunctionDef, helpers: set[str], constants: set[str]) -> None:
    """Refuse ``func`` unless it is a packed function as described above."""
    args = func.args
    if (args.vararg or args.kwarg or args.posonlyargs or args.kwonlyargs or args.defaults
            or [a.arg for a in args.args] != [REGISTER] or args.args[0].annotation
            or func.decorator_list or func.returns):
        raise refuse(func, f"a packed function has the one parameter {REGISTER}")
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]
    if not body or not isinstance(body[-1], ast.Return) or body[-1].value is None:
        raise refuse(func, "a packed function ends by returning its outputs")
    checker = _PackedChecker(helpers, constants)
    for statement in body[:-1]:
        if isinstance(statement, ast.Expr) and _stores_into_run(statement.value, constants):
            call = statement.value
            if not _operator_ufunc(call.func):  # its operands are checked below
                checker.visit(ast.copy_location(ast.Call(call.func, call.args, []), call))
            for operand in call.args:
                checker.visit(operand)
            continue
        if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
                and _run(statement.targets[0], constants)):
            raise refuse(statement, f"a packed function only stores into runs of {REGISTER}")
        checker.visit(statement.value)
    checker.visit(body[-1].value)  # type: ignore[attr-defined]


def _run(node: ast.AST, constants: set[str]) -> bool:
    """``_r[a:b]``: a run of the register."""
    return (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice)
            and register_read(node, constants))


def _stores_into_run(node: ast.AST, constants: set[str]) -> bool:
    """A call with operands and the one keyword ``out=`` a run of the register
    (``_np.subtract(x, y, out=_r[100:199])``): the store of :mod:`symdiff.codegen.store`."""
    return (isinstance(node, ast.Call) and bool(node.args) and len(node.keywords) == 1
            and node.keywords[0].arg == "out" and _run(node.keywords[0].value, constants))


def _operator_ufunc(func: ast.AST) -> bool:
    """``_np.add``, ``_np.subtract``, ...: an operator's ufunc, allowed only to store."""
    return (isinstance(func, ast.Attribute) and func.attr in OPERATOR_UFUNCS
            and isinstance(func.value, ast.Name) and func.value.id == "_np")
