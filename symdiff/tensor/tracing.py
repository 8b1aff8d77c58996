"""Tracing a Python function with ``shapes=`` (:func:`trace_tensor`): one run of it on traced
arrays (:class:`~symdiff.tensor.trace.Tracer`), which reads the arrays it closes over as traced
constants (:mod:`symdiff.tensor.closed`) and whose random draws are drawn again at every call
(:mod:`symdiff.trace.draws`); a second run with those arrays plain where the first fails.
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy as sp

from .. import compose
from .. import trace as scalar
from ..errors import ShapeError, SymdiffError, UnsupportedError
from ..trace import draws
from ..trace.layout import Layout
from ..trace.refusals import NOT_COMPOSED, from_generated_code, locate
from .captures import Captures
from .closed import ClosedArrays
from .ir import Node
from .ops import Builder
from .shapes import Shape, format_shape
from .trace import Tracer, holds_traced
from .traced import TensorCondition, TracedTensor


def trace_tensor(fn: Callable[..., Any], shapes: dict[str, Shape], builder: Builder,
                 many: bool = False, captures: Captures | None = None,
                 layout: Layout | None = None
                 ) -> tuple[list[Node], inspect.Signature, bool]:
    """Run ``fn`` on traced arrays of the declared shapes: the node(s) of what it returns, its
    checked signature (:func:`symdiff.trace.signature`: every parameter is an argument of the
    compiled function, used or not, in the ``def``'s order), and whether it returned a tuple or
    list, which only ``many`` (a Jacobian) allows: one node per item. The constant arrays it
    meets are added to ``captures`` (bound constants, :mod:`symdiff.tensor.captures`).

    The arrays it reads by name are traced constants (:mod:`symdiff.tensor.closed`); where that
    fails, ``fn`` is traced again with them as plain arrays, each noted folded in
    ``captures``.

    With a ``layout`` (parameter trees, static arguments: :mod:`symdiff.trace.layout`), the
    generated function's parameters are the layout's and ``fn`` is called with its values."""
    sig = scalar.signature(fn) if layout is None else layout.signature
    names = tuple(sig.parameters)
    missing = [n for n in names if n not in shapes]
    if missing:
        raise ShapeError(f"parameter(s) {', '.join(map(repr, missing))} of "
                         f"{getattr(fn, '__name__', 'the function')} have no shape: add them to "
                         "shapes= (use () for a scalar)")
    captures = Captures() if captures is None else captures
    saved, needs = captures.checkpoint(), dict(builder.needs)
    closed = ClosedArrays(captures.folded)
    try:
        return _traced(fn, sig, shapes, builder, captures, closed, many, layout)
    except Exception as exc:  # traced again below, which raises what it meets
        if not closed.made:
            raise
        first = exc
    captures.restore(saved)
    builder.needs.clear()
    builder.needs.update(needs)
    plain = ClosedArrays(captures.folded, symbolic=False)
    result = _traced(fn, sig, shapes, builder, captures, plain, many, layout)
    why = str(first).split("\n")[0]
    why = why if len(why) <= 200 else why[:197] + "..."
    for _, label in closed.made.values():
        captures.folded.setdefault(label, "the function could not be traced with it as a "
                                          f"symbolic constant ({why})")
    return result


def _traced(fn: Callable[..., Any], sig: inspect.Signature, shapes: dict[str, Shape],
            builder: Builder, captures: Captures, closed: ClosedArrays | None, many: bool,
            layout: Layout | None = None) -> tuple[list[Node], inspect.Signature, bool]:
    """One trace of ``fn`` (see :func:`trace_tensor`), the arrays it reads by name seen as
    ``closed`` makes them."""
    tracer = Tracer(builder, fn, captures, closed)

    def make(name: str) -> TracedTensor:
        return tracer.wrap(builder.var(name, shapes[name]))

    statics = {} if layout is None else dict(layout.statics)

    def replace(value: Any, label: str) -> Any:  # compiled functions, then named arrays
        found = compose.replace(value, label)
        return found if found is not None else tracer.closed.replace(value, label)

    try:
        with draws.watched(fn, tracer.draw, replace, views=statics) as run:
            if layout is None:
                value = scalar.call_with(run, sig, [make(n) for n in sig.parameters])
            else:
                value = scalar.call_with(run, layout.function_signature,
                                         layout.values(make, statics))
    except SymdiffError as exc:
        if from_generated_code(exc):
            raise UnsupportedError(f"{NOT_COMPOSED} (in {tracer.name}: {exc})") from exc
        if isinstance(exc, ShapeError):
            raise ShapeError(f"{exc}{_fixed_sizes_hint(tracer, shapes)}") from None
        locate(exc, fn)
        raise
    except Exception as exc:
        if isinstance(exc.__cause__, UnsupportedError):  # NumPy turned a refusal into its error
            raise UnsupportedError(f"{exc.__cause__} (NumPy then raised {type(exc).__name__}: "
                                   f"{exc})") from exc
        raise UnsupportedError(
            f"tracing {tracer.name} failed: {type(exc).__name__}: {exc}"
        ) from exc
    if many and isinstance(value, tuple | list):
        if not value:
            raise UnsupportedError(f"{tracer.name} returned an empty {type(value).__name__}")
        nodes, listed = [_node(tracer, item) for item in value], True
    else:
        nodes, listed = [_node(tracer, value)], False
    tracer.closed.settle({n for c in captures.items for n in (c.label, *c.sources)})
    return nodes, sig, listed


def _fixed_sizes_hint(tracer: Tracer, shapes: dict[str, Shape]) -> str:
    """For a shape error of a trace that met bound constants while some parameter has a named
    dimension: the hint that constants have fixed sizes."""
    if not tracer.captures.items or not any(
        not isinstance(d, int) for shape in shapes.values() for d in shape
    ):
        return ""
    constants = ", ".join(f"{c.label} {format_shape(c.shape)}" for c in tracer.captures.items)
    return (f"; the constant arrays the function uses ({constants}) have fixed sizes: give the "
            "parameters that meet them fixed sizes in shapes= too")


def _node(tracer: Tracer, value: object) -> Node:
    """What a traced function returned, as a node."""
    if isinstance(value, TensorCondition):
        raise UnsupportedError(f"{tracer.name} returned a comparison; " + scalar.CONDITION_ONLY)
    if isinstance(value, TracedTensor) or (
        isinstance(value, np.ndarray) and holds_traced(value)  # np.array([x, 2 * x])
    ):
        return tracer.node(value)
    if isinstance(value, numbers.Real | np.ndarray | sp.Expr) and np.ndim(value) == 0:
        return tracer.node(value)
    returned = "None (is a return statement missing?)" if value is None else (
        f"a {type(value).__name__}")
    hint = (" (for a function returning several arrays, use sd.jacobian)"
            if isinstance(value, tuple | list) else "")
    raise UnsupportedError(f"{tracer.name} returned {returned}; a traced function must return "
                           f"one array (or number) computed from its parameters{hint}")


__all__ = ["trace_tensor"]
