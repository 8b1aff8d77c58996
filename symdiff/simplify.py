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

# The rewrites test the tree's structure directly: a Wild pattern is tried at every node and
# made the log-sum-exp of 1,000 variables spend seconds here.


def _one_plus_exp(expr: sp.Expr) -> sp.Expr | None:
    """``u`` when ``expr`` is ``1 + exp(u)``, else None."""
    if expr.is_Add and len(expr.args) == 2 and sp.S.One in expr.args:
        other = expr.args[1] if expr.args[0] == sp.S.One else expr.args[0]
        if isinstance(other, sp.exp):
            return other.args[0]
    return None


def _is_softplus(expr: sp.Expr) -> bool:
    return isinstance(expr, sp.log) and _one_plus_exp(expr.args[0]) is not None


def _reciprocal_one_plus_exp(expr: sp.Expr) -> sp.Expr | None:
    """``u`` when ``expr`` is ``1/(1 + exp(u))``, else None."""
    if expr.is_Pow and expr.exp == sp.S.NegativeOne:
        return _one_plus_exp(expr.base)
    return None


def _sigmoid_ratio_parts(expr: sp.Expr) -> tuple[sp.Expr, list[sp.Expr]] | None:
    """``(u, other factors)`` when ``expr`` is ``c*exp(u)/(1 + exp(u))`` with no exp in ``c``."""
    if not expr.is_Mul:
        return None
    for factor in expr.args:
        u = _reciprocal_one_plus_exp(factor)
        if u is None or sp.exp(u) not in expr.args:
            continue
        numerator = sp.exp(u)
        others = [a for a in expr.args if a is not factor and a != numerator]
        if len(others) == len(expr.args) - 2 and not any(o.has(sp.exp) for o in others):
            return u, others
    return None


_softplus_opt = ReplaceOptim(_is_softplus, lambda e: softplus(_one_plus_exp(e.args[0])))
_sigmoid_opt = ReplaceOptim(
    lambda e: _reciprocal_one_plus_exp(e) is not None,
    lambda e: sigmoid(-_reciprocal_one_plus_exp(e)),
)


def _sigmoid_ratio(expr: sp.Mul) -> sp.Expr:
    u, others = _sigmoid_ratio_parts(expr)  # type: ignore[misc]
    return sp.Mul(*others, sigmoid(u))


_sigmoid_ratio_opt = ReplaceOptim(lambda e: _sigmoid_ratio_parts(e) is not None, _sigmoid_ratio)
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
