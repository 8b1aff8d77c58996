"""Elementwise values being composed, shared by the tensor parser and the tensor tracer.

A chain of elementwise operations (``log(1 + exp(-y * z))``) is kept as one SymPy expression in
placeholders ``_p0, _p1, ...``, each standing for a tensor node, until a non-elementwise
operation needs it as a node: then it becomes *one* ``map`` node, in stable forms (so
``log(1 + exp(u))`` is ``softplus(u)``). Text and traced functions build the same graph, and so
the same code, for the same computation.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..codegen import naming
from ..simplify import stable_forms
from .ir import Node, arg_symbol
from .ops import Builder
from .shapes import Shape


@dataclass(frozen=True)
class Elem:
    """An elementwise value: a SymPy expression in placeholders of tensor nodes, and its shape."""

    expr: sp.Expr
    shape: Shape


class Values:
    """The placeholders of one parse or trace, and the builder their nodes live in."""

    def __init__(self, builder: Builder):
        self.b = builder
        self.placeholders: dict[int, sp.Symbol] = {}
        self.nodes: dict[sp.Symbol, Node] = {}

    def elem(self, node: Node) -> Elem:
        """A node as an elementwise value (its placeholder)."""
        symbol = self.placeholders.get(id(node))
        if symbol is None:
            symbol = sp.Symbol(naming.placeholder(len(self.placeholders)), real=True)
            self.placeholders[id(node)] = symbol
            self.nodes[symbol] = node
        return Elem(symbol, node.shape)

    def tensor(self, value: Elem) -> Node:
        """The node computing an elementwise value."""
        if value.expr in self.nodes:
            node = self.nodes[value.expr]
        else:
            used = sorted((s for s in value.expr.free_symbols if s in self.nodes),
                          key=lambda s: int(s.name[2:]))
            expr = stable_forms(value.expr.xreplace({s: arg_symbol(i) for i, s in enumerate(used)}))
            node = self.b.map(expr, [self.nodes[s] for s in used])
        return self.b.broadcast(node, value.shape)
