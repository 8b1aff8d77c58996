"""The computational graph of a tensor expression: ``sd.graph(expr, shapes={...}, at={...})``.

The nodes are those of the tensor program ``sd.grad(expr, shapes=...)`` builds (the string
language or a traced Python function, parsed by :func:`symdiff.tensor.request.request_for`),
with one change for the reader: a layer the user called (``conv2d``, ``max_pool2d``,
``batch_norm``: a family spelling, :class:`symdiff.tensor.ops.Called`) is *one* node with the
call's operands as children, not the windows, transposes and reductions it is built from
(unless one of those is used outside the layer too). Each node has its op, its shape (named
dimensions as declared; with ``at``, their sizes too), its children and, in ``rule``, its
backward rule in one line, read from the rows the steps of ``derive(shapes=)`` read
(:data:`symdiff.tensor.vjp.TENSOR_VJPS`, a spelling's ``identity``; an elementwise node's
partial derivatives by the scalar rules, in the names of its operands).

With ``at`` (an array per variable) every node carries its forward value and its adjoint
d output / d node, computed by one generated function from the nodes of the very backward walk
``sd.grad`` emits (:mod:`symdiff.graphs.values`); the inputs' adjoints, which
:attr:`Graph.gradient` reports for the ``wrt`` names, are computed by ``sd.grad`` itself (the
function the user would build: its result to the last bit, where a second emission of the same
rules could round an addition in another order). A node the output does not depend on through
a variable has no adjoint (None). Adjoints need a scalar output.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import sympy as sp

from ..api import grad
from ..codegen import naming
from ..engine.inputtext import input_text
from ..errors import SymdiffError
from ..options import Options
from ..tensor import families
from ..tensor.elementwise import partial
from ..tensor.formula import text
from ..tensor.ir import Node, arg_symbol, topological
from ..tensor.ops import Called
from ..tensor.request import TensorRequest, request_for
from ..tensor.shapes import Shape, format_dim
from ..tensor.vjp import TENSOR_VJPS, VJPRule
from ..tensor.walk import backward
from .model import Graph
from .nodes import GraphNode, mark_branches
from .text import OPERATORS
from .values import evaluate

#: Ops of the nodes that are constants: no gradient flows into them.
CONSTANTS = frozenset({"const", "fill"})
#: The heading of a node by its op, where it is not the op's own name.
HEADINGS = {"index": "slice", "expand": "expand_dims", "broadcast": "broadcast_to",
            "variance": "var", "share": "tie share"}


def tensor_graph(expr: object, shapes: object, at: Mapping[str, Any] | None = None,
                 wrt: object = None) -> Graph:
    """The graph of a tensor expression (see the module docstring); ``sd.graph`` with
    ``shapes=``."""
    request = request_for("value", expr, None, Options(), shapes)
    (root,) = request.roots  # a value request has one (a traced tuple is refused)
    names = _wrt(wrt, request)
    b = request.builder
    shown, children = _shown(root, b.called)
    ordered, ids, labels = _names(shown, request)
    nodes = [_node(n, ids, labels, children, b.called) for n in ordered]
    result = Graph(nodes, ids[id(root)], names, tensor=True)
    mark_branches(nodes)
    if at is not None:
        adjoints: dict[int, Node] | None = None
        if root.shape == () and request.params:  # the backward walk grad runs, every node kept
            adjoints = {}
            leaves = [b.var(p, request.shapes[p]) for p in request.params]
            backward(b, root, leaves, True, record=_Adjoints(adjoints))
        gradient = functools.partial(grad, expr, wrt=list(request.params), shapes=shapes)
        _evaluate(result, shown, ids, adjoints, request, at, gradient)
    return result


def _wrt(wrt: object, request: TensorRequest) -> tuple[str, ...]:
    """The names :attr:`Graph.gradient` reports: every variable by default."""
    if wrt is None:
        return request.params
    names = (wrt,) if isinstance(wrt, str) else tuple(wrt)  # type: ignore[arg-type]
    unknown = [str(n) for n in names if n not in request.params]
    if unknown:
        raise SymdiffError(f"wrt name(s) {', '.join(map(repr, unknown))} are not variables of "
                           f"the expression (its variables: {', '.join(request.params)})")
    return names


class _Adjoints:
    """A :class:`~symdiff.tensor.walk.Recorder` keeping the adjoint node of every node."""

    def __init__(self, found: dict[int, Node]):
        self.found = found

    def vjp(self, rule: VJPRule, node: Node, g: Node, contributions: Any) -> None:
        self.found[id(node)] = g

    def branch(self, node: Node, items: Any, total: Node) -> None:
        """Fan-out: the walk's total is recorded with the node's own rule."""

    def unbroadcast(self, node: Node, summed: Node, reduced: Node) -> None:
        """Summed back: part of the node's total."""


