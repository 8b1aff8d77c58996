"""Joining traced conditions: ``(x > 0) & (y < 1)``, ``|``, ``~`` and NumPy's
``np.logical_and`` / ``np.logical_or`` / ``np.logical_not`` (on booleans NumPy's ``&``, ``|``
and ``~`` are ``bitwise_and``, ``bitwise_or`` and ``invert``, which mean the same). Shared by the
scalar tracer's :class:`~symdiff.trace.values.Condition` and the tensor tracer's
``TensorCondition``: a joined condition is a SymPy ``And`` / ``Or`` / ``Not`` of comparisons,
as the input language's ``where((x > 0) & (y < 1), a, b)`` builds."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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


class JoinsConditions:
    """What a traced condition adds to its class: ``&``, ``|``, ``~`` and the NumPy functions
    of :data:`LOGICAL_UFUNCS` build the join with :meth:`_join`, which the class defines (a new
    condition of its own kind); other ufuncs go to the next class's ``__array_ufunc__``. Put it
    before that class among the bases."""

    __slots__ = ()

    def _join(self, join: Callable[..., sp.Basic], *conditions: object) -> Any:
        raise NotImplementedError

    def __and__(self, other: object) -> Any:
        return self._join(sp.And, self, other)

    def __or__(self, other: object) -> Any:
        return self._join(sp.Or, self, other)

    def __invert__(self) -> Any:
        return self._join(sp.Not, self)

    __rand__ = __and__
    __ror__ = __or__

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        join = LOGICAL_UFUNCS.get(ufunc)
        if join is None or method != "__call__" or kwargs:
            return super().__array_ufunc__(ufunc, method, *inputs, **kwargs)  # type: ignore[misc]
        return self._join(join, *inputs)
