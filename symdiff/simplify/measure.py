"""SymPy's ``count_ops`` measure, each distinct subexpression counted once: :func:`count_ops`.

``sympy.count_ops`` walks the tree and splits every product into numerator and denominator with
``fraction``, which builds each denominator power again (``Pow(b, 2)`` for ``b**-2``). For a sum
``b`` SymPy's ``Pow`` asks whether a term of ``b`` is infinite, an assumption query that, for a
term holding a nested quotient, clears every denominator below it: the count of a derivative of
``x/(1 + (x/(1 + ...)**2)**2)`` nested 20 deep took seconds, and each level doubled it. Here the
same count is made with the denominator powers built by :mod:`symdiff.simplify.quick` (SymPy's
nodes, without the queries), and memoised per distinct subexpression, so the count is linear in
the size of the expression's DAG. It is ``sympy.count_ops(expr)`` exactly (the simplifier's
measure: the forms it keeps are those SymPy's measure would keep).
"""

from __future__ import annotations

import sympy as sp
from sympy.core.function import Derivative
from sympy.core.operations import LatticeOp

from . import quick
from .postorder import bottom_up


def _negative_coefficient(expr: sp.Basic) -> bool:
    """SymPy's ``_coeff_isneg`` for scalar expressions: a negative number, or a product whose
    first factor is one."""
    if expr.is_Mul:
        expr = expr.args[0]
    return bool(expr.is_Number and expr.is_extended_negative)


def fraction(expr: sp.Expr, exact: bool = False) -> tuple[sp.Expr, sp.Expr]:
    """``sympy.fraction(expr, exact)``, the same two nodes: the factors with a negative
    exponent (and rational denominators) make the denominator, the rest the numerator; each
    product and power built by :mod:`symdiff.simplify.quick` (``exact``: the products left
    unevaluated, as SymPy leaves them)."""
    numerator: list[sp.Expr] = []
    denominator: list[sp.Expr] = []
    for term in sp.Mul.make_args(expr):
        if term.is_commutative and (term.is_Pow or isinstance(term, sp.exp)):
            base, exponent = term.as_base_exp()
            if exponent.is_negative:
                if exponent is sp.S.NegativeOne:
                    denominator.append(base)
                elif exact and not exponent.is_constant():
                    numerator.append(term)
                else:
                    denominator.append(quick.power(base, -exponent))
            elif exponent.is_positive:
                numerator.append(term)
            elif not exact and exponent.is_Mul:
                top, bottom = term.as_numer_denom()
                if top != 1:
                    numerator.append(top)
                denominator.append(bottom)
            else:
                numerator.append(term)
        elif term.is_Rational and not term.is_integer:
            if term.p != 1:
                numerator.append(sp.Integer(term.p))
            denominator.append(sp.Integer(term.q))
        else:
            numerator.append(term)
    if exact:
        return sp.Mul(*numerator, evaluate=False), sp.Mul(*denominator, evaluate=False)
    return quick.multiplication(numerator), quick.multiplication(denominator)


def _own(a: sp.Basic) -> tuple[int, list[sp.Basic]]:
    """The operations ``count_ops`` counts at node ``a`` itself, and the nodes it goes on to
    count (its loop body, for one node)."""
    ops = 0
    if a.is_Rational:
        if a is not sp.S.One:
            return int(a.p < 0) + int(a.q != 1), []
    elif a.is_Mul:
        if _negative_coefficient(a):
            ops += 1
            a = a.as_two_terms()[1] if a.args[0] is sp.S.NegativeOne else -a
        n, d = fraction(a)
        if n.is_Integer:
            return ops + 1 + int(n.p < 0), [d]
        if d is not sp.S.One:
            return ops + 1, ([] if d.is_Integer else [d]) + [n]
    elif a.is_Add:
        terms = list(a.args)
        negative = [_negative_coefficient(t) for t in terms]
        then = [-t if neg else t for t, neg in zip(terms, negative, strict=True)]
        ops = len(terms) - 1  # an ADD or a SUB between each two terms
        if all(negative):
            ops += 1  # -x - y: NEG + SUB
        return ops, then
    if a.is_Pow and a.exp is sp.S.NegativeOne:
        return ops + 1, [a.base]
    if a == sp.S.Exp1:
        return ops + 1, []
    if a.is_Pow and a.base == sp.S.Exp1:
        return ops + 1, [a.exp]
    if a.is_Mul or isinstance(a, LatticeOp):
        ops += len(a.args) - 1
    elif a.args and (a.is_Pow or a.is_Function or isinstance(a, (Derivative, sp.Integral,
                                                                   sp.Sum))):
        ops += 1
    return ops, ([] if a.is_Symbol else list(a.args))


def count_ops(expr: sp.Basic) -> int:
    """``sympy.count_ops(expr)`` (``visual=False``), each distinct subexpression counted once
    (iteratively: no recursion however deep ``expr`` is). Anything but a scalar expression is
    left to SymPy."""
    if not isinstance(expr, sp.Expr) or expr.is_Relational:
        return int(sp.count_ops(expr))
    parts: dict[sp.Basic, tuple[int, list[sp.Basic]]] = {}  # a node's own ops, its children

    def children(node: sp.Basic) -> list[sp.Basic]:
        if node not in parts:
            parts[node] = _own(node)
        return parts[node][1]

    def total_of(node: sp.Basic) -> int:
        own, below = parts[node]
        return own + sum(total[c] for c in below)

    total: dict[sp.Basic, int] = {}
    return bottom_up(expr, total, total_of, children)
