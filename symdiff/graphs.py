"""Computational graphs: the expression DAG that reverse mode computes, drawn and walked through.

``sd.graph(expr, at={...})`` builds the graph from the same linearisation as
:func:`symdiff.reverse.reverse_program` (one node per distinct subexpression, local partials from
the rule table), so the picture is what the generated code computes, with one difference for
the reader: subtraction and division are drawn as written, as ``-`` and ``/`` nodes with their
own local rules, where SymPy (and the generated code) has ``a + (-1)*b`` and ``a * b**-1``; see
:class:`_AsWritten` for ``a - b - c``, ``-x``, ``1/x`` and ``x*y/(z*w)``. With ``at`` every
node gets its forward value and, after a backward pass seeded with 1 at the output, its gradient
(adjoint) d output / d node. A node used by more than one parent is a *branch* (the seeds' fan-out):
its gradient is the sum of what its parents send back.

Views: :meth:`Graph.to_svg` (our own template, no graphviz binary; Jupyter shows it through
``_repr_svg_``), :meth:`Graph.to_dot`, :meth:`Graph.tree`, and the forward- vs reverse-mode
walkthrough tables :meth:`Graph.forward_table` and :meth:`Graph.reverse_table`.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from .build import expression, wrt_names
from .errors import SymdiffError
from .render import render
from .reverse import _Linearizer

_OPERATORS = {sp.Add: "+", sp.Mul: "*", sp.Pow: "**", sp.Piecewise: "where"}


class _AsWritten(_Linearizer):
    """The reverse-mode linearisation, with subtraction and division drawn as they are written.

    SymPy stores ``a - b`` as ``a + (-1)*b`` and ``a / b`` as ``a * b**-1``; a student who wrote
    ``x - y`` should see a ``-`` node, not a multiply by a constant -1. So:

    - an Add with negated terms (a negative coefficient: ``-y``, ``-2*y``, ``-1``) is the sum of
      its other terms minus each negated one in turn: ``a - b`` is a ``-`` node of (a, b) with local
      partials 1 and -1, ``a - b - c`` is ``(a - b) - c`` and ``a + b - c`` is ``(a + b) - c``;
      with no positive term the first negated term leads: ``-x - y`` is ``(-x) - y``;
    - a Mul with factors of negative numeric power (or a fraction coefficient) is one ``/`` node,
      numerator / denominator, with local partials 1/b and -a/b**2: ``x*y/(z*w)`` is
      ``(x*y) / (w*z)``, ``x/2`` is ``x / 2``, ``-x/y`` is ``(-x) / y``;
    - a lone ``b**-1`` is ``1 / b`` (``1/x``), other negative powers stay powers (``x**-2``, as
      SymPy prints it), and a symbolic exponent stays a power (``b**(-y)``);
    - a Mul with coefficient exactly -1 and no denominator is a unary ``-`` (local partial -1):
      ``-x`` and ``-(x*y)``; other coefficients stay products (``-2*x``).

    Values and gradients are those of the plain linearisation; only the nodes differ. Each such
    node's label is kept in ``labels`` (symbol -> ``"-"`` or ``"/"``).
    """

    def __init__(self) -> None:
        super().__init__()
        self.labels: dict[sp.Expr, str] = {}

    def __call__(self, expr: sp.Expr) -> sp.Expr:
        if expr not in self._seen and expr.free_symbols and not expr.is_Atom:
            result = self._as_written(expr)
            if result is not None:
                self._seen[expr] = result
                return result
        return super().__call__(expr)

    def _as_written(self, expr: sp.Expr) -> sp.Expr | None:
        if isinstance(expr, sp.Add):
            return self._subtraction(expr)
        if isinstance(expr, sp.Pow) and expr.exp == -1:
            return self._division(sp.S.One, expr.base)
        if not isinstance(expr, sp.Mul):
            return None
        numerator, denominator = [], []
        for factor in expr.args:
            if factor.is_Pow and factor.exp.is_Number and factor.exp.is_negative:
                denominator.append(factor.base**-factor.exp)
            elif factor.is_Rational and factor.q != 1:
                numerator.append(sp.Integer(factor.p))
                denominator.append(sp.Integer(factor.q))
            else:
                numerator.append(factor)
        if denominator:
            return self._division(sp.Mul(*numerator), sp.Mul(*denominator))
        if expr.args[0] == -1:
            operand = self(sp.Mul(*expr.args[1:]))
            return self._labelled("-", -operand, (operand,), (sp.S.NegativeOne,))
        return None

    def _subtraction(self, expr: sp.Add) -> sp.Expr | None:
        terms = expr.as_ordered_terms()  # as SymPy prints them
        negated = [t for t in terms if t.as_coeff_Mul()[0].is_negative]
        if not negated:
            return None
        positive = [t for t in terms if t not in negated]
        so_far = sp.Add(*positive) if positive else negated.pop(0)
        left = self(so_far)
        for term in negated:
            so_far = so_far + term
            right = self(-term)
            if so_far not in self._seen:  # (a - b) seen before: reuse its node
                self._seen[so_far] = self._labelled(
                    "-", left - right, (left, right), (sp.S.One, sp.S.NegativeOne)
                )
            left = self._seen[so_far]
        return left

    def _division(self, numerator: sp.Expr, denominator: sp.Expr) -> sp.Expr:
        a, b = self(numerator), self(denominator)
        return self._labelled("/", a / b, (a, b), (1 / b, -a / b**2))

    def _labelled(self, label: str, value, children, partials) -> sp.Symbol:
        symbol = self._add(value, children, partials)
        self.labels[symbol] = label
        return symbol


@dataclass
class GraphNode:
    """One node: an input variable, a constant or an operation on its ``children`` (ids)."""

    id: str
    label: str
    kind: str  # "input", "constant" or "operation"
    children: tuple[str, ...] = ()
    expr: str = ""  # the subexpression this node computes, in terms of the inputs
    value: float | None = None
    grad: float | None = None
    is_branch: bool = False
    partials: tuple[float | None, ...] = ()  # d node / d child at the point, per child


@dataclass(frozen=True)
class Edge:
    """Data flows from ``source`` (a child) into ``target`` (its parent)."""

    source: str
    target: str
    partial: float | None = None


@dataclass(frozen=True)
class Table:
    """A walkthrough table: ``rows`` (dicts) and their aligned-column ``text``.

    ``header`` and ``cells`` are the same columns as strings, ``summary`` the closing line; in
    Jupyter the table shows as HTML (``_repr_html_``), in a terminal as its text.
    """

    rows: list[dict[str, object]]
    text: str
    result: dict[str, float]
    header: tuple[str, ...] = ()
    cells: tuple[tuple[str, ...], ...] = ()
    summary: str = ""

    def __str__(self) -> str:
        return self.text

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text.rstrip("\n"))

    def _repr_html_(self) -> str:
        """An HTML table of the columns (every value escaped), then the summary line."""
        head = "".join(f"<th>{html.escape(h)}</th>" for h in self.header)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
            for row in self.cells
        )
        return (
            f'<table class="symdiff-table"><thead><tr>{head}</tr></thead>'
            f"<tbody>{body}</tbody></table><p>{html.escape(self.summary)}</p>"
        )


@dataclass
class Graph:
    """An expression DAG with optional forward values and gradients; see the module docstring."""

    nodes: list[GraphNode]
    root: str
    wrt: tuple[str, ...] = ()
    contributions: dict[str, list[tuple[str, float]]] = field(default_factory=dict)

    @property
    def edges(self) -> list[Edge]:
        """One edge per (child, parent) use, in node order."""
        return [
            Edge(child, node.id, node.partials[i] if node.partials else None)
            for node in self.nodes
            for i, child in enumerate(node.children)
        ]

    def node(self, node_id: str) -> GraphNode:
        """The node with id ``node_id``."""
        return self._index()[node_id]

    def _index(self) -> dict[str, GraphNode]:
        return {n.id: n for n in self.nodes}

    @property
    def value(self) -> float | None:
        """The output's value at the point (None without ``at``)."""
        return self.node(self.root).value

    @property
    def gradient(self) -> dict[str, float | None]:
        """d output / d input for every ``wrt`` name (0 for a name that does not occur)."""
        inputs = {n.label: n.grad for n in self.nodes if n.kind == "input"}
        evaluated = self.value is not None
        return {name: inputs.get(name, 0.0 if evaluated else None) for name in self.wrt}

    # -- text views ------------------------------------------------------------------------------
    def to_dot(self) -> str:
        """Graphviz DOT text: one line per node and per edge (inputs at the bottom)."""
        lines = ["digraph symdiff {", "  rankdir=BT;"]
        for n in self.nodes:
            shape = {"input": "ellipse", "constant": "plaintext"}.get(n.kind, "box")
            style = ' style=filled fillcolor="#ffd8a8"' if n.is_branch else ""
            label = "\\n".join(_dot_escape(line) for line in _lines(n))
            lines.append(f'  {n.id} [label="{label}" shape={shape}{style}];')
        for e in self.edges:
            label = "" if e.partial is None else f' [label="{_dot_escape(_fmt(e.partial))}"]'
            lines.append(f"  {e.source} -> {e.target}{label};")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def tree(self) -> str:
        """Indented text from the output down; a shared node is printed once, then referenced."""
        index, shown, out = self._index(), set(), []

        def walk(node_id: str, depth: int) -> None:
            n, pad = index[node_id], "  " * depth
            if node_id in shown:
                out.append(f"{pad}^ [{node_id}] {n.label} (shown above)")
                return
            shown.add(node_id)
            extra = "  ".join(_lines(n)[1:])
            mark = "  (branch)" if n.is_branch else ""
            out.append(f"{pad}[{node_id}] {n.label}  {n.expr}  {extra}".rstrip() + mark)
            for child in n.children:
                walk(child, depth + 1)

        walk(self.root, 0)
        return "\n".join(out) + "\n"

    # -- SVG -----------------------------------------------------------------------------------
    def to_svg(self) -> str:
        """An SVG picture (template ``graph.svg.jinja``): layered, inputs at the bottom."""
        layer: dict[str, int] = {}
        for n in self.nodes:  # children come first
            layer[n.id] = 1 + max((layer[c] for c in n.children), default=-1)
        depth = max(layer.values())
        boxes: dict[str, dict[str, Any]] = {}
        x_of: dict[str, float] = {}
        rows: list[list[GraphNode]] = [[] for _ in range(depth + 1)]
        for n in self.nodes:
            rows[layer[n.id]].append(n)
        widths = {  # an ellipse is narrower than its box at the lower text lines: 1.3x wider
            n.id: (14 + 7.2 * max(len(t) for t in _lines(n))) * (1.3 if n.kind == "input" else 1)
            for n in self.nodes
        }
        gap, row_height = 24, 110
        total = max(sum(widths[n.id] for n in row) + gap * (len(row) - 1) for row in rows)
        for k, row in enumerate(rows):
            if k:  # barycentre order: fewer crossings
                row.sort(key=lambda n: sum(x_of[c] for c in n.children) / len(n.children))
            width = sum(widths[n.id] for n in row) + gap * (len(row) - 1)
            x = 20 + (total - width) / 2
            for n in row:
                lines = _lines(n)
                h = 10 + 16 * len(lines)
                x_of[n.id] = x + widths[n.id] / 2
                boxes[n.id] = {
                    "cx": round(x_of[n.id], 1),
                    "cy": 30 + (depth - k) * row_height,
                    "w": round(widths[n.id], 1),
                    "h": h,
                    "shape": "ellipse" if n.kind == "input" else "rect",
                    "cls": n.kind + (" branch" if n.is_branch else ""),
                    "lines": [html.escape(t, quote=True) for t in lines],
                    "title": html.escape(f"{n.id}: {n.expr}", quote=True),
                }
                x += widths[n.id] + gap
        edges, extent = [], [0.0, total + 40]
        for e in self.edges:  # an edge skipping layers bows sideways around the nodes between
            s, t = boxes[e.source], boxes[e.target]
            x1, y1, x2, y2 = s["cx"], s["cy"] - s["h"] / 2, t["cx"], t["cy"] + t["h"] / 2 + 2
            skip = layer[e.target] - layer[e.source] - 1
            side = 1 if (x1 + x2) / 2 >= total / 2 + 20 else -1
            bend = (x1 + x2) / 2 + side * (skip * 0.6 * row_height + max(*widths.values()) / 2)
            cx = bend if skip else (x1 + x2) / 2
            extent.append(0.25 * (x1 + x2) + 0.5 * cx)
            edges.append(
                {"d": f"M {x1:.1f} {y1:.1f} Q {cx:.1f} {(y1 + y2) / 2:.1f} {x2:.1f} {y2:.1f}"}
            )
        ordered = [boxes[n.id] for n in self.nodes]
        return render(
            "graph.svg.jinja",
            left=round(min(extent) - 10, 1),
            width=round(max(extent) - min(extent) + 20, 1),
            height=60 + depth * row_height + 40,
            nodes=ordered,
            edges=edges,
        )

    def _repr_svg_(self) -> str:
        return self.to_svg()

    # -- forward vs reverse mode ---------------------------------------------------------------
    def _require_values(self) -> None:
        if self.value is None:
            raise SymdiffError("the graph has no values; build it with at={...}")

    def forward_table(self, var: str) -> Table:
        """Forward mode for one input: each node's value and tangent d node / d ``var``.

        The tangent is pushed from the inputs up through the local partials, so one pass gives
        the derivative by ``var`` only (one pass per input for a full gradient).
        """
        self._require_values()
        tangent: dict[str, float] = {}
        rows: list[dict[str, object]] = []
        index = self._index()
        for n in self.nodes:
            if n.kind != "operation":
                tangent[n.id] = 1.0 if n.kind == "input" and n.label == var else 0.0
            else:
                tangent[n.id] = sum(
                    (p if p is not None else math.nan) * tangent[c]
                    for c, p in zip(n.children, n.partials, strict=True)
                    if tangent[c] != 0.0
                )
            terms = " + ".join(
                f"{_fmt(p)}*{_fmt(tangent[c])}"
                for c, p in zip(n.children, n.partials, strict=True)
                if tangent[c] != 0.0 and index[c].kind != "constant"
            )
            rows.append(
                {
                    "node": n.id,
                    "op": n.label,
                    "expr": n.expr,
                    "value": n.value,
                    "tangent": tangent[n.id],
                    "from": terms,
                }
            )
        result = {var: tangent[self.root]}
        header = ("node", "op", "expression", "value", f"d/d{var}", "= sum partial*tangent")
        cells = [
            (r["node"], r["op"], r["expr"], _fmt(r["value"]), _fmt(r["tangent"]), r["from"])
            for r in rows
        ]
        summary = f"forward mode: df/d{var} = {_fmt(result[var])}"
        return _table(rows, result, header, cells, summary)

    def reverse_table(self) -> Table:
        """Reverse mode: values forward, then every node's adjoint d output / d node backwards.

        One backward pass gives the derivative by every input at once; a branch node's adjoint
        is the sum of its parents' contributions (shown in the ``from`` column).
        """
        self._require_values()
        ordered = [n for n in reversed(self.nodes) if n.kind == "operation"]
        ordered += [n for n in self.nodes if n.kind == "input"]
        rows: list[dict[str, object]] = [
            {
                "node": n.id,
                "op": n.label,
                "expr": n.expr,
                "value": n.value,
                "adjoint": n.grad,
                "branch": n.is_branch,
                "from": " + ".join(_fmt(v) for _, v in self.contributions.get(n.id, [])),
            }
            for n in ordered
        ]
        result = {k: v for k, v in self.gradient.items() if v is not None}
        header = ("node", "op", "expression", "value", "adjoint", "= sum from parents")
        cells = [
            (
                r["node"],
                r["op"],
                r["expr"],
                _fmt(r["value"]),
                _fmt(r["adjoint"]),
                str(r["from"]) + ("  (branch)" if r["branch"] else ""),
            )
            for r in rows
        ]
        summary = ", ".join(f"df/d{k} = {_fmt(v)}" for k, v in result.items())
        return _table(rows, result, header, cells, f"reverse mode (one pass): {summary}")


