"""The SVG picture of a computational graph (template ``graph.svg.jinja``, no graphviz)."""

from __future__ import annotations

import html
import itertools
from collections.abc import Sequence
from typing import Any

from ..codegen.render import render
from .layout import (
    CELL,
    LABEL_CHAR,
    centred_box,
    order_rows,
    place_label,
    point_at,
    ports,
    smooth_curve,
)
from .nodes import Edge, GraphNode
from .text import format_number, node_lines


def draw(nodes: Sequence[GraphNode], graph_edges: Sequence[Edge], root: str) -> str:
    """An SVG picture (template ``graph.svg.jinja``): layered, inputs at the bottom.

    Every edge carries its local partial d parent / d child at the point (as in
    :meth:`to_dot`), on a white label along the edge, placed off the nodes, the other labels
    and the other edges where there is room. An edge over several rows passes a waypoint in
    each row between, which is ordered with the nodes (fewer crossings, no edge through a
    node); a constant sits just under its lowest parent.
    """
    layer: dict[str, int] = {}
    for n in nodes:  # children come first
        layer[n.id] = 1 + max((layer[c] for c in n.children), default=-1)
    for n in reversed(nodes):
        if n.kind == "constant" and n.id != root:
            layer[n.id] = min(layer[p.id] for p in nodes if n.id in p.children) - 1
    depth = max(layer.values())
    widths = {  # an ellipse is narrower than its box at the lower text lines: 1.3x wider
        n.id: (14 + 7.2 * max(len(t) for t in node_lines(n))) * (1.3 if n.kind == "input" else 1)
        for n in nodes
    }
    rows: list[list[str]] = [[] for _ in range(depth + 1)]
    for n in nodes:
        rows[layer[n.id]].append(n.id)
    below: dict[str, list[str]] = {n.id: [] for n in nodes}  # in operand order
    chains: list[list[str]] = []  # per edge, the items it passes: source ... target
    every = list(graph_edges)
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
    x_of = order_rows(rows, root, widths, below, gap=36)
    index = {n.id: n for n in nodes}
    boxes: dict[str, dict[str, Any]] = {}
    for k, row in enumerate(rows):
        for item in row:
            if item not in index:
                continue
            n, lines = index[item], node_lines(index[item])
            boxes[item] = {
                "cx": round(x_of[item], 1),
                "cy": 30 + (depth - k) * row_height,
                "w": round(widths[item], 1),
                "h": 10 + 16 * len(lines),
                "shape": "ellipse" if n.kind == "input" else "rect",
                "cls": n.kind + (" branch" if n.is_branch else ""),
                "lines": [html.escape(t, quote=True) for t in lines],
                "title": html.escape(f"{n.id}: {n.expr}"
                                     + (f" | backward: {n.rule}" if n.rule else ""), quote=True),
            }
    start = ports(chains, boxes, x_of, 0, 1)
    end = ports(chains, boxes, x_of, -1, -2)
    curves = []
    for i, chain in enumerate(chains):
        s, t = boxes[chain[0]], boxes[chain[-1]]
        points = [(s["cx"] + start[i], s["cy"] - s["h"] / 2)]
        points += [
            (x_of[w], 30 + (depth - layer[chain[0]] - j) * row_height)
            for j, w in enumerate(chain[1:-1], 1)
        ]
        points.append((t["cx"] + end[i], t["cy"] + t["h"] / 2 + 2))
        curves.append(smooth_curve(points))
    samples = [[point_at(c, j / (12 * len(c))) for j in range(12 * len(c) + 1)] for c in curves]
    grid: dict[tuple[int, int], list[tuple[float, float]]] = {}
    for ps in samples:
        for x, y in ps:
            grid.setdefault((int(x // CELL), int(y // CELL)), []).append((x, y))
    taken = [  # an input's ellipse is 10 taller than its text (graph.svg.jinja)
        centred_box(b["cx"], b["cy"], b["w"] + 4, b["h"] + (14 if b["shape"] == "ellipse" else 4))
        for b in boxes.values()
    ]
    edges, labels = [], []
    extent = [b["cx"] - b["w"] / 2 for b in boxes.values()]
    extent += [b["cx"] + b["w"] / 2 for b in boxes.values()]
    for i, (e, curve) in enumerate(zip(every, curves, strict=True)):
        extent += [x for segment in curve for x in segment[::2]]
        title = f"d({index[e.target].expr}) / d({index[e.source].expr})"
        if e.partial is not None:
            title += f" = {format_number(e.partial)}"
        path = f"M {curve[0][0]:.1f} {curve[0][1]:.1f} " + " ".join(
            "C " + " ".join(f"{v:.1f}" for v in segment[2:]) for segment in curve
        )
        edges.append({"d": path, "title": html.escape(title, quote=True)})
        if e.partial is None:  # no point, or the edge from a constant: nothing to label
            continue
        text = format_number(e.partial)
        w, h = 8 + LABEL_CHAR * len(text), 15
        for x, y in samples[i]:  # its own edge is no obstacle
            grid[int(x // CELL), int(y // CELL)].remove((x, y))
        label = place_label(curve, w, h, taken, grid)
        for x, y in samples[i]:
            grid[int(x // CELL), int(y // CELL)].append((x, y))
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
        nodes=[boxes[n.id] for n in nodes],
        edges=edges,
        labels=labels,
    )
