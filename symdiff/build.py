"""From a validated request to a ``CompiledFunction``: choose the mode, derive the outputs,
emit the module, load it. Memoised in memory.

A :class:`Request` is everything that determines the generated code; :func:`build` is the one
path from it to a function. Forward mode differentiates each output symbolically (simplified,
then CSE across all outputs); reverse mode emits a forward sweep over temporaries and one
backward sweep of adjoints per output (:mod:`symdiff.reverse`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import sympy as sp

from . import __version__
from .arguments import check_parameters, resolve_wrt
from .cache import open_store
from .codenames import code_names
from .compiled import CompiledFunction
from .differentiate import differentiate
from .emit import ArrayResult, Program, Result, emit_source
from .errors import SymdiffError
from .forward import tangent_program
from .options import Options
from .parsing import FUNCTIONS, check_wrt, parse
from .printer import brief_text
from .reverse import inline_single_use, prune, reverse_program
from .simplify import operation_nodes, simplify_for_people, stable_forms
from .trace import (
    DIRECTION,
    call_signature,
    combine_signatures,
    signature_text,
    trace,
    trace_function,
    traced_name,
)
from .warm import load_cached, module_key

log = logging.getLogger(__name__)

KINDS = ("value", "grad", "value_and_grad", "jacobian", "hessian", "hvp")

#: ``mode="auto"`` picks forward mode (simplified partials sharing subexpressions: the most
#: readable code) for fewer variables than this and expressions up to :data:`AUTO_MAX_FORWARD_OPS`
#: operations, reverse mode otherwise. Measured (benchmarks/bench_peers.py): beyond three
#: variables reverse mode runs within about 10% of forward mode's code, at a point and over a
#: batch, and builds 10-25x faster (Rosenbrock of 100 variables: 0.45 s against 4.0 s), because
#: forward mode simplifies one partial per variable.
AUTO_FORWARD_MAX_WRT = 4
AUTO_MAX_FORWARD_OPS = 20_000

_MEMO: dict[str, CompiledFunction] = {}


@dataclass(frozen=True)
class Request:
    """What to build: the kind of function, its expressions, variables and options.

    ``signature`` is a traced function's (:func:`symdiff.trace.signature`): its parameters are
    then the arguments, in the ``def``'s order; without one (strings, SymPy) the arguments are
    the variables sorted by name.
    """

    kind: str
    exprs: tuple[sp.Expr, ...]
    wrt: tuple[str, ...]
    single: bool
    options: Options = field(default_factory=Options)
    signature: inspect.Signature | None = None
    #: ``(code name, original name)`` of the SymPy symbols whose names are not identifiers
    #: (:mod:`symdiff.codenames`): the expressions and ``wrt`` use the code names.
    aliases: tuple[tuple[str, str], ...] = ()

    @property
    def params(self) -> tuple[str, ...]:
        """The generated function's parameters: a traced function's parameters in its order,
        else every variable of the expressions and every wrt name, sorted by (original) name;
        then ``_v``, the direction, for Hessian-vector products."""
        if self.signature is not None:
            names = tuple(self.signature.parameters)
        else:
            aliases = dict(self.aliases)
            names = tuple(
                sorted(_free_names(self.exprs) | set(self.wrt), key=lambda n: aliases.get(n, n))
            )
        return names + ((DIRECTION,) if self.kind == "hvp" else ())

    @property
    def call_signature(self) -> inspect.Signature | None:
        """The signature of the compiled function: the traced function's (with ``_v`` for a
        Hessian-vector product), or None for the generated function's own."""
        return call_signature(self.signature, self.kind)

    def original(self, names: Sequence[str]) -> tuple[str, ...]:
        """``names`` (code names) as the caller named them."""
        aliases = dict(self.aliases)
        return tuple(aliases.get(n, n) for n in names)

    def key(self) -> str:
        """A digest of everything that determines the generated source and the signature."""
        parts = [__version__, self.kind, *(sp.srepr(e, order="none") for e in self.exprs),
                 ",".join(self.wrt)]
        parts += [str(self.single), self.options.code_key()]
        if self.signature is not None:
            parts.append("signature" + signature_text(self.signature))
        parts += [f"{code}={original!r}" for code, original in self.aliases]
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]




