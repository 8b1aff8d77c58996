"""The bound constants one request's traces meet (:mod:`symdiff.constants`): each NumPy array
(``ndim >= 1``) that a traced function combines with a traced value becomes a ``const`` node,
named ``_c0, _c1, ...`` in order of first use, one per array object (the same ``X`` used twice
is one parameter).

A constant is labelled by the Python name the traced function reads it by, when it can be found
(a closed-over variable, ``fn.__code__.co_freevars`` and ``fn.__closure__``, or a global,
``co_names`` and ``fn.__globals__``), which is the keyword :meth:`CompiledFunction.bind` takes
(``g.bind(X=new_X)``); otherwise (an array built inside the function, an attribute) by its
parameter name ``_c0``. ``X.T`` of a named array ``X`` is the transpose of ``X``'s constant;
other views of it (``X[:, 0]``) are constants of their own that record it (``Bound.sources``, so
that rebinding ``X`` alone is refused), and arrays NumPy computed from it (``-y``) are constants
of their own.

A random draw (``rs.standard_normal(n)``, :mod:`symdiff.trace.draws`) is a bound value of kind
``"draw"`` (:meth:`Captures.draw`), labelled by the generator's Python name (``g.bind(rs=other)``
draws from another generator), else ``_c3``.

Index arrays with more than :data:`~symdiff.tensor.families.gather.LITERAL_INDICES` entries
(``x[idx]``, ``np.take(x, idx)``, ``x[mask]``) are bound constants too, of kind ``"index"`` or
``"mask"`` (:meth:`Captures.index`): the flat int64 positions they select, labelled by the
user's array when it alone is the index (so ``g.bind(idx=new_idx)`` works), else ``_c3``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..codegen import naming
from ..constants import Bound, Draw, captured, captured_index
from ..trace.draws import Call
from .ir import Node
from .ops import Builder


class Captures:
    """The bound constants of one request, in order of first use (shared by its traces)."""

    def __init__(self) -> None:
        self.items: list[Bound] = []
        self._seen: dict[int, tuple[Any, Bound]] = {}  # id -> (the array, kept alive; its Bound)
        self._indices: dict[int, tuple[Any, Bound]] = {}  # the same for index constants
        #: The labels of named arrays the compiled function holds numbers computed from, with
        #: why (:mod:`symdiff.tensor.closed`): ``bind`` refuses to rebind them.
        self.folded: dict[str, str] = {}

    def checkpoint(self) -> tuple[int, dict[int, Any], dict[int, Any], dict[str, str]]:
        """What :meth:`restore` goes back to (before a trace that may be done again)."""
        return len(self.items), dict(self._seen), dict(self._indices), dict(self.folded)

    def restore(self, saved: tuple[int, dict[int, Any], dict[int, Any], dict[str, str]]) -> None:
        """Forget the constants made since ``saved`` (:meth:`checkpoint`)."""
        count, seen, indices, folded = saved
        del self.items[count:]
        self._seen, self._indices, self.folded = dict(seen), dict(indices), dict(folded)

    def node(self, builder: Builder, value: Any, fn: Callable[..., Any],
             label: str | None = None) -> Node:
        """The node of the array ``value`` met while tracing ``fn`` (read by the name
        ``label``, when known): its ``const`` node, or the transpose of a named array's (``X.T``
        for a closed-over ``X``: one constant, which :meth:`CompiledFunction.bind` rebinds
        whole). Another view of a named array (``X[:, 0]``) is a constant of its own that
        records it (:attr:`Bound.sources`)."""
        named = _named_arrays(fn)
        if label is not None and naming.is_code_name(label) and not label.startswith("_"):
            named = {label: value, **{n: a for n, a in named.items() if n != label}}
        if value.base is not None and id(value) not in self._seen:
            whole = next((a for a in named.values() if _is_transpose(value, a)), None)
            if whole is not None:
                return builder.transpose(self.node(builder, whole, fn), None)
        found = self._seen.get(id(value))
        if found is not None:
            return builder.constant(found[1].name, found[1].shape, found[1].dtype)
        name = naming.constant(len(self.items))
        taken = {b.label for b in self.items if b.kind == "array"}
        label = next((n for n, a in named.items() if a is value and n not in taken), name)
        sources = () if value.base is None else tuple(  # a view: of which named arrays?
            n for n, a in named.items() if a is not value and np.may_share_memory(a, value))
        bound = Bound(name, label, captured(value, label), sources)
        self.items.append(bound)
        self._seen[id(value)] = (value, bound)
        return builder.constant(bound.name, bound.shape, bound.dtype)


    def draw(self, builder: Builder, call: Call, shape: tuple[int, ...], dtype: str) -> Node:
        """The node of a random draw the traced function made: a parameter that the compiled
        function fills with a new draw of the same call at every call (:attr:`Bound.draw`)."""
        name = naming.constant(len(self.items))
        others = [b for b in self.items if b.label == call.label]
        usable = naming.is_code_name(call.label) and not call.label.startswith("_")
        label = call.label if usable and all(b.value is call.generator for b in others) else name
        arguments = tuple(_kept(a) for a in call.args)
        keywords = tuple((k, _kept(v)) for k, v in call.kwargs)
        draw = Draw(call.method, arguments, keywords, shape, dtype, call.text)
        bound = Bound(name, label, call.generator, kind="draw", draw=draw)
        self.items.append(bound)
        return builder.constant(bound.name, bound.shape, bound.dtype)

    def index(self, positions: Any, fn: Callable[..., Any], given: Any, kind: str,
              axis_size: int, involved: tuple[Any, ...] = (), label: str | None = None) -> str:
        """The parameter name of an index bound constant holding the flat ``positions`` (int64)
        that the user's index array or mask ``given`` selects (None when the index combines
        several arrays or ints: then it is named ``_c3`` and records the named ``involved``
        arrays as its sources, so that rebinding one alone is refused)."""
        positions = captured_index(positions)
        key = id(given) if given is not None else None
        for bound in self.items:  # the same index array used the same way: one constant
            if bound.kind == kind and np.array_equal(bound.value, positions) and (
                    key is None or self._indices.get(key, (None, None))[1] is bound):
                return bound.name
        name = naming.constant(len(self.items))
        named = _named_arrays(fn)
        if label is not None and given is not None and not label.startswith("_"):
            named = {label: given, **{n: a for n, a in named.items() if n != label}}
        taken = {b.label for b in self.items if b.kind != "array"}  # X[mask] and mask * x
        label = next((n for n, a in named.items() if given is not None and a is given
                      and n not in taken), name)
        sources = () if label != name else tuple(
            n for n, a in named.items() if any(a is i for i in (*involved, given)))
        shape = tuple(np.shape(given)) if given is not None else tuple(positions.shape)
        bound = Bound(name, label, positions, sources, kind, shape, axis_size)
        self.items.append(bound)
        if key is not None and key not in self._indices:
            self._indices[key] = (given, bound)
        return name


def _kept(value: Any) -> Any:
    """An argument of a draw as the compiled function passes it at every call: an array as a
    read-only copy (as a bound constant), anything else as it is."""
    if isinstance(value, np.ndarray):
        value = value.copy()
        value.setflags(write=False)
    return value


def _named_arrays(fn: Callable[..., Any]) -> dict[str, Any]:
    """The NumPy arrays ``fn`` reads by name: its free variables, then its globals (names that
    can be keywords of ``bind``)."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return {}
    found: dict[str, Any] = {}
    for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or (), strict=False):
        try:
            found[name] = cell.cell_contents
        except ValueError:  # an empty cell
            continue
    scope = getattr(fn, "__globals__", {})
    found.update({n: scope[n] for n in code.co_names if n in scope and n not in found})
    return {n: a for n, a in found.items() if isinstance(a, np.ndarray)
            and naming.is_code_name(n) and not n.startswith("_")}


def _is_transpose(view: Any, array: Any) -> bool:
    """Whether ``view`` is ``array.T`` (the same memory, axes reversed)."""
    return (
        view.ndim >= 2 and view.shape == array.shape[::-1]
        and view.strides == array.strides[::-1] and view.dtype == array.dtype
        and view.__array_interface__["data"][0] == array.__array_interface__["data"][0]
    )


__all__ = ["Captures"]
