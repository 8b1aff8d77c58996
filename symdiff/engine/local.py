"""The local rules both scalar engines read: each operation's partial derivatives by its operands.

A :class:`Local` is one rule applied at one operation: its student-facing name (``"product"``,
``"power"``, ``"trigonometric"``, ...), its identity and the partial derivative of the operation
by each operand, written in the operands. The structural rules (sum, constant multiple, product,
quotient, power, piecewise) are here; the functions' rules are the rows of the registry, read
through :func:`symdiff.engine.rules.rule_for`. Forward mode (:mod:`symdiff.engine.forward`)
multiplies
each partial by its operand's derivative and adds them up (the chain rule); reverse mode
(:mod:`symdiff.engine.reverse`) multiplies each by the operation's adjoint and sends it to the
operand.
So the two engines cannot disagree on a rule: there is one copy of each.

A rule may also say how a person writes the derivative from its operands' derivatives
(:attr:`Local.combine`): the quotient rule as ``(f' g - f g')/g^2`` and the general power rule as
``u^v (v' ln(u) + v u'/u)``. It is the same sum of partials times derivatives, arranged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import sympy as sp

from ..errors import UnsupportedError
from ..simplify import quick
from .rules import rule_for

#: What each structural rule says, shown beside its step. Function rules carry their own identity.
IDENTITIES: dict[str, str] = {
    "constant": "the derivative of a constant is 0",
    "variable": "d/dx x = 1",
    "sum": "differentiate term by term",
    "difference": "(f - g)' = f' - g': differentiate term by term",
    "constant multiple": "(c f)' = c f'",
    "product": "(f g)' = f' g + f g'",
    "quotient": "(f/g)' = (f' g - f g')/g^2",
    "power": "d/du u^n = n u^(n-1)",
    "exponential": "d/du a^u = a^u ln(a)",
    "general power": "(u^v)' = u^v (v' ln(u) + v u'/u)",
    "chain": "(f(u))' = f'(u) u'",
    "piecewise": "differentiate each branch; the condition is kept",
    "simplify": "simplify the result",
}

#: The identity of the exponential rule at base 0, where ``0^u log(0)`` would be nan.
ZERO_BASE = "d/du 0^u = 0  (0^u = 0 for u > 0)"

Combine = Callable[[Sequence[sp.Expr | None]], sp.Expr]


@dataclass(frozen=True)
class Local:
    """One rule at one operation: ``partials[i]`` is d(operation)/d(operand i), in the operands.

    ``None`` marks an operand that must not vary (the order ``n`` of ``polygamma(n, u)``).
    ``combine``, when set, writes the derivative from the operands' derivatives the way the rule
    is taught; otherwise it is the sum of each partial times its operand's derivative.
    """

    rule: str
    partials: tuple[sp.Expr | None, ...]
    identity: str = ""
    combine: Combine | None = None

    def explanation(self) -> str:
        """The identity shown beside the rule."""
        return self.identity or IDENTITIES.get(self.rule, "")

    def derivative(self, inner: Sequence[sp.Expr | None]) -> sp.Expr:
        """The operation's derivative given each operand's (``None``: the operand is constant).

        The chain rule: the sum of partial times derivative, or the rule's own arrangement.
        """
        if self.combine is not None:
            return self.combine(inner)
        return quick.addition(
            [quick.product(p, d) for p, d in zip(self.partials, inner, strict=True)
             if d is not None])


def sum_rule(terms: Sequence[sp.Expr]) -> Local:
    """``f_1 + f_2 + ...``: every partial is 1."""
    return Local("sum", tuple(sp.S.One for _ in terms))


def signed_sum_rule(signs: Sequence[int]) -> Local:
    """``f_1 + f_2 - f_3 ...`` as written: the partial by each term is its sign (1 or -1); the
    difference rule when a term is subtracted, else the sum rule."""
    rule = "difference" if any(s < 0 for s in signs) else "sum"
    return Local(rule, tuple(sp.Integer(s) for s in signs))


def constant_multiple(constant: sp.Expr) -> Local:
    """``c * f`` with ``c`` constant: the one partial (by ``f``) is ``c``."""
    return Local("constant multiple", (constant,))


def product_rule(factors: Sequence[sp.Expr], constant: Sequence[bool] = ()) -> Local:
    """``f_1 f_2 ...``: the partial by each factor is the product of the others. When one of
    two factors is constant (``constant`` flags, as reverse mode's binary products have them)
    the rule is the constant multiple rule."""
    if len(factors) == 2:  # (``Mul`` of one factor is that factor; of 1 alone, 1)
        partials = (factors[1], factors[0])
    else:
        partials = tuple(quick.multiplication([*factors[:i], *factors[i + 1 :]])
                         for i in range(len(factors)))
    name = "constant multiple" if len(factors) == 2 and any(constant) else "product"
    return Local(name, partials)


def reciprocal_product(factors: Sequence[sp.Expr]) -> sp.Expr:
    """The product of ``1/f`` over denominator factors ``f = g**-k`` (``g**k`` each): the
    denominator ``g`` of the quotient rule, SymPy's node built without re-evaluating a power
    of a sum (:mod:`symdiff.simplify.quick`)."""
    return quick.multiplication([quick.power(f.base, -f.exp) for f in factors])


def quotient_rule(numerator: sp.Expr, denominator: sp.Expr) -> Local:
    """``f / g``: partials ``1/g`` and ``-f/g^2``, written ``(f' g - f g')/g^2``."""

    reciprocal_square = quick.power(denominator, sp.Integer(-2))

    def combine(inner: Sequence[sp.Expr | None]) -> sp.Expr:
        top, bottom = (sp.S.Zero if d is None else d for d in inner)
        difference = quick.addition([quick.product(top, denominator),
                                     quick.negative(quick.product(numerator, bottom))])
        return quick.product(difference, reciprocal_square)

    partials = (quick.power(denominator, sp.S.NegativeOne),
                quick.product(quick.negative(numerator), reciprocal_square))
    return Local("quotient", partials, combine=combine)


def power_rule(
    base: sp.Expr, exponent: sp.Expr, base_varies: bool, exponent_varies: bool,
    value: sp.Expr | None = None,
) -> Local:
    """``u ** v``: the power rule (``n u^(n-1)``) when only the base varies, the exponential
    rule (``a^u ln(a)``; 0 for base 0, where ``0^u`` is 0 for u > 0) when only the exponent
    does, the general power rule when both do. The partial by an operand that does not vary is
    0 (nothing needs it). ``value`` is ``u ** v`` as already built, if at hand."""
    power = quick.power(base, exponent) if value is None else value
    by_base = quick.product(exponent, quick.power(base, exponent - 1)) if base_varies else sp.S.Zero
    if not exponent_varies:
        return Local("power", (by_base, sp.S.Zero))
    if not base_varies and base.is_zero:
        return Local("exponential", (sp.S.Zero, sp.S.Zero), ZERO_BASE)
    log = sp.log(base)
    by_exponent = quick.product(power, log)
    if not base_varies:
        return Local("exponential", (by_base, by_exponent))

    def combine(inner: Sequence[sp.Expr | None]) -> sp.Expr:
        du, dv = (sp.S.Zero if d is None else d for d in inner)
        by_u = quick.product(quick.product(exponent, du), quick.power(base, sp.S.NegativeOne))
        return quick.product(power, quick.addition([quick.product(dv, log), by_u]))

    return Local("general power", (by_base, by_exponent), combine=combine)


def piecewise_rule(conditions: Sequence[sp.Boolean]) -> Local:
    """``Piecewise((f_1, c_1), ...)``: the partial by branch ``i`` is 1 where ``c_i`` holds (and
    no earlier condition), else 0; written as the piecewise of the branches' derivatives."""
    partials = tuple(
        sp.Piecewise(*((1 if j == i else 0, c) for j, c in enumerate(conditions)))
        for i in range(len(conditions))
    )

    def combine(inner: Sequence[sp.Expr | None]) -> sp.Expr:
        branches = (sp.S.Zero if d is None else d for d in inner)
        return sp.Piecewise(*zip(branches, conditions, strict=True))

    return Local("piecewise", partials, combine=combine)


def function_rule(func: type, args: Sequence[sp.Expr]) -> Local:
    """A function of the rule table (:mod:`symdiff.registry`): its row's name, identity and
    partials at ``args``."""
    rule = rule_for(func)
    if rule is None:
        raise UnsupportedError(f"no derivative rule for {func.__name__}")
    return Local(rule.name, tuple(rule.partials(*args)), rule.identity)


def base_log_rule(argument: sp.Expr, base: sp.Expr) -> Local:
    """``log(u, b)`` with a constant base ``b``: the partial in ``u`` is ``1/(u ln b)``."""
    return Local("logarithm", (1 / (argument * sp.log(base)), None), "d/du log_b(u) = 1/(u ln b)")


def operation_rule(func: type, operands: Sequence[sp.Expr], value: sp.Expr) -> Local:
    """The rule of one operation ``value = func(*operands)`` whose operands are names or
    constants (reverse mode's linearised nodes: a product has two factors). An operand varies
    when it has a free symbol."""
    varies = [bool(getattr(o, "free_symbols", ())) for o in operands]
    if func is sp.Add:
        return sum_rule(operands)
    if func is sp.Mul:
        return product_rule(operands, [not v for v in varies])
    if func is sp.Pow:
        base, exponent = operands
        return power_rule(base, exponent, varies[0], varies[1], value)
    return function_rule(func, operands)
