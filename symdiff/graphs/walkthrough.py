"""Forward vs reverse mode on a graph: the walkthrough tables of :class:`symdiff.graphs.Graph`.

Both read the values and local partials :func:`symdiff.graphs.graph` computed at the point:
forward mode pushes one input's tangent up, reverse mode sends the output's adjoint down.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from .nodes import GraphNode
from .text import Table, format_number, make_table


def forward_table(nodes: Sequence[GraphNode], root: str, var: str) -> Table:
    """Forward mode for one input: each node's value and tangent d node / d ``var``.

    The tangent is pushed from the inputs up through the local partials, so one pass gives
    the derivative by ``var`` only (one pass per input for a full gradient).
    """
    tangent: dict[str, float] = {}
    rows: list[dict[str, object]] = []
    index = {n.id: n for n in nodes}
    for n in nodes:
        if n.kind != "operation":
            tangent[n.id] = 1.0 if n.kind == "input" and n.label == var else 0.0
        else:
            tangent[n.id] = sum(
                (p if p is not None else math.nan) * tangent[c]
                for c, p in zip(n.children, n.partials, strict=True)
                if tangent[c] != 0.0
            )
        terms = " + ".join(
            f"{format_number(p)}*{format_number(tangent[c])}"
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
    result = {var: tangent[root]}
    header = ("node", "op", "expression", "value", f"d/d{var}", "= sum partial*tangent")
    cells = [
        (
            r["node"],
            r["op"],
            r["expr"],
            format_number(r["value"]),
            format_number(r["tangent"]),
            r["from"],
        )
        for r in rows
    ]
    summary = f"forward mode: df/d{var} = {format_number(result[var])}"
    return make_table(rows, result, header, cells, summary)


def reverse_table(
    nodes: Sequence[GraphNode],
    contributions: Mapping[str, list[tuple[str, float]]],
    gradient: Mapping[str, float | None],
) -> Table:
    """Reverse mode: values forward, then every node's adjoint d output / d node backwards.

    One backward pass gives the derivative by every input at once; a branch node's adjoint
    is the sum of its parents' contributions (shown in the ``from`` column).
    """
    ordered = [n for n in reversed(nodes) if n.kind == "operation"]
    ordered += [n for n in nodes if n.kind == "input"]
    rows: list[dict[str, object]] = [
        {
            "node": n.id,
            "op": n.label,
            "expr": n.expr,
            "value": n.value,
            "adjoint": n.grad,
            "branch": n.is_branch,
            "from": " + ".join(format_number(v) for _, v in contributions.get(n.id, [])),
        }
        for n in ordered
    ]
    result = {k: v for k, v in gradient.items() if v is not None}
    header: tuple[str, ...] = ("node", "op", "expression", "value", "adjoint",
                               "= sum from parents")
    cells = [
        (
            r["node"],
            r["op"],
            r["expr"],
            format_number(r["value"]),
            format_number(r["adjoint"]),
            str(r["from"]) + ("  (branch)" if r["branch"] else ""),
        )
        for r in rows
    ]
    if any(n.rule for n in ordered):  # a tensor graph: the rule each adjoint came down by
        for r, n in zip(rows, ordered, strict=True):
            r["shape"], r["rule"] = n.shape, n.rule
        header = (*header[:3], "shape", *header[3:5], "backward rule")
        cells = [(*c[:3], str(r["shape"]), *c[3:5], str(r["rule"]) + ("  (branch)" if
                                                                      r["branch"] else ""))
                 for c, r in zip(cells, rows, strict=True)]
    summary = ", ".join(f"df/d{k} = {format_number(v)}" for k, v in result.items())
    return make_table(rows, result, header, cells, f"reverse mode (one pass): {summary}")

