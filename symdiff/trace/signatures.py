"""The signature of a traced function: which parameters it may have, and how the compiled
function takes its arguments.

Every parameter of a traced function is a variable, in the ``def``'s order, with its default
and keyword-only marker; ``*args`` and ``**kwargs`` are refused. The compiled function keeps
that signature (:func:`call_signature`), with the direction ``_v`` last for a Hessian-vector
product; a Jacobian of several functions gets one merged signature
(:func:`combine_signatures`).
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable
from typing import Any

import sympy as sp

from ..codegen import naming
from ..errors import UnsupportedError
from ..parsing import check_identifier

_REFUSED_KINDS = {
    inspect.Parameter.VAR_POSITIONAL: "*{}",
    inspect.Parameter.VAR_KEYWORD: "**{}",
}

#: The direction parameter of a Hessian-vector product: the last argument.
DIRECTION = naming.DIRECTION


def describe(fn: object) -> str:
    """How a message names ``fn``: its ``__name__``, else its type's name."""
    return str(getattr(fn, "__name__", None) or type(fn).__name__)


def _check_parameter(parameter: inspect.Parameter, fn: object) -> str:
    kind = _REFUSED_KINDS.get(parameter.kind)
    if kind is not None:
        raise UnsupportedError(
            f"cannot trace {describe(fn)}: parameter {kind.format(parameter.name)} is not "
            "supported; each variable of a traced function must be one named parameter "
            "(pass the values as separate parameters, or use shapes= for an array)"
        )
    default = parameter.default
    if default is not parameter.empty and (
        not isinstance(default, numbers.Real) or isinstance(default, bool)
    ):
        raise UnsupportedError(
            f"cannot trace {describe(fn)}: parameter {parameter.name!r} has the default "
            f"{default!r}, which is not a number"
        )
    return check_identifier(parameter.name, "parameter name")


def signature(fn: Callable[..., Any]) -> inspect.Signature:
    """``inspect.signature(fn)``, checked for tracing: the signature of the compiled function.

    Every parameter is a variable, in the function's order: positional-only, positional-or-
    keyword and keyword-only parameters are allowed, with numbers as defaults (a default does not
    make a constant: the parameter is still a variable, and the compiled function fills the
    default in when the argument is left out). ``*args`` and ``**kwargs`` are refused (an
    :class:`~symdiff.errors.UnsupportedError` naming them), and each name must be a valid symdiff
    variable name (:func:`symdiff.parsing.check_identifier`).
    """
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise UnsupportedError(
            f"cannot trace {describe(fn)}: its parameters cannot be read ({exc})"
        ) from exc
    for parameter in sig.parameters.values():
        _check_parameter(parameter, fn)
    return sig


def parameters(fn: Callable[..., Any]) -> tuple[str, ...]:
    """The names of ``fn``'s parameters, the variables of its trace, in the function's order
    (see :func:`signature` for what is allowed)."""
    return tuple(signature(fn).parameters)


def signature_text(sig: inspect.Signature) -> str:
    """``sig`` as text without annotations (names, kinds, defaults): what a cache key needs."""
    bare = [p.replace(annotation=p.empty) for p in sig.parameters.values()]
    return str(sig.replace(parameters=bare, return_annotation=sig.empty))


def call_signature(sig: inspect.Signature | None, kind: str) -> inspect.Signature | None:
    """The compiled function's signature: a traced function's ``sig`` (with :data:`DIRECTION`
    last for a Hessian-vector product), or None (strings and SymPy input: the generated
    function's own)."""
    if sig is None or kind != "hvp":
        return sig
    return with_direction(sig, DIRECTION)


def with_direction(sig: inspect.Signature, name: str) -> inspect.Signature:
    """``sig`` with one more parameter ``name`` at the end (the direction ``_v`` of a
    Hessian-vector product): positional when it can follow the others, else keyword-only (after
    a parameter with a default or a keyword-only one)."""
    params = list(sig.parameters.values())
    positional = all(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
        for p in params
    )
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD if positional else inspect.Parameter.KEYWORD_ONLY
    return sig.replace(parameters=[*params, inspect.Parameter(name, kind)])


def combine_signatures(
    signatures: list[inspect.Signature], functions: list[object]
) -> inspect.Signature:
    """One signature for the traced functions of a Jacobian's list: theirs if they agree, else
    their parameters in order of first appearance, which is allowed only when every parameter
    is positional-or-keyword without a default (otherwise an UnsupportedError)."""
    first = signatures[0]
    if all(sig == first for sig in signatures):
        return first
    params = [p for sig in signatures for p in sig.parameters.values()]
    if any(p.kind is not p.POSITIONAL_OR_KEYWORD or p.default is not p.empty for p in params):
        names = ", ".join(describe(f) for f in functions)
        raise UnsupportedError(
            f"the functions {names} of the jacobian list have different signatures with "
            "defaults or keyword-only/positional-only parameters; give one function that "
            "returns a tuple of values"
        )
    merged = dict.fromkeys(p.name for p in params)
    return inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in merged]
    )


def traced_name(functions: list[object], alone: bool) -> str:
    """How a message names the traced function(s) of a request."""
    return describe(functions[0]) if alone and len(functions) == 1 else "the traced functions"


def traced_names(expr: object) -> tuple[str, ...] | None:
    """The parameter names of a function input (see :func:`parameters`); None for any other
    input (a string, a SymPy expression, a number)."""
    if callable(expr) and not isinstance(expr, sp.Basic):
        return parameters(expr)
    return None


def call_with(fn: Callable[..., Any], sig: inspect.Signature, values: list[Any]) -> object:
    """``fn`` called with one value per parameter of ``sig``, in order: keyword-only ones by
    name, the others positionally."""
    positional, keywords = [], {}
    for parameter, value in zip(sig.parameters.values(), values, strict=True):
        if parameter.kind is parameter.KEYWORD_ONLY:
            keywords[parameter.name] = value
        else:
            positional.append(value)
    return fn(*positional, **keywords)
