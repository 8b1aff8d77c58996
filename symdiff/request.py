"""A scalar builder call parsed and validated: the :class:`Request` the scalar layer builds.

:func:`make_request` parses the expressions (strings, SymPy, traced Python functions), puts
them in stable forms, gives symbols whose names are not identifiers their code names, and
decides the arguments and ``wrt`` (:mod:`symdiff.arguments`). A request knows its key (what
determines the generated code) and its :class:`~symdiff.recipe.Recipe`, with the expressions
as input-language text (:func:`symdiff.engine.inputtext.recipe_text`) that
:func:`symdiff.parse` reads back.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import sympy as sp

from . import __version__, compose
from .arguments import check_parameters, resolve_wrt
from .codegen.naming import code_names
from .engine.inputtext import recipe_text
from .errors import SymdiffError
from .keytext import key_repr
from .options import Options
from .parsing import FUNCTIONS, check_wrt, parse
from .recipe import Recipe
from .simplify import stable_forms
from .simplify.dag import free_symbols
from .trace import (
    DIRECTION,
    call_signature,
    combine_signatures,
    signature_text,
    trace,
    trace_function,
    traced_name,
)
from .trace.layout import Structured
from .trace.values import without_holds


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
    #: (:mod:`symdiff.codegen.naming`): the expressions and ``wrt`` use the code names.
    aliases: tuple[tuple[str, str], ...] = ()
    #: The named arrays a traced function read, whose numbers are in its expressions (a
    #: function traced without ``shapes=`` has no bound constants): ``bind`` refuses them.
    folded: tuple[tuple[str, str], ...] = ()

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
                sorted(self.free_names | set(self.wrt), key=lambda n: aliases.get(n, n))
            )
        return names + ((DIRECTION,) if self.kind == "hvp" else ())

    @functools.cached_property
    def free_names(self) -> frozenset[str]:
        """The names of the expressions' variables (found once: each search walks them all)."""
        return frozenset(_free_names(self.exprs))

    @property
    def call_signature(self) -> inspect.Signature | None:
        """The signature of the compiled function: the traced function's (with ``_v`` for a
        Hessian-vector product), or None for the generated function's own."""
        return call_signature(self.signature, self.kind)

    @functools.cached_property
    def recipe(self) -> Recipe:
        """The recipe of the function asked for (the build adds the mode and output names):
        the expressions as :func:`recipe_text` (code names), the arguments and ``wrt`` as the
        caller named them."""
        return Recipe(
            kind=self.kind,
            exprs=tuple(recipe_text(e) for e in self.exprs),
            args=self.original(self.params),
            wrt=self.original(self.wrt),
            single=self.single,
            options=replace(self.options, cache=True),
        )

    def original(self, names: Sequence[str]) -> tuple[str, ...]:
        """``names`` (code names) as the caller named them."""
        aliases = dict(self.aliases)
        return tuple(aliases.get(n, n) for n in names)

    def key(self) -> str:
        """A digest of everything that determines the generated source and the signature."""
        parts = [__version__, self.kind, *(key_repr(e) for e in self.exprs),
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
    """The names of the free symbols of ``exprs``, each distinct subexpression visited once
    (:func:`symdiff.simplify.dag.free_symbols`: SymPy's ``free_symbols`` builds a set at every
    node of the tree)."""
    return {s.name for s in free_symbols(exprs)}


def wrt_names(wrt: object, exprs: Sequence[sp.Expr]) -> tuple[tuple[str, ...], bool]:
    """Validated ``wrt`` names and whether a single name (not a list) was given."""
    if wrt is None:
        names = tuple(sorted(_free_names(exprs)))
        if not names:
            raise SymdiffError("the expression has no variables; give wrt= explicitly")
        return names, False
    return check_wrt(wrt)


def is_function(item: object) -> bool:
    """Whether a builder's expression is a Python function to trace (a SymPy Symbol is
    callable too, but is an expression)."""
    return callable(item) and not isinstance(item, sp.Basic)


def _items(kind: str, exprs: object) -> list[object]:
    """The builder's expressions as a list: one, or a Jacobian's list (or one function, whose
    values are the Jacobian's rows)."""
    if kind != "jacobian":
        return [exprs]
    if is_function(exprs) or isinstance(exprs, Structured):
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
    folded: dict[str, str] = {}
    for item in items:
        if is_function(item) or isinstance(item, Structured):
            fn, layout = (item.fn, item.layout) if isinstance(item, Structured) else (item, None)
            outputs, sig = trace_function(fn, many=kind == "jacobian", folded=folded,
                                          layout=layout, replace=compose.replace)
            parsed += [stable_forms(parse(e)) for e in outputs]
            signatures.append(sig)
            functions.append(fn)
        else:
            parsed.append(stable_forms(expression(item)))
    parsed_names, wrt, aliases = _with_code_names(tuple(parsed), wrt)
    parsed = list(parsed_names)
    free = _free_names(parsed)
    signature = combine_signatures(signatures, functions) if signatures else None
    label = traced_name(functions, len(items) == 1) if functions else ""
    if signature is not None:
        check_parameters(signature, free, label)
    folds = tuple(folded.items())
    if kind == "value":
        return Request(kind, tuple(parsed), (), False, options, signature, aliases, folds)
    names, single = resolve_wrt(wrt, signature, free, items, FUNCTIONS, label)
    return Request(kind, tuple(parsed), names, single, options, signature, aliases, folds)


def _with_code_names(
    exprs: tuple[sp.Expr, ...], wrt: object
) -> tuple[tuple[sp.Expr, ...], object, tuple[tuple[str, str], ...]]:
    """The expressions and ``wrt`` with every symbol whose name is not an identifier (SymPy
    input such as ``Symbol("x_{1}")``) renamed to its code name, and the ``(code, original)``
    pairs (:func:`symdiff.codegen.naming.code_names`); unchanged when every name is an
    identifier."""
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


def restored(request: Request, exprs: Sequence[sp.Expr]) -> list[sp.Expr]:
    """``exprs`` (in code names) in the symbols the caller gave, without the holds of a traced
    loop's state (for ``.exprs``)."""
    exprs = [without_holds(sp.sympify(e)) for e in exprs]
    if not request.aliases:
        return exprs
    swap = {symbol(code): symbol(original) for code, original in request.aliases}
    return [e.xreplace(swap) for e in exprs]



def symbol(name: str) -> sp.Symbol:
    """The SymPy symbol of a variable (every variable is real)."""
    return sp.Symbol(name, real=True)


