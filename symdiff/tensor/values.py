"""Elementwise values being composed, shared by the tensor parser and the tensor tracer.

A chain of elementwise operations (``log(1 + exp(-y * z))``) is kept as one SymPy expression in
placeholders ``_p0, _p1, ...``, each standing for a tensor node, until a non-elementwise
operation needs it as a node: then it becomes *one* ``map`` node, in stable forms (so
``log(1 + exp(u))`` is ``softplus(u)``). A traced function's value that has grown large
(:func:`large_elementwise`) becomes a node when it is used again, so that a loop's state is
computed once per step. Text and traced functions build the same graph, and so
the same code, for the same computation.
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from ..codegen import naming
from ..functions import held
from ..simplify import operation_nodes, stable_forms
from ..simplify.dag import has_type, replace
from .ir import Node, arg_symbol
from .ops import Builder
from .shapes import Shape

#: An elementwise expression with more operations than this in its tree becomes a node when a
#: traced function uses it again (:func:`large_elementwise`).
ELEMENTWISE_MAX_OPS = 24


def large_elementwise(expr: sp.Expr) -> bool:
    """Whether a traced elementwise value is large enough to be computed as a node of its own
    before it is used again: a loop over time (``c = f*c + i*g`` in an LSTM, a fixed-point
    iteration) would otherwise compose every step into one expression, which grows with the
    number of steps (exponentially where a step reads the state twice, ``x - h*(x**2 - a)``),
    and so would its simplification and differentiation. As nodes, the steps are a chain of
    temporaries, each step's expression the same small size."""
    return operation_nodes(expr, ELEMENTWISE_MAX_OPS + 1) > ELEMENTWISE_MAX_OPS


#: An elementwise expression read a second time becomes a node when it has more operations
#: (smaller ones are written out again: ``1 + exp(-u)`` stays where stable forms find it).
REREAD_MAX_OPS = 4


def reread_elementwise(expr: sp.Expr) -> bool:
    """Whether a traced elementwise value read a second time is computed as a node of its own
    first: a loop's state (``c = f*c + i*g`` then ``h = o*tanh(c)``), read once by the step
    that made it and again by the next, is then one node per step, and every step's
    expressions are the same (so are their derivatives, derived once)."""
    return operation_nodes(expr, REREAD_MAX_OPS + 1) > REREAD_MAX_OPS


#: An elementwise node read more than once by its one user is composed into it only when its
#: expression has at most this many operations.
COMPOSE_REREAD_MAX_OPS = 8


def composes(node: Node, user: Node) -> bool:
    """Whether ``node`` may be composed into ``user`` (a ``map`` reading it, or a gathering
    sum): ``user`` reads it once, or its expression is small."""
    if user.op != "map" or operation_nodes(node.attrs[0]) <= COMPOSE_REREAD_MAX_OPS:
        return True
    (expr,) = user.attrs
    symbols = {arg_symbol(i) for i, arg in enumerate(user.args) if arg is node}
    reads = sum(1 for part in sp.preorder_traversal(expr) if part in symbols)
    return reads <= 1


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
        #: The placeholder of each held value (``held(u)``) that became a node.
        self.held_nodes: dict[sp.Expr, sp.Symbol] = {}

    def elem(self, node: Node) -> Elem:
        """A node as an elementwise value (its placeholder)."""
        symbol = self.placeholders.get(id(node))
        if symbol is None:
            symbol = sp.Symbol(naming.placeholder(len(self.placeholders)), real=True)
            self.placeholders[id(node)] = symbol
            self.nodes[symbol] = node
        return Elem(symbol, node.shape)

    def tensor(self, value: Elem) -> Node:
        """The node computing an elementwise value (its held values, :meth:`release`d)."""
        expr = self.release(value.expr)
        if expr in self.nodes:
            node = self.nodes[expr]
        else:
            used = sorted((s for s in expr.free_symbols if s in self.nodes),
                          key=lambda s: int(s.name[2:]))
            expr = stable_forms(expr.xreplace({s: arg_symbol(i) for i, s in enumerate(used)}))
            node = self.b.map(expr, [self.nodes[s] for s in used])
        return self.b.broadcast(node, value.shape)

    def release(self, expr: sp.Expr) -> sp.Expr:
        """``expr`` with each ``held(u)`` (a traced value that may be read again) replaced by
        the placeholder of its node where it became one (:attr:`held_nodes`), else by ``u``."""
        if not has_type(expr, held):
            return expr
        return replace(expr, lambda n: isinstance(n, held),
                       lambda n: self.held_nodes.get(n, n.args[0]))
