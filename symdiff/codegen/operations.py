"""How Numba's compiled code computes each operation of a formula (``backend="numba"``), read
off the SymPy tree as :class:`~symdiff.codegen.loops.NumbaPrinter` prints it:

* :data:`INSTRUCTIONS`: arithmetic, an integer power, a square root, comparisons, ``&``,
  ``|``, ``abs``, ``max``, a step, a piecewise value (``_select``): what the compiler writes as
  instructions, and vectorises in a loop;
* :data:`SCALAR_FUNCTION`: ``exp``, ``log``, ``tanh``, sigmoid, ... as one of the runtime's
  scalar functions (the registry rows' ``numba`` field), plain arithmetic compiled inline;
* :data:`LIBRARY_CALL`: a call of the C library: NumPy's other functions of a number
  (``_np.sin(x)``), ``math``'s (:data:`MATH_FORMS`), and a power whose exponent is neither an
  integer nor one half (``x**(1/3)``, ``x**2.5``, ``x**y``: ``pow``);
* :data:`NO_FORMULA`: a runtime helper that has no Numba form (``polygamma``).

:func:`library_calls` counts the calls a module's formulas make (which decides whether they
are compiled inline into the loop); the tensor backend fuses only what is instructions
(:mod:`symdiff.tensor.fused`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

import sympy as sp

from .. import registry

INSTRUCTIONS = "instructions"
SCALAR_FUNCTION = "scalar function"
LIBRARY_CALL = "library call"
NO_FORMULA = "no formula"

#: Functions whose NumPy form is a runtime helper, printed for Numba from ``math`` (the
#: standard library's, which Numba compiles to calls of the C library).
MATH_FORMS = {"_erf": "_math.erf({0})", "_erfc": "_math.erfc({0})",
              "_loggamma": "_select({0} > 0, _math.lgamma({0}), _np.nan)"}

_TEMPLATE_CALL = re.compile(r"_np\.(\w+)\(")


def operation(expr: sp.Basic) -> str:
    """How compiled code computes ``expr``'s own operation (not its arguments'):
    :data:`INSTRUCTIONS`, :data:`SCALAR_FUNCTION`, :data:`LIBRARY_CALL` or
    :data:`NO_FORMULA`. A function symdiff's registry does not know counts as a call."""
    if isinstance(expr, sp.Pow):  # (``x**n``: multiplications; a square root: an instruction)
        exponent = expr.exp
        return INSTRUCTIONS if exponent.is_Integer or abs(exponent) == sp.S.Half \
            else LIBRARY_CALL
    if not isinstance(expr, sp.Function) or isinstance(expr, sp.Piecewise):
        return INSTRUCTIONS
    row = registry.by_class_name().get(type(expr).__name__)
    if row is None:
        return LIBRARY_CALL
    if row.method == "heaviside":  # (``sign`` and ``maximum``, or a select)
        return INSTRUCTIONS
    if row.numba is not None and row.method is None and len(expr.args) == registry.arity(row)[0]:
        return SCALAR_FUNCTION
    if row.helper:
        return LIBRARY_CALL if row.helper in MATH_FORMS and len(expr.args) == 1 else NO_FORMULA
    if row.template:
        return LIBRARY_CALL if _template_calls(row.template) else INSTRUCTIONS
    return INSTRUCTIONS if row.instruction else LIBRARY_CALL


def library_calls(exprs: Iterable[sp.Basic]) -> int:
    """How many calls of the C library computing ``exprs`` makes: each operation that is a
    :data:`LIBRARY_CALL`, as often as the printed code writes it (every node of each tree; the
    argument of a step whose value at 0 is neither 0 nor 1/2 twice, in the test ``u == 0`` and
    in ``sign(u)``)."""
    calls, stack = 0, list(exprs)
    while stack:
        node = stack.pop()
        calls += operation(node) == LIBRARY_CALL
        stack.extend(node.args)
        if isinstance(node, sp.Heaviside) and len(node.args) > 1 \
                and node.args[1] not in (0, sp.S.Half):
            stack.append(node.args[0])
    return calls


def instructions_only(expr: sp.Basic) -> bool:
    """Whether compiled code computes every operation of ``expr`` with instructions."""
    return all(operation(node) == INSTRUCTIONS for node in sp.preorder_traversal(expr))


@functools.cache
def _template_calls(template: str) -> int:
    """The calls of the C library a registry row's template makes (``1.0/_np.cos({0})``: 1,
    ``_np.maximum({0}, 0.0)``: none, ``maximum`` being an instruction)."""
    inline = registry.instruction_ufuncs()
    return sum(name not in inline for name in _TEMPLATE_CALL.findall(template))
