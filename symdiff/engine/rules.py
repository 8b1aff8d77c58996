"""The rule table: one entry per function, read like a calculus handout.

Each :class:`Rule` names the rule a student reads, states the identity, and gives the partial
derivative of ``f`` with respect to each of its arguments, evaluated at those arguments. The chain
rule (multiplying by the inner derivatives and summing) is applied once, in
:mod:`symdiff.engine.forward`, never inside an entry. The entries are read from the function
registry (:mod:`symdiff.registry`), whose row for a function holds its rule beside everything
else about it, its test domain included: adding a function is one row there (plus a SymPy
class in :mod:`symdiff.functions` or a helper in :mod:`symdiff.runtime` only where SymPy or
NumPy lacks one).

Conventions at non-differentiable points (each row's ``identity``; the function table of
docs/functions.md is generated from the rows): ``abs'(0) = 0``,
``sign' = floor' = ceil' = heaviside' = 0``, ``relu'(0) = 0``, ``cbrt'(0) = inf``,
``hypot``'s gradient 0 at the origin, ``d mod(a, b) = da - floor(a/b) db``; for
``max``/``min`` the gradient is split evenly among tied arguments (``max(x, 0)'`` at 0 is 1/2).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sympy as sp

from .. import registry

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


#: The rows of :mod:`symdiff.registry` that have a node of their own, in the registry's order.
RULES: dict[type, Rule] = {
    registry.head_class(row): Rule(row.rule, row.identity, row.partials)
    for row in registry.ROWS
    if row.partials is not None
}


def rule_for(func: type) -> Rule | None:
    """The rule for a SymPy function class (or the nearest base class that has one)."""
    for cls in getattr(func, "__mro__", (func,)):
        if cls in RULES:
            return RULES[cls]
    return None
