"""Statistics: ``var`` and ``std`` (with ``axis``, ``ddof``, ``keepdims``), composed of the
builder's reductions and elementwise maps, so their rules are those of ``mean``, ``sum`` and
the elementwise chain::

    var(a) = sum((a - mean(a, keepdims=True)) ** 2) / (N - ddof),   std(a) = sqrt(var(a))

``N`` is the number of elements reduced (a product of named dimensions too). The gradient of
``std`` is ``(a - mean) / ((N - ddof) * std)``: not finite where the variance is 0 (every
element equal), as for ``sqrt`` at 0, in NumPy, JAX and PyTorch alike.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sp

from ...errors import ShapeError
from ..ir import Node, arg_symbol
from ..oprow import OpRow, Param, Spelling
from ..ops import Builder
from ..shapes import normalize_axes

_X = arg_symbol(0)


def var(b: Builder, a: Node, axis: int | tuple[int, ...] | None = None, ddof: Any = 0,
        keepdims: bool = False, *, where: str = "") -> Node:
    """``np.var(a, axis, ddof=ddof, keepdims=keepdims)``."""
    axes = normalize_axes("var", axis, a.ndim, where)
    if isinstance(ddof, bool) or not isinstance(ddof, int | float):
        raise ShapeError(f"var: ddof must be a number, not {ddof!r}{where}")
    count = sp.Mul(*(sp.sympify(a.shape[i]) for i in axes))
    if count.is_number and count - ddof <= 0:
        raise ShapeError(f"var: ddof={ddof} leaves no degrees of freedom for {count} "
                         f"elements{where}")
    centred = b.map(_X - arg_symbol(1), [a, b.reduce_axes("mean", a, axes, True)], "var",
                    where)
    total = b.reduce_axes("sum", b.map(_X**2, [centred]), axes, bool(keepdims))
    return b.map(_X / (count - sp.nsimplify(ddof)), [total])


def std(b: Builder, a: Node, axis: int | tuple[int, ...] | None = None, ddof: Any = 0,
        keepdims: bool = False, *, where: str = "") -> Node:
    """``np.std(a, axis, ddof=ddof, keepdims=keepdims)``: ``sqrt(var)``."""
    return b.map(sp.sqrt(_X), [var(b, a, axis, ddof, keepdims, where=where)])


OPS: tuple[OpRow, ...] = ()

SPELLINGS = (
    Spelling("var", var, "var(a, axis=None, ddof=0, keepdims=False)", {"a": Param.ARRAY},
             numpy=(np.var,), methods=("var",)),
    Spelling("std", std, "std(a, axis=None, ddof=0, keepdims=False)", {"a": Param.ARRAY},
             numpy=(np.std,), methods=("std",)),
)

__all__ = ["OPS", "SPELLINGS", "std", "var"]
