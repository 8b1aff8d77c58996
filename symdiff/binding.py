"""How a compiled function is called through a signature: the generated function's
parameters read from its own, and a call bound as Python binds one (defaults filled in, the
threads keyword passed on) where the signature is not plain."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from typing import Any


def threads_keyword(signature: inspect.Signature) -> str | None:
    """The generated function's keyword-only parameter that sets its number of threads."""
    keywords = [p.name for p in signature.parameters.values() if p.kind is p.KEYWORD_ONLY]
    return keywords[0] if keywords else None


def positional(signature: inspect.Signature) -> list[str]:
    """The generated function's parameters without its threads keyword."""
    return [p.name for p in signature.parameters.values() if p.kind is not p.KEYWORD_ONLY]


def plain(signature: inspect.Signature) -> bool:
    """Whether the generated function can be called directly for this signature: every
    parameter positional-or-keyword, without a default (annotations do not matter)."""
    return all(
        p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty
        for p in signature.parameters.values()
    )


def unbound(name: str, constants: Sequence[str]) -> Callable[..., Any]:
    """What a function whose bound constants were not given runs: a clear ``TypeError``."""

    def call(*args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"{name}() needs its bound constants {', '.join(constants)}, which "
                        "were not given (CompiledFunction.with_constants)")

    return call


def binder(fn: Callable[..., Any], signature: inspect.Signature,
            generated: Callable[..., Any], keyword: str | None = None) -> Callable[..., Any]:
    """A call of ``fn`` (which takes every parameter positionally, in order; the ``generated``
    function, or it with the bound constants given) through ``signature``: arguments bound as
    Python binds them, defaults filled in; the generated function's threads ``keyword``, if
    given, passed on."""
    bind = signature.bind
    count = len(signature.parameters)
    keyword_only = inspect.Parameter.KEYWORD_ONLY
    positional = all(p.kind is not keyword_only for p in signature.parameters.values())

    def call(*args: Any, **kwargs: Any) -> Any:
        if positional and not kwargs and len(args) == count:
            return fn(*args)
        extra = {}
        if keyword is not None and keyword in kwargs and keyword not in signature.parameters:
            extra[keyword] = kwargs.pop(keyword)
        bound = bind(*args, **kwargs)
        bound.apply_defaults()
        return fn(*bound.arguments.values(), **extra)

    call.__name__ = call.__qualname__ = generated.__name__
    call.__doc__ = generated.__doc__
    call.__signature__ = signature  # type: ignore[attr-defined]
    return call
