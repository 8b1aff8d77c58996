"""``derive``: the derivative of one expression with every rule applied, for teaching.

The implementation behind :func:`symdiff.derive` (and what a tensor function's
``CompiledFunction.explain`` derives again): the scalar rule table of
:mod:`symdiff.engine.forward` recorded as :class:`~symdiff.engine.steps.Step`\\ s by
:func:`symdiff.engine.sweeps.derivation`, the one function forward mode's planners call too, or
with ``shapes=`` the backward walk of the tensor layer
(:mod:`symdiff.tensor.steps`). It imports neither the builders nor compiled functions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import SymdiffError

if TYPE_CHECKING:
    from ..engine.steps import Derivation


def derive(
    expr: Any,
    wrt: str | None = None,
    *,
    simplify: bool = True,
    verbose: str = "all",
    shapes: Mapping[str, Any] | None = None,
) -> Derivation:
    """Differentiate ``expr`` with respect to one variable, recording every rule applied
    (the documentation is :func:`symdiff.derive`'s)."""
    if shapes is not None:
        from ..tensor.steps import derive_tensor

        return derive_tensor(expr, wrt, shapes, simplify, verbose)
    import sympy as sp

    from ..engine.sweeps import derivation
    from ..parsing import check_identifier
    from ..request import expression, symbol
    from ..trace import parameters

    parsed = expression(expr)
    if wrt is None:
        traced = callable(expr) and not isinstance(expr, sp.Basic)
        free = (s.name for s in parsed.free_symbols)
        names = list(parameters(expr)) if traced else sorted(free)
        if len(names) != 1:
            raise SymdiffError(
                f"the expression has {len(names)} variables ({', '.join(names) or 'none'}); "
                "say which one with wrt="
            )
        wrt = names[0]
    name = wrt if isinstance(wrt, str) else str(wrt)
    if name not in {s.name for s in parsed.free_symbols}:  # SymPy's Symbol("x_{1}") passes
        name = check_identifier(name, "wrt name")
    # the very function forward mode's planners call (one derivation, kept by the build)
    return derivation(parsed, symbol(name), simplify, verbose)