# -- building -----------------------------------------------------------------------------------
def graph(expr: object, at: Mapping[object, float] | None = None, wrt: object = None) -> Graph:
    """The computational graph of ``expr`` (string, SymPy expression or Python function).

    ``at`` maps every variable name to a number: then each node carries its forward value and
    its gradient d output / d node. ``wrt`` (default: every variable) names the inputs whose
    gradients :attr:`Graph.gradient` and :meth:`Graph.reverse_table` report.

    Subtraction and division are nodes of their own, as written: ``a - b`` is a ``-`` node
    (local partials 1, -1) and ``a / b`` a ``/`` node (1/b, -a/b**2). ``a - b - c`` is
    ``(a - b) - c``; ``a + b - c`` is ``(a + b) - c`` (the positive terms added first);
    ``x*y/(z*w)`` is one ``/`` of the products ``x*y`` and ``w*z``; ``1/x`` is ``1 / x``;
    ``-x`` (and ``-(x*y)``) is a unary ``-`` with partial -1, while ``-2*x`` stays a product and
    ``x**-2`` a power, as SymPy prints them.
    """
    e = expression(expr)
    names = wrt_names(wrt, [e])[0] if (wrt is not None or e.free_symbols) else ()
    linear = _AsWritten()
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
        label = linear.labels.get(n.symbol) or _OPERATORS.get(
            type(n.value), type(n.value).__name__.lower()
        )
        add(n.symbol, label, "operation", (ids[c] for c in n.children), sp.sstr(full[n.symbol]))
    result = Graph(nodes, ids[root_symbol], tuple(names))
    uses: dict[str, int] = {}
    for n in nodes:
        for c in n.children:
            uses[c] = uses.get(c, 0) + 1
    for n in nodes:
        n.is_branch = n.kind != "constant" and uses.get(n.id, 0) > 1
    if at is not None:
        _evaluate(result, linear, ids, e, at)
    return result


