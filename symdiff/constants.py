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
* complex, string, object and other arrays are refused with an error naming the constant.

Standard library at import (NumPy is imported when an array is converted): a compiled function
loaded from the disk cache uses this without SymPy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import ShapeError, UnsupportedError


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

    @property
    def shape(self) -> tuple[int, ...]:
        """The constant's shape (fixed ints)."""
        return tuple(self.value.shape)

    @property
    def dtype(self) -> str:
        """The captured dtype's name (``float64``, ``float32``)."""
        return str(self.value.dtype)


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


def rebound(bound: Bound, value: Any) -> Bound:
    """``bound`` with a new value (:meth:`CompiledFunction.bind`): converted as when traced, and
    of the same shape and dtype, else a ``ShapeError`` (the generated module is specialised to
    them)."""
    array = captured(value, bound.label)
    if array.shape != bound.value.shape or array.dtype != bound.value.dtype:
        raise ShapeError(
            f"bind: {bound.label} was traced as an array of shape {bound.shape} and dtype "
            f"{bound.dtype}; got shape {array.shape} and dtype {array.dtype} (trace the "
            "function again for another shape or dtype)"
        )
    return Bound(bound.name, bound.label, array, bound.sources)


__all__ = ["Bound", "captured", "rebound"]
