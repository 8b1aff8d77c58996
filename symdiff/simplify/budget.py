"""The budgets of :func:`symdiff.simplify.simplify_for_people`: limits as counts of the expression
(never times, so the same input always gives the same code), and the counts themselves."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import sympy as sp

#: ``simplify`` is only tried on expressions up to this many operations (SymPy's ``count_ops``);
#: beyond it a cheaper normalisation (``factor_terms``) is used instead. Smaller expressions go
#: through SymPy's phases one by one, each within :class:`Budget`.
SIMPLIFY_MAX_OPS = 80


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
    #: Any simplification at all (``factor_terms`` included): operation nodes of the
    #: expression's tree (:func:`operation_nodes`, counted without walking the tree).
    tree_ops: int = 4_000
    #: Phases that multiply out (``cancel``, ``expand``, the numerator of ``radsimp``): the
    #: number of terms the full expansion of their input can have (:func:`expansion_terms`),
    #: and for ``cancel`` (a polynomial gcd) the number of its polynomial generators
    #: (symbols, function calls and non-integer powers) and its total degree in them
    #: (:func:`polynomial_degree`: the gcd works with integers of about that many digits).
    terms: int = 200
    generators: int = 10
    degree: int = 1_000
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
    #: ``exptrigsimp`` (exponentials rewritten as hyperbolic functions and back): operations
    #: of its input.
    exptrig_ops: int = 60


@functools.cache
def own_free_symbols(cls: type) -> bool:
    """Whether the SymPy type ``cls`` computes its own ``free_symbols`` (atoms, and types with
    bound variables such as ``Integral``) instead of the union over its arguments, which a walk
    of the DAG that visits each distinct node once can gather itself (SymPy's property walks
    the whole tree below a node, each time it is asked)."""
    owner = next(k for k in cls.__mro__ if "free_symbols" in vars(k))
    return owner is not sp.Basic


def operation_nodes(expr: sp.Basic, cap: int = 10**12) -> int:
    """Operation nodes of the tree (a product of k factors is one node), at most ``cap``.
    Counted over the DAG, each distinct subexpression once (linear time, unlike
    ``sympy.count_ops``, which rebuilds fractions, or a walk of the tree, which is exponential
    in the depth of a traced recurrence)."""
    size: dict[sp.Basic, int] = {}
    stack: list[tuple[sp.Basic, bool]] = [(expr, False)]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            size[node] = min(cap, 1 + sum(size[a] for a in node.args)) if node.args else 0
        elif node not in size:
            stack.append((node, True))
            stack.extend((a, False) for a in node.args if a not in size)
    return size[expr]


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


def polynomial_degree(expr: sp.Basic, cap: int = 10**12) -> int:
    """An upper bound of the total degree of the numerator plus the denominator of ``expr``
    over one common denominator, as polynomials in its generators (see
    :func:`polynomial_generators`), at most ``cap``: a product adds the degrees of its
    factors, an integer power multiplies its base's (a negative one swaps numerator and
    denominator), a sum puts its terms over the product of their denominators; every other
    node with symbols counts one, or the numerator of its exponent where SymPy's polynomials
    take it as a power of a generator (``x**(3/2)`` of ``sqrt(x)``, ``exp(1000*u)`` of
    ``exp(u)``)."""
    memo: dict[sp.Basic, tuple[int, int]] = {}

    def degree(e: sp.Basic) -> tuple[int, int]:
        if e not in memo:
            if e.is_Add:
                parts = [degree(a) for a in e.args]
                den = sum(d for _, d in parts)
                num = max(n + den - d for n, d in parts)
            elif e.is_Mul:
                parts = [degree(a) for a in e.args]
                num, den = sum(n for n, _ in parts), sum(d for _, d in parts)
            elif e.is_Pow and e.exp.is_Integer:
                k, (n, d) = int(e.exp), degree(e.base)
                num, den = (k * n, k * d) if k >= 0 else (-k * d, -k * n)
            elif e.free_symbols:
                # a power of a generator: x**(p/q) of x**(1/q), exp(p*u/q) of exp(u/q)
                k = _generator_power(e)
                num, den = (k, 0) if k >= 0 else (0, -k)
            else:
                num, den = 0, 0
            memo[e] = (min(num, cap), min(den, cap))
        return memo[e]

    return min(sum(degree(expr)), cap)


def _generator_power(e: sp.Basic) -> int:
    """The power of a generator that SymPy's polynomials see in ``e``: the numerator of a
    rational exponent (of a power, or the coefficient of an exponential's argument), else 1."""
    if e.is_Pow and e.exp.is_Rational:
        return int(e.exp.p)
    if isinstance(e, sp.exp):
        coefficient = e.args[0].as_coeff_Mul()[0]
        if coefficient.is_Rational:
            return int(coefficient.p)
    return 1


def polynomial_generators(expr: sp.Basic) -> int:
    """How many generators a polynomial form of ``expr`` has, at most: its symbols, function
    calls and powers with other than integer exponents."""
    calls = expr.atoms(sp.Function)
    powers = {p for p in expr.atoms(sp.Pow) if not p.exp.is_Integer}
    return len(expr.free_symbols) + len(calls) + len(powers)