def _shown(root: Node, called: Mapping[int, Called]
           ) -> tuple[list[Node], dict[int, tuple[Node, ...]]]:
    """The nodes drawn, operands first, and each one's children: a layer the user called is
    one node whose children are its operands (when nothing outside it uses its parts)."""
    order = topological([root])
    position = {id(n): i for i, n in enumerate(order)}
    users: dict[int, list[Node]] = {}
    for n in order:
        for a in n.args:
            users.setdefault(id(a), []).append(n)
    hidden: set[int] = set()
    children: dict[int, tuple[Node, ...]] = {}
    layers = sorted((c for c in called.values() if id(c.node) in position),
                    key=lambda c: -position[id(c.node)])
    for layer in layers:
        parts = _parts(layer)
        inside = {id(p) for p in parts}
        if (id(layer.node) in hidden or inside & hidden or any(p.op == "var" for p in parts)
                or any(id(u) not in inside for p in parts if p is not layer.node
                       for u in users.get(id(p), []))):
            continue
        hidden |= inside - {id(layer.node)}
        children[id(layer.node)] = layer.operands  # one edge per use, as for A @ A
    shown = [n for n in order if id(n) not in hidden]
    for n in shown:
        children.setdefault(id(n), n.args)
    return shown, children


def _parts(layer: Called) -> list[Node]:
    """The nodes of a layer: from the node it returned down to (not into) its operands."""
    stop = {id(o) for o in layer.operands}
    parts, seen, stack = [], set(), [layer.node]
    while stack:
        n = stack.pop()
        if id(n) in seen or id(n) in stop:
            continue
        seen.add(id(n))
        parts.append(n)
        stack.extend(n.args)
    return parts


def _names(shown: Sequence[Node], request: TensorRequest
           ) -> tuple[list[Node], dict[int, str], dict[int, str]]:
    """The nodes in the graph's order (variables first, by name, then constants and operations
    in order), their ids (``n0``, ...) and the names the texts use: a variable's own, ``f`` the
    output, ``z1, z2, ...`` the others."""
    rank = {"var": 0, "const": 1, "fill": 1}
    ordered = sorted(shown, key=lambda n: (rank.get(n.op, 2),
                                           n.name if n.op == "var" else ""))
    ordered = sorted(ordered, key=lambda n: rank.get(n.op, 2))  # stable: operations in order
    ids = {id(n): f"n{i}" for i, n in enumerate(ordered)}
    labels = {c.name: c.label for c in request.constants}
    variables = list(request.params)
    values = [n for n in shown if n.op not in rank]
    text_names = {id(n): n.name for n in shown if n.op == "var"}
    text_names.update({id(n): labels.get(n.name, n.name) for n in shown if n.op == "const"})
    value_names = naming.value_labels(variables, max(len(values) - 1, 0))
    text_names.update({id(n): v for n, v in zip(values[:-1], value_names, strict=True)})
    if values:
        text_names[id(values[-1])] = naming.output_label(variables)
    return ordered, ids, text_names


def _node(n: Node, ids: Mapping[int, str], labels: Mapping[int, str],
          children: Mapping[int, tuple[Node, ...]], called: Mapping[int, Called]
          ) -> GraphNode:
    """The graph node of ``n`` (its op, texts, shape and backward rule)."""
    kids = children[id(n)]
    shape = _shape_text(n.shape)
    if n.op == "var":
        return GraphNode(ids[id(n)], n.name, "input", (), n.name, shape=shape)
    if n.op in CONSTANTS:
        label = labels.get(id(n)) or input_text(n.attrs[0])
        return GraphNode(ids[id(n)], label, "constant", (), label, shape=shape)
    layer = called.get(id(n)) if children[id(n)] is not n.args else None
    names = {id(k): labels.get(id(k)) or text(k) for k in kids}
    if layer is not None:
        heading, body = layer.name, layer.text([names[id(o)] for o in layer.operands])
    else:
        heading, body = _heading(n), text(n, names)
    definition = f"{labels[id(n)]} = {body}"
    return GraphNode(ids[id(n)], heading, "operation", tuple(ids[id(k)] for k in kids),
                     definition, shape=shape, heading=definition,
                     rule=_rule(n, layer, kids, names))


def _heading(n: Node) -> str:
    """What an operation is, in a word: ``matmul``, ``sum``, ``relu``, ``+``."""
    if n.op != "map":
        return HEADINGS.get(n.op, n.op)
    (expr,) = n.attrs
    if not expr.args:
        return "elementwise"
    return _written_operator(expr) or OPERATORS.get(type(expr)) or type(expr).__name__.lower()


def _written_operator(expr: sp.Expr) -> str | None:
    """The operator a reader wrote where SymPy stores another: ``-`` for a sum with a negated
    term (``t1 - t3`` is ``t1 + (-1)*t3``) and for a negation (``-t1`` is ``(-1)*t1``), ``/``
    for a product with a reciprocal (``t1/t2`` is ``t1*t2**-1``)."""
    if expr.is_Add and any(t.could_extract_minus_sign() for t in expr.args):
        return "-"
    if expr.is_Mul:
        coefficient, rest = expr.as_coeff_Mul()
        if any(f.is_Pow and f.exp.is_negative for f in sp.Mul.make_args(rest)):
            return "/"
        if coefficient == -1 and not rest.is_Mul:
            return "-"
    return None


