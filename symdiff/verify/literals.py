"""Small tests of syntax-tree pieces: literal ints, plain indices, ``axis=None``, name tuples."""

from __future__ import annotations

import ast


def plain_index(index: ast.AST) -> bool:
    """Indexing by literals only: ints, slices of ints, ``None``, ``...`` and lists of ints
    (``_t0[[0, 2, 3]]``, a gather's rows)."""
    items = index.elts if isinstance(index, ast.Tuple) else [index]
    return all(_plain_item(item) for item in items)


def _plain_item(item: ast.AST) -> bool:
    if isinstance(item, ast.Slice):
        return all(p is None or literal_int(p) for p in (item.lower, item.upper, item.step))
    if isinstance(item, ast.Constant) and (item.value is None or item.value is Ellipsis):
        return True
    return literal_int(item) or int_list(item)


def int_list(node: ast.AST) -> bool:
    """A non-empty list of int literals: ``[0, 2, -1]``."""
    return isinstance(node, ast.List) and bool(node.elts) and all(
        literal_int(item) for item in node.elts
    )


def literal_int(node: ast.AST) -> bool:
    """An int literal, possibly negated (``3``, ``-1``); never a bool."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int


def all_axes(item: ast.keyword) -> bool:
    """``axis=None``: a reduction over every axis (``None`` is no other constant's value)."""
    return item.arg == "axis" and isinstance(item.value, ast.Constant) and item.value.value is None


def names_tuple(node: ast.AST, params: set[str]) -> bool:
    """``('x', 'y')``: the names of parameters, which a helper that checks the arguments (the
    first argument of those in :data:`NAMING_HELPERS`) uses in its messages."""
    return (
        isinstance(node, ast.Tuple)
        and bool(node.elts)
        and all(
            isinstance(item, ast.Constant) and type(item.value) is str and item.value in params
            for item in node.elts
        )
    )

