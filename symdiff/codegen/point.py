"""The point path of an elementwise module: whether a point of Python floats may be computed
on the floats themselves (the runtime's ``_at_point``, :func:`floats_suffice`), and the packed
point path (:mod:`symdiff.codegen.pack`) chosen instead for many alike lines
(:func:`packed_path`: the public function's statements that call it)."""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from . import naming
from .pack import PACKED, PACKED_HELPER, packed_point
from .printer import CodePrinter


def floats_suffice(exprs: Sequence[sp.Expr]) -> bool:
    """Whether the printed formulas give the same numbers on Python floats as on NumPy float64
    scalars wherever Python does not raise: every power has an integer exponent (or is a
    square root, which prints as ``_np.sqrt``); a float to another power can be complex."""
    return all(
        p.exp.is_Integer or p.exp == sp.S.Half for e in exprs for p in e.atoms(sp.Pow)
    )


def nest_of(result: object) -> str:
    """The literal that tells ``_at_packed`` how to nest the outputs (taken in depth-first
    order): ``0`` one output, a positive int k a tuple of the next k outputs, a tuple of those
    a tuple of them."""
    if isinstance(result, int):
        return "0"
    items = list(result)  # type: ignore[call-overload]
    if items and all(isinstance(i, int) for i in items):
        return str(len(items))
    inner = [nest_of(i) for i in items]
    return f"({inner[0]},)" if len(inner) == 1 else f"({', '.join(inner)})"


#: The ``nest`` of ``_at_packed`` that hands back the outputs' vector itself: the array result
#: of a Hessian-vector product at one point.
VECTOR_NEST = "None"


def packed_path(program, assignments: Sequence[tuple[sp.Symbol, sp.Expr]],
                outputs: Sequence[sp.Expr], printer: CodePrinter, slower: float = 1
                ) -> tuple[list[str], tuple[str, ...], str] | None:
    """The point path of an elementwise program (``program``: its ``params``, ``result``,
    ``vector`` and ``title``) packed, where that costs less than the plain one: the statements
    of the public function's point path, the module constants and the text of ``_packed``;
    None otherwise. The helpers the packed function calls join ``printer``'s. ``slower``: the
    cost of the plain path's operations against Python floats' (4 where it runs on NumPy
    scalars, the formulas having fractional powers).

    A Hessian-vector product (``program.vector``: the direction's components, its result an
    array of one axis with one output per component) is packed too, at a point whose
    direction ``_v`` is a float64 vector of its components: they follow the other inputs in
    the register (``*_v``), and its outputs' vector is the result itself."""
    result = program.result
    direction = tuple(program.vector)
    params = [p for p in program.params if p != naming.DIRECTION]
    if direction:
        entries = getattr(result, "entries", {})
        leaves = [entries.get((i,)) for i in range(len(direction))]
        if getattr(result, "dims", None) != (len(direction),) or None in leaves \
                or getattr(result, "mirrors", None):
            return None
        nest = VECTOR_NEST
    elif isinstance(result, int | tuple):
        leaves, nest = _depth_first(result), nest_of(result)
    else:
        return None  # an array result (a Jacobian, a Hessian) keeps the plain point path
    made = packed_point(assignments, outputs, leaves, params, type(printer), slower, direction)
    if made is None:
        return None
    packed, own = made
    printer.helpers |= own.helpers
    printer.helpers.add(PACKED_HELPER)
    tests = [  # (inline: a call with every argument cost a third more)
        f"({p}.__class__ is float or {p}.__class__ is _np.float64)" for p in params]
    names = list(packed.order[: len(packed.order) - len(direction)])
    if direction:
        v = naming.DIRECTION
        tests += [f"{v}.__class__ is _np.ndarray", f"{v}.shape == ({len(direction)},)",
                  f"{v}.dtype == _np.float64"]
        names.append(f"*{v}")
    test = " and ".join(tests)
    call = (f"{PACKED_HELPER}({PACKED}, ({', '.join(names)}{',' if len(names) == 1 else ''}), "
            f"{packed.size}, {nest})")
    return [f"if {test}:", f"    return {call}"], packed.constants, packed.source(program.name)


def _depth_first(result: object) -> list[int]:
    """The output numbers in ``result`` depth first."""
    if isinstance(result, int):
        return [result]
    return [k for item in result for k in _depth_first(item)]  # type: ignore[attr-defined]
