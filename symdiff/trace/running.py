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
from .refusals import CONDITION_ONLY
from .signatures import call_with, describe, signature
from .values import Condition, Symbolic, Traced, operand, release_single_holds, without_holds


def _call(fn: Callable[..., Any], sig: inspect.Signature, arguments: list[Traced]) -> object:
    """``fn`` on the traced arguments; a failure that is not symdiff's own becomes an
    UnsupportedError."""
    try:
        return call_with(fn, sig, arguments)
    except SymdiffError:
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
    raise UnsupportedError(
        f"{describe(fn)} returned {returned}; a traced function must return one scalar: a number "
        f"or an expression of its parameters{hint}"
    )


def trace_function(
    fn: Callable[..., Any], many: bool = False
) -> tuple[tuple[sp.Expr, ...], inspect.Signature]:
    """Run ``fn`` on symbols: the SymPy expression(s) it computes and its checked signature.

    With ``many`` (a Jacobian), ``fn`` may return a non-empty tuple or list of scalars, one
    expression each; otherwise (and for a single scalar) the result is one expression.
    """
    sig = signature(fn)
    arguments = [Traced(sp.Symbol(name, real=True)) for name in sig.parameters]
    value = _call(fn, sig, arguments)
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