def _rule(n: Node, layer: Called | None, kids: Sequence[Node], names: Mapping[int, str]
          ) -> str:
    """The node's backward rule in one line: its row's name and identity (``G`` the node's
    adjoint); an elementwise node's partials in its operands' names; a layer's own words
    (its spelling's ``identity``), else the row of the op it returns when that is all of it or
    an op of its own (``conv2d``'s), else the rules of its parts."""
    if layer is not None:
        if layer.identity:
            return f"{layer.name}: {layer.identity}"
        parts = _parts(layer)
        whole = len(parts) == 1 and tuple(kids) == n.args  # the layer is one node on its operands
        if not whole and n.op not in families.OPS:
            rules = dict.fromkeys(TENSOR_VJPS[p.op].name for p in reversed(parts))
            return f"{layer.name}: the rules of its parts in turn: {', '.join(rules)}"
    row = TENSOR_VJPS[n.op]
    if n.op != "map":
        return f"{row.name}: {row.identity}"
    (expr,) = n.attrs
    symbols = {arg_symbol(i): sp.Symbol(names[id(a)], real=True) for i, a in enumerate(n.args)}
    parts = [f"{naming.adjoint_label(names[id(a)])} = G * "
             f"{input_text(partial(expr, i).xreplace(symbols))}"
             for i, a in enumerate(n.args) if a.op not in CONSTANTS]
    return f"{row.name}: {'; '.join(parts)} (f' by the scalar rules)"


def _shape_text(shape: Shape, sizes: Mapping[sp.Symbol, int] | None = None) -> str:
    """``(n, 3)``; with the sizes of the named dimensions known, ``(n=4, 3)``."""
    parts = []
    for dim in shape:
        if isinstance(dim, int) or not sizes:
            parts.append(format_dim(dim))
        else:
            value = sp.sympify(dim.xreplace(sizes))
            parts.append(f"{format_dim(dim)}={value}" if value.is_number else format_dim(dim))
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"


def _evaluate(g: Graph, shown: Sequence[Node], ids: Mapping[int, str],
              adjoints: Mapping[int, Node] | None, request: TensorRequest, at: Mapping[str, Any],
              gradient: Callable[[], Any]) -> None:
    """Every node's value and adjoint at ``at``, in place: the inputs' adjoints from
    ``gradient()`` (``sd.grad`` of the expression by every variable: the very function, so its
    result, not one rounded in another order), the others from the backward walk's nodes."""
    given = {str(k): v for k, v in at.items()}
    missing = [p for p in request.params if p not in given]
    if missing:
        raise SymdiffError(f"at= has no value for {', '.join(missing)}")
    unknown = sorted(set(given) - set(request.params))
    if unknown:
        which = (f"its variables: {', '.join(request.params)}" if request.params
                 else "it has none, being constant")
        raise SymdiffError(f"at= gives {', '.join(unknown)}, which the expression does not use "
                           f"({which})")
    index = {n.id: n for n in g.nodes}
    graph_nodes = {id(n): index[ids[id(n)]] for n in shown}
    active = _active(shown[-1])
    asked: list[Node] = list(shown)
    where: list[tuple[GraphNode, str]] = [(graph_nodes[id(n)], "value") for n in shown]
    for n in shown:
        if adjoints is not None and id(n) in adjoints and n.op != "var":
            asked.append(adjoints[id(n)])
            where.append((graph_nodes[id(n)], "grad"))
    values = evaluate(request, asked, given)
    for (node, field), value in zip(where, values, strict=True):
        setattr(node, field, value)
    if adjoints is not None:
        results = gradient()(**{p: given[p] for p in request.params})
        inputs = {n.name: graph_nodes[id(n)] for n in shown if n.op == "var"}
        for name, value in zip(request.params, results, strict=True):
            if name in inputs:
                inputs[name].grad = np.asarray(value, dtype=float)
    for n in shown:  # on the output's path but sent nothing: a zero adjoint
        node = graph_nodes[id(n)]
        if node.grad is None and id(n) in active and adjoints is not None:
            node.grad = np.zeros_like(node.value)
    sizes = _sizes(request, given)
    for n in shown:
        graph_nodes[id(n)].shape = _shape_text(n.shape, sizes)


def _active(root: Node) -> set[int]:
    """Ids of the nodes under ``root`` that depend on a variable."""
    active: set[int] = set()
    for n in topological([root]):  # operands first
        if n.op == "var" or any(id(a) in active for a in n.args):
            active.add(id(n))
    return active


def _sizes(request: TensorRequest, given: Mapping[str, Any]) -> dict[sp.Symbol, int]:
    """The size of each named dimension, read from the arrays given."""
    sizes: dict[sp.Symbol, int] = {}
    for p in request.params:
        for dim, n in zip(request.shapes[p], np.shape(given[p]), strict=False):
            if isinstance(dim, sp.Symbol):
                sizes[dim] = int(n)
    return sizes


__all__ = ["tensor_graph"]
