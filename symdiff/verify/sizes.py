"""Bounds on the sizes a generated module writes as constants: an array allocated with a
constant shape (``_np.full((20000,)*3, 1.0)``, or through a helper that allocates the shape it
is given), the register of a packed function. No request makes one larger than
:data:`MAX_CONSTANT_ELEMENTS`, so a module that does is refused before it runs, instead of
raising ``MemoryError`` (or being killed for memory) at call time. Sequences are never
repeated (``(n,) * 3``) in generated code."""

from __future__ import annotations

import ast

from .errors import refuse

MAX_CONSTANT_ELEMENTS = 2**32
"""The most elements a constant shape may describe (32 GiB of float64)."""

#: The array functions that allocate, and which argument is the shape (``eye``: the two
#: sides; ``repeat``: the count).
ALLOCATING = {"empty": 0, "zeros": 0, "ones": 0, "full": 0, "broadcast_to": 1, "eye": 0,
              "repeat": 1}
#: The runtime helpers (:mod:`symdiff.runtime`) that allocate arrays of a shape they are given
#: as an argument, and which argument it is (``_elementwise``'s ``leading=`` is checked where
#: its call is).
ALLOCATING_HELPERS = {"_as_output": 1, "_in_blocks": 2, "_xp_as_output": 2, "_xp_in_blocks": 2}
_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Pow)


def constant_int(node: ast.AST) -> int | None:
    """The value of ``node`` if it is int literals and arithmetic on them, else None. Values
    beyond :data:`MAX_CONSTANT_ELEMENTS` come back as ``MAX_CONSTANT_ELEMENTS + 1`` (they are
    never computed: ``10**10**10`` is not evaluated)."""
    limit = MAX_CONSTANT_ELEMENTS + 1
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return min(abs(node.value), limit)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        return constant_int(node.operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, _OPERATORS):
        left, right = constant_int(node.left), constant_int(node.right)
        if left is None or right is None:
            return None
        op = node.op
        if isinstance(op, ast.Pow):
            if right == 0 or left <= 1:
                return 1 if right == 0 else left
            if right >= 64 or left.bit_length() * right > 64:
                return limit
            value = left**right
        elif isinstance(op, ast.Mult):
            value = left * right
        elif isinstance(op, ast.Add):
            value = left + right
        elif isinstance(op, ast.Sub):
            value = abs(left - right)
        else:
            value = left // right if right else 0
        return min(value, limit)
    return None


def constant_elements(node: ast.AST) -> int:
    """The number of elements the constant parts of shape ``node`` describe: an int, or a
    tuple whose int items multiply (items known only when called count as 1)."""
    if isinstance(node, ast.Tuple | ast.List):
        total = 1
        for item in node.elts:
            total = min(total * max(constant_int(item) or 1, 1), MAX_CONSTANT_ELEMENTS + 1)
        return total
    return max(constant_int(node) or 1, 1)


def check_size(node: ast.AST, elements: int) -> None:
    """Refuse ``node`` if it describes more than :data:`MAX_CONSTANT_ELEMENTS` elements."""
    if elements > MAX_CONSTANT_ELEMENTS:
        raise refuse(node, f"a constant shape of more than {MAX_CONSTANT_ELEMENTS} elements "
                           "(declare dimensions this large by name)")


def check_binop(node: ast.BinOp) -> None:
    """No repetition of a sequence (``(20000,) * 3``, ``[0] * n``)."""
    sequences = (ast.Tuple, ast.List)
    if isinstance(node.op, ast.Mult) and (isinstance(node.left, sequences)
                                          or isinstance(node.right, sequences)):
        raise refuse(node, "unexpected repetition of a sequence")


def check_allocation(node: ast.Call, function: str) -> None:
    """The shape of an allocating call (``function``, a name of :data:`ALLOCATING` or of
    :data:`ALLOCATING_HELPERS`)."""
    where = ALLOCATING.get(function, ALLOCATING_HELPERS.get(function, 0))
    if len(node.args) <= where:
        return
    elements = constant_elements(node.args[where])
    if function == "eye":
        other = node.args[1] if len(node.args) > 1 else node.args[0]
        elements *= constant_elements(other)
    check_size(node, elements)
