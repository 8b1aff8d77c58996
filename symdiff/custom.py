"""Functions with their own derivative rule: ``@sd.custom_vjp`` and ``defvjp``.

For speed, numerical stability, or code symdiff cannot trace, a function may bring its own
vector-Jacobian product, as autograd's ``@primitive`` / ``defvjp`` and JAX's ``custom_vjp``::

    @sd.custom_vjp
    def logsumexp(x):
        m = np.max(x)
        return m + np.log(np.sum(np.exp(x - m)))

    @logsumexp.defvjp
    def logsumexp_vjp(ans, x):
        return lambda g: g * np.exp(x - ans)

A rule maker takes the result ``ans`` and the arguments and returns the function taking ``g``
(the gradient with respect to the result) to the gradient with respect to its argument; give
one maker per argument (``f.defvjp(maker_x, maker_y)``, None for an argument without one), or,
as JAX does, ``f.defvjp(fwd=..., bwd=...)`` (``fwd(*args) -> (ans, residuals)``,
``bwd(residuals, g) -> one gradient per argument``). ``sd.defvjp(f, maker, ...)`` is the same
as ``f.defvjp(maker, ...)``.

Called on numbers and arrays the function runs as written. Traced with ``shapes=`` (or
``example=``), its body and its rule are both traced, into one ``custom`` node
(:mod:`symdiff.tensor.families.custom`): the generated code computes the body's formula, and
its gradient the rule's (so both are NumPy code in the module); derivations show the rule.
Forward mode and Hessians differentiate the body itself.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from .codegen import naming
from .errors import SymdiffError, UnsupportedError
from .tensor.families.custom import CustomRule, custom
from .tensor.traced import TracedArray, tracer_of

Maker = Callable[..., Callable[[Any], Any]]


class CustomVJP:
    """A function with its own vector-Jacobian product (see the module docstring)."""

    def __init__(self, fn: Callable[..., Any]):
        if not callable(fn):
            raise SymdiffError(f"custom_vjp takes a function, not a {type(fn).__name__}")
        self.fn = fn
        self.makers: tuple[Maker | None, ...] | None = None
        self.fwd: Callable[..., Any] | None = None
        self.bwd: Callable[..., Any] | None = None
        functools.update_wrapper(self, fn)

    def defvjp(self, *makers: Maker | None, fwd: Callable[..., Any] | None = None,
               bwd: Callable[..., Any] | None = None) -> Any:
        """Give the rule: one maker per argument (``maker(ans, *args) -> (g -> gradient)``),
        or ``fwd``/``bwd`` as JAX takes them. Returns the (first) maker, so that it works as
        a decorator (``@f.defvjp``)."""
        if (fwd is None) != (bwd is None) or (fwd is not None and makers):
            raise SymdiffError("defvjp takes one rule maker per argument, or fwd= and bwd= "
                               "together")
        if fwd is None and not makers:
            raise SymdiffError("defvjp needs at least one rule maker")
        for maker in makers:
            if maker is not None and not callable(maker):
                raise SymdiffError(f"a rule maker must be a function or None, not "
                                   f"{type(maker).__name__}")
        self.makers = tuple(makers) if fwd is None else None
        self.fwd, self.bwd = fwd, bwd
        return makers[0] if makers else fwd

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        values = inspect.signature(self.fn).bind(*args, **kwargs)
        values.apply_defaults()
        arguments = list(values.arguments.values())
        tensors = [a for a in arguments if isinstance(a, TracedArray)]
        if not tensors:
            if any(getattr(type(a), "_symdiff_symbolic", False) for a in arguments):
                raise UnsupportedError(
                    f"{self.__name__} has its own derivative rule, which symdiff follows when "
                    "tracing arrays: give the builder shapes= (shapes={'x': ()} for a scalar) "
                    "or example=")
            return self.fn(*args, **kwargs)
        if self.makers is None and self.fwd is None:
            raise UnsupportedError(f"{self.__name__} is a custom_vjp function without a rule: "
                                   f"give it with {self.__name__}.defvjp(...)")
        return self._traced(tracer_of(tensors[0]), arguments, args, kwargs)

    def _traced(self, tracer: Any, arguments: list[Any], args: tuple[Any, ...],
                kwargs: dict[str, Any]) -> Any:
        b = tracer.b
        residuals = None
        if self.fwd is not None:
            answer, residuals = self.fwd(*args, **kwargs)
        else:
            answer = self.fn(*args, **kwargs)
        value = tracer.node(answer)
        adjoint = b.var(naming.adjoint_placeholder(len(b)), value.shape)
        ans, g = tracer.wrap(value), tracer.wrap(adjoint)
        if self.bwd is not None:
            given = self.bwd(residuals, g)
            given = tuple(given) if isinstance(given, tuple | list) else (given,)
        else:
            assert self.makers is not None
            given = tuple(None if maker is None else maker(ans, *args, **kwargs)(g)
                          for maker in self.makers)
        if len(given) > len(arguments):
            raise SymdiffError(f"the rule of {self.__name__} gives {len(given)} gradients for "
                               f"{len(arguments)} arguments")
        given = given + (None,) * (len(arguments) - len(given))
        contributions = tuple(None if c is None or not isinstance(a, TracedArray)
                              else tracer.node(c) for a, c in zip(arguments, given, strict=True))
        rule = CustomRule(self.__name__, tuple(tracer.node(a) for a in arguments), value,
                          adjoint, contributions)
        return tracer.wrap(custom(b, rule))

    def __repr__(self) -> str:
        return f"<custom_vjp {self.__name__}>"


def custom_vjp(fn: Callable[..., Any]) -> CustomVJP:
    """``fn`` with its own derivative rule, given afterwards with ``.defvjp`` (see the module
    docstring). Works as a decorator."""
    return CustomVJP(fn)


def defvjp(fn: CustomVJP, *makers: Maker | None, fwd: Callable[..., Any] | None = None,
           bwd: Callable[..., Any] | None = None) -> CustomVJP:
    """``fn.defvjp(*makers)`` (autograd's spelling ``defvjp(fun, maker, ...)``); returns
    ``fn``."""
    if not isinstance(fn, CustomVJP):
        raise SymdiffError(f"defvjp takes a function made with @sd.custom_vjp, not "
                           f"{getattr(fn, '__name__', type(fn).__name__)}")
    fn.defvjp(*makers, fwd=fwd, bwd=bwd)
    return fn


__all__ = ["CustomVJP", "custom_vjp", "defvjp"]
