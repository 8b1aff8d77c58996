"""The scalar layer: from a validated :class:`~symdiff.request.Request` to generated code.
Choose the mode, derive the outputs, emit the module (:data:`LAYER`, which the build pipeline
of :mod:`symdiff.pipeline` calls; caching is the pipeline's).

Forward mode differentiates each output symbolically (simplified, then CSE across all
outputs); reverse mode emits a forward sweep over temporaries and one backward sweep of
adjoints per output (:mod:`symdiff.engine.reverse`). One planner per kind (:data:`PLANNERS`).
"""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import sympy as sp

from .codegen import naming
from .codegen.emit import ArrayResult, Program, Result, emit_source
from .codegen.printer import brief_text
from .engine.forward import differentiate
from .engine.reverse import inline_single_use, prune, reverse_program
from .engine.tangents import tangent_program
from .layer import Built, Call
from .recipe import KindTable
from .request import Request, expression, make_request, restored, symbol, wrt_names
from .simplify import operation_nodes, simplify_for_people

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


def derivative(expr: sp.Expr, name: str, simplify: bool) -> sp.Expr:
    """d expr / d name by the rule table, simplified for reading when asked."""
    result = differentiate(expr, symbol(name)).result
    return simplify_for_people(result) if simplify else result


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


@PLANNERS.kind("value")
def _plan_value(r: Request, mode: str) -> Plan:
    (expr,) = r.exprs
    value = simplify_for_people(expr) if r.options.simplify else expr
    return Plan([value], [naming.VALUE], 0, f"Value of {brief_text(expr)}")


@PLANNERS.kind("grad")
def _plan_grad(r: Request, mode: str) -> Plan:
    (expr,) = r.exprs
    title = f"Gradient of {brief_text(expr)} with respect to ({_names(r.wrt)})"
    names = [naming.adjoint(n) for n in r.wrt]
    result: Result = 0 if r.single else tuple(range(len(r.wrt)))
    if mode == "reverse":
        assignments, _, (grads,) = reverse_program([expr], [symbol(n) for n in r.wrt])
        return Plan(grads, names, result, title, mode, assignments)
    return Plan([derivative(expr, n, r.options.simplify) for n in r.wrt], names, result, title)


@PLANNERS.kind("value_and_grad")
def _plan_value_and_grad(r: Request, mode: str) -> Plan:
    (expr,) = r.exprs
    title = f"Value and gradient of {brief_text(expr)} with respect to ({_names(r.wrt)})"
    names = [naming.VALUE, *(naming.adjoint(n) for n in r.wrt)]
    grads: Result = 1 if r.single else tuple(range(1, len(r.wrt) + 1))
    if mode == "reverse":
        wrt = [symbol(n) for n in r.wrt]
        assignments, (value,), (partials,) = reverse_program([expr], wrt, keep_values=True)
        return Plan([value, *partials], names, (0, grads), title, mode, assignments)
    value = simplify_for_people(expr) if r.options.simplify else expr
    partials = [derivative(expr, n, r.options.simplify) for n in r.wrt]
    return Plan([value, *partials], names, (0, grads), title)


@PLANNERS.kind("jacobian")
def _plan_jacobian(r: Request, mode: str) -> Plan:
    m, n = len(r.exprs), len(r.wrt)
    dims = (m,) if r.single else (m, n)
    entries = {((i,) if r.single else (i, j)): i * n + j for i in range(m) for j in range(n)}
    title = f"Jacobian with respect to ({_names(r.wrt)})"
    if mode == "reverse":
        assignments, _, rows = reverse_program(list(r.exprs), [symbol(w) for w in r.wrt])
        outputs = [g for row in rows for g in row]
        return Plan(outputs, [], ArrayResult(dims, entries), title, mode, assignments)
    outputs = [derivative(e, w, r.options.simplify) for e in r.exprs for w in r.wrt]
    return Plan(outputs, [], ArrayResult(dims, entries), title)


