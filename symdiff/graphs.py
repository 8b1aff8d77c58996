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

import bisect
import html
import itertools
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
        """An SVG picture (template ``graph.svg.jinja``): layered, inputs at the bottom.

        Every edge carries its local partial d parent / d child at the point (as in
        :meth:`to_dot`), on a white label along the edge, placed off the nodes, the other labels
        and the other edges where there is room. An edge over several rows passes a waypoint in
        each row between, which is ordered with the nodes (fewer crossings, no edge through a
        node); a constant sits just under its lowest parent.
        """
        layer: dict[str, int] = {}
        for n in self.nodes:  # children come first
            layer[n.id] = 1 + max((layer[c] for c in n.children), default=-1)
        for n in reversed(self.nodes):
            if n.kind == "constant" and n.id != self.root:
                layer[n.id] = min(layer[p.id] for p in self.nodes if n.id in p.children) - 1
        depth = max(layer.values())
        widths = {  # an ellipse is narrower than its box at the lower text lines: 1.3x wider
            n.id: (14 + 7.2 * max(len(t) for t in _lines(n))) * (1.3 if n.kind == "input" else 1)
            for n in self.nodes
        }
        rows: list[list[str]] = [[] for _ in range(depth + 1)]
        for n in self.nodes:
            rows[layer[n.id]].append(n.id)
        below: dict[str, list[str]] = {n.id: [] for n in self.nodes}  # in operand order
        chains: list[list[str]] = []  # per edge, the items it passes: source ... target
        every = self.edges
        for i, e in enumerate(every):
            chain = [e.source]
            for k in range(layer[e.source] + 1, layer[e.target]):
                chain.append(f"w{i}.{k}")
                rows[k].append(chain[-1])
                widths[chain[-1]], below[chain[-1]] = 8.0, []
            chain.append(e.target)
            for low, high in itertools.pairwise(chain):
                below[high].append(low)
            chains.append(chain)
        row_height = 130 if any(e.partial is not None for e in every) else 110
        x_of = _order_rows(rows, self.root, widths, below, gap=36)
        index = self._index()
        boxes: dict[str, dict[str, Any]] = {}
        for k, row in enumerate(rows):
            for item in row:
                if item not in index:
                    continue
                n, lines = index[item], _lines(index[item])
                boxes[item] = {
                    "cx": round(x_of[item], 1),
                    "cy": 30 + (depth - k) * row_height,
                    "w": round(widths[item], 1),
                    "h": 10 + 16 * len(lines),
                    "shape": "ellipse" if n.kind == "input" else "rect",
                    "cls": n.kind + (" branch" if n.is_branch else ""),
                    "lines": [html.escape(t, quote=True) for t in lines],
                    "title": html.escape(f"{n.id}: {n.expr}", quote=True),
                }
        start = _ports(chains, boxes, x_of, 0, 1)
        end = _ports(chains, boxes, x_of, -1, -2)
        curves = []
        for i, chain in enumerate(chains):
            s, t = boxes[chain[0]], boxes[chain[-1]]
            points = [(s["cx"] + start[i], s["cy"] - s["h"] / 2)]
            points += [
                (x_of[w], 30 + (depth - layer[chain[0]] - j) * row_height)
                for j, w in enumerate(chain[1:-1], 1)
            ]
            points.append((t["cx"] + end[i], t["cy"] + t["h"] / 2 + 2))
            curves.append(_curve(points))
        samples = [[_point(c, j / (12 * len(c))) for j in range(12 * len(c) + 1)] for c in curves]
        grid: dict[tuple[int, int], list[tuple[float, float]]] = {}
        for ps in samples:
            for x, y in ps:
                grid.setdefault((int(x // _CELL), int(y // _CELL)), []).append((x, y))
        taken = [  # an input's ellipse is 10 taller than its text (graph.svg.jinja)
            _box(b["cx"], b["cy"], b["w"] + 4, b["h"] + (14 if b["shape"] == "ellipse" else 4))
            for b in boxes.values()
        ]
        edges, labels = [], []
        extent = [b["cx"] - b["w"] / 2 for b in boxes.values()]
        extent += [b["cx"] + b["w"] / 2 for b in boxes.values()]
        for i, (e, curve) in enumerate(zip(every, curves, strict=True)):
            extent += [x for segment in curve for x in segment[::2]]
            title = f"d({index[e.target].expr}) / d({index[e.source].expr})"
            if e.partial is not None:
                title += f" = {_fmt(e.partial)}"
            path = f"M {curve[0][0]:.1f} {curve[0][1]:.1f} " + " ".join(
                "C " + " ".join(f"{v:.1f}" for v in segment[2:]) for segment in curve
            )
            edges.append({"d": path, "title": html.escape(title, quote=True)})
            if e.partial is None:  # no point, or the edge from a constant: nothing to label
                continue
            text = _fmt(e.partial)
            w, h = 8 + _LABEL_CHAR * len(text), 15
            for x, y in samples[i]:  # its own edge is no obstacle
                grid[int(x // _CELL), int(y // _CELL)].remove((x, y))
            label = _place(curve, w, h, taken, grid)
            for x, y in samples[i]:
                grid[int(x // _CELL), int(y // _CELL)].append((x, y))
            taken.append(label)
            extent += [label[0], label[2]]
            labels.append(
                {
                    "x": round(label[0], 1),
                    "y": round(label[1], 1),
                    "w": round(w, 1),
                    "h": h,
                    "text": html.escape(text, quote=True),
                    "title": html.escape(title, quote=True),
                }
            )
        left, right = min(extent) - 20, max(extent) + 20
        return render(
            "graph.svg.jinja",
            left=round(left, 1),
            width=round(right - left, 1),
            height=60 + depth * row_height + 40,
            nodes=[boxes[n.id] for n in self.nodes],
            edges=edges,
            labels=labels,
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


def _order_rows(
    rows: list[list[str]],
    root: str,
    widths: dict[str, float],
    below: dict[str, list[str]],
    gap: float,
) -> dict[str, float]:
    """Each item's x centre, the rows (of node ids and waypoints) reordered in place.

    First the order of a walk from the output, operands in order (a tree has no crossing, and
    ``a`` is left of ``b`` in ``a - b``), then barycentre sweeps: down, each item under the
    mean of its parents, and up, each item over the mean of its children; an order replaces
    the first one only with fewer crossings. Last, neighbours in a row swap places while that
    removes crossings.
    """
    above: dict[str, list[str]] = {}
    for high, lows in below.items():
        for low in lows:
            above.setdefault(low, []).append(high)
    total = max(sum(widths[i] for i in row) + gap * (len(row) - 1) for row in rows)

    x_of: dict[str, float] = {}

    def place(row: list[str]) -> None:  # the row centred, in its order
        x = 20 + (total - sum(widths[i] for i in row) - gap * (len(row) - 1)) / 2
        for item in row:
            x_of[item] = x + widths[item] / 2
            x += widths[item] + gap

    def crossings(k: int) -> int:  # between rows k - 1 and k
        if not 0 < k < len(rows):
            return 0
        rank = {item: i for r in rows[k - 1 : k + 1] for i, item in enumerate(r)}
        seen: list[int] = []  # upper ends so far, sorted: an edge crosses those further right
        count = 0
        ends = sorted((rank[low], rank[high]) for high in rows[k] for low in below[high])
        for _, upper in ends:
            count += len(seen) - bisect.bisect_right(seen, upper)
            bisect.insort(seen, upper)
        return count

    def all_crossings() -> int:
        return sum(crossings(k) for k in range(1, len(rows)))

    def mean(items: list[str], own: str) -> float:
        return sum(x_of[i] for i in items) / len(items) if items else x_of[own]

    seen: dict[str, int] = {}
    stack = [(root, False)]
    while stack:  # post-order, operands left to right
        item, done = stack.pop()
        if done:
            seen.setdefault(item, len(seen))
        elif item not in seen:
            stack.append((item, True))
            stack += [(low, False) for low in reversed(below[item]) if low not in seen]
    for row in rows:
        row.sort(key=lambda i: seen.get(i, len(seen)))
        place(row)
    best = ([list(r) for r in rows], all_crossings())
    for _ in range(3):
        for k in reversed(range(len(rows) - 1)):
            rows[k].sort(key=lambda i: mean(above.get(i, []), i))
            place(rows[k])
        for k in range(1, len(rows)):
            rows[k].sort(key=lambda i: mean(below[i], i))
            place(rows[k])
        if all_crossings() < best[1]:
            best = ([list(r) for r in rows], all_crossings())
    rows[:] = best[0]
    rank = {item: i for row in rows for i, item in enumerate(row)}

    def pair(u: str, v: str) -> int:  # crossings between the edges of u and of v, u left of v
        return sum(rank[a] > rank[b] for a in below[u] for b in below[v]) + sum(
            rank[a] > rank[b] for a in above.get(u, []) for b in above.get(v, [])
        )

    for _ in range(4):  # then swap neighbours in a row while that removes crossings
        swapped = False
        for row in rows:
            for i in range(len(row) - 1):
                u, v = row[i], row[i + 1]
                if pair(v, u) < pair(u, v):
                    row[i], row[i + 1], rank[u], rank[v] = v, u, i + 1, i
                    swapped = True
        if not swapped:
            break
    for row in rows:
        place(row)
    return x_of


_LABEL_CHAR = 6.6  # width of one character of an edge label (11px monospace)
_CELL = 40.0  # grid cell of the points along the edges, to find those under a label quickly
# where along its edge (0 at the child, 1 at the parent) a label may go, in order of preference:
# a little above the middle, away from where edges cross, nearer the parent whose local rule it is
_LABEL_SPOTS = (0.6, 0.5, 0.7, 0.4, 0.8, 0.3, 0.2, 0.65, 0.55, 0.45, 0.75, 0.35, 0.25)

Curve = list[tuple[float, float, float, float, float, float, float, float]]


def _ports(chains: list[list[str]], boxes: dict, x_of: dict, end: int, next_: int) -> list[float]:
    """Per edge, its offset from the centre of its node at ``end`` (0: the child, -1: the
    parent): the edges at one node are spread along its side in the order of where they go,
    so that two edges into one node do not meet before they reach it."""
    at: dict[str, list[int]] = {}
    for i, chain in enumerate(chains):
        at.setdefault(chain[end], []).append(i)
    offsets = [0.0] * len(chains)
    for node_id, ids in at.items():
        if len(ids) < 2:
            continue
        ids.sort(key=lambda i: x_of[chains[i][next_]])
        step = min(18.0, 0.5 * boxes[node_id]["w"] / (len(ids) - 1))
        for k, i in enumerate(ids):
            offsets[i] = (k - (len(ids) - 1) / 2) * step
    return offsets


def _curve(points: list[tuple[float, float]]) -> Curve:
    """A smooth path through ``points`` (bottom to top): one cubic Bezier segment between two
    points, vertical where it leaves and enters them."""
    curve = []
    for (xa, ya), (xb, yb) in itertools.pairwise(points):
        k = (ya - yb) / 2
        curve.append((xa, ya, xa, ya - k, xb, yb + k, xb, yb))
    return curve


def _point(curve: Curve, t: float) -> tuple[float, float]:
    """The point at ``t`` (0 to 1) along ``curve``, each segment an equal share."""
    k = min(int(t * len(curve)), len(curve) - 1)
    u = t * len(curve) - k
    x0, y0, x1, y1, x2, y2, x3, y3 = curve[k]
    a, b, c, d = (1 - u) ** 3, 3 * (1 - u) ** 2 * u, 3 * (1 - u) * u**2, u**3
    return a * x0 + b * x1 + c * x2 + d * x3, a * y0 + b * y1 + c * y2 + d * y3


def _box(cx: float, cy: float, w: float, h: float) -> tuple[float, float, float, float]:
    """A box (left, top, right, bottom) of size ``w`` x ``h`` centred at (cx, cy)."""
    return (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)


def _place(
    curve: Curve, w: float, h: float, taken: list, others: dict
) -> tuple[float, float, float, float]:
    """Where an edge's label goes: the first spot along the curve that covers no node, label
    or other edge (``others``: points along them, by grid cell), else the least covered one,
    a label or node counting more than any number of edges."""

    def cover(box) -> tuple[bool, int, float]:  # with a margin of 3 around the label
        left, top, right, bottom = box[0] - 3, box[1] - 3, box[2] + 3, box[3] + 3
        area = sum(
            max(0.0, min(right, o[2]) - max(left, o[0]))
            * max(0.0, min(bottom, o[3]) - max(top, o[1]))
            for o in taken
            if o[0] < right and left < o[2] and o[1] < bottom and top < o[3]
        )
        cells = [
            (i, j)
            for i in range(int(left // _CELL), int(right // _CELL) + 1)
            for j in range(int(top // _CELL), int(bottom // _CELL) + 1)
        ]
        points = [p for c in cells for p in others.get(c, ())]
        crossed = sum(left < x < right and top < y < bottom for x, y in points)
        return (area > 0, crossed, area)  # rather over an edge than over a node or label

    spots = []
    for t in _LABEL_SPOTS:
        box = _box(*_point(curve, t), w, h)
        if cover(box) == (False, 0, 0):
            return box
        spots.append((cover(box), box))
    return min(spots)[1]


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
