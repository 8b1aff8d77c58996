"""Common-subexpression elimination across every output at once (:func:`shared_subexpressions`)."""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from ..codegen.naming import TEMPORARY

#: Prefix of generated temporaries. User names start with a letter, so they never collide.
TEMP_PREFIX = TEMPORARY


def shared_subexpressions(
    exprs: Sequence[sp.Expr],
) -> tuple[list[tuple[sp.Symbol, sp.Expr]], list[sp.Expr]]:
    """CSE over all ``exprs`` together: (assignments in evaluation order, reduced outputs)."""
    names = sp.numbered_symbols(TEMP_PREFIX, real=True)
    assignments, reduced = sp.cse(list(exprs), symbols=names, order="canonical")
    return list(assignments), list(reduced)
