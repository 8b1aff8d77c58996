"""Simplification for people: SymPy's ``simplify``, phase by phase, each within a :class:`Budget`.

:func:`simplify_for_people` is what the readable derivative goes through; a phase whose input is
over its budget is skipped (its input kept) and logged at debug level on the
``symdiff.simplify`` logger.
"""

from __future__ import annotations

import logging

import sympy as sp
from sympy.codegen.numpy_nodes import _logaddexp, logaddexp
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

from .angles import with_masked_angles
from .budget import (
    SIMPLIFY_MAX_OPS,
    Budget,
    expansion_terms,
    operation_nodes,
    polynomial_degree,
    polynomial_generators,
)
from .literals import common_factors, keeps_literals
from .measure import count_ops

#: The package's name, as before the split: ``caplog``/``logging`` configuration keeps working.
log = logging.getLogger("symdiff.simplify")

_HANDLED = (sp.Add, sp.Mul, sp.Pow, ExpBase)
_TRIG = (TrigonometricFunction, HyperbolicFunction)
_MEASURE = count_ops
_KWARGS = {"ratio": 1.7, "measure": _MEASURE, "rational": False, "inverse": False, "doit": True}
_HOLLOW_MUL = Transform(
    lambda x: sp.Mul(*x.args),
    lambda x: x.is_Mul
    and len(x.args) == 2
    and x.args[0].is_Number
    and x.args[1].is_Add
    and x.is_commutative,
)


def _shorter(*choices: sp.Basic) -> sp.Basic:
    """The choice with the fewest operations, the first on a tie (SymPy's ``shorter``)."""
    if not has_variety(choices):
        return choices[0]
    return min(choices, key=_MEASURE)


def _done(expr: sp.Basic) -> sp.Basic:
    value = expr.doit()
    return _shorter(value, collect_abs(value))



def _gamma_ratio(expr: sp.Expr) -> bool:
    """Whether ``expr`` divides by a gamma or combinatorial function, what ``combsimp`` cancels
    (``gamma(x + 1)/gamma(x)``). It is run only then: on others (a Hessian of ``gamma(x) + ...``)
    its polynomial factoring can take minutes, depending on the forms SymPy's cache holds."""
    kinds = (CombinatorialFunction, sp.gamma)
    return any(
        node.is_Pow and node.exp.is_negative and node.base.has(*kinds)
        for node in sp.preorder_traversal(expr)
    )


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
                  _Brief(expr))
        return False

    def expandable(self, phase: str, expr: sp.Basic) -> bool:
        numerator, denominator = expr.as_numer_denom()
        count = expansion_terms(numerator) + expansion_terms(denominator)
        if not self._within(phase, expr, count, self.budget.terms, "terms once expanded"):
            return False
        if phase != "cancel":
            return True
        return self._within(
            phase, expr, polynomial_generators(expr), self.budget.generators,
            "polynomial generators",
        ) and self.low_degree(phase, expr)

    def low_degree(self, phase: str, expr: sp.Basic) -> bool:
        """Whether the polynomials a phase may build of ``expr`` (it factors or takes a gcd)
        stay within the degree budget (SymPy's are dense in each generator)."""
        return self._within(phase, expr, polynomial_degree(expr), self.budget.degree, "degrees")

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
            and self.low_degree(phase, expr)
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
                expanded = _mexpand(cancelled)
                if self.small("cancel of the expansion", expanded):
                    expr1 = _shorter(cancelled, expanded.cancel())
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
            expr = with_masked_angles(lambda e: sp.trigsimp(e, deep=True), expr)
        if expr.has(sp.log):
            expr = _shorter(expand_log(expr, deep=True), sp.logcombine(expr))
        if _gamma_ratio(expr) and self.small("combsimp", expr):
            expr = sp.combsimp(expr)
        short = _shorter(sp.powsimp(expr, combine="exp", deep=True), sp.powsimp(expr), expr)
        if self.expandable("cancel", short):
            short = _shorter(short, sp.cancel(short))
        if self.expandable("expand", short):
            short = _shorter(short, sp.factor_terms(short), expand_power_exp(expand_mul(short)))
        else:
            short = _shorter(short, sp.factor_terms(short))
        if short.has(*_TRIG, ExpBase, sp.exp) and self._within(
                "exptrigsimp", short, operation_nodes(short), self.budget.exptrig_ops,
                "operations") and self.low_degree("exptrigsimp", short):
            short = with_masked_angles(sp.exptrigsimp, short)
        expr = short.xreplace(_HOLLOW_MUL)
        numerator, denominator = expr.as_numer_denom()
        if (denominator.is_Add and self.small("radsimp", denominator)
                and self.low_degree("radsimp", expr)):
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
        if isinstance(expr, sp.Piecewise) and not _conditions_solvable(expr):
            return sp.Piecewise(*[(self(piece), condition) for piece, condition in expr.args])
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
        if _conditions_solvable(expr):
            expr = piecewise_simplify(expr, deep=True, doit=False)
            if not expr.has(sp.Piecewise):
                return None
        return _shorter(expr, sp.factor_terms(expr))


