"""Building a :class:`~symdiff.graphs.Graph`: nodes from the linearisation, then values and
gradients at a point (the numeric forward and backward passes)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import sympy as sp

from ..build import expression, wrt_names
from ..errors import SymdiffError
from ..parsing.teaching import parse_as_written
from .model import Graph
from .nodes import GraphNode, mark_branches
from .text import OPERATORS
from .written import AsWritten


def graph(expr: object, at: Mapping[object, Any] | None = None, wrt: object = None, *,
          shapes: Mapping[str, Any] | None = None) -> Graph:
    """The computational graph of ``expr`` (string, SymPy expression or Python function).

    ``at`` maps every variable name to a number: then each node carries its forward value and
    its gradient d output / d node. ``wrt`` (default: every variable) names the inputs whose
    gradients :attr:`Graph.gradient` and :meth:`Graph.reverse_table` report.

    With ``shapes=`` (as ``sd.grad`` takes them) ``expr`` is a tensor expression (a string of
    the tensor language or a traced Python function) and ``at`` gives an array per variable:
    see :mod:`symdiff.graphs.tensor` (one node per operation or layer called, with its shape
    and backward rule; values and adjoints are arrays, the inputs' adjoints ``sd.grad``'s).

    Subtraction and division are nodes of their own, as written: ``a - b`` is a ``-`` node
    (local partials 1, -1) and ``a / b`` a ``/`` node (1/b, -a/b**2). ``a - b - c`` is
    ``(a - b) - c``; ``a + b - c`` is ``(a + b) - c`` (the positive terms added first);
    ``x*y/(z*w)`` is one ``/`` of the products ``x*y`` and ``w*z``; ``1/x`` is ``1 / x``;
    ``-x`` (and ``-(x*y)``) is a unary ``-`` with partial -1, while ``-2*x`` stays a product and
    ``x**-2`` a power, as SymPy prints them.
    """
    if shapes is not None:
        from .tensor import tensor_graph  # the tensor layer, loaded only when asked for

        return tensor_graph(expr, shapes, at, wrt)
    # a string as typed (its variables include those that cancel: x - x is x minus x)
    e = parse_as_written(expr)[0] if isinstance(expr, str) else expression(expr)
    names = wrt_names(wrt, [e])[0] if (wrt is not None or e.free_symbols) else ()
    linear = AsWritten()
    root_symbol = linear(e)
    full: dict[sp.Expr, sp.Expr] = {}
    ids: dict[sp.Expr, str] = {}
    nodes: list[GraphNode] = []

    def add(key: sp.Expr, label: str, kind: str, children=(), text="") -> None:
        ids[key] = f"n{len(nodes)}"
        nodes.append(GraphNode(ids[key], label, kind, tuple(children), text))

    for sym in sorted(e.free_symbols, key=lambda s: s.name):
        add(sym, sym.name, "input", text=sym.name)
    constants = [c for n in linear.nodes for c in n.children if not c.free_symbols]
    for c in [root_symbol] if not root_symbol.free_symbols else constants:
        if c not in ids:
            add(c, sp.sstr(c), "constant", text=sp.sstr(c))
    for n in linear.nodes:
        full[n.symbol] = n.value.xreplace(full)
        label = linear.labels.get(n.symbol) or OPERATORS.get(
            type(n.value), type(n.value).__name__.lower()
        )
        shown = linear.typed.get(n.symbol, full[n.symbol])  # as typed, for a string
        add(n.symbol, label, "operation", (ids[c] for c in n.children), sp.sstr(shown))
    result = Graph(nodes, ids[root_symbol], tuple(names))
    mark_branches(nodes)
    if at is not None:
        evaluate(result, linear, ids, e, at)
    return result


def evaluate(g: Graph, linear: AsWritten, ids: dict, e: sp.Expr, at: Mapping) -> None:
    """Forward values, local partials and the numeric backward pass, in place."""
    given = {str(k): v for k, v in at.items()}
    missing = sorted(s.name for s in e.free_symbols if s.name not in given)
    if missing:
        raise SymdiffError(f"at= has no value for {', '.join(missing)}")
    index = {n.id: n for n in g.nodes}
    env: dict[sp.Expr, sp.Expr] = {}
    for key, node_id in ids.items():
        node = index[node_id]
        if node.kind == "input":
            node.value = float(given[node.label])
        elif node.kind == "constant":
            node.value = number_at(key, {})
        else:
            continue
        env[key] = sp.Float(node.value)
    for n in linear.nodes:
        node = index[ids[n.symbol]]
        node.value = number_at(n.value, env)
        env[n.symbol] = sp.Float(node.value)
        node.partials = tuple(
            None if p is None or not c.free_symbols else number_at(p, env)
            for c, p in zip(n.children, n.partials, strict=True)
        )
    adjoint = {g.root: 1.0}
    for node in reversed(g.nodes):
        if node.kind == "constant":
            continue
        node.grad = adjoint.get(node.id, 0.0)
        for c, p in zip(node.children, node.partials, strict=True):
            if p is not None and node.grad != 0.0:
                g.contributions.setdefault(c, []).append((node.id, p * node.grad))
                adjoint[c] = adjoint.get(c, 0.0) + p * node.grad



def number_at(expr: sp.Expr, env: dict[sp.Expr, sp.Expr]) -> float:
    """``expr`` at the point as a float; nan where it is complex or undefined."""
    try:
        return float(sp.N(sp.sympify(expr).xreplace(env)))
    except (TypeError, ValueError):
        return math.nan
