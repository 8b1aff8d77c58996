"""How a traced function's parameters map to the generated function's arguments, when they are
not one array each: parameter trees and static arguments.

A :class:`Layout` has one :class:`Part` per parameter of the Python function:

* ``array``: the parameter is one argument of the generated function, of the same name;
* ``tree``: a list, tuple or dict of arrays (:mod:`symdiff.trees`): one argument per leaf,
  named by the parameter and the leaf's path (``params_0_1``), and the function is called with
  the tree rebuilt from them;
* ``static``: not an argument of the generated function at all: the function is called with
  the Python value (an int, a string, a flag, a generator) and the code is specialised for it.

:class:`Structured` pairs a function with the layout of one specialisation; the scalar and the
tensor tracer call the function with :meth:`Layout.values` instead of one traced value per
parameter, and the generated function's signature is :attr:`Layout.signature`. No SymPy here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..trees import TreeDef


@dataclass(frozen=True)
class Part:
    """One parameter of the Python function, as the generated function takes it."""

    name: str
    kind: str  # "array", "tree" or "static"
    #: The generated function's arguments it becomes: ``(name,)``, a leaf each, or none.
    names: tuple[str, ...] = ()
    treedef: TreeDef | None = None
    #: The Python value of a static parameter.
    value: Any = None


@dataclass(frozen=True, eq=False)
class Layout:
    """The parameters of a traced function as the generated function takes them."""

    function_signature: inspect.Signature
    parts: tuple[Part, ...]

    @property
    def signature(self) -> inspect.Signature:
        """The generated function's signature: every array and every leaf of a tree, in the
        order of the function's parameters (a tree's leaves in order), static ones left out."""
        kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
        return inspect.Signature([inspect.Parameter(n, kind)
                                  for part in self.parts for n in part.names])

    @property
    def statics(self) -> dict[str, Any]:
        """The static parameters' values, by name."""
        return {p.name: p.value for p in self.parts if p.kind == "static"}

    def values(self, make: Callable[[str], Any], statics: dict[str, Any] | None = None
               ) -> list[Any]:
        """One value per parameter of the function, in order: ``make(name)`` of each array
        argument, the trees rebuilt from their leaves, the static values (``statics`` may give
        what to pass instead of one, such as a generator seen through a recording view)."""
        statics = statics or {}
        values = []
        for part in self.parts:
            if part.kind == "static":
                values.append(statics.get(part.name, part.value))
            elif part.kind == "tree":
                assert part.treedef is not None
                values.append(part.treedef.build([make(n) for n in part.names]))
            else:
                values.append(make(part.name))
        return values


@dataclass(frozen=True, eq=False)
class Structured:
    """A Python function with the layout of one specialisation: what a builder traces when its
    parameters are trees or static (:mod:`symdiff.structured` makes them)."""

    fn: Callable[..., Any]
    layout: Layout


__all__ = ["Layout", "Part", "Structured"]
