"""Simplification policy and common-subexpression elimination. Pure functions of SymPy trees.

Two audiences: people read :func:`simplify_for_people` (SymPy's ``simplify``, each of its phases
bounded by a :class:`Budget` of counts, so that no expression can stall a build); the machine
gets :func:`stable_forms` (exact rewrites to numerically stable functions),
:func:`zero_power_logs` (``u**v*log(u)`` is 0 where ``u**v`` is 0) and
:func:`shared_subexpressions` (CSE across every output at once, with deterministic temporary
names ``_t0, _t1, ...``).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass

import sympy as sp
from sympy.codegen.cfunctions import expm1, log1p
from sympy.codegen.numpy_nodes import _logaddexp, logaddexp
from sympy.codegen.rewriting import ReplaceOptim, optimize
from sympy.core.function import _mexpand, expand_log, expand_mul, expand_power_exp
from sympy.core.rules import Transform
from sympy.core.traversal import bottom_up
from sympy.functions.combinatorial.factorials import CombinatorialFunction
from sympy.functions.elementary.exponential import ExpBase
from sympy.functions.elementary.hyperbolic import HyperbolicFunction
from sympy.functions.elementary.piecewise import piecewise_simplify
from sympy.functions.elementary.trigonometric import TrigonometricFunction
from sympy.simplify.radsimp import collect_abs, fraction
from sympy.utilities.iterables import has_variety

from .functions import sigmoid, softplus

log = logging.getLogger(__name__)

#: ``simplify`` is only tried on expressions up to this many operations (SymPy's ``count_ops``);
#: beyond it a cheaper normalisation (``factor_terms``) is used instead. Smaller expressions go
#: through SymPy's phases one by one, each within :class:`Budget`.
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


# -- simplification for people, within budgets -----------------------------------------------
@dataclass(frozen=True)
class Budget:
    """What one call of :func:`simplify_for_people` may attempt, as counts of the expression.

    SymPy's ``simplify`` is a pipeline of rewriting phases, and some cost far more than the
    size of their input suggests: ``trigsimp`` factors polynomials in sines and cosines (and in
    hyperbolic functions rewritten with ``I``) at every node, ``cancel`` and ``expand`` multiply
    out products of sums. A phase runs only when its input is within its budget; otherwise it
    is skipped (its input is kept: equal, and never longer) and a ``logging`` debug line names
    the phase and the count over budget. The budgets are counts, never times, so the same input
    always gives the same output (and the same code); within every budget the result is exactly
    SymPy's ``simplify``.
    """

    #: The whole pipeline: SymPy's ``count_ops`` of the expression (beyond it, ``factor_terms``).
    ops: int = SIMPLIFY_MAX_OPS
    #: Phases that multiply out (``cancel``, ``expand``, the numerator of ``radsimp``): the
    #: number of terms the full expansion of their input can have (:func:`expansion_terms`),
    #: and for ``cancel`` (a polynomial gcd) the number of its polynomial generators
    #: (symbols, function calls and non-integer powers).
    terms: int = 200
    generators: int = 10
    #: ``trigsimp``: operations of its input, calls of trigonometric or hyperbolic functions in
    #: it, and terms of its numerator and denominator once expanded (it factors them).
    trig_ops: int = 40
    trig_calls: int = 6
    trig_terms: int = 12
    #: ... and with hyperbolic functions (rewritten with ``I``, they make SymPy expand angle
    #: sums and factor over the Gaussian rationals, by far its slowest path) at most this many
    #: terms, and distinct calls (one whose argument is a sum counts three times).
    hyperbolic_terms: int = 6
    hyperbolic_calls: int = 3
    #: The other phases whose cost grows quickly (``together``, ``exptrigsimp``, ``combsimp``,
    #: ``radsimp``, the rewrites SymPy leaves to ``Piecewise`` and other functions): operations
    #: of their input.
    other_ops: int = 60


_HANDLED = (sp.Add, sp.Mul, sp.Pow, ExpBase)
_TRIG = (TrigonometricFunction, HyperbolicFunction)
_MEASURE = sp.count_ops
_KWARGS = {"ratio": 1.7, "measure": _MEASURE, "rational": False, "inverse": False, "doit": True}
_HOLLOW_MUL = Transform(
    lambda x: sp.Mul(*x.args),
    lambda x: x.is_Mul
    and len(x.args) == 2
    and x.args[0].is_Number
    and x.args[1].is_Add
    and x.is_commutative,
)


def operation_nodes(expr: sp.Basic) -> int:
    """Operation nodes of the tree (a product of k factors is one node). Linear time, unlike
    ``sympy.count_ops``, which rebuilds fractions."""
    count, pending = 0, [expr]
    while pending:
        node = pending.pop()
        if node.args:
            count += 1
            pending.extend(node.args)
    return count


def expansion_terms(expr: sp.Basic, cap: int = 10**6) -> int:
    """An upper bound of the number of terms of ``expand(expr)`` (at most ``cap``), counted
    without expanding: a sum adds the counts of its terms, a product multiplies those of its
    factors, a sum of ``t`` terms to an integer power ``k`` has ``C(t + k - 1, k)`` monomials."""
    memo: dict[sp.Basic, int] = {}

    def terms(e: sp.Basic) -> int:
        if e not in memo:
            if e.is_Add:
                n = sum(terms(a) for a in e.args)
            elif e.is_Mul:
                n = 1
                for a in e.args:
                    n = min(n * terms(a), cap)
            elif e.is_Pow and e.exp.is_Integer and e.base.is_Add:
                k = abs(int(e.exp))
                n = cap if k > 64 else math.comb(terms(e.base) + k - 1, k)
            else:
                n = 1
            memo[e] = min(n, cap)
        return memo[e]

    return terms(expr)


def _generators(expr: sp.Basic) -> int:
    """How many generators a polynomial form of ``expr`` has, at most: its symbols, function
    calls and powers with other than integer exponents."""
    calls = expr.atoms(sp.Function)
    powers = {p for p in expr.atoms(sp.Pow) if not p.exp.is_Integer}
    return len(expr.free_symbols) + len(calls) + len(powers)


def _shorter(*choices: sp.Basic) -> sp.Basic:
    """The choice with the fewest operations, the first on a tie (SymPy's ``shorter``)."""
    if not has_variety(choices):
        return choices[0]
    return min(choices, key=_MEASURE)


def _done(expr: sp.Basic) -> sp.Basic:
    value = expr.doit()
    return _shorter(value, collect_abs(value))


class _Simplifier:
    """SymPy 1.14's ``simplify`` with its default options, for real scalar expressions, phase
    by phase, each phase checked against a :class:`Budget`. Steps that cannot apply to these
    expressions (sums, integrals, products, units, matrices, non-commutative symbols, Bessel
    functions, Kronecker deltas, floats to rationalise) are left out."""

    def __init__(self, budget: Budget):
        self.budget = budget

    # -- budgets -------------------------------------------------------------------------------
    def _within(self, phase: str, expr: sp.Basic, count: int, limit: int, what: str) -> bool:
        if count <= limit:
            return True
        log.debug("simplify: %s skipped, %d %s > budget %d: %s", phase, count, what, limit,
                  _brief(expr))
        return False

    def expandable(self, phase: str, expr: sp.Basic) -> bool:
        numerator, denominator = expr.as_numer_denom()
        count = expansion_terms(numerator) + expansion_terms(denominator)
        if not self._within(phase, expr, count, self.budget.terms, "terms once expanded"):
            return False
        return phase != "cancel" or self._within(
            phase, expr, _generators(expr), self.budget.generators, "polynomial generators"
        )

    def trig(self, phase: str, expr: sp.Basic) -> bool:
        b = self.budget
        numerator, denominator = expr.as_numer_denom()
        terms = expansion_terms(numerator) + expansion_terms(denominator)
        if expr.has(HyperbolicFunction):
            distinct = expr.atoms(*_TRIG)
            calls = sum(3 if f.args[0].is_Add else 1 for f in distinct)
            most_calls, most_terms = b.hyperbolic_calls, b.hyperbolic_terms
        else:
            calls = sum(1 for node in sp.preorder_traversal(expr) if isinstance(node, _TRIG))
            most_calls, most_terms = b.trig_calls, b.trig_terms
        return (
            self._within(phase, expr, operation_nodes(expr), b.trig_ops, "operations")
            and self._within(phase, expr, calls, most_calls, "trigonometric calls")
            and self._within(phase, expr, terms, most_terms, "terms once expanded")
        )

    def small(self, phase: str, expr: sp.Basic) -> bool:
        return self._within(phase, expr, operation_nodes(expr), self.budget.other_ops, "operations")

    # -- the pipeline --------------------------------------------------------------------------
    def __call__(self, expr: sp.Basic) -> sp.Basic:
        if isinstance(expr, sp.Expr) and expr.is_zero:
            return sp.S.Zero if not expr.is_Number else expr
        if expr.is_Atom:
            return expr
        own = self._own_rule(expr)
        if own is not None:
            return own
        original = expr = collect_abs(sp.signsimp(expr))
        if not isinstance(expr, sp.Basic) or not expr.args:
            return expr
        # the arguments of functions first, each through the whole pipeline
        expr = expr.replace(
            lambda x: isinstance(x, sp.Expr) and x.args and not isinstance(x, _HANDLED),
            lambda x: x.func(*[self(a) for a in x.args]),
            simultaneous=False,
        )
        if not isinstance(expr, _HANDLED):
            return _done(expr)
        expr = bottom_up(expr, lambda w: getattr(w, "normal", lambda: w)())
        expr = sp.Mul(*sp.powsimp(expr).as_content_primitive())
        expr1 = expr
        if self.expandable("cancel", expr):
            cancelled = sp.cancel(expr)
            expr1 = cancelled
            if self.expandable("expand", cancelled) and self.expandable("cancel", cancelled):
                expr1 = _shorter(cancelled, _mexpand(cancelled).cancel())
        expr2 = expr1
        if self.small("together", expr) and self.small("together", expr1):
            expr2 = _shorter(sp.together(expr, deep=True), sp.together(expr1, deep=True))
        expr = _shorter(expr2, expr1, expr)
        expr = sp.factor_terms(expr, sign=False)
        if expr.has(sp.sign):
            expr = expr.rewrite(sp.Abs)
        if expr.has(sp.Piecewise):
            folded = self._piecewise(expr)
            if folded is not None:
                return folded
        expr = sp.hyperexpand(expr)
        if expr.has(*_TRIG) and self.trig("trigsimp", expr):
            expr = sp.trigsimp(expr, deep=True)
        if expr.has(sp.log):
            expr = _shorter(expand_log(expr, deep=True), sp.logcombine(expr))
        if expr.has(CombinatorialFunction, sp.gamma) and self.small("combsimp", expr):
            expr = sp.combsimp(expr)
        short = _shorter(sp.powsimp(expr, combine="exp", deep=True), sp.powsimp(expr), expr)
        if self.expandable("cancel", short):
            short = _shorter(short, sp.cancel(short))
        if self.expandable("expand", short):
            short = _shorter(short, sp.factor_terms(short), expand_power_exp(expand_mul(short)))
        else:
            short = _shorter(short, sp.factor_terms(short))
        if short.has(*_TRIG, ExpBase, sp.exp) and self.small("exptrigsimp", short):
            short = sp.exptrigsimp(short)
        expr = short.xreplace(_HOLLOW_MUL)
        numerator, denominator = expr.as_numer_denom()
        if denominator.is_Add and self.small("radsimp", denominator):
            n, d = fraction(sp.radsimp(1 / denominator, symbolic=False, max_terms=1))
            if n is not sp.S.One and self.expandable("radsimp", numerator * n):
                expr = (numerator * n).expand() / d
        if expr.could_extract_minus_sign():
            n, d = fraction(expr)
            if d != 0:
                expr = sp.signsimp(-n / (-d))
        if _MEASURE(expr) > _KWARGS["ratio"] * _MEASURE(original):
            expr = original
        return _done(expr)

    def _own_rule(self, expr: sp.Basic) -> sp.Basic | None:
        """What SymPy's ``simplify`` hands to the expression's own ``_eval_simplify``; None
        when it has none. ``log`` and ``logaddexp`` are done here with the budgeted pipeline
        for their arguments; other functions only when small."""
        if isinstance(expr, sp.log) and len(expr.args) == 1:
            candidate = expand_log(sp.log(self(expr.args[0])), deep=True)
            return min([candidate, expr], key=_MEASURE)
        if isinstance(expr, logaddexp):
            a, b = (self(x) for x in expr.args)
            candidate = _logaddexp(a, b)
            return candidate if candidate != _logaddexp(a, b, evaluate=False) else logaddexp(a, b)
        rule = getattr(expr, "_eval_simplify", None)
        if rule is None:
            return None
        return rule(**_KWARGS) if self.small(f"{type(expr).__name__} simplify", expr) else expr

    def _piecewise(self, expr: sp.Basic) -> sp.Basic | None:
        """SymPy's handling of a ``Piecewise``: fold, simplify the pieces, and stop there if a
        ``Piecewise`` is left (None: none left, carry on)."""
        if not self.small("piecewise_simplify", expr):
            return _done(expr)
        expr = _done(sp.piecewise_fold(expr))
        if not expr.has(sp.Piecewise):
            return None
        expr = sp.piecewise_fold(expr)
        if not expr.has(sp.Piecewise):
            return None
        expr = piecewise_simplify(expr, deep=True, doit=False)
        if not expr.has(sp.Piecewise):
            return None
        return _shorter(expr, sp.factor_terms(expr))


def _brief(expr: sp.Basic, limit: int = 120) -> str:
    text = sp.sstr(expr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _ops(expr: sp.Expr) -> int:
    return int(sp.count_ops(expr))


def simplify_for_people(
    expr: sp.Expr, max_ops: int = SIMPLIFY_MAX_OPS, budget: Budget | None = None
) -> sp.Expr:
    """A simpler equal form of ``expr``, never longer than the original: SymPy's ``simplify``
    with each phase within ``budget`` (``max_ops`` bounds the whole, see :class:`Budget`)."""
    if expr.is_Atom:
        return expr
    budget = budget or Budget(ops=max_ops)
    size = _ops(expr)
    if size > budget.ops:
        log.debug("simplify: only factor_terms, %d operations > budget %d: %s", size,
                  budget.ops, _brief(expr))
        candidate = sp.factor_terms(expr)
    else:
        try:
            candidate = _Simplifier(budget)(expr)
        except (ValueError, TypeError, ArithmeticError, RecursionError):
            # SymPy's heuristics can rewrite a constant into a form that Max/Min reject as
            # "not comparable" (seen: tan(tanh(1/2)) inside a Max); keep the unsimplified form.
            return expr
        if candidate.has(sp.Piecewise) and not expr.has(sp.Piecewise):
            candidate = expr  # simplify turns Heaviside/Max into Piecewise: not simpler to read
    return candidate if _ops(candidate) <= size else expr


# -- forms for the machine ---------------------------------------------------------------------
def stable_forms(expr: sp.Expr) -> sp.Expr:
    """Exact rewrites to stable forms: ``log(1 + exp(u))`` -> ``softplus(u)``,
    ``log(exp(a) + exp(b))`` -> ``logaddexp(a, b)``,
    ``exp(u)/(1 + exp(u))`` and ``1/(1 + exp(-u))`` -> ``sigmoid(u)``,
    ``1 - sigmoid(u)`` -> ``sigmoid(-u)``, ``log(sigmoid(u))`` -> ``-softplus(-u)`` (so
    ``log(1 - sigmoid(u))`` -> ``-softplus(u)``), ``log(1 + u)`` -> ``log1p(u)``,
    ``exp(u) - 1`` -> ``expm1(u)``."""
    if not expr.has(sp.exp, sp.log, sigmoid):
        return expr
    return optimize(expr, STABLE_REWRITES)


def _log_polynomial(factor: sp.Expr, lg: sp.Expr, base: sp.Expr) -> bool:
    """``factor`` is a polynomial in ``lg = log(base)`` whose coefficients do not hold ``base``:
    where ``lg`` is taken as 0 it stays finite."""
    for term in sp.Add.make_args(factor):
        for part in sp.Mul.make_args(term):
            if part == lg or (part.is_Pow and part.base == lg and part.exp.is_Integer
                              and part.exp > 0):
                continue
            if part.has(base):
                return False
    return True


def zero_power_log(power: sp.Expr, base: sp.Expr) -> sp.Expr:
    """``log(base)`` as ``log(where(power == 0, 1, base))``, for a product with ``power`` (a
    power of ``base``): 0 where ``power`` is 0, as JAX's ``log(_replace_zero(x))`` in its rule
    ``d x**y/dy = x**y log(x)``, so that the product is 0 there and not ``0*(-inf) = nan``."""
    return sp.log(sp.Piecewise((sp.S.One, sp.Eq(power, 0)), (base, True)))


def _is_power_of(factor: sp.Expr, base: sp.Expr) -> bool:
    return factor == base or (factor.is_Pow and factor.base == base)


def _guard_mul(expr: sp.Mul) -> sp.Expr:
    """One product: each ``log(u)`` in polynomial factors guarded by the power of ``u``."""
    factors = list(expr.args)
    for lg in sorted(expr.atoms(sp.log), key=sp.default_sort_key):
        base = lg.args[0]
        powers = [f for f in factors if _is_power_of(f, base)]
        if base.is_number or not powers:
            continue
        power = powers[0] if len(powers) == 1 else sp.powsimp(sp.Mul(*powers))
        others = [f for f in factors if f not in powers]
        polynomial = [f.has(lg) and _log_polynomial(f, lg, base) for f in others]
        if not _is_power_of(power, base) or not any(polynomial):
            continue
        guard = {lg: zero_power_log(power, base)}
        others = [f.xreplace(guard) if p else f for f, p in zip(others, polynomial, strict=True)]
        factors = [power, *others]
    return sp.Mul(*factors)


def zero_power_logs(expr: sp.Expr) -> sp.Expr:
    """Products ``u**v * P(log(u))`` (``P`` a polynomial) with ``log(u)`` taken as 0 where
    ``u**v`` is 0, so their value at ``u = 0`` is the limit 0 (for ``v > 0``) and not
    ``0*(-inf) = nan``: the derivative ``d u**v/dv = u**v log(u)`` at ``u = 0`` is 0, as JAX
    computes it, and so are its derivatives, and ``x*log(x)`` at 0. Elsewhere nothing changes.
    For the generated code only: the readable form keeps ``log(u)``."""
    if not expr.has(sp.log):
        return expr
    bases = {lg.args[0] for lg in expr.atoms(sp.log)}
    if not any(b in bases or (b.is_Pow and b.base in bases) for b in _factors(expr)):
        return expr
    return expr.replace(lambda e: e.is_Mul and e.has(sp.log), _guard_mul)


def _factors(expr: sp.Expr) -> set[sp.Expr]:
    """Every factor of every product in ``expr``."""
    return {f for node in sp.preorder_traversal(expr) if node.is_Mul for f in node.args}


def shared_subexpressions(
    exprs: Sequence[sp.Expr],
) -> tuple[list[tuple[sp.Symbol, sp.Expr]], list[sp.Expr]]:
    """CSE over all ``exprs`` together: (assignments in evaluation order, reduced outputs)."""
    names = sp.numbered_symbols(TEMP_PREFIX, real=True)
    assignments, reduced = sp.cse(list(exprs), symbols=names, order="canonical")
    return list(assignments), list(reduced)
