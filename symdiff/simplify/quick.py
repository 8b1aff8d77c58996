"""SymPy nodes built without SymPy's evaluation where its outcome is known in advance.

SymPy's constructors evaluate: ``Pow(b, e)`` asks ``b._eval_power(e)``, and for a sum ``b``
that asks whether a term is infinite, an assumption query that derives every fact of the term
(and of its factors) from scratch: about a millisecond per fresh node, most of the cost of
parsing a 1,000-name Rosenbrock function. :func:`power` gives exactly the node SymPy would build
(same class, arguments and flags) and skips the evaluation only where its outcome is known
without asking; everywhere else it is ``sp.Pow(base, exponent)``.
"""

from __future__ import annotations

import sympy as sp


def _sum_power_stays(base: sp.Expr, exponent: sp.Expr) -> bool:
    """Whether ``sp.Pow(base, exponent)`` is the unevaluated power: ``base`` a sum that is not a
    number and ``exponent`` an integer other than 0 and 1.

    Read from SymPy's ``Pow.__new__`` (1.12-1.14): with such operands, every rule before
    ``base._eval_power(exponent)`` passes (they need a number, a symbol or a base of 1), and
    ``Add._eval_power`` returns a value only for a number (excluded) or for a two-term sum with
    an infinite term written ``a + b*I`` (excluded: no term of the sum contains ``I``)."""
    if not (exponent.is_Integer and base.is_Add) or exponent.p in (0, 1) or base.is_number:
        return False
    return len(base.args) != 2 or not any(arg.has(sp.I) for arg in base.args)


def power(base: sp.Expr, exponent: sp.Expr) -> sp.Expr:
    """``sp.Pow(base, exponent)``, the same node, without SymPy's assumption queries where the
    evaluation cannot change it (:func:`_sum_power_stays`)."""
    if _sum_power_stays(base, exponent):
        return sp.Pow(base, exponent, evaluate=False)
    return sp.Pow(base, exponent)


def _staying_product(left: sp.Expr, right: sp.Expr) -> sp.Expr | None:
    """``Mul(left, right)`` unevaluated when that is what SymPy builds for a rational
    coefficient (not 0 or 1) and a staying power of a sum (:func:`_sum_power_stays`), else None.
    SymPy's ``Mul`` rebuilds every power factor with ``Pow(b, e)``, and distributes a
    coefficient only over a bare sum."""
    coefficient, factor = (left, right) if left.is_Rational else (right, left)
    if (
        coefficient.is_Rational
        and coefficient.p != 0
        and coefficient is not sp.S.One
        and factor.is_Pow
        and _sum_power_stays(*factor.args)
    ):
        return sp.Mul(coefficient, factor, evaluate=False)
    return None


def product(left: sp.Expr, right: sp.Expr) -> sp.Expr:
    """``left * right``, the same node, without re-evaluating a staying power of a sum
    (:func:`_staying_product`)."""
    made = _staying_product(left, right)
    return left * right if made is None else made


def rebuilt(func: type, args: tuple[sp.Expr, ...]) -> sp.Expr:
    """``func(*args)`` evaluated as SymPy would, through :func:`power` and
    :func:`_staying_product` where they apply."""
    if func is sp.Pow:
        return power(*args)
    if func is sp.Mul and len(args) == 2:
        made = _staying_product(*args)
        if made is not None:
            return made
    return func(*args)


def substitute(expr: sp.Basic, rule: dict) -> sp.Basic:
    """``expr.xreplace(rule)``, the same result, built through :func:`rebuilt`, and each
    distinct subexpression visited once (``xreplace`` walks the tree: a subexpression shared
    ``k`` times is rebuilt ``k`` times)."""
    memo: dict[sp.Basic, tuple[sp.Basic, bool]] = {}

    def walk(node: sp.Basic) -> tuple[sp.Basic, bool]:
        if node in rule:
            return rule[node], True
        if not node.args:
            return node, False
        done = memo.get(node)
        if done is None:
            walked = [walk(a) if isinstance(a, sp.Basic) else (a, False) for a in node.args]
            if any(changed for _, changed in walked):
                done = rebuilt(node.func, tuple(a for a, _ in walked)), True
            else:
                done = node, False
            memo[node] = done
        return done

    return walk(expr)[0] if rule else expr
