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
from .text import format_number, picture_lines

#: Width of one character of a node's text: 12px monospace, an expression line at 11px.
CHAR = {"op": 7.2, "expr": 6.6, "data": 7.2}
LINE = 16  # height of one line of a node's text
MARGIN = 12  # around the picture's content, inside its viewBox


def _box_width(n: GraphNode) -> float:
    """A node's width from its longest line; an ellipse is narrower than its box at the lower
    text lines: 1.3x wider."""
    text = max(CHAR[kind] * len(t) for t, kind in picture_lines(n))
    return (14 + text) * (1.3 if n.kind == "input" else 1)


def draw(nodes: Sequence[GraphNode], graph_edges: Sequence[Edge], root: str) -> str:
    """An SVG picture (template ``graph.svg.jinja``): layered, inputs at the bottom.

    Each operation shows its operation (``*``, ``matmul``) and, in smaller type, the
    subexpression it computes; then shape, value and adjoint when known. Every edge carries
    its local partial d parent / d child at the point (as in :meth:`to_dot`; a tensor graph's
    edge what flows along it, shape and values), on a white label along the edge, placed off
    the nodes, the other labels and the other edges where there is room. An edge over several
    rows passes each row between in a gap ordered with that row's nodes, straight up through
    the row's height, so no edge crosses a node; a constant sits just under its lowest parent.
    The ``viewBox`` is the content's extent, drawn at its natural size but at most 100% of the
    page's width (``max-width``, height in proportion): a notebook cell scales the picture
    down to fit, never clips it.
    """
    layer: dict[str, int] = {}
    for n in nodes:  # children come first
        layer[n.id] = 1 + max((layer[c] for c in n.children), default=-1)
    for n in reversed(nodes):
        if n.kind == "constant" and n.id != root:
            layer[n.id] = min(layer[p.id] for p in nodes if n.id in p.children) - 1
    depth = max(layer.values())
    widths = {n.id: _box_width(n) for n in nodes}
    heights = {n.id: 10 + LINE * len(picture_lines(n)) + (10 if n.kind == "input" else 0)
               for n in nodes}
    rows: list[list[str]] = [[] for _ in range(depth + 1)]
    for n in nodes:
        rows[layer[n.id]].append(n.id)
    half = [max((heights[i] for i in row), default=0) / 2 for row in rows]
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
    labelled = any(e.partial is not None or e.text for e in every)
    gap = 64 if labelled else 44  # between the tallest boxes of two rows
    y_of = [0.0] * (depth + 1)  # row centres, the output's row at the top
    for k in reversed(range(depth)):
        y_of[k] = y_of[k + 1] + half[k + 1] + gap + half[k]
    x_of = order_rows(rows, root, widths, below, gap=36)
    index = {n.id: n for n in nodes}
    boxes: dict[str, dict[str, Any]] = {}
    for k, row in enumerate(rows):
        for item in row:
            if item not in index:
                continue
            n = index[item]
            lines = picture_lines(n)
            boxes[item] = {
                "cx": round(x_of[item], 1),
                "cy": round(y_of[k], 1),
                "w": round(widths[item], 1),
                "h": heights[item],
                "shape": "ellipse" if n.kind == "input" else "rect",
                "cls": n.kind + (" branch" if n.is_branch else ""),
                "lines": [{"text": html.escape(t, quote=True), "kind": kind} for t, kind in lines],
                "top": round(y_of[k] - LINE * len(lines) / 2 + 12, 1),
                "title": html.escape(f"{n.id}: {n.expr}"
                                     + (f" | backward: {n.rule}" if n.rule else ""), quote=True),
            }
    start = ports(chains, boxes, x_of, 0, 1)
    end = ports(chains, boxes, x_of, -1, -2)
    curves = []
    for i, chain in enumerate(chains):
        s, t = boxes[chain[0]], boxes[chain[-1]]
        points = [(s["cx"] + start[i], s["cy"] - s["h"] / 2)]
        for w in chain[1:-1]:  # straight up through the row, in its gap between nodes
            k = int(w.rsplit(".", 1)[1])
            points += [(x_of[w], y_of[k] + half[k] + 4), (x_of[w], y_of[k] - half[k] - 4)]
        points.append((t["cx"] + end[i], t["cy"] + t["h"] / 2 + 2))
        curves.append(smooth_curve(points))
    samples = [[point_at(c, j / (12 * len(c))) for j in range(12 * len(c) + 1)] for c in curves]
    grid: dict[tuple[int, int], list[tuple[float, float]]] = {}
    for ps in samples:
        for x, y in ps:
            grid.setdefault((int(x // CELL), int(y // CELL)), []).append((x, y))
    taken = [centred_box(b["cx"], b["cy"], b["w"] + 4, b["h"] + 4) for b in boxes.values()]
    edges, labels = [], []
    extent = list(taken)
    for i, (e, curve) in enumerate(zip(every, curves, strict=True)):
        extent += [(x, y, x, y) for segment in curve for x, y in (segment[:2], segment[-2:])]
        title = f"d({index[e.target].expr}) / d({index[e.source].expr})"
        if e.partial is not None:
            title += f" = {format_number(e.partial)}"
        elif e.text:
            title = f"{index[e.source].expr} -> {index[e.target].expr}: {e.text}"
        path = f"M {curve[0][0]:.1f} {curve[0][1]:.1f} " + " ".join(
            "C " + " ".join(f"{v:.1f}" for v in segment[2:]) for segment in curve
        )
        edges.append({"d": path, "title": html.escape(title, quote=True)})
        text = format_number(e.partial) if e.partial is not None else e.text
        if not text:  # no point, or the edge from a constant: nothing to label
            continue
        w, h = 8 + LABEL_CHAR * len(text), 15
        for x, y in samples[i]:  # its own edge is no obstacle
            grid[int(x // CELL), int(y // CELL)].remove((x, y))
        label = place_label(curve, w, h, taken, grid)
        for x, y in samples[i]:
            grid[int(x // CELL), int(y // CELL)].append((x, y))
        taken.append(label)
        extent.append(label)
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
    left = min(b[0] for b in extent) - MARGIN
    top = min(b[1] for b in extent) - MARGIN
    right = max(b[2] for b in extent) + MARGIN
    bottom = max(b[3] for b in extent) + MARGIN
    return render(
        "graph.svg.jinja",
        left=round(left, 1),
        top=round(top, 1),
        width=round(right - left, 1),
        height=round(bottom - top, 1),
        nodes=[boxes[n.id] for n in nodes],
        edges=edges,
        labels=labels,
    )
