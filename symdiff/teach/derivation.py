"""``derive``: the derivative of one expression with every rule applied, for teaching.

The implementation behind :func:`symdiff.derive` (and what a tensor function's
``CompiledFunction.explain`` derives again): the scalar rule table of
:mod:`symdiff.engine.forward` recorded as :class:`~symdiff.engine.steps.Step`\\ s (a SymPy
expression or a Python function by :func:`symdiff.engine.sweeps.derivation`, the one function
forward mode's planners call too), or with ``shapes=`` the backward walk of the tensor layer
(:mod:`symdiff.tensor.steps`). It imports neither the builders nor compiled functions.

A string is derived as the student wrote it (:mod:`symdiff.parsing.written`, read by
:func:`symdiff.parsing.teaching.parse_as_written`): the same engine walks the typed tree. A
SymPy expression or a Python function is derived in SymPy's form, as the code is.

The last step, ``simplify``, shows the final answer in the form a textbook prints
(:func:`symdiff.teach.textbook.textbook_form`), when that differs from the rules' result; it is
:attr:`Derivation.result`. The compiled code is built from the same rules' result, simplified
by :func:`symdiff.simplify.simplify_for_people` (an equal form, which may read differently):
the teaching form is only shown.
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
    order: str = "result-first",
    shapes: Mapping[str, Any] | None = None,
) -> Derivation:
    """Differentiate ``expr`` with respect to one variable, recording every rule applied
    (the documentation is :func:`symdiff.derive`'s)."""
    from ..engine.lines import check_order

    check_order(order)
    if shapes is not None:
        from ..tensor.steps import derive_tensor

        return derive_tensor(expr, wrt, shapes, simplify, verbose)
    import sympy as sp

    from ..engine.assembly import shown_result
    from ..engine.forward import differentiate
    from ..engine.steps import Derivation, Step
    from ..engine.sweeps import derivation
    from ..parsing import check_identifier
    from ..request import expression, symbol
    from ..trace import parameters
    from .textbook import textbook_form

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
    if written is None or written == parsed:
        # the very function forward mode's planners call (the code simplifies its result)
        root = derivation(parsed, var, simplify=False).steps[0]
        written = None
    else:
        root = differentiate(written, var, as_written=True)
    steps = [root]
    result, final = root.result, shown_result(root)
    if simplify:
        found = textbook_form(root, parsed, lambda: derivation(parsed, var, simplify).result)
        if found.note:
            steps.append(Step("simplify", root.result, found.form, var, (), found.note))
            result, final = found.value, found.form
    return Derivation(parsed, var, result, root.result, steps, verbose, written, final, order)
