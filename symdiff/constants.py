"""Bound constants: the NumPy arrays a traced function closes over or builds from constants.

``def loss(w): return np.sum((X @ w - y) ** 2)`` with ``X`` and ``y`` from the enclosing scope
(or ``np.eye(3)``, a mask ``np.arange(5) > 2`` built inside) meets arrays that are neither
parameters nor scalars. Each such array (``ndim >= 1``; scalars stay literals) becomes a
*bound constant*: a parameter of the generated module named ``_c0, _c1, ...`` (in order of
first use, one per array object), declared with its shape and dtype, which the
:class:`~symdiff.compiled.CompiledFunction` passes on every call. The module stays a pure
function of its parameters and never holds the values, so it is keyed (and cached on disk) by
the constants' shapes and dtypes, not by their contents.

The policy, shared by the tracer and :meth:`CompiledFunction.bind`:

* a constant is captured when the function is traced, as a read-only copy (like ``jax.jit``):
  changing the array afterwards does not change the compiled function; ``g.bind(X=new_X)``
  returns one that uses ``new_X`` (same shape, same dtype after the conversion below);
* float arrays keep their dtype; booleans and integers become float64 (``True`` is ``1.0``; a
  constant boolean condition of ``np.where`` is tested as ``!= 0``);
* complex, string, object and other arrays are refused with an error naming the constant;
* an index array (``x[idx]``, ``np.take(x, idx)``, a boolean mask ``x[mask]``) with more than a
  few dozen entries is a bound constant of its own kind: the flat int64 positions it selects
  (:func:`captured_index`), rebound from a new index array of the same shape (its entries in
  range) or a new mask of the same shape selecting as many entries (:func:`rebound`).
* a value computed from bound arrays alone (``np.sum(X)``, ``(X - X.mean(0)) / X.std(0)``) is
  a bound constant of kind ``"derived"``: computed once by a generated NumPy function, its
  :class:`Prelude`, when traced and again when :meth:`CompiledFunction.bind` rebinds an array it
  reads (:func:`refreshed`), never at every call;
* a random draw the function makes (``rs.standard_normal(n)``, :mod:`symdiff.trace.draws`) is a
  bound value of kind ``"draw"``: its ``value`` is the generator (a ``RandomState`` or
  ``Generator``, never copied) and its :class:`Draw` the call; the compiled function makes the
  call again at every call, in the traced order, and passes the result as the parameter
  (:func:`drawing`); ``g.bind(rs=other)`` draws from another generator.

Standard library at import (NumPy is imported when an array is converted): a compiled function
loaded from the disk cache uses this without SymPy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .errors import ShapeError, UnsupportedError


@dataclass(frozen=True, eq=False)
class Draw:
    """A random draw made at every call: ``generator.method(*args, **kwargs)`` (the generator
    is the :class:`Bound`'s value), giving an array of ``shape`` and ``dtype``; ``text`` is the
    call as the traced function wrote it (``rs.normal(0.0, 2.0, size=3)``)."""

    method: str
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...]
    shape: tuple[int, ...]
    dtype: str
    text: str


class Prelude:
    """A generated NumPy function (``source``, its function ``name``) computing the derived
    bound constants of a traced function from the bound arrays ``inputs`` (by parameter name):
    a tuple, one value per derived constant. Loaded (and verified) when first run; pickled as
    its source."""

    def __init__(self, source: str, name: str, inputs: tuple[str, ...]):
        self.source = source
        self.name = name
        self.inputs = inputs

    def run(self, values: Mapping[str, Any]) -> tuple[Any, ...]:
        """The derived values for the bound arrays ``values`` (by parameter name)."""
        function = _PRELUDES.get(self.source)
        if function is None:
            from .codegen.load import load_function

            function = _PRELUDES[self.source] = load_function(self.source, self.name,
                                                              f"<symdiff {self.name} prelude>")
        return tuple(function(**{name: values[name] for name in self.inputs}))


#: The loaded prelude functions, by source.
_PRELUDES: dict[str, Callable[..., Any]] = {}


@dataclass(frozen=True, eq=False)
class Bound:
    """One bound constant: its parameter ``name`` in generated code (``_c0``), the ``label``
    the traced function knows it by (the closed-over or global Python name, else ``name``),
    and its captured ``value`` (a read-only float array)."""

    name: str
    label: str
    value: Any
    #: The names of arrays this one was a view of when traced (``X[:, 0]`` of ``X``): a
    #: :meth:`CompiledFunction.bind` of those must rebind this one too.
    sources: tuple[str, ...] = ()
    #: ``"array"`` (a float array), ``"index"`` (int64 positions from an int index array),
    #: ``"mask"`` (int64 positions, ``np.flatnonzero`` of a boolean mask) or ``"draw"`` (a
    #: random draw made at every call; ``value`` is the generator).
    kind: str = "array"
    #: For an index: the shape of the user's index array or mask (``value`` is flat), and the
    #: size of the axis it indexes (0 when it is a named dimension, unknown until called).
    given_shape: tuple[int, ...] = ()
    axis_size: int = 0
    #: For a draw: the call made at every call.
    draw: Draw | None = None
    #: For a derived constant (kind ``"derived"``): the prelude computing it, and which of its
    #: outputs it is; ``sources`` are the labels of the arrays it is computed from.
    prelude: Prelude | None = None
    output: int = 0
    #: Whether the generated function takes it (an array only derived constants are computed
    #: from is not passed, only kept for ``bind``).
    passed: bool = True

    @property
    def shape(self) -> tuple[int, ...]:
        """The constant's shape (fixed ints)."""
        return self.draw.shape if self.draw is not None else tuple(self.value.shape)

    @property
    def dtype(self) -> str:
        """The captured dtype's name (``float64``, ``float32``)."""
        return self.draw.dtype if self.draw is not None else str(self.value.dtype)

    @property
    def is_index(self) -> bool:
        """Whether the parameter holds int64 positions (an index or a mask)."""
        return self.kind in ("index", "mask")


def captured(value: Any, label: str) -> Any:
    """``value`` as a bound constant's array (see the module docstring): a read-only copy of
    a float dtype; an ``UnsupportedError`` naming ``label`` for arrays that are not real
    numbers."""
    import numpy as np

    array = np.asarray(value)
    kind = array.dtype.kind
    if kind in "biu":
        array = array.astype(np.float64)
    elif kind == "f":
        array = array.copy()
    else:
        what = "complex numbers" if kind == "c" else f"dtype {array.dtype}"
        raise UnsupportedError(
            f"the constant array {label} of shape {array.shape} holds {what}; a traced function "
            "can use constant arrays of real numbers (float, int or bool) only"
        )
    array.setflags(write=False)
    return array


def captured_index(positions: Any) -> Any:
    """The flat positions of an index bound constant: a read-only int64 vector."""
    import numpy as np

    array = np.array(positions, dtype=np.int64).reshape(-1)
    array.setflags(write=False)
    return array


def _positions(bound: Bound, value: Any) -> Any:
    """The flat positions a new index array or mask selects, checked against ``bound``'s."""
    import numpy as np

    array = np.asarray(value)
    want = "a boolean mask" if bound.kind == "mask" else "an array of ints"
    if array.shape != bound.given_shape or (array.dtype.kind != "b") == (bound.kind == "mask") \
            or array.dtype.kind not in "biu":
        raise ShapeError(f"bind: {bound.label} was traced as {want} of shape "
                         f"{bound.given_shape}; got shape {array.shape} and dtype {array.dtype} "
                         "(trace the function again for another one)")
    if bound.kind == "mask":
        positions = np.flatnonzero(array)
        if positions.size != bound.value.size:
            raise ShapeError(f"bind: the mask {bound.label} selected {bound.value.size} entries "
                             f"when traced and selects {positions.size} now; the result's shape "
                             "depends on it (trace the function again)")
        return positions
    size = bound.axis_size
    if size and array.size and (int(array.min()) < -size or int(array.max()) >= size):
        bad = int(array.min()) if int(array.min()) < -size else int(array.max())
        raise ShapeError(f"bind: index {bad} in {bound.label} is out of range for the axis "
                         f"of size {size} it indexes")
    return array % size if size else array


def rebound(bound: Bound, value: Any) -> Bound:
    """``bound`` with a new value (:meth:`CompiledFunction.bind`): converted as when traced, and
    of the same shape and dtype, else a ``ShapeError`` (the generated module is specialised to
    them). An index constant takes a new index array (or mask) like the one it was traced
    with."""
    if bound.prelude is not None:
        raise TypeError(f"bind: {bound.name} is computed from {', '.join(bound.sources)} when "
                        "bound; rebind those instead")
    if bound.draw is not None:
        return replace(bound, value=_generator(bound, value))
    if bound.kind != "array":
        return replace(bound, value=captured_index(_positions(bound, value)))
    array = captured(value, bound.label)
    if array.shape != bound.value.shape or array.dtype != bound.value.dtype:
        raise ShapeError(
            f"bind: {bound.label} was traced as an array of shape {bound.shape} and dtype "
            f"{bound.dtype}; got shape {array.shape} and dtype {array.dtype} (trace the "
            "function again for another shape or dtype)"
        )
    return replace(bound, value=array)


def rebinding(function: str, constants: Sequence[Bound], folded: Sequence[tuple[str, str]],
              values: Mapping[str, Any]) -> tuple[Bound, ...]:
    """``constants`` with new ``values`` by name (:meth:`CompiledFunction.bind` of the
    function named ``function``): each rebound (:func:`rebound`), the derived constants computed
    from them computed again (:func:`refreshed`). Refused: an array ``folded`` names
    (:func:`refuse_folded`), an unknown name, and an array some other constant is a view of
    unless both are given (``TypeError``)."""
    refuse_folded(function, folded, values)
    by_name: dict[str, list[Bound]] = {}  # an array can be a constant and an index
    for c in constants:
        by_name.setdefault(c.label, []).append(c)
        if c.name != c.label:
            by_name.setdefault(c.name, []).append(c)
    unknown = sorted(set(values) - set(by_name))
    parts = [c for c in constants if set(unknown) & set(c.sources)]
    if parts:
        raise TypeError(
            f"{function}.bind(): {', '.join(unknown)} entered the bound constant(s) "
            f"{', '.join(c.name for c in parts)} only through a computation when traced (an "
            "index combining several arrays, or a view); rebind those by name or trace "
            "the function again")
    if unknown:
        known = ", ".join(dict.fromkeys(c.label for c in constants)) or "none"
        raise TypeError(f"{function}.bind() got unknown constant(s) {', '.join(unknown)}; "
                        f"its bound constants are: {known}")
    given = {c.name: v for k, v in values.items() for c in by_name[k]}
    rebound_labels = {c.label for k in values for c in by_name[k]}
    stale = [c.label for c in constants if c.name not in given
             and c.prelude is None and rebound_labels.intersection(c.sources)]
    if stale:
        raise TypeError(f"{function}.bind(): the constant(s) {', '.join(stale)} were views "
                        "of an array being rebound when traced; rebind them too, or trace "
                        "the function again")
    changed = [rebound(c, given[c.name]) if c.name in given else c for c in constants]
    return refreshed(changed, given)


def refreshed(constants: Sequence[Bound], changed: Iterable[str]) -> tuple[Bound, ...]:
    """``constants`` after :meth:`CompiledFunction.bind` gave new values to the parameters
    ``changed``: each derived constant computed from one of them computed again."""
    changed = set(changed)
    values = {c.name: c.value for c in constants}
    runs: dict[int, tuple[Any, ...]] = {}
    out = []
    for c in constants:
        prelude = c.prelude
        if prelude is not None and changed.intersection(prelude.inputs):
            if id(prelude) not in runs:
                runs[id(prelude)] = prelude.run(values)
            value = _read_only(runs[id(prelude)][c.output])
            c = replace(c, value=value)
        out.append(c)
    return tuple(out)


def _read_only(value: Any) -> Any:
    import numpy as np

    array = np.array(value)
    array.setflags(write=False)
    return array


def refuse_folded(function: str, folded: Sequence[tuple[str, str]], names: Iterable[str]
                  ) -> None:
    """:meth:`CompiledFunction.bind` of ``names``: an UnsupportedError if one of them is an
    array whose numbers the compiled code holds (``folded``: label and why)."""
    why = dict(folded)
    for name in names:
        if name in why:
            raise UnsupportedError(
                f"{function}.bind(): the compiled function holds numbers computed from {name} "
                f"when it was traced ({why[name]}), so it cannot be rebound; build the function "
                f"again with the new {name}")


def _generator(bound: Bound, value: Any) -> Any:
    """A generator to draw ``bound``'s call from instead of its own: one of the same kind."""
    import numpy as np

    kind = type(bound.value)
    if not isinstance(value, np.random.RandomState | np.random.Generator) or not isinstance(
            value, kind):
        raise TypeError(f"bind: {bound.label} is the generator of the draw {bound.draw.text} "
                        f"(a {kind.__name__}); got {type(value).__name__}")
    return value


def arguments(constants: Sequence[Bound], fresh: bool = True) -> dict[str, Any]:
    """The generated function's arguments for ``constants``, by parameter name: the arrays,
    and a new draw for each draw, in order (from a copy of its generator unless ``fresh``, which
    leaves the user's generator as it is: for displays)."""
    import copy

    import numpy as np

    values: dict[str, Any] = {}
    for c in constants:
        if not c.passed:
            continue
        if c.draw is None:
            values[c.name] = c.value
        else:
            generator = c.value if fresh else copy.deepcopy(c.value)
            method = getattr(generator, c.draw.method)
            values[c.name] = np.asarray(method(*c.draw.args, **dict(c.draw.kwargs)))
    return values


def drawing(fn: Callable[..., Any], values: Mapping[str, Any],
            constants: Sequence[Bound]) -> Callable[..., Any]:
    """``fn`` (a generated function) with the bound ``values`` given, and the draws of
    ``constants`` made afresh at every call, in their order, before ``fn`` runs: as the
    traced function drew them."""
    import numpy as np

    asarray = np.asarray
    draws = [(c.name, getattr(c.value, c.draw.method), c.draw.args, dict(c.draw.kwargs))
             for c in constants if c.draw is not None]

    def call(*args: Any, **kwargs: Any) -> Any:
        for name, method, given, keywords in draws:
            kwargs[name] = asarray(method(*given, **keywords))
        return fn(*args, **kwargs, **values)

    return call


__all__ = ["Bound", "Draw", "Prelude", "arguments", "captured", "captured_index", "drawing",
           "rebinding", "rebound", "refreshed", "refuse_folded"]