@PLANNERS.kind("hessian")
def _plan_hessian(r: Request, mode: str) -> Plan:
    """Symbolically (forward over forward) for few variables; forward over reverse otherwise:
    one tangent sweep of the reverse-mode gradient program per column."""
    (expr,) = r.exprs
    title = f"Hessian of {brief_text(expr)} with respect to ({_names(r.wrt)})"
    n = len(r.wrt)
    if mode == "reverse":
        wrt = [symbol(w) for w in r.wrt]
        gradient, _, (grads,) = reverse_program([expr], wrt, inline=False)
        program, outputs, entries = list(gradient), [], {}
        shared = set(gradient)
        for j, var in enumerate(wrt):
            sweep, column = tangent_program(gradient, grads, {var: sp.S.One}, j)
            program += [step for step in sweep if step not in shared]
            for i in range(n):
                entries[(i, j) if not r.single else (0,)] = len(outputs)
                outputs.append(column[i])
        result = 0 if r.single else ArrayResult((n, n), entries)
        names = [naming.SECOND] if r.single else []
        assignments, outputs = inline_single_use(prune(program, outputs), outputs)
        return Plan(outputs, names, result, title, "forward over reverse", assignments)
    first = [derivative(expr, w, r.options.simplify) for w in r.wrt]
    outputs: list[sp.Expr] = []
    entries: dict[tuple[int, ...], int] = {}
    mirrors: dict[tuple[int, ...], tuple[int, ...]] = {}
    for i, gi in enumerate(first):
        for j in range(n):
            if j < i:
                mirrors[(i, j)] = (j, i)
                continue
            entries[(i, j)] = len(outputs)
            outputs.append(derivative(gi, r.wrt[j], r.options.simplify))
    if r.single:
        return Plan(outputs, [naming.SECOND], 0, title)
    return Plan(outputs, [], ArrayResult((n, n), entries, mirrors), title)


@PLANNERS.kind("hvp")
def _plan_hvp(r: Request, mode: str) -> Plan:
    """Hessian times a direction ``_v``: forward mode over the reverse-mode gradient program."""
    (expr,) = r.exprs
    wrt = [symbol(n) for n in r.wrt]
    tangents = [symbol(naming.direction(n)) for n in r.wrt]
    gradient, _, (grads,) = reverse_program([expr], wrt, inline=False)
    program, products = tangent_program(gradient, grads, dict(zip(wrt, tangents, strict=True)))
    title = f"Hessian of {brief_text(expr)} times a direction, with respect to ({_names(r.wrt)})"
    assignments, products = inline_single_use(prune(program, products), products)
    names = [naming.hvp(n) for n in r.wrt]
    if r.single:
        return Plan(products, names, 0, title, "forward over reverse", assignments)
    result = ArrayResult((len(r.wrt),), {(i,): i for i in range(len(r.wrt))})
    return Plan(products, [], result, title, "forward over reverse", assignments)


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


@contextlib.contextmanager
def _phase(name: str, request: Request):
    """Log a build phase that takes longer than a second (at INFO), every phase at DEBUG."""
    start = time.perf_counter()
    yield
    seconds = time.perf_counter() - start
    level = logging.INFO if seconds > 1.0 else logging.DEBUG
    log.log(level, "%s of %s (%d wrt) took %.2f s", name, request.kind, len(request.wrt), seconds)


def _build(request: Request) -> Built:
    """Derive and emit (no caching): the module, its recipe and the expressions it computes."""
    if log.isEnabledFor(logging.DEBUG):
        ops = sum(int(sp.count_ops(e)) for e in request.exprs)
        log.debug("building %s: %d operations, %d wrt", request.kind, ops, len(request.wrt))
    mode = choose_mode(request)
    with _phase("derivation", request):
        plan = PLANNERS[request.kind](request, mode)
    recipe = replace(request.recipe, mode=plan.mode, outputs=tuple(plan.output_names))
    program = Program(
        name=recipe.name,
        title=plan.title,
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
    with _phase("emission", request):
        source = emit_source(program, cse=request.options.cse)
    exprs = (
        restored(request, plan.outputs)
        if plan.assignments is None
        else functools.partial(forward_exprs, request)
    )
    return Built(source, recipe, exprs)


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

