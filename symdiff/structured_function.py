""":class:`StructuredFunction`: the compiled function of a Python function whose parameters are
trees of arrays or static values (:mod:`symdiff.structured`).

It is a :class:`~symdiff.compiled.CompiledFunction` called as the Python function is (its
signature, its trees), that runs a generated function of the trees' leaves: a call flattens
the trees, picks the specialisation of the static values (tracing and building it on first
use; each is cached, and built through the same pipeline and disk cache as any function) and
gives the results the structure of the parameters. ``source``, ``exprs``, ``constants``,
``explain()`` ... are those of the specialisation used last (built when the builder was called,
where every static value is known then: from ``example=`` or a default).
"""

from __future__ import annotations

import inspect
import operator
import pickle
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from . import pipeline
from .compiled import CompiledFunction
from .errors import SymdiffError
from .structured import UNKNOWN, Plan, restructure, static_key
from .trace import DIRECTION, with_direction
from .trees import same_structure

#: The most specialisations one function keeps (the oldest is dropped beyond).
KEPT = 4096


class StructuredFunction(CompiledFunction):
    """A compiled function over parameter trees and static arguments (see the module
    docstring). ``args`` and ``wrt`` are the Python function's parameter names; ``g.flat``
    is the generated function of the specialisation used last, a plain
    :class:`~symdiff.compiled.CompiledFunction` of the trees' leaves."""

    def __init__(self, plan: Plan, threads: int | None = None):
        self._plan = plan
        self._threads_given = threads
        self._specials: dict[Any, CompiledFunction] = {}
        self._last: CompiledFunction | None = None
        signature = plan.signature
        self.args: tuple[str, ...] = tuple(signature.parameters)
        if plan.kind == "hvp":
            signature = with_direction(signature, DIRECTION)
            self.args += (DIRECTION,)
        self.__signature__ = signature
        self.wrt: tuple[str, ...] | str | None = (
            None if plan.kind == "value" else plan.wrt[0] if plan.single else plan.wrt)
        self._call = self._structured_call
        defaults = {n: s.value for n, s in plan.specs.items() if s.kind == "static"}
        if all(v is not UNKNOWN for v in defaults.values()):
            self._specialised(defaults)

    # -- specialisations -----------------------------------------------------------------------
    def _specialised(self, statics: Mapping[str, Any]) -> CompiledFunction:
        """The generated function for these static values: cached, else traced and built."""
        plan = self._plan
        key = tuple(static_key(n, statics[n], plan.label) for n in plan.statics)
        found = self._specials.get(key)
        if found is None:
            if plan.fn is None:
                raise SymdiffError(
                    f"{plan.label} was unpickled without its Python function, so it cannot be "
                    f"specialised for new static values ({', '.join(plan.statics)}); build it "
                    "again")
            found = pipeline.compiled(plan.call(statics))
            if self._threads_given is not None:
                found = found.with_threads(self._threads_given)
            if len(self._specials) >= KEPT:
                self._specials.pop(next(iter(self._specials)))
            self._specials[key] = found
        self._last = found
        return found

    @property
    def flat(self) -> CompiledFunction:
        """The generated function of the specialisation used last (the leaves of the trees are
        its arguments, static values are in its code)."""
        if self._last is None:
            statics = ", ".join(n for n, s in self._plan.specs.items()
                                if s.kind == "static" and s.value is UNKNOWN)
            raise SymdiffError(
                f"{self._plan.label} is specialised for the values of its static argument(s) "
                f"{statics}, which are not known yet: call it first, or give them in example= "
                "(or as defaults)")
        return self._last

    def _structured_call(self, *args: Any, **kwargs: Any) -> Any:
        function, flat = self._flattened(args, kwargs)
        return restructure(self._plan, function(*flat))

    def _symbolic(self, args: Any, kwargs: Any, inline: Any) -> Any:
        r"""A call with traced values inside another trace (:mod:`symdiff.compose`): the
        specialisation's computation ``inline``\ d on the leaves, in the trees' structure."""
        function, flat = self._flattened(args, kwargs)
        return restructure(self._plan, inline(function, flat))

    def _flattened(self, args: Any, kwargs: Any) -> tuple[CompiledFunction, list[Any]]:
        """The specialisation for a call's static values, and its arguments: the trees'
        leaves, in order."""
        plan = self._plan
        bound = self.__signature__.bind(*args, **kwargs)
        bound.apply_defaults()
        values = bound.arguments
        statics: dict[str, Any] = {}
        flat: list[Any] = []
        for part in plan.parts:
            value = values[part.name]
            if part.kind == "static":
                statics[part.name] = value
            elif part.kind == "tree":
                assert part.treedef is not None
                flat += same_structure(part.treedef, value, f"argument {part.name!r} of "
                                       f"{plan.label}")
            else:
                flat.append(value)
        if plan.kind == "hvp":
            flat.append(values[DIRECTION])
        return self._specialised(statics), flat

    if TYPE_CHECKING:

        def __call__(self, *args: Any, **kwargs: Any) -> Any: ...

    else:
        __call__ = property(operator.attrgetter("_call"))

    # -- what the specialisation used last shows -------------------------------------------------
    source = property(lambda self: self.flat.source)
    name = property(lambda self: self.flat.name)
    kind = property(lambda self: self._plan.kind)
    key = property(lambda self: self.flat.key)
    recipe = property(lambda self: self.flat.recipe)
    recorded = property(lambda self: self.flat.recorded)
    exprs = property(lambda self: self.flat.exprs)
    constants = property(lambda self: self.flat.constants)
    threads = property(lambda self: self._threads_given)

    @property
    def specialisations(self) -> int:
        """How many specialisations (static values) were built so far."""
        return len(self._specials)

    def explain(self, expr: Any = None, verbose: str = "key",
                shapes: Mapping[str, Any] | None = None) -> str:
        """:meth:`CompiledFunction.explain` of the specialisation used last."""
        return self.flat.explain(expr, verbose, shapes)

    def origin(self) -> list[Any]:
        """:meth:`CompiledFunction.origin` of the specialisation used last."""
        return self.flat.origin()

    def traced_from(self) -> Any:
        return self._plan.fn

    # -- variants ----------------------------------------------------------------------------------
    def _variant(self, change: Any) -> StructuredFunction:
        """A copy whose specialisations are ``change(each)``."""
        clone = object.__new__(type(self))
        clone.__dict__.update(self.__dict__)
        clone._specials = {k: change(f) for k, f in self._specials.items()}
        clone._last = None if self._last is None else change(self._last)
        clone._call = clone._structured_call
        return clone

    def with_threads(self, threads: int | None) -> StructuredFunction:
        clone = self._variant(lambda f: f.with_threads(threads))
        clone._threads_given = threads
        return clone

    def with_signature(self, signature: inspect.Signature | None) -> StructuredFunction:
        return self

    def with_origin(self, function: Any) -> StructuredFunction:
        return self

    def with_constants(self, constants: Any, folded: Any = ()) -> StructuredFunction:
        return self._variant(lambda f: f.with_constants(constants, folded))

    def bind(self, **values: Any) -> StructuredFunction:
        """:meth:`CompiledFunction.bind` for every specialisation built so far (one built
        later traces the function again, with the arrays it reads then)."""
        return self._variant(lambda f: f.bind(**values))

    def positional_arguments(self, values: Mapping[str, Any]) -> list[Any]:
        parameters = self.__signature__.parameters
        empty = inspect.Parameter.empty
        missing = [a for a in self.args if a not in values and parameters[a].default is empty]
        if missing:
            raise TypeError(f"{self._plan.label}() missing argument(s): {', '.join(missing)}")
        return [values[a] if a in values else parameters[a].default for a in self.args]

    def call_by_name(self, values: Mapping[str, Any]) -> Any:
        return self._structured_call(*self.positional_arguments(values))

    # -- persistence and display -----------------------------------------------------------------
    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_call", None)
        state.pop("__signature__", None)
        plan = state["_plan"]
        try:  # the Python function, where it pickles by reference (a module-level def)
            pickle.dumps(plan.fn)
        except Exception:
            from dataclasses import replace

            state["_plan"] = replace(plan, fn=None)
        state["_signature_kept"] = self.__signature__
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        signature = state.pop("_signature_kept")
        self.__dict__.update(state)
        self.__signature__ = signature
        self._call = self._structured_call

    @property
    def signature(self) -> str:  # type: ignore[override]
        return f"{self._plan.label}{self.__signature__}"

    def __repr__(self) -> str:
        return f"<CompiledFunction {self.signature}: {self._plan.kind}>"

    def _repr_html_(self) -> str:
        if self._last is None:
            return f"<pre>{self!r} (not specialised yet)</pre>"
        return super()._repr_html_()


def build(kind: str, fn: Any, wrt: Any, options: Any, shapes: Any, example: Any, static: Any,
          threads: int | None) -> CompiledFunction:
    """The compiled function of a builder call on a Python function with parameter trees or
    static arguments (:func:`symdiff.structured.plan`): a :class:`StructuredFunction`, or,
    where every parameter is an array (an ``example=`` of arrays), the plain function with the
    example's shapes."""
    from .layer import Call
    from .structured import plan as make_plan

    plan = make_plan(kind, fn, wrt, options, shapes, example, static)
    if not plan.statics and all(s.kind == "array" for s in plan.specs.values()):
        function = pipeline.compiled(Call(kind, fn, wrt, options, plan.shapes()))
        return function if threads is None else function.with_threads(threads)
    return StructuredFunction(plan, threads)


__all__ = ["StructuredFunction", "build"]
