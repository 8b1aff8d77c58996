"""The pictures and code beside a derivation: the plot of f and its derivative, the
computational graph with values at a point, and the generated NumPy code.

All of them come from the public API (:func:`symdiff.graph`, :func:`symdiff.compile` through
:mod:`.plot`, :func:`symdiff.grad`), so they show what the library computes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import sympy as sp

from ..errors import SymdiffError
from .plot import number, plot

#: Values tried, in turn, for every variable when no point is given: the first where the
#: function and its derivative are finite real numbers is used.
CANDIDATES = (1.0, 0.5, 2.0, 1.5, 3.0, -1.0, 0.25, -0.5, 5.0, -2.0)


def _finite_at(exprs: Sequence[sp.Expr], point: Mapping[str, float]) -> bool:
    for expr in exprs:
        subs = {s: point[s.name] for s in expr.free_symbols if isinstance(s, sp.Symbol)}
        try:
            value = complex(expr.evalf(15, subs=subs))
        except (TypeError, ValueError, ZeroDivisionError, OverflowError):
            return False
        if not (math.isfinite(value.real) and value.imag == 0):
            return False
    return True


def default_point(exprs: Sequence[sp.Expr], names: Sequence[str]) -> dict[str, float]:
    """A point where every one of ``exprs`` is a finite real number (the same value for
    every variable, from :data:`CANDIDATES`), else every variable at 1."""
    for value in CANDIDATES:
        point = dict.fromkeys(names, value)
        if _finite_at(exprs, point):
            return point
    return dict.fromkeys(names, 1.0)


def check_point(point: Mapping[str, float], names: Sequence[str]) -> dict[str, float]:
    """A value for every variable (an error naming the missing ones)."""
    missing = [name for name in names if name not in point]
    if missing:
        raise SymdiffError(f"give a value for {', '.join(missing)}")
    return {name: float(point[name]) for name in names}


def point_text(point: Mapping[str, float]) -> str:
    """``x = 1, y = 0.5``."""
    return ", ".join(f"{name} = {number(value)}" for name, value in point.items())


def plot_svg(function: sp.Expr, derivative: sp.Expr, label: str, var: str,
             point: Mapping[str, float], interval: tuple[float, float], uid: str = "plot"
             ) -> str:
    """The SVG plot of ``function`` (labelled f) and ``derivative`` (labelled ``label``)
    against ``var`` over ``interval``, the other variables at ``point``."""
    a, b = interval
    if not (math.isfinite(a) and math.isfinite(b) and a < b):
        raise SymdiffError(f"the interval must go from a smaller to a larger number; got {a} "
                           f"to {b}")
    return plot([("f", function), (label, derivative)], var, point, (a, b), uid)


def graph_figure(text: str, point: Mapping[str, float]) -> dict[str, Any]:
    """The computational graph of ``text`` at ``point``: its SVG, each node's value and
    adjoint drawn in it, and the gradient at the point, as ``{"svg", "gradient"}``."""
    import symdiff as sd

    graph = sd.graph(text, at=dict(point))
    gradient = {name: float(value) for name, value in graph.gradient.items()}
    return {"svg": graph.to_svg(), "gradient": gradient, "point": point_text(point)}


def code(text: str, sequence: Sequence[str]) -> str:
    """The generated NumPy module of the derivative: ``sd.grad`` of the expression for a first
    derivative, of the derivative before the last for a higher one; a derivative taken of
    something without the last variable is 0, and its module computes that constant."""
    import symdiff as sd

    from .lesson import derivations, variables_of

    found = derivations(text, tuple(sequence))
    if len(sequence) == 1:
        return sd.grad(text, wrt=sequence[0]).source
    before = found[-2].result
    if sequence[-1] in variables_of(before):
        return sd.grad(before, wrt=sequence[-1]).source
    return sd.compile(found[-1].result).source
