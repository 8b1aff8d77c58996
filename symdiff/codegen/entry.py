"""The packed point path of a loaded module as a vector entry: inputs in, every output out,
each as one float64 vector.

A generated function with a packed point path (:mod:`symdiff.codegen.pack`) computes all of its
outputs into one vector, then hands each back as a 0-d array, as the public contract says. A
caller that wants the vector itself (:class:`symdiff.objective.Objective`, whose ``jac``
returns one) would pay for the 0-d arrays and then for gathering them again: with 1,000 names,
ten times the packed function's own cost. :func:`vector_entry` finds the packed function and
its register's layout in the module, read from the public function's own call of
``_at_packed`` (the generated source is the single statement of both), so that the caller
fills the register itself and reads the outputs' vector.
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .pack import PACKED, PACKED_HELPER


@dataclass(frozen=True)
class VectorEntry:
    """The packed function of a module and its register: ``order`` names the inputs (the
    generated function's parameters, code names) in the order of the register's first
    elements, ``size`` is the register's length. Calling it with a register returns the
    vector of every output, depth first (``value_and_grad``: the value, then the partials;
    ``hvp``: the product, whose direction fills the register from ``direction`` on)."""

    packed: Callable[[np.ndarray], np.ndarray]
    order: tuple[str, ...]
    size: int
    #: A Hessian-vector product's: where the direction's components start in the register
    #: (after ``order``'s inputs); None for other functions.
    direction: int | None = None

    def register(self) -> np.ndarray:
        """A register of zeros, to fill the inputs into (its first ``len(order)`` elements)."""
        return np.zeros(self.size)

    def __call__(self, register: np.ndarray) -> np.ndarray:
        """Every output at the point in ``register`` (which the call overwrites)."""
        return self.packed(register)


def vector_entry(function: Callable[..., Any], source: str, name: str) -> VectorEntry | None:
    """The vector entry of the generated ``function`` (loaded from ``source``, its public
    function ``name``; a wrapper of it, such as the one renaming keywords, is unwrapped), or
    None when it has no packed point path. The layout is read from the one line of the public
    function that calls the packed function (parsing the whole module of 1,000 names took a
    second)."""
    generated = inspect.unwrap(function)
    packed = getattr(generated, "__globals__", {}).get(PACKED)
    if packed is None or generated.__name__ != name:
        return None
    call = f"return {PACKED_HELPER}({PACKED}, ("
    for line in source.splitlines():
        if line.lstrip().startswith(call):
            node = ast.parse(line.strip().removeprefix("return "), mode="eval").body
            if not (isinstance(node, ast.Call) and len(node.args) == 4):
                return None
            _, inputs, size, _ = node.args
            if not (isinstance(inputs, ast.Tuple) and isinstance(size, ast.Constant)):
                return None
            names = inputs.elts
            direction = None
            if names and isinstance(names[-1], ast.Starred):  # ``*_v``: the direction, last
                names, direction = names[:-1], len(names) - 1
            if not all(isinstance(n, ast.Name) for n in names):
                return None
            return VectorEntry(packed, tuple(n.id for n in names), size.value, direction)
    return None
