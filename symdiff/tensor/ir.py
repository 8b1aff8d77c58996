"""Tensor expression nodes: a hash-consed DAG of operations with static shapes.

A :class:`Node` is an operation (``op``), its operand nodes (``args``), hashable parameters
(``attrs``) and its static shape. Nodes are created only through a :class:`Graph`, which
returns the existing node for a structurally equal request, so equal subexpressions are one
node (common-subexpression elimination for free) and nodes compare by identity.

The operations (``attrs`` in brackets):

========== ============================================================================
var        a parameter of the function [name]
const      a bound constant: a NumPy array a traced function closed over or built, passed as
           a trailing parameter by the compiled function (never written into the source); no
           gradient flows into it [name ``_c0``..., dtype name]
fill       a constant array of the node's shape [value: SymPy number or dimension expression]
eye        the identity seed of forward mode: shape ``S + (size(S),)`` []
map        an elementwise SymPy expression of the args, which broadcast [expr in ``_a0, _a1..``]
matmul     ``a @ b`` []
sum, mean, max, min, logsumexp, prod
           reductions [axes (sorted, positive), keepdims]
prod_others
           per element, the product of the other elements along the axes (the gradient of
           ``prod``, zero-safe: no division) [axes]
softmax    ``exp(a) / sum(exp(a))`` along one axis [axis]
share      gradient share of a max/min with ties split evenly: args ``(a, m)`` with ``m`` the
           reduced value kept to ``a``'s rank [kind ("max"/"min"), axes]
transpose  [perm]
reshape    to the node's shape []
expand     insert size-1 axes [axes, positions in the result]
broadcast  ``broadcast_to`` the node's shape []
index      basic indexing [index items: int, or (start, stop, step)]
scatter    zeros of the node's shape with the arg placed at [index]
repeat     ``np.repeat`` [repeats, axis]
========== ============================================================================
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import sympy as sp

from ..codegen import naming
from ..keytext import key_repr
from .shapes import Shape

#: Leaves that are parameters of the generated function: variables and bound constants.
LEAF_PARAMETERS = frozenset({"var", "const"})

#: Operations that only re-view their operand (emitted inline, never as a temporary).
VIEWS = frozenset({"transpose", "expand", "broadcast", "index", "reshape"})


def arg_symbol(i: int) -> sp.Symbol:
    """The placeholder for argument ``i`` inside a ``map`` expression."""
    return sp.Symbol(naming.argument(i), real=True)


@dataclass(frozen=True, eq=False)
class Node:
    """One operation of a tensor expression. Compare by identity (the graph interns nodes)."""

    op: str
    args: tuple[Node, ...]
    attrs: tuple[Any, ...]
    shape: Shape

    @property
    def ndim(self) -> int:
        """Number of axes."""
        return len(self.shape)

    @property
    def name(self) -> str:
        """The parameter name of a ``var`` or ``const`` node."""
        assert self.op in LEAF_PARAMETERS
        return self.attrs[0]

    def __repr__(self) -> str:  # the formula: symdiff.tensor.formula.text(node)
        return f"<{self.op} {self.shape}>"


class Graph:
    """Interns nodes: one node per distinct (op, args, attrs, shape)."""

    def __init__(self) -> None:
        self._nodes: dict[tuple[Any, ...], Node] = {}
        self._serials: dict[int, int] = {}

    def node(self, op: str, args: Iterable[Node], attrs: tuple[Any, ...], shape: Shape) -> Node:
        """The node for this operation, created on first request."""
        args = tuple(args)
        key = (op, tuple(id(a) for a in args), attrs, shape)
        found = self._nodes.get(key)
        if found is None:
            found = self._nodes[key] = Node(op, args, attrs, shape)
            self._serials[id(found)] = len(self._serials)
        return found

    def serial(self, node: Node) -> int:
        """The order in which ``node`` was created in this graph: a deterministic key (the
        same build creates the same nodes in the same order) for putting nodes in a canonical
        order, so that equal sets of operands build one node."""
        return self._serials[id(node)]

    def __len__(self) -> int:
        return len(self._nodes)


def topological(roots: Iterable[Node]) -> list[Node]:
    """Every node reachable from ``roots``, operands before users, in a deterministic order
    (depth-first, operands left to right)."""
    order: list[Node] = []
    seen: set[int] = set()
    for root in roots:
        stack: list[tuple[Node, Iterator[Node]]] = []
        if id(root) in seen:
            continue
        seen.add(id(root))
        stack.append((root, iter(root.args)))
        while stack:
            node, pending = stack[-1]
            child = next(pending, None)
            if child is None:
                stack.pop()
                order.append(node)
            elif id(child) not in seen:
                seen.add(id(child))
                stack.append((child, iter(child.args)))
    return order


def rebuild(graph: Graph, roots: Sequence[Node], leaf: Callable[[Node], Node | None],
            change: Callable[[Any], Any] | None = None) -> list[Node]:
    """``roots`` made again in ``graph`` (which may be another graph), each node that ``leaf``
    maps to a node replaced by it, every other node rebuilt from its rebuilt operands with its
    attributes and shape passed through ``change`` (when given: named dimensions replaced)."""
    made: dict[int, Node] = {}
    for node in topological(roots):
        mapped = leaf(node)
        if mapped is None:
            args = [made[id(a)] for a in node.args]
            attrs, shape = node.attrs, node.shape
            if change is not None:
                attrs, shape = change(attrs), change(shape)
            mapped = graph.node(node.op, args, attrs, shape)
        made[id(node)] = mapped
    return [made[id(r)] for r in roots]


def variables(roots: Iterable[Node]) -> list[str]:
    """Names of the ``var`` nodes under ``roots``, sorted."""
    return sorted({n.name for n in topological(roots) if n.op == "var"})


# -- a faithful text of a graph (cache keys) ---------------------------------------------------
def serialize(roots: Sequence[Node]) -> str:
    """The graph under ``roots`` as text, one node a line in :func:`topological` order
    (``op(operand lines) attrs shape``, SymPy parts by :func:`~symdiff.keytext.key_repr`):
    equal texts mean graphs of the same structure, so the text keys generated code (a traced
    function's cache entry)."""
    order = topological(roots)
    line = {id(node): i for i, node in enumerate(order)}
    lines = []
    for node in order:
        operands = ",".join(str(line[id(a)]) for a in node.args)
        lines.append(f"{node.op}({operands}) {_exact(node.attrs)} {_exact(node.shape)}")
    lines.append("roots " + ",".join(str(line[id(r)]) for r in roots))
    return "\n".join(lines)


def _exact(value: Any) -> str:
    if isinstance(value, sp.Basic):
        return key_repr(value)
    if isinstance(value, tuple):
        return "(" + ",".join(_exact(v) for v in value) + ",)"
    return repr(value)


# -- text of attributes (for the printers) ---------------------------------------------------------
def format_axes(axes: tuple[int, ...]) -> str:
    """An ``axis=`` value as written in Python: ``1`` or ``(0, 2)``."""
    return str(axes[0]) if len(axes) == 1 else str(axes)


def format_index(index: tuple) -> str:
    """A basic index as written between brackets: ints and ``(start, stop, step)`` slices."""
    parts = []
    for item in index:
        if isinstance(item, int):
            parts.append(str(item))
            continue
        start, stop, step = ("" if v is None else str(v) for v in item)
        parts.append(f"{start}:{stop}" + (f":{step}" if step else ""))
    return ", ".join(parts)
