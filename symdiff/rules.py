"""The rule table: one entry per function, read like a calculus handout.

Each :class:`Rule` names the rule a student reads, states the identity, and gives the partial
derivative of ``f`` with respect to each of its arguments, evaluated at those arguments. The chain
rule (multiplying by the inner derivatives and summing) is applied once, in
:mod:`symdiff.differentiate`, never inside an entry. Adding a function is one entry here plus
one row of its test domain.

Conventions at non-differentiable points (documented in the README): ``abs'(0) = 0``,
``sign' = 0``, ``relu'(0) = 0``; for ``max``/``min`` the gradient is split evenly among tied
arguments (``max(x, 0)'`` at 0 is 1/2).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sympy as sp
from sympy.codegen.cfunctions import expm1, log1p
from sympy.codegen.numpy_nodes import logaddexp

from .functions import relu, sigmoid, softplus, tie_share

Partials = Callable[..., tuple[sp.Expr | None, ...]]


@dataclass(frozen=True)
class Rule:
    """A differentiation rule for one function.

    ``partials(*args)`` returns one derivative per argument; ``None`` marks an argument that must
    not depend on the differentiation variable (such as the order ``n`` of ``polygamma(n, u)``).
    """

    name: str
    identity: str
    partials: Partials


def unary(derivative: Callable[[sp.Expr], sp.Expr]) -> Partials:
    """Adapt ``u -> f'(u)`` to the table's ``*args -> (partials...)`` form."""
    return lambda u: (derivative(u),)


def _tie_shares(*args: sp.Expr) -> tuple[sp.Expr, ...]:
    """Partials of ``max(*args)``: 1 for the largest argument, split evenly on ties."""
    if len(args) == 2:
        a, b = args
        return sp.Heaviside(a - b, sp.S.Half), sp.Heaviside(b - a, sp.S.Half)
    return tuple(tie_share(a, *args) for a in args)


def _min_shares(*args: sp.Expr) -> tuple[sp.Expr, ...]:
    """Partials of ``min(*args)``: those of ``max`` of the negated arguments."""
    return _tie_shares(*(-a for a in args))


def _atan2_partials(y: sp.Expr, x: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    r2 = x**2 + y**2
    return x / r2, -y / r2


def _logaddexp_partials(a: sp.Expr, b: sp.Expr) -> tuple[sp.Expr, sp.Expr]:
    return sigmoid(a - b), sigmoid(b - a)


def _polygamma_partials(n: sp.Expr, u: sp.Expr) -> tuple[None, sp.Expr]:
    return None, sp.polygamma(n + 1, u)


RULES: dict[type, Rule] = {
    sp.sin: Rule("trigonometric", "d/du sin(u) = cos(u)", unary(sp.cos)),
    sp.cos: Rule("trigonometric", "d/du cos(u) = -sin(u)", unary(lambda u: -sp.sin(u))),
    sp.tan: Rule(
        "trigonometric", "d/du tan(u) = 1 + tan(u)^2", unary(lambda u: 1 + sp.tan(u) ** 2)
    ),
    sp.asin: Rule(
        "inverse trigonometric",
        "d/du asin(u) = 1/sqrt(1 - u^2)",
        unary(lambda u: 1 / sp.sqrt(1 - u**2)),
    ),
    sp.acos: Rule(
        "inverse trigonometric",
        "d/du acos(u) = -1/sqrt(1 - u^2)",
        unary(lambda u: -1 / sp.sqrt(1 - u**2)),
    ),
    sp.atan: Rule(
        "inverse trigonometric", "d/du atan(u) = 1/(1 + u^2)", unary(lambda u: 1 / (1 + u**2))
    ),
    sp.atan2: Rule(
        "inverse trigonometric",
        "d atan2(y, x) = (x dy - y dx)/(x^2 + y^2)",
        _atan2_partials,
    ),
    sp.sinh: Rule("hyperbolic", "d/du sinh(u) = cosh(u)", unary(sp.cosh)),
    sp.cosh: Rule("hyperbolic", "d/du cosh(u) = sinh(u)", unary(sp.sinh)),
    sp.tanh: Rule(
        "hyperbolic", "d/du tanh(u) = 1 - tanh(u)^2", unary(lambda u: 1 - sp.tanh(u) ** 2)
    ),
    sp.asinh: Rule(
        "inverse hyperbolic",
        "d/du asinh(u) = 1/sqrt(u^2 + 1)",
        unary(lambda u: 1 / sp.sqrt(u**2 + 1)),
    ),
    sp.acosh: Rule(
        "inverse hyperbolic",
        "d/du acosh(u) = 1/sqrt(u^2 - 1)",
        unary(lambda u: 1 / sp.sqrt(u**2 - 1)),
    ),
    sp.atanh: Rule(
        "inverse hyperbolic", "d/du atanh(u) = 1/(1 - u^2)", unary(lambda u: 1 / (1 - u**2))
    ),
    sp.exp: Rule("exponential", "d/du exp(u) = exp(u)", unary(sp.exp)),
    sp.log: Rule("logarithm", "d/du log(u) = 1/u", unary(lambda u: 1 / u)),
    log1p: Rule("logarithm", "d/du log(1 + u) = 1/(1 + u)", unary(lambda u: 1 / (1 + u))),
    expm1: Rule("exponential", "d/du (exp(u) - 1) = exp(u)", unary(sp.exp)),
    logaddexp: Rule(
        "log-sum-exp",
        "d log(exp(a) + exp(b)) = sigmoid(a - b) da + sigmoid(b - a) db",
        _logaddexp_partials,
    ),
    sp.Abs: Rule("absolute value", "d/du |u| = sign(u)  (0 at u = 0)", unary(sp.sign)),
    sp.sign: Rule(
        "sign", "d/du sign(u) = 0  (by convention, also at 0)", unary(lambda u: sp.S.Zero)
    ),
    sp.Heaviside: Rule(
        "step function",
        "d/du H(u) = 0  (by convention, also at 0)",
        lambda u, *h0: (sp.S.Zero, *(None for _ in h0)),
    ),
    sp.erf: Rule(
        "error function",
        "d/du erf(u) = 2/sqrt(pi) exp(-u^2)",
        unary(lambda u: 2 / sp.sqrt(sp.pi) * sp.exp(-(u**2))),
    ),
    sp.gamma: Rule(
        "gamma function",
        "d/du gamma(u) = gamma(u) digamma(u)",
        unary(lambda u: sp.gamma(u) * sp.polygamma(0, u)),
    ),
    sp.loggamma: Rule(
        "log-gamma", "d/du loggamma(u) = digamma(u)", unary(lambda u: sp.polygamma(0, u))
    ),
    sp.polygamma: Rule(
        "polygamma", "d/du polygamma(n, u) = polygamma(n + 1, u)", _polygamma_partials
    ),
    sp.Max: Rule(
        "maximum", "d max(a, b) = [a > b] da + [b > a] db, ties split evenly", _tie_shares
    ),
    sp.Min: Rule(
        "minimum", "d min(a, b) = [a < b] da + [b < a] db, ties split evenly", _min_shares
    ),
    relu: Rule("ReLU", "d/du relu(u) = [u > 0]  (0 at u = 0)", unary(lambda u: sp.Heaviside(u, 0))),
    sigmoid: Rule(
        "sigmoid",
        "d/du sigmoid(u) = sigmoid(u) (1 - sigmoid(u))",
        unary(lambda u: sigmoid(u) * (1 - sigmoid(u))),
    ),
    softplus: Rule("softplus", "d/du softplus(u) = sigmoid(u)", unary(sigmoid)),
    tie_share: Rule(
        "tie share",
        "d/du tie_share(u, ...) = 0  (piecewise constant)",
        lambda *args: tuple(sp.S.Zero for _ in args),
    ),
}


def rule_for(func: type) -> Rule | None:
    """The rule for a SymPy function class (or the nearest base class that has one)."""
    for cls in getattr(func, "__mro__", (func,)):
        if cls in RULES:
            return RULES[cls]
    return None
