"""Multiple angles hidden from the trigonometric phases: :func:`masked_angles`.

SymPy's ``trigsimp`` and ``exptrigsimp`` rewrite ``sin(k*x)`` through the angle-sum and
multiple-angle identities and factor the result: a polynomial of degree ``k`` in ``sin(x)`` and
``cos(x)``, whose size (and the time and memory spent on it) grows with ``k`` however small the
expression (``sin(128*x)`` exhausted gigabytes). Before those phases each argument of a
trigonometric or hyperbolic function that is a large multiple (a term with a coefficient beyond
:data:`PLAIN_MULTIPLE`) or a sum of more than :data:`PLAIN_TERMS` terms is replaced by a fresh
symbol, the same symbol wherever the same argument occurs, and put back after: the phases still
apply every identity between functions of one argument (``sin(u)**2 + cos(u)**2 = 1``,
``sin(u)/cos(u) = tan(u)``), and what they produce is bounded by what they read.

A high power is a multiple angle in disguise: the product-to-sum rewrites turn ``sin(x)**n``
into a sum of ``n`` multiple angles (``sin(x)**(10**9)`` exhausted memory the same way). A power
of such a call whose exponent is a number beyond :data:`PLAIN_POWER` in size is hidden whole,
the same way.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp
from sympy.functions.elementary.hyperbolic import HyperbolicFunction
from sympy.functions.elementary.trigonometric import TrigonometricFunction

#: The largest numerator or denominator of a term's coefficient in an argument left visible
#: (``sin(2*x)``, ``cos(x/2)``: the double- and half-angle forms people simplify by).
PLAIN_MULTIPLE = 2
#: The most terms of an argument left visible (``sin(x + y)``).
PLAIN_TERMS = 2
#: The largest size of a numeric exponent of a trigonometric or hyperbolic call left visible
#: (``sin(x)**4``, ``cos(x)**-3``).
PLAIN_POWER = 8

_ANGLED = (TrigonometricFunction, HyperbolicFunction)


def _plain(argument: sp.Expr) -> bool:
    """Whether the trigonometric phases may see ``argument`` as it is."""
    terms = sp.Add.make_args(argument)
    if len(terms) > PLAIN_TERMS:
        return False
    for term in terms:
        coefficient = term.as_coeff_Mul()[0]
        if coefficient.is_Rational and max(abs(coefficient.p), coefficient.q) > PLAIN_MULTIPLE:
            return False
        if coefficient.is_Float:
            return False
    return True


def _high_power(node: sp.Basic) -> bool:
    """Whether ``node`` is a trigonometric or hyperbolic call to a numeric power beyond
    :data:`PLAIN_POWER` in size."""
    return (
        node.is_Pow
        and isinstance(node.base, _ANGLED)
        and node.exp.is_Number
        and abs(node.exp) > PLAIN_POWER
    )


def masked_angles(expr: sp.Expr) -> tuple[sp.Expr, dict[sp.Symbol, sp.Expr]]:
    """``expr`` with every argument of a trigonometric or hyperbolic function that is not plain
    and every high power of such a function (see the module notes) replaced by a fresh real
    symbol, and the map back."""
    back: dict[sp.Symbol, sp.Expr] = {}
    ahead: dict[sp.Expr, sp.Symbol] = {}
    swap: dict[sp.Basic, sp.Basic] = {}
    powers = {node for node in sp.preorder_traversal(expr) if _high_power(node)}
    for power in sorted(powers, key=sp.default_sort_key):
        symbol = sp.Dummy("power", real=True)
        back[symbol] = power
        swap[power] = symbol
    for call in sorted(expr.atoms(*_ANGLED), key=sp.default_sort_key):
        argument = call.args[0]
        if len(call.args) != 1 or _plain(argument):
            continue
        symbol = ahead.get(argument)
        if symbol is None:
            symbol = ahead[argument] = sp.Dummy("angle", real=True)
            back[symbol] = argument
        swap[call] = call.func(symbol)
    return (expr.xreplace(swap) if swap else expr), back


def with_masked_angles(phase: Callable[[sp.Expr], sp.Expr], expr: sp.Expr) -> sp.Expr:
    """``phase(expr)`` with the arguments that are not plain masked (:func:`masked_angles`)."""
    masked, back = masked_angles(expr)
    result = phase(masked)
    return result.xreplace(back) if back else result
