"""Literal arguments of tensor functions in the syntax tree: axes, permutations, indices,
``keepdims`` flags and shapes (ints, ``-1``, dimension names of ``shapes=`` and their products).

Only literals are accepted, so an index, axis or shape can never be computed from input data.
"""

from __future__ import annotations

import ast
from typing import NoReturn

import sympy as sp

from .shapes import Dim

_MAX_INT = 2**62


class Literals:
    """Mixin of the tensor parser: reads literal arguments, failing with a positioned error."""

    dims: dict[str, sp.Symbol]

    def fail(self, message: str, node: ast.AST | int) -> NoReturn:  # pragma: no cover
        raise NotImplementedError

    def integer(self, node: ast.AST, message: str = "expected an integer literal") -> int:
        sign = 1
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            sign, node = -1, node.operand
        if not (isinstance(node, ast.Constant) and type(node.value) is int):
            self.fail(message, node)
        if node.value > _MAX_INT:
            self.fail("integer is too large", node)
        return sign * node.value

    def int_tuple(self, node: ast.AST) -> tuple[int, ...]:
        if isinstance(node, ast.Tuple | ast.List):
            return tuple(self.integer(e) for e in node.elts)
        return (self.integer(node),)

    def axes(self, node: ast.AST) -> int | tuple[int, ...] | None:
        if isinstance(node, ast.Constant) and node.value is None:
            return None
        if isinstance(node, ast.Tuple | ast.List):
            return self.int_tuple(node)
        return self.integer(node, "axis must be an integer literal, a tuple of them or None")

    def boolean(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Constant) and type(node.value) is bool:
            return node.value
        self.fail("expected True or False", node)

    def dim(self, node: ast.AST) -> Dim:
        """A dimension: an int literal, a dimension name of shapes=, or a product of them."""
        if isinstance(node, ast.Name):
            if node.id not in self.dims:
                self.fail(f"{node.id!r} is not a dimension name of shapes=", node)
            return self.dims[node.id]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            return self.dim(node.left) * self.dim(node.right)
        return self.integer(node, "expected a dimension: an int, a dimension name or a product")

    def shape_literal(self, node: ast.AST) -> tuple[Dim, ...]:
        items = node.elts if isinstance(node, ast.Tuple | ast.List) else [node]
        return tuple(self.dim(item) for item in items)