def _evaluate(g: Graph, linear: _Linearizer, ids: dict, e: sp.Expr, at: Mapping) -> None:
    """Forward values, local partials and the numeric backward pass, in place."""
    given = {str(k): v for k, v in at.items()}
    missing = sorted(s.name for s in e.free_symbols if s.name not in given)
    if missing:
        raise SymdiffError(f"at= has no value for {', '.join(missing)}")
    index = g._index()
    env: dict[sp.Expr, sp.Expr] = {}
    for key, node_id in ids.items():
        node = index[node_id]
        if node.kind == "input":
            node.value = float(given[node.label])
        elif node.kind == "constant":
            node.value = _number(key, {})
        else:
            continue
        env[key] = sp.Float(node.value)
    for n in linear.nodes:
        node = index[ids[n.symbol]]
        node.value = _number(n.value, env)
        env[n.symbol] = sp.Float(node.value)
        node.partials = tuple(
            None if p is None or not c.free_symbols else _number(p, env)
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


# -- helpers ------------------------------------------------------------------------------------
def _number(expr: sp.Expr, env: dict[sp.Expr, sp.Expr]) -> float:
    """``expr`` at the point as a float; nan where it is complex or undefined."""
    try:
        return float(sp.N(sp.sympify(expr).xreplace(env)))
    except (TypeError, ValueError):
        return math.nan


def _fmt(value: object) -> str:
    """A compact number: integers without a decimal point, else 6 significant digits."""
    if value is None:
        return ""
    if not isinstance(value, float | int):
        return str(value)
    if math.isfinite(value) and value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}"


def _lines(n: GraphNode) -> list[str]:
    """The text of a node: label, then ``v=`` value and ``g=`` gradient when known."""
    lines = [n.label]
    if n.value is not None:
        lines.append(f"v={_fmt(n.value)}")
    if n.grad is not None:
        lines.append(f"g={_fmt(n.grad)}")
    return lines


def _dot_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _table(
    rows: list[dict[str, object]],
    result: dict[str, float],
    header: tuple[str, ...],
    cells: list[tuple[object, ...]],
    summary: str,
) -> Table:
    """A :class:`Table` with its aligned text and its string cells."""
    strings = tuple(tuple(map(str, row)) for row in cells)
    text = _columns(header, list(strings)) + summary + "\n"
    return Table(rows, text, result, tuple(header), strings, summary)


def _columns(header: tuple[str, ...], rows: list[tuple[object, ...]]) -> str:
    """Aligned plain-text columns with a rule under the header."""
    table = [tuple(map(str, header)), *(tuple(map(str, r)) for r in rows)]
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    text = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in table]
    text.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(text) + "\n"
