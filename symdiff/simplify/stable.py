"""Exact rewrites to numerically stable functions, for the generated code (:func:`stable_forms`).

``log(1 + exp(u))`` is ``softplus(u)``, ``exp(u)/(1 + exp(u))`` is ``sigmoid(u)``, ``exp(u) - 1``
is ``expm1(u)``, ...: equal values, but finite and accurate where the written form overflows or
cancels. Each rewrite is a :class:`~sympy.codegen.rewriting.ReplaceOptim` in
:data:`STABLE_REWRITES`.
"""

from __future__ import annotations

import sympy as sp
from sympy.codegen.cfunctions import expm1, log1p
from sympy.codegen.numpy_nodes import logaddexp
from sympy.codegen.rewriting import ReplaceOptim

from ..functions import sigmoid, softplus
from .dag import has_type, replace

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


def _sigmoid_offset(expr: sp.Expr) -> tuple[sp.Expr, int] | None:
    """``(u, s)`` when ``expr`` is a sum holding ``1 - sigmoid(u)`` (``s = 1``) or
    ``sigmoid(u) - 1`` (``s = -1``), else None."""
    if not expr.is_Add:
        return None
    for sign in (1, -1):
        if sp.Integer(sign) not in expr.args:
            continue
        for term in expr.args:
            candidate = -term if sign == 1 else term
            if isinstance(candidate, sigmoid):
                return candidate.args[0], sign
    return None


def _complement(expr: sp.Add) -> sp.Expr:
    """``1 - sigmoid(u) + w`` -> ``sigmoid(-u) + w`` (and ``sigmoid(u) - 1`` -> ``-sigmoid(-u)``):
    no cancellation where ``sigmoid(u)`` rounds to 1."""
    u, sign = _sigmoid_offset(expr)  # type: ignore[misc]
    pair = {sp.Integer(sign), -sign * sigmoid(u)}
    rest = list(expr.args)
    for item in pair:
        rest.remove(item)
    return sp.Add(*rest, sign * sigmoid(-u))


def _log_of_sigmoid(expr: sp.Expr) -> sp.Expr | None:
    """``u`` when ``expr`` is ``log(sigmoid(u))``, else None."""
    if isinstance(expr, sp.log) and isinstance(expr.args[0], sigmoid):
        return expr.args[0].args[0]
    return None


_complement_opt = ReplaceOptim(lambda e: _sigmoid_offset(e) is not None, _complement)
# log(sigmoid(u)) = -log(1 + exp(-u)) = -softplus(-u): finite for every u (log(1 - sigmoid(u))
# is log(sigmoid(-u)) once the complement is taken, so it becomes -softplus(u)).
_log_sigmoid_opt = ReplaceOptim(
    lambda e: _log_of_sigmoid(e) is not None, lambda e: -softplus(-_log_of_sigmoid(e))
)
_log1p_sigmoid_opt = ReplaceOptim(
    lambda e: isinstance(e, log1p) and isinstance(-e.args[0], sigmoid),
    lambda e: -softplus((-e.args[0]).args[0]),
)
STABLE_REWRITES = (
    _softplus_opt,
    _logaddexp_opt,
    _sigmoid_ratio_opt,
    _sigmoid_opt,
    _complement_opt,
    _log_sigmoid_opt,
    _log1p_sigmoid_opt,
    _log1p_opt,
    _expm1_opt,
)



def stable_forms(expr: sp.Expr) -> sp.Expr:
    """Exact rewrites to stable forms: ``log(1 + exp(u))`` -> ``softplus(u)``,
    ``log(exp(a) + exp(b))`` -> ``logaddexp(a, b)``,
    ``exp(u)/(1 + exp(u))`` and ``1/(1 + exp(-u))`` -> ``sigmoid(u)``,
    ``1 - sigmoid(u)`` -> ``sigmoid(-u)``, ``log(sigmoid(u))`` -> ``-softplus(-u)`` (so
    ``log(1 - sigmoid(u))`` -> ``-softplus(u)``), ``log(1 + u)`` -> ``log1p(u)``,
    ``exp(u) - 1`` -> ``expm1(u)``."""
    if not has_type(expr, sp.exp, sp.log, sigmoid):
        return expr
    for rewrite in STABLE_REWRITES:  # SymPy's ``optimize``, each distinct node visited once
        expr = replace(expr, rewrite.query, rewrite.value)
    return expr