# -- inputs -------------------------------------------------------------------------------------
def expression(expr: object) -> sp.Expr:
    """An input (string, SymPy expression, number or Python function) as a validated SymPy
    expression. A function is traced with one real symbol per parameter (:mod:`symdiff.trace`)
    and its result validated by ``parse`` exactly like a SymPy input."""
    if callable(expr) and not isinstance(expr, sp.Basic):
        expr, _ = trace(expr)
    return parse(expr)


def _free_names(exprs: Sequence[sp.Expr]) -> set[str]:
    return {s.name for e in exprs for s in e.free_symbols}


def wrt_names(wrt: object, exprs: Sequence[sp.Expr]) -> tuple[tuple[str, ...], bool]:
    """Validated ``wrt`` names and whether a single name (not a list) was given."""
    if wrt is None:
        names = tuple(sorted(_free_names(exprs)))
        if not names:
            raise SymdiffError("the expression has no variables; give wrt= explicitly")
        return names, False
    return check_wrt(wrt)


def _is_function(item: object) -> bool:
    return callable(item) and not isinstance(item, sp.Basic)  # a SymPy Symbol is callable


def _items(kind: str, exprs: object) -> list[object]:
    """The builder's expressions as a list: one, or a Jacobian's list (or one function, whose
    values are the Jacobian's rows)."""
    if kind != "jacobian":
        return [exprs]
    if _is_function(exprs):
        return [exprs]
    if isinstance(exprs, str | sp.Basic) or not isinstance(exprs, Sequence) or not exprs:
        raise SymdiffError(
            "jacobian takes a non-empty list of expressions, or a Python function returning a "
            "tuple of values"
        )
    return list(exprs)


def make_request(kind: str, exprs: object, wrt: object, options: Options) -> Request:
    """Parse and validate a builder's inputs. Expressions are put in stable forms
    (``log(1 + exp(u))`` -> ``softplus(u)``) so their derivatives come out stable too.

    The arguments and ``wrt`` are decided by :mod:`symdiff.arguments`: a traced function's
    parameters in the ``def``'s order (used or not), else the variables sorted by name; an
    explicit ``wrt`` name must be a variable.
    """
    items = _items(kind, exprs)
    parsed: list[sp.Expr] = []
    signatures: list[inspect.Signature] = []
    functions: list[object] = []
    for item in items:
        if _is_function(item):
            outputs, sig = trace_function(item, many=kind == "jacobian")
            parsed += [stable_forms(parse(e)) for e in outputs]
            signatures.append(sig)
            functions.append(item)
        else:
            parsed.append(stable_forms(expression(item)))
    parsed_names, wrt, aliases = _with_code_names(tuple(parsed), wrt)
    parsed = list(parsed_names)
    signature = combine_signatures(signatures, functions) if signatures else None
    label = traced_name(functions, len(items) == 1) if functions else ""
    if signature is not None:
        check_parameters(signature, _free_names(parsed), label)
    if kind == "value":
        return Request(kind, tuple(parsed), (), False, options, signature, aliases)
    names, single = resolve_wrt(wrt, signature, _free_names(parsed), items, FUNCTIONS, label)
    return Request(kind, tuple(parsed), names, single, options, signature, aliases)


def _with_code_names(
    exprs: tuple[sp.Expr, ...], wrt: object
) -> tuple[tuple[sp.Expr, ...], object, tuple[tuple[str, str], ...]]:
    """The expressions and ``wrt`` with every symbol whose name is not an identifier (SymPy
    input such as ``Symbol("x_{1}")``) renamed to its code name, and the ``(code, original)``
    pairs (:func:`symdiff.codenames.code_names`); unchanged when every name is an identifier."""
    renamed = code_names(_free_names(exprs))
    if not renamed:
        return exprs, wrt, ()

    def rename(w: object) -> object:
        name = w.name if isinstance(w, sp.Symbol) else w
        return renamed.get(name, w) if isinstance(name, str) else w

    if wrt is None:  # every variable, sorted by the names the caller gave
        wrt = [renamed.get(n, n) for n in sorted(_free_names(exprs))]
    elif isinstance(wrt, str | sp.Symbol):
        wrt = rename(wrt)
    elif isinstance(wrt, list | tuple):
        wrt = type(wrt)(rename(w) for w in wrt)
    swap = {symbol(name): symbol(code) for name, code in renamed.items()}
    exprs = tuple(e.xreplace(swap) for e in exprs)
    return exprs, wrt, tuple(sorted((code, name) for name, code in renamed.items()))


