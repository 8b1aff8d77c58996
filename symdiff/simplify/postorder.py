"""Values of the nodes of a DAG, each node once and its arguments first: :func:`bottom_up`."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

import sympy as sp

V = TypeVar("V")


def _arguments(node: sp.Basic) -> tuple[sp.Basic, ...]:
    return node.args


def bottom_up(root: sp.Basic, done: dict[sp.Basic, V], value: Callable[[sp.Basic], V],
              children: Callable[[sp.Basic], Iterable[sp.Basic]] = _arguments) -> V:
    """``done[root]``, after ``done[node] = value(node)`` for ``root`` and each node below it
    not in ``done`` yet, every node's ``children`` (its arguments, unless given) before the
    node (so ``value`` reads theirs from ``done``). Iterative: no recursion however deep the
    expression."""
    stack = [root]
    while stack:
        node = stack[-1]
        if node in done:
            stack.pop()
            continue
        missing = [a for a in children(node) if a not in done]
        if missing:
            stack.extend(missing)
            continue
        stack.pop()
        done[node] = value(node)
    return done[root]
