"""Whether an elementwise module may compute a point of Python floats on the floats themselves
(the runtime's ``_at_point``); the packed point path (:mod:`symdiff.codegen.pack`) is chosen
instead for many alike lines."""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp


def floats_suffice(exprs: Sequence[sp.Expr]) -> bool:
    """Whether the printed formulas give the same numbers on Python floats as on NumPy float64
    scalars wherever Python does not raise: every power has an integer exponent (or is a
    square root, which prints as ``_np.sqrt``); a float to another power can be complex."""
    return all(
        p.exp.is_Integer or p.exp == sp.S.Half for e in exprs for p in e.atoms(sp.Pow)
    )
