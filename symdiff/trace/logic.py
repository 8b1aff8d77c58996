"""Joining traced conditions: ``(x > 0) & (y < 1)``, ``|``, ``~`` and NumPy's
``np.logical_and`` / ``np.logical_or`` / ``np.logical_not`` (on booleans NumPy's ``&``, ``|``
and ``~`` are ``bitwise_and``, ``bitwise_or`` and ``invert``, which mean the same). Shared by the
scalar tracer's :class:`~symdiff.trace.values.Condition` and the tensor tracer's
``TensorCondition``: a joined condition is a SymPy ``And`` / ``Or`` / ``Not`` of comparisons,
as the input language's ``where((x > 0) & (y < 1), a, b)`` builds."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import sympy as sp

#: NumPy's functions that join conditions, and the SymPy join each builds.
LOGICAL_UFUNCS: dict[np.ufunc, Callable[..., sp.Basic]] = {
    np.logical_and: sp.And,
    np.logical_or: sp.Or,
    np.logical_not: sp.Not,
    np.bitwise_and: sp.And,
    np.bitwise_or: sp.Or,
    np.invert: sp.Not,
}
