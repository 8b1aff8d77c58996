"""Computational graphs: the expression DAG that reverse mode computes, drawn and walked through.

``sd.graph(expr, at={...})`` builds the graph from the same linearisation as
:func:`symdiff.engine.reverse.reverse_program` (one node per distinct subexpression, local partials
from
the rule table), so the picture is what the generated code computes, with one difference for
the reader: subtraction and division are drawn as written, as ``-`` and ``/`` nodes with their
own local rules, where SymPy (and the generated code) has ``a + (-1)*b`` and ``a * b**-1``; see
:class:`~symdiff.graphs.written.AsWritten` for ``a - b - c``, ``-x``, ``1/x`` and
``x*y/(z*w)``. With ``at`` every node gets its forward value and, after a backward pass seeded
with 1 at the output, its gradient (adjoint) d output / d node. A node used by more than one
parent is a *branch* (fan-out): its gradient is the sum of what its parents send back.

Views: :meth:`Graph.to_svg` (our own template, no graphviz binary; Jupyter shows it through
``_repr_svg_``), :meth:`Graph.to_dot`, :meth:`Graph.tree`, and the forward- vs reverse-mode
walkthrough tables :meth:`Graph.forward_table` and :meth:`Graph.reverse_table`.

With ``shapes=`` the expression is a tensor expression (:mod:`symdiff.graphs.tensor`): one node
per operation of the program ``sd.grad`` runs, a layer the user called (``conv2d``,
``max_pool2d``, ``batch_norm``) one node, each with its shape and backward rule; with ``at``
(arrays) every node's value and adjoint are arrays, shown as short summaries.

Modules: ``written`` (the linearisation with ``-`` and ``/`` as written) and ``construct``
(:func:`graph`: nodes, then values and gradients at the point) build the :class:`Graph` of
``model``, whose nodes and edges are in ``nodes``; ``tensor`` builds a tensor expression's,
with its numbers from ``values`` (one generated function); its views are ``text`` (numbers,
array summaries, labels, DOT escaping, :class:`Table`), ``walkthrough`` (the forward- and
reverse-mode tables), ``svg`` (the picture) and ``layout`` (the picture's geometry: row order,
curves, label spots).
"""

from __future__ import annotations

from .construct import graph
from .model import Graph
from .nodes import Edge, GraphNode
from .text import Table

__all__ = ["Edge", "Graph", "GraphNode", "Table", "graph"]
