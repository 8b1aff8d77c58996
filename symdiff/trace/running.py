"""Tracing itself: run a function once on one :class:`~symdiff.trace.values.Traced` symbol per
parameter, and read what it returned as SymPy expression(s)."""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable
from typing import Any

import numpy as np
import sympy as sp

from ..errors import SymdiffError, UnsupportedError
from .draws import refuse_draws, watched
from .environment import Replace
from .layout import Layout
from .refusals import CONDITION_ONLY, NOT_COMPOSED, from_generated_code, locate
from .signatures import call_with, describe, signature
from .values import Condition, Symbolic, Traced, operand, release_single_holds, without_holds

_FOLDED = ("the function was traced without shapes=, so what it computes from the array is "
           "numbers in the compiled function; give shapes= to make it a bound constant")


def _call(fn: Callable[..., Any], sig: inspect.Signature, arguments: list[Any],
          folded: dict[str, str], statics: dict[str, Any] | None = None,
          replace: Replace | None = None) -> object:
    """``fn`` on the traced arguments; a failure that is not symdiff's own becomes an
    UnsupportedError. The labels of the arrays it reads by name go into ``folded``.
    ``statics`` are the static arguments among ``arguments`` by name (a generator among them
    is seen as the ones ``fn`` reads by name are). ``replace`` gives what ``fn`` reads instead
    of a value it reaches by name, if anything (:mod:`symdiff.trace.environment`)."""

    def note(value: Any, label: str) -> Any:
        if isinstance(value, np.ndarray) and value.ndim:
            folded.setdefault(label, _FOLDED)
        return None if replace is None else replace(value, label)

    try:
        views = dict(statics or {})
        with watched(fn, refuse_draws, note, views=views) as run:
            if views:
                names = list(sig.parameters)
                arguments = [views.get(n, a) if n in views else a
                             for n, a in zip(names, arguments, strict=True)]
            return call_with(run, sig, arguments)
    except SymdiffError as exc:
        if from_generated_code(exc):
            raise UnsupportedError(f"{NOT_COMPOSED} (in {describe(fn)}: {exc})") from exc
        locate(exc, fn)
        raise
    except Exception as exc:
        hint = "; use symdiff.math or NumPy functions on traced values"
        hint = hint if isinstance(exc, TypeError) else ""
        raise UnsupportedError(
            f"tracing {describe(fn)} failed: {type(exc).__name__}: {exc}{hint}"
        ) from exc


def _result(value: object, fn: object) -> sp.Expr:
    """What a traced function returned, as a SymPy expression."""
    if isinstance(value, Condition):
        raise UnsupportedError(f"{describe(fn)} returned a comparison; {CONDITION_ONLY}")
    if isinstance(value, tuple) and len(value) == 1 and _one_name_gradient(fn):
        value = value[0]  # grad(grad(f)) of a one-parameter f: the tuple of its one partial
    if isinstance(value, np.ndarray) and value.ndim:
        raise UnsupportedError(
            f"{describe(fn)} returned an array of shape {value.shape}; a traced function must "
            "return one scalar"
        )
    if isinstance(value, Symbolic | sp.Expr | numbers.Real | np.ndarray):
        return operand(value)
    returned = (
        "None (is a return statement missing?)" if value is None else (f"a {type(value).__name__}")
    )
    hint = " (for a function returning several values, use sd.jacobian)" if isinstance(
        value, tuple | list
    ) else ""
    if isinstance(value, tuple) and getattr(_compiled(fn), "kind", None) == "grad":
        hint = (": it is a gradient, one partial per wrt name; differentiate one of them "
                "(sd.grad(sd.grad(f, wrt='x'), wrt='y')) or take sd.hessian(f) for all")
    raise UnsupportedError(
        f"{describe(fn)} returned {returned}; a traced function must return one scalar: a number "
        f"or an expression of its parameters{hint}"
    )


def _compiled(fn: object) -> object:
    """The compiled function ``fn`` stands for, where it is the proxy of one, else ``fn``."""
    return getattr(fn, "_symdiff_compiled", fn)


def _one_name_gradient(fn: object) -> bool:
    """Whether ``fn`` is a compiled gradient taken with ``wrt=None`` of a function of one
    parameter (it returns a tuple of one partial, which a nested ``sd.grad`` differentiates)."""
    fn = _compiled(fn)
    wrt = getattr(fn, "wrt", None)
    return getattr(fn, "kind", None) == "grad" and isinstance(wrt, tuple) and len(wrt) == 1


def trace_function(
    fn: Callable[..., Any], many: bool = False, folded: dict[str, str] | None = None,
    layout: Layout | None = None, replace: Replace | None = None,
) -> tuple[tuple[sp.Expr, ...], inspect.Signature]:
    """Run ``fn`` on symbols: the SymPy expression(s) it computes and its checked signature.

    With ``many`` (a Jacobian), ``fn`` may return a non-empty tuple or list of scalars, one
    expression each; otherwise (and for a single scalar) the result is one expression. The
    NumPy arrays ``fn`` reads by name (whose numbers the expressions hold) go into ``folded``,
    by name, with why. With a ``layout`` (static arguments: :mod:`symdiff.trace.layout`),
    ``fn`` gets its static values and the returned signature is the layout's. ``replace``
    gives what ``fn`` reads instead of a value it reaches by name (compiled functions it calls).
    """
    folded = {} if folded is None else folded
    if layout is not None:
        def make(name: str) -> Traced:
            return Traced(sp.Symbol(name, real=True))

        statics = layout.statics
        value = _call(fn, layout.function_signature, layout.values(make), folded, statics,
                      replace)
        sig = layout.signature
    else:
        sig = signature(fn)
        arguments = [Traced(sp.Symbol(name, real=True)) for name in sig.parameters]
        value = _call(fn, sig, arguments, folded, replace=replace)
    if many and isinstance(value, tuple | list):
        if not value:
            raise UnsupportedError(f"{describe(fn)} returned an empty {type(value).__name__}")
        return release_single_holds(tuple(_result(item, fn) for item in value)), sig
    return release_single_holds((_result(value, fn),)), sig


def trace(fn: Callable[..., Any]) -> tuple[sp.Expr, tuple[str, ...]]:
    """Run ``fn`` on symbols: the SymPy expression it computes and its parameter names.

    Each parameter is a :class:`~symdiff.trace.values.Traced` value wrapping
    ``Symbol(name, real=True)`` (keyword-only ones passed by name); the names are in the
    function's order. Raises :class:`~symdiff.errors.UnsupportedError` for what cannot be traced
    (see :mod:`symdiff.trace`), naming it. The expression is written without the holds of a
    loop's state (:func:`~symdiff.trace.values.held_state`), which :func:`trace_function` keeps.
    """
    (expr,), sig = trace_function(fn)
    return without_holds(expr), tuple(sig.parameters)
