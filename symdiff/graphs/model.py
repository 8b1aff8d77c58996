"""The :class:`Graph` that :func:`symdiff.graphs.graph` returns: its nodes and their views."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import SymdiffError
from .nodes import Edge, GraphNode
from .svg import draw
from .text import Table, dot_escape, flow, format_number, node_lines
from .walkthrough import forward_table, reverse_table


@dataclass
class Graph:
    """An expression DAG with optional forward values and gradients; see the module docstring."""

    nodes: list[GraphNode]
    root: str
    wrt: tuple[str, ...] = ()
    contributions: dict[str, list[tuple[str, float]]] = field(default_factory=dict)
    #: A tensor expression's graph (``shapes=``): values and gradients are arrays, edges carry
    #: no numbers (a local Jacobian is not one), each node its backward ``rule``.
    tensor: bool = False

    @property
    def edges(self) -> list[Edge]:
        """One edge per (child, parent) use, in node order; a tensor graph's edges say what
        flows along them (the child's shape and values, :func:`~symdiff.graphs.text.flow`)."""
        index = self._index() if self.tensor else {}
        return [
            Edge(child, node.id, node.partials[i] if node.partials else None,
                 flow(index[child]) if self.tensor else "")
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
    def gradient(self) -> dict[str, Any]:
        """d output / d input for every ``wrt`` name (0 for a name that does not occur); in a
        tensor graph an array of the input's shape, ``sd.grad``'s result."""
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
            label = "\\n".join(dot_escape(line) for line in node_lines(n))
            lines.append(f'  {n.id} [label="{label}" shape={shape}{style}];')
        for e in self.edges:
            text = e.text if e.partial is None else format_number(e.partial)
            label = f' [label="{dot_escape(text)}"]' if text else ""
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
            extra = "  ".join(node_lines(n)[1:])
            mark = "  (branch)" if n.is_branch else ""
            out.append(f"{pad}[{node_id}] {n.label}  {n.expr}  {extra}".rstrip() + mark)
            for child in n.children:
                walk(child, depth + 1)

        walk(self.root, 0)
        return "\n".join(out) + "\n"

    # -- pictures and walkthroughs ---------------------------------------------------------------
    def to_svg(self) -> str:
        """An SVG picture (template ``graph.svg.jinja``): layered, inputs at the bottom; see
        :func:`symdiff.graphs.svg.draw` for the layout (every edge labelled with its local
        partial at the point)."""
        return draw(self.nodes, self.edges, self.root)

    def _repr_svg_(self) -> str:
        return self.to_svg()

    def _repr_html_(self) -> str:
        """The SVG picture inline: a notebook shows HTML before SVG (which it would put in an
        ``<img>`` at its natural width), so the picture's ``max-width: 100%`` fits the cell."""
        return self.to_svg()

    def _require_values(self) -> None:
        if self.value is None:
            raise SymdiffError("the graph has no values; build it with at={...}")

    def forward_table(self, var: str) -> Table:
        """Forward mode for one input: each node's value and tangent d node / d ``var``.

        The tangent is pushed from the inputs up through the local partials, so one pass gives
        the derivative by ``var`` only (one pass per input for a full gradient).
        """
        self._require_values()
        if self.tensor:
            raise SymdiffError(
                "forward_table is for scalar graphs: a tensor node's local derivative is a "
                "Jacobian, not a number; use reverse_table, or graph() without shapes=")
        return forward_table(self.nodes, self.root, var)

    def reverse_table(self) -> Table:
        """Reverse mode: values forward, then every node's adjoint d output / d node backwards.

        One backward pass gives the derivative by every input at once; a branch node's adjoint
        is the sum of its parents' contributions (shown in the ``from`` column).
        """
        self._require_values()
        return reverse_table(self.nodes, self.contributions, self.gradient)
