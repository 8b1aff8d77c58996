"""The text of a graph: compact numbers, node labels, DOT escaping and walkthrough tables."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from .nodes import GraphNode

#: The node label of each SymPy operation (others: the function's name in lower case).
OPERATORS = {sp.Add: "+", sp.Mul: "*", sp.Pow: "**", sp.Piecewise: "where"}


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


def format_number(value: object) -> str:
    """A compact number: integers without a decimal point, else 6 significant digits; an
    array (a tensor graph's) by :func:`summary`."""
    if value is None:
        return ""
    if isinstance(value, np.ndarray):
        return summary(value)
    if not isinstance(value, float | int):
        return str(value)
    if math.isfinite(value) and value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}"


def summary(a: np.ndarray) -> str:
    """An array in a few characters: a number, up to three numbers ``[1, 2.5, -3]``, or the
    range of its entries ``-1.23..4.5`` (4 significant digits), never the whole array."""
    if a.ndim == 0:
        return format_number(float(a))
    flat = a.ravel()
    if flat.size <= 3:
        return "[" + ", ".join(format_number(float(v)) for v in flat) + "]"
    if not np.isfinite(flat).all():
        return f"{int((~np.isfinite(flat)).sum())} of {flat.size} not finite"
    low, high = float(flat.min()), float(flat.max())
    return f"{low:.4g}..{high:.4g}" if low != high else f"all {format_number(low)}"


#: The word for d output / d node in every view of a graph (the pictures, DOT, the tables).
ADJOINT = "adjoint"

#: Longest subexpression a picture writes under an operation's label (longer ones are cut).
EXPR_CHARS = 44


def node_lines(n: GraphNode) -> list[str]:
    """The text of a node: label (a tensor node: its heading and shape), then ``v=`` value and
    ``adjoint=`` (d output / d node) when known."""
    lines = [n.heading or n.label]
    if n.shape is not None:
        lines.append(n.shape)
    return lines + _numbers(n)


def _numbers(n: GraphNode) -> list[str]:
    lines = []
    if n.value is not None:
        lines.append(f"v={format_number(n.value)}")
    if n.grad is not None:
        lines.append(f"{ADJOINT}={format_number(n.grad)}")
    return lines


def flow(n: GraphNode) -> str:
    """What flows from a tensor node to its parents: its shape and, with values, their range
    (``(n=5, 3) -1.2..3.4``)."""
    parts = [n.shape or ""]
    if n.value is not None:
        parts.append(format_number(n.value))
    return " ".join(p for p in parts if p)


def picture_lines(n: GraphNode) -> list[tuple[str, str]]:
    """The lines a picture draws in a node, each with its kind (``"op"``, ``"expr"``,
    ``"data"``): an operation's label (``*``, ``matmul``), then the subexpression it computes
    (a tensor node's definition, ``z1 = X @ w``; cut at :data:`EXPR_CHARS`), its shape, value
    and adjoint."""
    lines = [(n.label, "op")]
    expr = n.heading or n.expr
    if n.kind == "operation" and expr and expr != n.label:
        cut = expr if len(expr) <= EXPR_CHARS else expr[: EXPR_CHARS - 1] + "\u2026"
        lines.append((cut, "expr"))
    if n.shape is not None:
        lines.append((n.shape, "data"))
    return lines + [(t, "data") for t in _numbers(n)]


def dot_escape(text: str) -> str:
    """``text`` inside a double-quoted DOT string: backslashes, quotes and newlines escaped."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def make_table(
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
