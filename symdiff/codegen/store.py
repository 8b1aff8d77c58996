"""How the packed point path (:mod:`symdiff.codegen.pack`) stores a vector of values into its
register: ``_r[a:b] = <expression>`` computes the expression into a temporary and copies it,
while the expression's last operation written as a ufunc call with ``out=``
(``_np.subtract(<x>, <y>, out=_r[a:b])``) computes straight into the register: one array and
one copy fewer per store, the same operations on the same operands in the same order."""

from __future__ import annotations

import ast

import numpy as np

#: The ufunc of each binary operator the stores rewrite (``**`` is left as it is: NumPy squares
#: ``x**2`` quicker than ``power`` does).
BINARY = {ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "divide"}
#: The ufunc methods whose result has the length of the run they store into.
METHODS = frozenset({"accumulate", "reduceat"})


def store(target: str, code: str) -> str:
    """The statement that stores the value of ``code`` (an expression) into ``target`` (a run
    of the register): its last operation with ``out=target`` where that operation is a ufunc
    call or a binary operator of one, else the assignment ``target = code``."""
    node = ast.parse(code, mode="eval").body
    operation = _last_operation(node)
    if operation is None:
        return f"{target} = {code}"
    func, args = operation
    return f"{func}({', '.join(ast.unparse(a) for a in args)}, out={target})"


def _last_operation(node: ast.expr) -> tuple[str, list[ast.expr]] | None:
    """The ufunc (as text) and operands of ``node``'s last operation, if it is one."""
    if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
        return f"_np.{BINARY[type(node.op)]}", [node.left, node.right]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return "_np.negative", [node.operand]
    if not (isinstance(node, ast.Call) and not node.keywords and node.args
            and isinstance(node.func, ast.Attribute)):
        return None
    func = node.func
    owner = func.value
    if isinstance(owner, ast.Name) and owner.id == "_np":  # ``_np.exp(x)``
        ufunc = getattr(np, func.attr, None)
        if isinstance(ufunc, np.ufunc) and ufunc.nin == len(node.args) and ufunc.nout == 1:
            return ast.unparse(func), list(node.args)
        return None
    if (func.attr in METHODS and isinstance(owner, ast.Attribute)
            and isinstance(owner.value, ast.Name) and owner.value.id == "_np"
            and isinstance(getattr(np, owner.attr, None), np.ufunc)):  # ``_np.add.reduceat``
        return ast.unparse(func), list(node.args)
    return None
