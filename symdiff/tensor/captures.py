"""The bound constants one request's traces meet (:mod:`symdiff.constants`): each NumPy array
(``ndim >= 1``) that a traced function combines with a traced value becomes a ``const`` node,
named ``_c0, _c1, ...`` in order of first use, one per array object (the same ``X`` used twice
is one parameter).

A constant is labelled by the Python name the traced function reads it by, when it can be found
(a closed-over variable, ``fn.__code__.co_freevars`` and ``fn.__closure__``, or a global,
``co_names`` and ``fn.__globals__``), which is the keyword :meth:`CompiledFunction.bind` takes
(``g.bind(X=new_X)``); otherwise (an array built inside the function, an attribute) by its
parameter name ``_c0``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
        """The ``const`` node of the array ``value`` met while tracing ``fn``."""
        found = self._seen.get(id(value))
        if found is None:
            name = naming.constant(len(self.items))
            label = _label(value, fn, {b.label for b in self.items}) or name
            bound = Bound(name, label, captured(value, label))
            self.items.append(bound)
            self._seen[id(value)] = (value, bound)
        else:
            bound = found[1]
        return builder.constant(bound.name, bound.shape, bound.dtype)


def _label(value: Any, fn: Callable[..., Any], taken: set[str]) -> str | None:
    """The name ``fn`` reads ``value`` by (a free variable, then a global), if any and not
    taken by another constant."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    candidates: list[str] = []
    for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or (), strict=False):
        try:
            if cell.cell_contents is value:
                candidates.append(name)
        except ValueError:  # an empty cell
            continue
    scope = getattr(fn, "__globals__", {})
    candidates += [n for n in code.co_names if scope.get(n, None) is value]
    return next((n for n in candidates if naming.is_code_name(n) and not n.startswith("_")
                 and n not in taken), None)


__all__ = ["Captures"]