def _restored(request: Request, exprs: Sequence[sp.Expr]) -> list[sp.Expr]:
    """``exprs`` (in code names) in the symbols the caller gave (for ``.exprs``)."""
    if not request.aliases:
        return list(exprs)
    swap = {symbol(code): symbol(original) for code, original in request.aliases}
    return [sp.sympify(e).xreplace(swap) for e in exprs]


@dataclass
class Plan:
    """The outputs of one function and how they are computed and returned."""

    outputs: list[sp.Expr]
    output_names: list[str]
    result: Result
    title: str
    mode: str = "forward"
    assignments: list[tuple[sp.Symbol, sp.Expr]] | None = None


def symbol(name: str) -> sp.Symbol:
    """The SymPy symbol of a variable (every variable is real)."""
    return sp.Symbol(name, real=True)


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
def _names(wrt: Sequence[str]) -> str:
    return ", ".join(wrt)


def _plan_value(r: Request, mode: str) -> Plan:
    (expr,) = r.exprs
    value = simplify_for_people(expr) if r.options.simplify else expr
    return Plan([value], ["_value"], 0, f"Value of {brief_text(expr)}")


def _plan_grad(r: Request, mode: str) -> Plan:
    (expr,) = r.exprs
    title = f"Gradient of {brief_text(expr)} with respect to ({_names(r.wrt)})"
    names = [f"_d_{n}" for n in r.wrt]
    result: Result = 0 if r.single else tuple(range(len(r.wrt)))
    if mode == "reverse":
        assignments, _, (grads,) = reverse_program([expr], [symbol(n) for n in r.wrt])
        return Plan(grads, names, result, title, mode, assignments)
    return Plan([derivative(expr, n, r.options.simplify) for n in r.wrt], names, result, title)


def _plan_value_and_grad(r: Request, mode: str) -> Plan:
    (expr,) = r.exprs
    title = f"Value and gradient of {brief_text(expr)} with respect to ({_names(r.wrt)})"
    names = ["_value", *(f"_d_{n}" for n in r.wrt)]
    grads: Result = 1 if r.single else tuple(range(1, len(r.wrt) + 1))
    if mode == "reverse":
        wrt = [symbol(n) for n in r.wrt]
        assignments, (value,), (partials,) = reverse_program([expr], wrt, keep_values=True)
        return Plan([value, *partials], names, (0, grads), title, mode, assignments)
    value = simplify_for_people(expr) if r.options.simplify else expr
    partials = [derivative(expr, n, r.options.simplify) for n in r.wrt]
    return Plan([value, *partials], names, (0, grads), title)


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
            sweep, column = tangent_program(gradient, grads, {var: sp.S.One}, f"_dot{j}")
            program += [step for step in sweep if step not in shared]
            for i in range(n):
                entries[(i, j) if not r.single else (0,)] = len(outputs)
                outputs.append(column[i])
        result = 0 if r.single else ArrayResult((n, n), entries)
        names = ["_d2"] if r.single else []
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
        return Plan(outputs, ["_d2"], 0, title)
    return Plan(outputs, [], ArrayResult((n, n), entries, mirrors), title)


def _plan_hvp(r: Request, mode: str) -> Plan:
    """Hessian times a direction ``_v``: forward mode over the reverse-mode gradient program."""
    (expr,) = r.exprs
    wrt = [symbol(n) for n in r.wrt]
    tangents = [symbol(f"_v_{n}") for n in r.wrt]
    gradient, _, (grads,) = reverse_program([expr], wrt, inline=False)
    program, products = tangent_program(gradient, grads, dict(zip(wrt, tangents, strict=True)))
    title = f"Hessian of {brief_text(expr)} times a direction, with respect to ({_names(r.wrt)})"
    assignments, products = inline_single_use(prune(program, products), products)
    names = [f"_hv_{n}" for n in r.wrt]
    if r.single:
        return Plan(products, names, 0, title, "forward over reverse", assignments)
    result = ArrayResult((len(r.wrt),), {(i,): i for i in range(len(r.wrt))})
    return Plan(products, [], result, title, "forward over reverse", assignments)