#: Comparisons one condition of a ``Piecewise`` may combine for SymPy to simplify it.
MAX_SOLVED_RELATIONS = 3


def _conditions_solvable(expr: sp.Basic) -> bool:
    """Whether every comparison in ``expr``'s conditions is rational in its variables, the only
    kind SymPy's ``piecewise_simplify`` solves right: it solves a periodic one over one period
    (``sin(x) < c`` became ``0 <= x <= 2*pi``) and one with an undecided constant by guesses;
    and whether each condition combines at most :data:`MAX_SOLVED_RELATIONS` comparisons (it
    rewrites conditions in normal forms, exponential in the number of ``&``/``|`` terms)."""
    for piecewise in expr.atoms(sp.Piecewise):
        for _, condition in piecewise.args:
            relations = condition.atoms(sp.core.relational.Relational)
            if len(relations) > MAX_SOLVED_RELATIONS:
                return False
            for relation in relations:
                difference = relation.lhs - relation.rhs
                if not difference.is_rational_function(*difference.free_symbols):
                    return False
                if any(not atom.is_Rational for atom in difference.atoms(sp.Number)):
                    return False
    return True


class _Brief:
    """``expr`` printed in at most ``limit`` characters, when a log line is written: printing a
    large expression costs seconds, and the debug lines are off unless asked for."""

    def __init__(self, expr: sp.Basic, limit: int = 120):
        self.expr, self.limit = expr, limit

    def __str__(self) -> str:
        text = sp.sstr(self.expr)
        return text if len(text) <= self.limit else text[: self.limit - 3] + "..."


def _ops(expr: sp.Expr) -> int:
    return count_ops(expr)


def simplify_for_people(
    expr: sp.Expr, max_ops: int = SIMPLIFY_MAX_OPS, budget: Budget | None = None
) -> sp.Expr:
    """A simpler equal form of ``expr``, never longer than the original: SymPy's ``simplify``
    with each phase within ``budget`` (``max_ops`` bounds the whole, see :class:`Budget`).

    A form whose numbers grow by more than a few digits (denominators cleared across nested
    levels) or leave float64's range is not taken (:func:`~symdiff.simplify.literals.
    keeps_literals`): the code would lose accuracy, or overflow, where the original form does
    not. Beyond :attr:`Budget.ops` operations only ``factor_terms`` is tried, and beyond
    :attr:`Budget.tree_ops` operations in its tree (a derivative of a deeply nested or traced
    expression shares its subexpressions, and every phase walks the tree) nothing is."""
    if expr.is_Atom:
        return expr
    budget = budget or Budget(ops=max_ops)
    tree = operation_nodes(expr, budget.tree_ops + 1)
    if tree > budget.tree_ops:
        log.debug("simplify: skipped, %d operations in the tree > budget %d", tree,
                  budget.tree_ops)
        return expr
    size = _ops(expr)
    if size > budget.ops:
        log.debug("simplify: only factor_terms, %d operations > budget %d: %s", size,
                  budget.ops, _Brief(expr))
        candidate = common_factors(expr)
    else:
        try:
            candidate = _Simplifier(budget)(expr)
        except (ValueError, TypeError, ArithmeticError, RecursionError):
            # SymPy's heuristics can rewrite a constant into a form that Max/Min reject as
            # "not comparable" (seen: tan(tanh(1/2)) inside a Max); keep the unsimplified form.
            return expr
        if candidate.has(sp.Piecewise) and not expr.has(sp.Piecewise):
            candidate = expr  # simplify turns Heaviside/Max into Piecewise: not simpler to read
        if not keeps_literals(expr, candidate):
            log.debug("simplify: its numbers grew, only factor_terms: %s", _Brief(expr))
            candidate = common_factors(expr)
    if not keeps_literals(expr, candidate):
        log.debug("simplify: its numbers grew, kept as it is: %s", _Brief(expr))
        return expr
    return candidate if _ops(candidate) <= size else expr
