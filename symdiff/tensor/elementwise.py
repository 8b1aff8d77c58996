"""Partial derivatives of elementwise (``map``) expressions, by the scalar rule table.

A ``map`` node applies one SymPy expression in the placeholders ``_a0, _a1, ...`` to its
arguments elementwise; its partial derivative in ``_ai`` is that of the scalar layer
(:func:`symdiff.engine.forward.differentiate`, driven by :data:`symdiff.engine.rules.RULES`), so
every
elementwise function of the scalar layer works on tensors with the same conventions
(``relu'(0) = 0``, ties of ``max(a, b)`` split evenly, ...).
"""

from __future__ import annotations

import functools

import sympy as sp

from ..engine.forward import differentiate
from ..engine.steps import Step
from ..simplify import Budget, simplify_for_people, stable_forms, zero_power_logs
from ..simplify.numeric import faithful_form
from .ir import arg_symbol

#: The simplification budget of elementwise partials (code, not a derivation to read): the
#: trigonometric phases are left out. SymPy's ``trigsimp`` of hyperbolic functions factors
#: over the Gaussian rationals and ``exptrigsimp`` rewrites every exponential, seconds per
#: call on an LSTM step's expression, and what they find (``cosh(u)**-2`` for
#: ``1 - tanh(u)**2``) costs the code more than the ``tanh(u)`` it computes already.
CODE_BUDGET = Budget(ops=40, trig_calls=0, hyperbolic_calls=0, exptrig_ops=0)


@functools.lru_cache(maxsize=4096)
def partial_step(expr: sp.Expr, i: int) -> Step:
    """The scalar rule table's step tree for ``d expr / d _ai`` (its ``result`` is raw)."""
    return differentiate(expr, arg_symbol(i))


@functools.lru_cache(maxsize=4096)
def partial(expr: sp.Expr, i: int, simplify: bool = True) -> sp.Expr:
    """``d expr / d _ai``, simplified for reading when asked, in stable forms (and with
    ``u**v*log(u)`` 0 where ``u**v`` is, see :func:`~symdiff.simplify.zero_power_logs`)."""
    result = partial_step(expr, i).result
    if simplify:  # where the simplified form keeps the accuracy in float64
        result = faithful_form(result, simplify_for_people(result, budget=CODE_BUDGET))
    return zero_power_logs(stable_forms(result))
