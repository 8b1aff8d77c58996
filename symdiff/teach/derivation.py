"""``derive``: the derivative of one expression with every rule applied, for teaching.

The implementation behind :func:`symdiff.derive` (and what a tensor function's
``CompiledFunction.explain`` derives again): the scalar rule table of
:mod:`symdiff.engine.forward` recorded as :class:`~symdiff.engine.steps.Step`\\ s by
:func:`symdiff.engine.sweeps.derivation`, the one function forward mode's planners call too, or
with ``shapes=`` the backward walk of the tensor layer
(:mod:`symdiff.tensor.steps`). It imports neither the builders nor compiled functions.

A string is derived as the student wrote it (:mod:`symdiff.parsing.written`, read by
:func:`symdiff.parsing.teaching.parse_as_written`): the same engine walks the typed tree, and a
last ``simplify`` step links its result to the derivative the compiled code computes (that of
SymPy's form, simplified: :attr:`Derivation.result`), with a note when the two walks' results
differ. A SymPy expression or a Python function is derived in SymPy's form, as the code is;
so is ``CompiledFunction.explain`` in forward mode (it derives the recipe's SymPy expression:
the form the code was built from, whose result the written derivation links to).
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

    from ..engine.forward import differentiate
    from ..engine.steps import Derivation, Step
    from ..engine.sweeps import derivation
    from ..parsing import check_identifier
    from ..request import expression, symbol
    from ..trace import parameters

    written = None
    if isinstance(expr, str):
        from ..parsing.teaching import parse_as_written

        written, parsed = parse_as_written(expr)
    else:
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
    var = symbol(name)
    # the very function forward mode's planners call: the derivative the code is built from
    code = derivation(parsed, var, simplify, verbose)
    if written is None or written == parsed:
        return code
    root = differentiate(written, var, as_written=True)
    steps = [root]
    if code.result != root.result:
        # the rules' result as written is not the code's: say that this line links the two
        note = "" if root.result == code.raw else LINKED if simplify else AS_CODE
        steps.append(Step("simplify", root.result, code.result, var, (), note))
    return Derivation(parsed, var, code.result, root.result, steps, verbose, written)


#: The note of the last step of a derivation as written, when the rules' result is not yet the
#: derivative the compiled code computes (that of SymPy's form, simplified).
LINKED = "simplified: the derivative the compiled code computes"
AS_CODE = "rewritten as the compiled code computes it (SymPy's form, not simplified)"
