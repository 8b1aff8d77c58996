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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..codegen import naming
from ..constants import Bound, captured
from .ir import Node
from .ops import Builder


class Captures:
    """The bound constants of one request, in order of first use (shared by its traces)."""

    def __init__(self) -> None:
        self.items: list[Bound] = []
        self._seen: dict[int, tuple[Any, Bound]] = {}  # id -> (the array, kept alive; its Bound)

    def node(self, builder: Builder, value: Any, fn: Callable[..., Any]) -> Node:
        """The node of the array ``value`` met while tracing ``fn``: its ``const`` node, or the
        transpose of a named array's (``X.T`` for a closed-over ``X``: one constant, which
        :meth:`CompiledFunction.bind` rebinds whole). Another view of a named array
        (``X[:, 0]``) is a constant of its own that records it (:attr:`Bound.sources`)."""
        named = _named_arrays(fn)
        if value.base is not None and id(value) not in self._seen:
            whole = next((a for a in named.values() if _is_transpose(value, a)), None)
            if whole is not None:
                return builder.transpose(self.node(builder, whole, fn), None)
        found = self._seen.get(id(value))
        if found is not None:
            return builder.constant(found[1].name, found[1].shape, found[1].dtype)
        name = naming.constant(len(self.items))
        taken = {b.label for b in self.items}
        label = next((n for n, a in named.items() if a is value and n not in taken), name)
        sources = () if value.base is None else tuple(  # a view: of which named arrays?
            n for n, a in named.items() if a is not value and np.may_share_memory(a, value))
        bound = Bound(name, label, captured(value, label), sources)
        self.items.append(bound)
        self._seen[id(value)] = (value, bound)
        return builder.constant(bound.name, bound.shape, bound.dtype)


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
