"""Common-subexpression elimination across every output at once (:func:`shared_subexpressions`).

SymPy's ``cse`` (as :func:`symdiff.simplify.sympy_cse.cse` runs it: the same result without
re-evaluating the nodes it builds) is used as it is for expressions whose tree is about as
large as their DAG.
Where subexpressions are shared many times over (a traced recurrence, the derivative of a
deeply nested expression), its canonical ordering counts the nodes of every tree it sorts, a
cost exponential in the depth; there the shared nodes are named first, each distinct
subexpression once (:func:`shared_nodes`), and SymPy's ``cse`` runs on what is left.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from ..codegen.naming import TEMPORARY
from .budget import operation_nodes
from .dag import distinct_nodes, node_count
from .quick import rebuilt
from .shallow import shallow_lines
from .sympy_cse import cse

#: Prefix of generated temporaries. User names start with a letter, so they never collide.
TEMP_PREFIX = TEMPORARY
#: Expressions whose trees have more than this many times the operations of their DAG (and
#: more than :data:`SHARED_MIN_OPS`) have their shared nodes named first.
SHARING_RATIO = 4
SHARED_MIN_OPS = 2_000

Assignment = tuple[sp.Symbol, sp.Expr]


def shared_subexpressions(
    exprs: Sequence[sp.Expr],
) -> tuple[list[Assignment], list[sp.Expr]]:
    """CSE over all ``exprs`` together: (assignments in evaluation order, reduced outputs),
    no line deeper than :data:`~symdiff.simplify.shallow.MAX_LINE_DEPTH` operations."""
    names = sp.numbered_symbols(TEMP_PREFIX, real=True)
    exprs = list(exprs)
    cap = SHARING_RATIO * node_count(exprs) + SHARED_MIN_OPS
    if sum(operation_nodes(e, cap + 1) for e in exprs) > cap:
        named, exprs = shared_nodes(exprs, names)
        values = [value for _, value in named]
        assignments, reduced = cse([*values, *exprs], names)
        ordered = _in_order([*assignments, *zip((s for s, _ in named), reduced, strict=False)])
        return shallow_lines(ordered, list(reduced[len(values):]), names)
    assignments, reduced = cse(exprs, names)
    return shallow_lines(assignments, reduced, names)


def shared_nodes(
    exprs: Sequence[sp.Expr], names
) -> tuple[list[Assignment], list[sp.Expr]]:
    """Every compound subexpression of ``exprs`` that more than one node (or output) reads,
    named, children first: ``(assignments, outputs)`` in the names, each distinct subexpression
    visited once."""
    order = distinct_nodes(exprs)
    readers: dict[sp.Basic, int] = {}
    for node in order:
        for arg in set(node.args):
            readers[arg] = readers.get(arg, 0) + 1
    for expr in exprs:
        readers[expr] = readers.get(expr, 0) + 1
    done: dict[sp.Basic, sp.Basic] = {}
    named: list[Assignment] = []
    for node in order:
        if not node.args:
            done[node] = node
            continue
        new = tuple(done[a] for a in node.args)
        value = node if new == node.args else rebuilt(node.func, new)
        if readers.get(node, 0) > 1 and not value.is_Atom:
            symbol = next(names)
            named.append((symbol, value))
            value = symbol
        done[node] = value
    return named, [done[e] for e in exprs]


def _in_order(assignments: list[Assignment]) -> list[Assignment]:
    """``assignments`` with each placed after those whose targets it reads: depth first, in
    the order given where nothing needs to move."""
    value_of = dict(assignments)
    placed: set[sp.Symbol] = set()
    result: list[Assignment] = []
    for root, _ in assignments:
        stack = [(root, False)]
        while stack:
            symbol, ready = stack.pop()
            if symbol in placed:
                continue
            if ready:
                placed.add(symbol)
                result.append((symbol, value_of[symbol]))
                continue
            stack.append((symbol, True))
            needs = sorted((s for s in value_of[symbol].free_symbols
                            if s in value_of and s not in placed), key=str, reverse=True)
            stack.extend((s, False) for s in needs)
    return result
