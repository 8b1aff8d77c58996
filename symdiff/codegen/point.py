"""The plain point path of an elementwise module: at one point given as Python floats (or NumPy
float64 scalars), the formulas run on the floats themselves (``_at_point``); the packed path
(:mod:`symdiff.codegen.pack`) is chosen instead for many alike lines."""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from .printer import CodePrinter

#: The runtime helper that computes the formulas at one point given as Python floats.
POINT_HELPER = "_at_point"


def floats_suffice(exprs: Sequence[sp.Expr]) -> bool:
    """Whether the printed formulas give the same numbers on Python floats as on NumPy float64
    scalars wherever Python does not raise: every power has an integer exponent (or is a
    square root, which prints as ``_np.sqrt``); a float to another power can be complex."""
    return all(
        p.exp.is_Integer or p.exp == sp.S.Half for e in exprs for p in e.atoms(sp.Pow)
    )


def point_path(params: Sequence[str], printer: CodePrinter) -> list[str]:
    """The first statements of an elementwise function: at one point given as Python floats
    (the usual call of an optimiser over named parameters) the formulas run on the floats
    themselves (:func:`~symdiff.codegen.helpers.blocks._at_point`), without the conversion of
    every argument to an array; with 1,000 names that conversion cost more than the formulas.
    NumPy float64 scalars take it too (``g(*x)`` of a float64 array ``x``): one test for
    Python floats, then one for float64 (``_at_point`` makes them Python floats)."""
    test = " and ".join(
        f"({p}.__class__ is float or {p}.__class__ is _np.float64)" for p in params)
    call = printer.helper_call(POINT_HELPER, FORMULAS, names_tuple_of(params))
    return [f"if {test}:", f"    return {call}"]


def names_tuple_of(params: Sequence[str]) -> str:
    """``(a, b)`` (``(a,)`` for one name): the tuple of the parameters themselves."""
    return f"({params[0]},)" if len(params) == 1 else f"({', '.join(params)})"


#: The function of the formulas of an elementwise module (see :func:`module_spec`).
FORMULAS = "_formulas"
