"""Simplification policy and common-subexpression elimination. Pure functions of SymPy trees.

Two audiences: people read :func:`simplify_for_people` (SymPy's ``simplify``, bounded by size
so a large expression cannot stall a build); the machine gets :func:`stable_forms` (exact rewrites
to numerically stable functions) and :func:`shared_subexpressions` (CSE across every output at
once, with deterministic temporary names ``_t0, _t1, ...``).
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp
from sympy.codegen.cfunctions import expm1, log1p
from sympy.codegen.numpy_nodes import logaddexp
from sympy.codegen.rewriting import ReplaceOptim, optimize

from .functions import sigmoid, softplus

#: ``simplify`` is only tried on expressions up to this many operations; beyond it SymPy's
#: heuristics can take minutes, and a cheaper normalisation is used instead.
SIMPLIFY_MAX_OPS = 80

#: Prefix of generated temporaries. User names start with a letter, so they never collide.
TEMP_PREFIX = "_t"

_u = sp.Wild("u")
_c = sp.Wild("c", properties=[lambda k: not k.has(sp.exp)])
_softplus_opt = ReplaceOptim(sp.log(1 + sp.exp(_u)), softplus(_u))
_sigmoid_opt = ReplaceOptim(1 / (1 + sp.exp(-_u)), sigmoid(_u))
_sigmoid_ratio_opt = ReplaceOptim(_c * sp.exp(_u) / (sp.exp(_u) + 1), _c * sigmoid(_u))
_log1p_opt = ReplaceOptim(
    lambda e: isinstance(e, sp.log) and e.args[0].is_Add and sp.S.One in e.args[0].args,
    lambda e: log1p(e.args[0] - 1),
)


def _is_exp_minus_one(expr: sp.Expr) -> bool:
    return expr.is_Add and sp.S.NegativeOne in expr.args and any(
        isinstance(a, sp.exp) for a in expr.args
    )


def _exp_minus_one(expr: sp.Add) -> sp.Expr:
    first = next(a for a in expr.args if isinstance(a, sp.exp))
    rest = [a for a in expr.args if a is not first and a != sp.S.NegativeOne]
    return sp.Add(expm1(first.args[0]), *rest)


def _is_log_of_two_exps(expr: sp.Expr) -> bool:
    if not isinstance(expr, sp.log) or not expr.args[0].is_Add:
        return False
    terms = expr.args[0].args
    return len(terms) == 2 and all(isinstance(t, sp.exp) for t in terms)


_logaddexp_opt = ReplaceOptim(
    _is_log_of_two_exps, lambda e: logaddexp(*(t.args[0] for t in e.args[0].args))
)


# SymPy's own expm1_opt factors polynomials and takes minutes on exp(1000*x); this one is a
# single pass: an Add holding exp(u) and -1 gets expm1(u) instead.
_expm1_opt = ReplaceOptim(_is_exp_minus_one, _exp_minus_one)
STABLE_REWRITES = (
    _softplus_opt,
    _logaddexp_opt,
    _sigmoid_ratio_opt,
    _sigmoid_opt,
    _log1p_opt,
    _expm1_opt,
)


def _ops(expr: sp.Expr) -> int:
    return int(sp.count_ops(expr))


def simplify_for_people(expr: sp.Expr, max_ops: int = SIMPLIFY_MAX_OPS) -> sp.Expr:
    """A simpler equal form of ``expr``, never longer than the original."""
    if expr.is_Atom:
        return expr
    size = _ops(expr)
    if size > max_ops:
        candidate = sp.factor_terms(expr)
    else:
        try:
            candidate = sp.simplify(expr)
        except (ValueError, TypeError, ArithmeticError, RecursionError):
            # SymPy's heuristics can rewrite a constant into a form that Max/Min reject as
            # "not comparable" (seen: tan(tanh(1/2)) inside a Max); keep the unsimplified form.
            return expr
        if candidate.has(sp.Piecewise) and not expr.has(sp.Piecewise):
            candidate = expr  # simplify turns Heaviside/Max into Piecewise: not simpler to read
    return candidate if _ops(candidate) <= size else expr


def stable_forms(expr: sp.Expr) -> sp.Expr:
    """Exact rewrites to stable forms: ``log(1 + exp(u))`` -> ``softplus(u)``,
    ``log(exp(a) + exp(b))`` -> ``logaddexp(a, b)``,
    ``exp(u)/(1 + exp(u))`` and ``1/(1 + exp(-u))`` -> ``sigmoid(u)``, ``log(1 + u)`` ->
    ``log1p(u)``, ``exp(u) - 1`` -> ``expm1(u)``."""
    if not expr.has(sp.exp, sp.log):
        return expr
    return optimize(expr, STABLE_REWRITES)


def shared_subexpressions(
    exprs: Sequence[sp.Expr],
) -> tuple[list[tuple[sp.Symbol, sp.Expr]], list[sp.Expr]]:
    """CSE over all ``exprs`` together: (assignments in evaluation order, reduced outputs)."""
    names = sp.numbered_symbols(TEMP_PREFIX, real=True)
    assignments, reduced = sp.cse(list(exprs), symbols=names, order="canonical")
    return list(assignments), list(reduced)