PLANNERS: dict[str, Callable[[Request, str], Plan]] = {
    "value": _plan_value,
    "grad": _plan_grad,
    "value_and_grad": _plan_value_and_grad,
    "jacobian": _plan_jacobian,
    "hessian": _plan_hessian,
    "hvp": _plan_hvp,
}

_RETURNS = {
    "value": "the value, of the broadcast shape",
    "grad": "the partial derivatives, one per wrt name, each of the broadcast shape",
    "value_and_grad": "(value, partial derivatives), each of the broadcast shape",
    "jacobian": "an array of shape (outputs, wrt) + broadcast shape",
    "hessian": "an array of shape (wrt, wrt) + broadcast shape",
    "hvp": "the Hessian times _v (one component per wrt name on its first axis)",
}


def _docstring(params: Sequence[str], kind: str) -> list[str]:
    return [
        f"Arguments (in this order, or by name): {_names(params) or 'none'}.",
        "They broadcast like NumPy ufunc arguments; float32 stays float32, integers give float64.",
        f"Returns {_RETURNS[kind]}.",
    ]


def forward_exprs(request: Request) -> list[sp.Expr]:
    """The derivative expressions of ``request`` in closed form (what ``.exprs`` shows)."""
    return _restored(request, PLANNERS[request.kind](request, "forward").outputs)


def _wrt_value(request: Request) -> str | tuple[str, ...] | None:
    if request.kind == "value":
        return None
    wrt = request.original(request.wrt)
    return wrt[0] if request.single else wrt


def _function_name(kind: str) -> str:
    return "f" if kind == "value" else f"{kind}_f"


def build(request: Request) -> CompiledFunction:
    """The function for ``request``: from memory, from the disk cache, or derived, emitted and
    loaded now (and then cached), as ``cache=True`` allows."""
    key = request.key()
    if not request.options.cache:
        return _build(request, key, None)
    if key in _MEMO:  # the key holds the signature; annotations may still differ
        return _MEMO[key]._with_signature(request.call_signature)
    disk_key = module_key(key)
    compiled = load_cached(
        disk_key,
        _function_name(request.kind),
        request.original(request.params),
        _wrt_value(request),
        request.kind,
        functools.partial(forward_exprs, request),
        request.call_signature,
    )
    if compiled is None:
        compiled = _build(request, key, disk_key)
        open_store().put("module", disk_key, compiled.source)
    _MEMO[key] = compiled
    return compiled


@contextlib.contextmanager
def _phase(name: str, request: Request):
    """Log a build phase that takes longer than a second (at INFO), every phase at DEBUG."""
    start = time.perf_counter()
    yield
    seconds = time.perf_counter() - start
    level = logging.INFO if seconds > 1.0 else logging.DEBUG
    log.log(level, "%s of %s (%d wrt) took %.2f s", name, request.kind, len(request.wrt), seconds)


def _build(request: Request, key: str, disk_key: str | None) -> CompiledFunction:
    """Derive, emit and load (no caching)."""
    if log.isEnabledFor(logging.DEBUG):
        ops = sum(int(sp.count_ops(e)) for e in request.exprs)
        log.debug("building %s: %d operations, %d wrt", request.kind, ops, len(request.wrt))
    mode = choose_mode(request)
    with _phase("derivation", request):
        plan = PLANNERS[request.kind](request, mode)
    program = Program(
        name=_function_name(request.kind),
        title=plan.title,
        expression="; ".join(brief_text(e) for e in request.exprs),
        params=request.params,
        outputs=plan.outputs,
        output_names=plan.output_names,
        result=plan.result,
        doc=_docstring(request.params, request.kind),
        mode=plan.mode,
        key=key,
        assignments=plan.assignments,
        vector=[f"_v_{n}" for n in request.wrt] if request.kind == "hvp" else (),
    )
    with _phase("emission", request):
        source = emit_source(program, cse=request.options.cse)
    exprs = (
        _restored(request, plan.outputs)
        if plan.assignments is None
        else functools.partial(forward_exprs, request)
    )
    return CompiledFunction(
        source=source,
        name=program.name,
        args=request.original(request.params),
        wrt=_wrt_value(request),
        exprs=exprs,
        kind=request.kind,
        key=disk_key,
        signature=request.call_signature,
    )


def memo_size() -> int:
    """How many functions this process keeps in memory."""
    return len(_MEMO)


def clear_memo() -> None:
    """Forget the functions kept in memory."""
    _MEMO.clear()
