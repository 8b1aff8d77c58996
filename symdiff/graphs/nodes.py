"""The nodes and edges of a computational graph (:class:`symdiff.graphs.Graph`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class GraphNode:
    """One node: an input variable, a constant or an operation on its ``children`` (ids)."""

    id: str
    label: str
    kind: str  # "input", "constant" or "operation"
    children: tuple[str, ...] = ()
    expr: str = ""  # the subexpression this node computes, in terms of the inputs
    value: Any = None  # a float (an array in a tensor graph)
    grad: Any = None
    is_branch: bool = False
    partials: tuple[float | None, ...] = ()  # d node / d child at the point, per child
    # -- a tensor graph's nodes (``sd.graph(..., shapes=)``): value and grad are arrays --
    shape: str | None = None  # its shape as text, "(n, 3)" (with at=, "(n=4, 3)")
    heading: str = ""  # the first line drawn when not the label: "z2 = relu(z1 + b1)"
    rule: str = ""  # its backward rule in one line


@dataclass(frozen=True)
class Edge:
    """Data flows from ``source`` (a child) into ``target`` (its parent). A scalar graph's
    edge carries its local partial d target / d source at the point; a tensor graph's, where
    that is a Jacobian, what flows along it in ``text`` (its shape and a summary of its
    values)."""

    source: str
    target: str
    partial: float | None = None
    text: str = ""



def mark_branches(nodes: list[GraphNode]) -> None:
    """Set ``is_branch`` on every node (not a constant) that feeds more than one use: where
    the backward pass adds the adjoints of its uses (the multivariable chain rule)."""
    uses: dict[str, int] = {}
    for n in nodes:
        for c in n.children:
            uses[c] = uses.get(c, 0) + 1
    for n in nodes:
        n.is_branch = n.kind != "constant" and uses.get(n.id, 0) > 1
