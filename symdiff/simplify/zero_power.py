"""``u**v * log(u)`` as 0 where ``u**v`` is 0, for the generated code (:func:`zero_power_logs`)."""

from __future__ import annotations

import sympy as sp

from .dag import atoms_of, contains, distinct_nodes, has_type, replace, substitute


def _log_polynomial(factor: sp.Expr, lg: sp.Expr, base: sp.Expr) -> bool:
    """``factor`` is a polynomial in ``lg = log(base)`` whose coefficients do not hold ``base``:
    where ``lg`` is taken as 0 it stays finite."""
    for term in sp.Add.make_args(factor):
        for part in sp.Mul.make_args(term):
            if part == lg or (part.is_Pow and part.base == lg and part.exp.is_Integer
                              and part.exp > 0):
                continue
            if contains(part, base):
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
    for lg in sorted(atoms_of(expr, sp.log), key=sp.default_sort_key):
        base = lg.args[0]
        powers = [f for f in factors if _is_power_of(f, base)]
        if base.is_number or not powers:
            continue
        power = powers[0] if len(powers) == 1 else sp.powsimp(sp.Mul(*powers))
        others = [f for f in factors if f not in powers]
        polynomial = [contains(f, lg) and _log_polynomial(f, lg, base) for f in others]
        if not _is_power_of(power, base) or not any(polynomial):
            continue
        guard = {lg: zero_power_log(power, base)}
        others = [substitute(f, guard) if p else f
                  for f, p in zip(others, polynomial, strict=True)]
        factors = [power, *others]
    return sp.Mul(*factors)


def zero_power_logs(expr: sp.Expr) -> sp.Expr:
    """Products ``u**v * P(log(u))`` (``P`` a polynomial) with ``log(u)`` taken as 0 where
    ``u**v`` is 0, so their value at ``u = 0`` is the limit 0 (for ``v > 0``) and not
    ``0*(-inf) = nan``: the derivative ``d u**v/dv = u**v log(u)`` at ``u = 0`` is 0, as JAX
    computes it, and so are its derivatives, and ``x*log(x)`` at 0. Elsewhere nothing changes.
    For the generated code only: the readable form keeps ``log(u)``."""
    if not has_type(expr, sp.log):
        return expr
    bases = {lg.args[0] for lg in atoms_of(expr, sp.log)}
    if not any(b in bases or (b.is_Pow and b.base in bases) for b in _factors(expr)):
        return expr
    with_log: set[sp.Basic] = set()  # the subexpressions holding a log, children first
    for node in distinct_nodes([expr]):
        if isinstance(node, sp.log) or any(a in with_log for a in node.args):
            with_log.add(node)

    def query(e: sp.Basic) -> bool:
        return e.is_Mul and (e in with_log or has_type(e, sp.log))

    return replace(expr, query, _guard_mul)


def _factors(expr: sp.Expr) -> set[sp.Expr]:
    """Every factor of every product in ``expr``."""
    return {f for node in distinct_nodes([expr]) if node.is_Mul for f in node.args}
