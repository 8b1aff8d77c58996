"""Walks of SymPy expressions that visit each distinct subexpression once.

A SymPy expression is a DAG: a traced recurrence (``x = x - h*(x**2 - a)`` unrolled) or a
derivative built by the chain rule holds the same subexpression in many places, and its tree
(every path from the root) grows exponentially with the depth while its distinct nodes grow
linearly. SymPy's own walks (``free_symbols``, ``has``, ``atoms``, ``replace``, ``xreplace``,
printing) follow the tree. These follow the DAG: each distinct node is visited once, so they
cost the number of distinct nodes, whatever the sharing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import sympy as sp

from .budget import operation_nodes, own_free_symbols
from .quick import rebuilt


def distinct_nodes(exprs: Iterable[sp.Basic]) -> list[sp.Basic]:
    """Every distinct subexpression of ``exprs``, each once (children before parents)."""
    order: list[sp.Basic] = []
    seen: set[sp.Basic] = set()
    for root in exprs:
        if root in seen:
            continue
        stack: list[tuple[sp.Basic, bool]] = [(root, False)]
        while stack:
            node, expanded = stack.pop()
            if expanded:
                order.append(node)
                continue
            if node in seen:
                continue
            seen.add(node)
            stack.append((node, True))
            stack.extend((a, False) for a in node.args if a not in seen)
    return order


def depth(exprs: Iterable[sp.Basic]) -> int:
    """The most operations nested in one another in ``exprs`` (0 for a name or a number),
    counted over the DAG."""
    exprs = list(exprs)
    height: dict[sp.Basic, int] = {}
    for node in distinct_nodes(exprs):
        height[node] = 1 + max(height[a] for a in node.args) if node.args else 0
    return max((height[e] for e in exprs), default=0)


def node_count(exprs: Iterable[sp.Basic]) -> int:
    """The number of distinct compound subexpressions of ``exprs`` (operation nodes of the
    DAG)."""
    return sum(1 for node in distinct_nodes(exprs) if node.args)


def tree_size(expr: sp.Basic, cap: int = 10**12) -> int:
    """The operation nodes of ``expr``'s tree, as SymPy's walks see it (at most ``cap``),
    counted over the DAG (:func:`symdiff.simplify.budget.operation_nodes`)."""
    return operation_nodes(expr, cap)


def larger_than(expr: sp.Basic, limit: int) -> bool:
    """Whether ``expr``'s tree has more than ``limit`` operation nodes, found by walking at
    most ``limit + 1`` of them (a quick test however large the expression)."""
    count, pending = 0, [expr]
    while pending:
        node = pending.pop()
        if node.args:
            count += 1
            if count > limit:
                return True
            pending.extend(node.args)
    return False


def free_symbols(exprs: Iterable[sp.Basic]) -> set[sp.Basic]:
    """The free symbols of ``exprs`` (a type with bound variables asked directly)."""
    found: set[sp.Basic] = set()
    seen: set[sp.Basic] = set()
    pending = list(exprs)
    while pending:
        node = pending.pop()
        if node in seen:
            continue
        seen.add(node)
        if node.is_Symbol:
            found.add(node)
        elif node.is_Atom or own_free_symbols(type(node)):
            found |= node.free_symbols
        else:
            pending.extend(node.args)
    return found


def has_type(expr: sp.Basic, *types: type) -> bool:
    """Whether a subexpression of ``expr`` is an instance of one of ``types``."""
    seen: set[sp.Basic] = set()
    pending = [expr]
    while pending:
        node = pending.pop()
        if isinstance(node, types):
            return True
        seen.add(node)
        pending.extend(a for a in node.args if a not in seen)
    return False


def contains(expr: sp.Basic, *targets: sp.Basic) -> bool:
    """Whether one of ``targets`` is a subexpression of ``expr`` (``expr.has(*targets)`` for
    expressions)."""
    wanted = set(targets)
    seen: set[sp.Basic] = set()
    pending = [expr]
    while pending:
        node = pending.pop()
        if node in wanted:
            return True
        seen.add(node)
        pending.extend(a for a in node.args if a not in seen)
    return False


def atoms_of(expr: sp.Basic, *types: type) -> set[sp.Basic]:
    """The subexpressions of ``expr`` that are instances of ``types`` (``expr.atoms(*types)``)."""
    return {node for node in distinct_nodes([expr]) if isinstance(node, types)}


def walk(expr: sp.Basic, rule: Callable[[sp.Basic], sp.Basic]) -> sp.Basic:
    """SymPy's ``replace`` walk, each distinct node once: the arguments first, the node rebuilt
    from them when one changed (through :func:`symdiff.simplify.quick.rebuilt`), then ``rule``
    applied to it (unless it rebuilt into one of its own changed arguments, as SymPy's
    ``simultaneous`` walk does)."""
    done: dict[sp.Basic, sp.Basic] = {}
    for node in distinct_nodes([expr]):
        args = node.args
        if not args:
            done[node] = rule(node)
            continue
        new = tuple(done[a] for a in args)
        result = node
        if not all(map(equal, new, args)):
            result = rebuilt(node.func, new)
            if any(equal(result, old) and not equal(old, fresh)
                   for old, fresh in zip(args, new, strict=True)):
                done[node] = result
                continue
        done[node] = rule(result)
    return done[expr]


def equal(one: sp.Basic, other: sp.Basic) -> bool:
    """``one == other``, settled by identity or by the two (cached) hashes where they tell:
    SymPy's ``==`` compares two distinct trees level by level, which over a DAG whose nodes
    were rebuilt is its whole tree."""
    return one is other or (hash(one) == hash(other) and one == other)


def replace(expr: sp.Basic, query: Callable[[sp.Basic], object],
            value: Callable[[sp.Basic], sp.Basic]) -> sp.Basic:
    """``expr.replace(query, value)`` for a predicate ``query`` and a function ``value``, each
    distinct node visited once (:func:`walk`)."""

    def rule(node: sp.Basic) -> sp.Basic:
        if query(node):
            new = value(node)
            if new is not None and new != node:
                return new
        return node

    return walk(expr, rule)


def substitute(expr: sp.Basic, rule: dict) -> sp.Basic:
    """``expr.xreplace(rule)``, each distinct node visited once."""
    if not rule:
        return expr
    done: dict[sp.Basic, sp.Basic] = {}
    for node in distinct_nodes([expr]):  # (below a replaced node too: simpler, and linear)
        if node in rule:
            done[node] = rule[node]
        elif node.args:
            new = tuple(done[a] for a in node.args)
            done[node] = node if new == node.args else rebuilt(node.func, new)
        else:
            done[node] = node
    return done[expr]
