"""The nodes and edges of a computational graph (:class:`symdiff.graphs.Graph`)."""

from __future__ import annotations

from dataclasses import dataclass


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

