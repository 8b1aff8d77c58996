"""The scalar layer: from a validated :class:`~symdiff.request.Request` to generated code.
Choose the mode, derive the outputs, emit the module (:data:`LAYER`, which the build pipeline
of :mod:`symdiff.pipeline` calls; caching is the pipeline's).

Forward mode differentiates each output symbolically (simplified, then CSE across all
outputs); reverse mode emits a forward sweep over temporaries and one backward sweep of
adjoints per output (:mod:`symdiff.engine.reverse`). One planner per kind (:data:`PLANNERS`).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import sympy as sp

from . import progress
from .codegen import naming
from .codegen.emit import ArrayResult, Program, Result, emit_source
from .codegen.printer import brief_text
from .engine.sweeps import (
    Recorded,
    derivation,
    gradient_program,
    hessian_program,
    hvp_program,
    partials,
    second_partials,
)
from .layer import Built, Call
from .recipe import KindTable
from .request import Request, expression, make_request, restored, symbol, wrt_names
from .simplify import count_ops, operation_nodes, simplify_for_people
from .simplify.numeric import faithful_form

__all__ = [
    "LAYER",
    "PLANNERS",
    "Plan",
    "Request",
    "choose_mode",
    "derivative",
    "expression",
    "forward_exprs",
    "make_request",
    "symbol",
    "wrt_names",
]

log = logging.getLogger(__name__)

#: ``mode="auto"`` picks forward mode (simplified partials sharing subexpressions: the most
#: readable code) for fewer variables than this and expressions up to :data:`AUTO_MAX_FORWARD_OPS`
#: operations, reverse mode otherwise. Measured (benchmarks/bench_peers.py): beyond three
#: variables reverse mode runs within about 10% of forward mode's code, at a point and over a
#: batch, and builds 10-25x faster (Rosenbrock of 100 variables: 0.45 s against 4.0 s), because
#: forward mode simplifies one partial per variable.
AUTO_FORWARD_MAX_WRT = 4
AUTO_MAX_FORWARD_OPS = 20_000


@dataclass
class Plan:
    """The outputs of one function and how they are computed and returned."""

    outputs: list[sp.Expr]
    output_names: list[str]
    result: Result
    title: str
    mode: str = "forward"
    assignments: list[tuple[sp.Symbol, sp.Expr]] | None = None
    #: The steps the engine recorded while deriving the outputs (:mod:`symdiff.engine.sweeps`).
    recorded: Recorded = field(default_factory=Recorded)


def derivative(expr: sp.Expr, name: str, simplify: bool) -> sp.Expr:
    """d expr / d name by the rule table, simplified for reading when asked."""
    return derivation(expr, symbol(name), simplify).result


def choose_mode(request: Request) -> str:
    """The mode actually used: as asked, or for ``auto`` forward mode for up to three variables
    (and expressions that are not huge), reverse mode beyond (see :data:`AUTO_FORWARD_MAX_WRT`).
    """
    if request.options.mode != "auto" or request.kind in ("value", "hvp"):
        return "forward" if request.options.mode == "auto" else request.options.mode
    ops = sum(operation_nodes(e) for e in request.exprs)
    mode = (
        "forward"
        if len(request.wrt) < AUTO_FORWARD_MAX_WRT and ops <= AUTO_MAX_FORWARD_OPS
        else "reverse"
    )
    log.debug("mode auto -> %s: %d wrt variables, %d operations", mode, len(request.wrt), ops)
    return mode


# -- one planner per kind ---------------------------------------------------------------------
#: The planner of each kind: the outputs it computes, and how (registered below, one each).
PLANNERS = KindTable()


def _names(wrt: Sequence[str]) -> str:
    return ", ".join(wrt)


def _simplified_value(expr: sp.Expr, simplify: bool) -> sp.Expr:
    """The value as the code computes it: simplified when asked, where that keeps its accuracy
    in float64 (:func:`symdiff.simplify.numeric.faithful_form`)."""
    return faithful_form(expr, simplify_for_people(expr)) if simplify else expr


@PLANNERS.kind("value")
def _plan_value(r: Request, mode: str) -> Plan:
    (expr,) = r.exprs
    with progress.stage("simplify"):
        value = _simplified_value(expr, r.options.simplify)
    return Plan([value], [naming.VALUE], 0, f"Value of {brief_text(expr)}")


@PLANNERS.kind("grad")
def _plan_grad(r: Request, mode: str) -> Plan:
    (expr,) = r.exprs
    title = f"Gradient of {brief_text(expr)} with respect to ({_names(r.wrt)})"
    names = [naming.adjoint(n) for n in r.wrt]
    result: Result = 0 if r.single else tuple(range(len(r.wrt)))
    if mode == "reverse":
        assignments, _, (grads,), record = gradient_program([expr], r.wrt)
        return Plan(grads, names, result, title, mode, assignments, record)
    (grads,), record = partials([expr], r.wrt, r.options.simplify)
    return Plan(grads, names, result, title, recorded=record)


@PLANNERS.kind("value_and_grad")
def _plan_value_and_grad(r: Request, mode: str) -> Plan:
    (expr,) = r.exprs
    title = f"Value and gradient of {brief_text(expr)} with respect to ({_names(r.wrt)})"
    names = [naming.VALUE, *(naming.adjoint(n) for n in r.wrt)]
    grads: Result = 1 if r.single else tuple(range(1, len(r.wrt) + 1))
    if mode == "reverse":
        assignments, (value,), (row,), record = gradient_program([expr], r.wrt, keep_values=True)
        return Plan([value, *row], names, (0, grads), title, mode, assignments, record)
    value = _simplified_value(expr, r.options.simplify)
    (row,), record = partials([expr], r.wrt, r.options.simplify)
    return Plan([value, *row], names, (0, grads), title, recorded=record)


@PLANNERS.kind("jacobian")
def _plan_jacobian(r: Request, mode: str) -> Plan:
    m, n = len(r.exprs), len(r.wrt)
    dims = (m,) if r.single else (m, n)
    entries = {((i,) if r.single else (i, j)): i * n + j for i in range(m) for j in range(n)}
    title = f"Jacobian with respect to ({_names(r.wrt)})"
    if mode == "reverse":
        assignments, _, rows, record = gradient_program(r.exprs, r.wrt)
        outputs = [g for row in rows for g in row]
        return Plan(outputs, [], ArrayResult(dims, entries), title, mode, assignments, record)
    rows, record = partials(r.exprs, r.wrt, r.options.simplify)
    outputs = [g for row in rows for g in row]
    return Plan(outputs, [], ArrayResult(dims, entries), title, recorded=record)


@PLANNERS.kind("hessian")
def _plan_hessian(r: Request, mode: str) -> Plan:
    """Symbolically (forward over forward) for few variables; forward over reverse otherwise:
    one tangent sweep of the reverse-mode gradient program per column."""
    (expr,) = r.exprs
    title = f"Hessian of {brief_text(expr)} with respect to ({_names(r.wrt)})"
    n = len(r.wrt)
    if mode == "reverse":
        assignments, columns, record = hessian_program(expr, r.wrt)
        outputs = [entry for column in columns for entry in column]
        entries = {(i, j): j * n + i for j in range(n) for i in range(n)}
        result = 0 if r.single else ArrayResult((n, n), entries)
        names = [naming.SECOND] if r.single else []
        return Plan(outputs, names, result, title, "forward over reverse", assignments, record)
    upper, record = second_partials(expr, r.wrt, r.options.simplify)
    outputs = list(upper.values())
    entries = {index: k for k, index in enumerate(upper)}
    mirrors = {(i, j): (j, i) for i in range(n) for j in range(i)}
    if r.single:
        return Plan(outputs, [naming.SECOND], 0, title, recorded=record)
    return Plan(outputs, [], ArrayResult((n, n), entries, mirrors), title, recorded=record)


@PLANNERS.kind("hvp")
def _plan_hvp(r: Request, mode: str) -> Plan:
    """Hessian times a direction ``_v``: forward mode over the reverse-mode gradient program."""
    (expr,) = r.exprs
    assignments, products, record = hvp_program(expr, r.wrt)
    title = f"Hessian of {brief_text(expr)} times a direction, with respect to ({_names(r.wrt)})"
    names = [naming.hvp(n) for n in r.wrt]
    if r.single:
        return Plan(products, names, 0, title, "forward over reverse", assignments, record)
    result = ArrayResult((len(r.wrt),), {(i,): i for i in range(len(r.wrt))})
    return Plan(products, [], result, title, "forward over reverse", assignments, record)


PLANNERS.complete()


_RETURNS = {
    "value": "the value, of the broadcast shape",
    "grad": "the partial derivatives, one per wrt name, each of the broadcast shape",
    "value_and_grad": "(value, partial derivatives), each of the broadcast shape",
    "jacobian": "an array of shape (outputs, wrt) + broadcast shape",
    "hessian": "an array of shape (wrt, wrt) + broadcast shape",
    "hvp": f"the Hessian times {naming.DIRECTION} (one component per wrt name on its first axis)",
}


def _docstring(params: Sequence[str], kind: str) -> list[str]:
    return [
        f"Arguments (in this order, or by name): {_names(params) or 'none'}.",
        "They broadcast like NumPy ufunc arguments; float32 stays float32, integers give float64.",
        f"Returns {_RETURNS[kind]}.",
    ]


def forward_exprs(request: Request) -> list[sp.Expr]:
    """The derivative expressions of ``request`` in closed form (what ``.exprs`` shows)."""
    return restored(request, PLANNERS[request.kind](request, "forward").outputs)


def _build(request: Request) -> Built:
    """Derive and emit (no caching): the module, its recipe and the expressions it computes."""
    if log.isEnabledFor(logging.DEBUG):
        ops = sum(count_ops(e) for e in request.exprs)
        log.debug("building %s: %d operations, %d wrt", request.kind, ops, len(request.wrt))
    with progress.stage("derive") as counts:
        plan = PLANNERS[request.kind](request, choose_mode(request))
        counts.update(outputs=len(plan.outputs), mode=plan.mode)
        recipe = replace(request.recipe, mode=plan.mode, outputs=tuple(plan.output_names))
        program = _program(request, plan, recipe.name)
    source = emit_source(program, cse=request.options.cse, backend=request.options.backend)
    exprs = (
        restored(request, plan.outputs)
        if plan.assignments is None
        else functools.partial(forward_exprs, request)
    )
    return Built(source, recipe, exprs, plan.recorded)


def _program(request: Request, plan: Plan, name: str) -> Program:
    """What the code generator emits for ``plan``."""
    title = plan.title
    if plan.recorded.unsimplified:
        count = plan.recorded.unsimplified
        title += (f"; {count} derivative{'s' if count > 1 else ''} unsimplified (the simplified "
                  "form lost accuracy in float64)")
    return Program(
        name=name,
        title=title,
        expression="; ".join(brief_text(e) for e in request.exprs),
        params=request.params,
        outputs=plan.outputs,
        output_names=plan.output_names,
        result=plan.result,
        doc=_docstring(request.params, request.kind),
        mode=plan.mode,
        key=request.key(),
        assignments=plan.assignments,
        vector=[naming.direction(n) for n in request.wrt] if request.kind == "hvp" else (),
    )


class ScalarLayer:
    """The scalar layer as the build pipeline sees it (:class:`symdiff.layer.Layer`)."""

    def request(self, call: Call) -> Request:
        """Parse and validate a builder call (:func:`symdiff.request.make_request`)."""
        return make_request(call.kind, call.exprs, call.wrt, call.options)

    def build(self, request: Request) -> Built:
        """Derive and emit ``request``."""
        return _build(request)

    def exprs(self, request: Request) -> Callable[[], list[sp.Expr]]:
        """The closed-form expressions of ``request`` (:func:`forward_exprs`), derived when
        first called."""
        return functools.partial(forward_exprs, request)


#: The scalar layer (see :data:`symdiff.pipeline.LAYERS`).
LAYER = ScalarLayer()

