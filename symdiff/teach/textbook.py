"""The final form of a derivation, chosen for a student: what a textbook prints as the answer.

SymPy's ``simplify`` minimises its own count of operations, and on the way rewrites into forms
a first-year student has never met: ``exp(-x)/(1 + exp(-x))**2`` becomes
``1/(4*cosh(x/2)**2)``, ``2*sin(x)*cos(x)/(sin(x)**2 + 1)`` becomes ``2*sin(2*x)/(3 -
cos(2*x))``. :func:`textbook_form` instead starts from the rules' own result, in the order of
the rule's identity (:func:`symdiff.engine.assembly.shown_result`), and looks at a few forms a
textbook writes:

- the rules' result itself (``2*x*sin(x) + x**2*cos(x)``: ``f' g + f g'`` in that order);
- one fraction whose numerator is expanded and collected, common factors cancelled, the
  denominator kept factored (``(x**2 - 6*x - 1)/(x - 3)**2``);
- a common factor pulled out, the rest expanded (``(x + 1)*exp(x)``,
  ``(x - 1)**2*(x + 1)*(5*x + 1)``), unless the factor is only a power of the variable
  (``x*(x*cos(x) + 2*sin(x))`` is left as ``2*x*sin(x) + x**2*cos(x)``);
- SymPy's simplification (:func:`symdiff.simplify.simplify_for_people`: the derivative the
  compiled code is built from), only if it brings in no function application that neither the
  expression nor any of its rules' results has: no hyperbolic form of an exponential, no
  multiple angle (``sin(2*x)``), no power reduction;
- and each of these with sines and cosines named as a textbook names them (``sec(x)**2`` for
  ``1 + tan(x)**2`` and ``1/cos(x)**2``, ``tan(x)`` for ``sin(x)/cos(x)``, ``cot``, ``csc``).

The measure is the length of the printed form; a form other than the rules' result must be
shorter than it by :data:`MARGIN` (a student should see why it was rewritten), and among equal
lengths the earlier form of the list wins. So when no form is clearly better, the rules'
result is the answer. Every form is an exact rewriting (SymPy's ``together``, ``expand``,
``cancel``, ``factor_terms`` and the definitions of ``tan``, ``sec``, ``csc``, ``cot``), and the
tests check each printed equality at random points. Only the form shown changes: the steps,
and the code built from them, are those of the engine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import sympy as sp
from sympy.polys.polyerrors import BasePolynomialError

from ..engine.assembly import over, shown_result
from ..engine.inputtext import teaching_text
from ..parsing.written import Written, canonical
from ..simplify import (
    SIMPLIFY_MAX_OPS,
    Budget,
    count_ops,
    expansion_terms,
    polynomial_degree,
    quick,
)
from ..simplify.dag import distinct_nodes, has_type

#: How much shorter than the rules' result (in characters of its text) another form must be.
MARGIN = 0.1

#: Expansion is tried only while the expanded numerator has at most this many terms.
MAX_TERMS = 60


@dataclass(frozen=True)
class Final:
    """The final form (``form``, which may hold written nodes that print in their order),
    its value as a SymPy expression (``value``) and what was done to reach it (``note``; empty
    when the form is the rules' result)."""

    form: sp.Expr
    value: sp.Expr
    note: str


def textbook_form(root: Any, expr: sp.Expr, simplified: Callable[[], sp.Expr]) -> Final:
    """The final form of ``d expr / d var`` whose rule tree is ``root`` (a
    :class:`~symdiff.engine.steps.Step`); ``simplified()`` gives the derivative the compiled
    code is built from (SymPy's simplification); see the module docstring."""
    var = root.var
    shown = shown_result(root)
    raw = root.result
    cost = _length(shown)
    best = Final(shown, raw, "")
    best_cost = cost
    allowed = _applications(_value(expr), *(_value(s.result) for s in _walk(root)))
    for note, candidate in _candidates(raw, var, allowed, simplified):
        length = _length(candidate)
        if length < best_cost and length <= (1 - MARGIN) * cost:
            best, best_cost = Final(candidate, candidate, note), length
    for note, candidate in ((best.note, best.form), ("", shown)):
        named = trig_names(candidate)
        if named != candidate and _length(named) < best_cost:
            best = Final(named, _value(named), _joined(note, _trig_note(candidate, named)))
            best_cost = _length(named)
    return Final(over(best.form), best.value, best.note)


#: The definitions behind each name :func:`trig_names` may bring in.
TRIG_DEFINITIONS = {sp.tan: "tan = sin/cos", sp.sec: "sec = 1/cos", sp.csc: "csc = 1/sin",
                    sp.cot: "cot = cos/sin"}


def _trig_note(before: sp.Expr, after: sp.Expr) -> str:
    """What :func:`trig_names` used between ``before`` and ``after``."""
    used = [text for func, text in TRIG_DEFINITIONS.items()
            if after.has(func) and (func is not sp.tan or not before.has(sp.tan))]
    if before.has(sp.tan) and after.has(sp.sec) and not before.has(sp.cos):
        used = ["1 + tan^2 = sec^2"]
    return "textbook names: " + ", ".join(used)



QUOTIENT_NOTE = "numerator expanded and collected"
CANCEL_NOTE = "numerator expanded, common factors cancelled"
FACTOR_NOTE = "common factor pulled out"
SIMPLIFY_NOTE = "simplified"


def _joined(*notes: str) -> str:
    return ", ".join(n for n in notes if n)


def _value(expr: sp.Expr) -> sp.Expr:
    return canonical(expr) if has_type(expr, Written) else expr


def _length(expr: sp.Expr) -> int:
    return len(teaching_text(expr).replace(" ", ""))


def _walk(step: Any) -> Iterator[Any]:
    yield step
    for sub in step.substeps:
        yield from _walk(sub)


def _applications(*exprs: sp.Expr) -> set[sp.Expr]:
    """The function applications in ``exprs`` (``sin(2*x)``, ``exp(-x)``), each distinct
    subexpression looked at once."""
    return {node for node in distinct_nodes(exprs) if isinstance(node, sp.Function)}


def _candidates(raw: sp.Expr, var: sp.Symbol, allowed: set[sp.Expr],
                simplified: Callable[[], sp.Expr]) -> Iterator[tuple[str, sp.Expr]]:
    """(what was done, the form) for each form worth a look: for a large result only the
    code's (its simplification is bounded, :func:`symdiff.simplify.simplify_for_people`)."""
    if raw.is_Atom:
        return
    if count_ops(raw) <= SIMPLIFY_MAX_OPS:
        for make in (_one_fraction, _factored):
            found = _guarded(make, raw, var)
            if found is not None:
                yield found
    code = simplified()
    if _applications(code) <= allowed and not _monomial_out(code, var):
        yield SIMPLIFY_NOTE, code


def _guarded(make: Callable[[sp.Expr, sp.Symbol], tuple[str, sp.Expr] | None], raw: sp.Expr,
             var: sp.Symbol) -> tuple[str, sp.Expr] | None:
    """``make(raw, var)``, or None where SymPy gives up on a form (it then is no candidate)."""
    try:
        return make(raw, var)
    except (ValueError, TypeError, ArithmeticError, RecursionError, NotImplementedError,
            BasePolynomialError):
        return None


def _collected(expr: sp.Expr, var: sp.Symbol) -> sp.Expr | None:
    """``expr`` expanded and collected in powers of ``var``; None when too large to expand."""
    if expansion_terms(expr) > MAX_TERMS:
        return None
    return sp.collect(sp.expand(expr), var)


def _one_fraction(raw: sp.Expr, var: sp.Symbol) -> tuple[str, sp.Expr] | None:
    """The result as one fraction: numerator expanded and collected, common factors cancelled,
    the denominator factored as ``together`` leaves it (or factored again after a cancel)."""
    numerator, denominator = sp.fraction(sp.together(raw))
    if denominator == 1:
        return None
    top = _collected(numerator, var)
    if top is None or polynomial_degree(top / denominator) > Budget.degree:
        return None
    common = sp.gcd(top, denominator)
    if common != 1 and common.free_symbols:
        top = _collected(sp.cancel(top / common), var)
        denominator = sp.factor(sp.cancel(denominator / common))
        if top is None:
            return None
        return CANCEL_NOTE, top / denominator
    return QUOTIENT_NOTE, top / denominator


def _factored(raw: sp.Expr, var: sp.Symbol) -> tuple[str, sp.Expr] | None:
    """The common factor of a sum pulled out (the rest expanded and collected), unless it is
    only a number times a power of ``var``."""
    if not raw.is_Add:
        return None
    pulled = sp.factor_terms(raw)
    if not pulled.is_Mul:
        return None
    sums = [f for f in pulled.args if f.is_Add]
    outside = [f for f in pulled.args if not f.is_Add]
    if not sums or (len(sums) == 1 and _is_monomial(sp.Mul(*outside), var)):
        return None
    inside = [_collected(s, var) for s in sums]
    if any(s is None for s in inside):
        return None
    return FACTOR_NOTE, sp.Mul(*outside, *inside)


def _is_monomial(expr: sp.Expr, var: sp.Symbol) -> bool:
    """A number, or a number times an integer power of ``var`` (what a textbook leaves in)."""
    _, rest = expr.as_coeff_Mul()
    if rest == 1:
        return True
    base, exponent = rest.as_base_exp()
    return base == var and exponent.is_Integer


def _monomial_out(expr: sp.Expr, var: sp.Symbol) -> bool:
    """``x*(x*cos(x) + 2*sin(x))``: a power of the variable times a sum, and nothing else."""
    if not expr.is_Mul:
        return False
    sums = [f for f in expr.args if f.is_Add]
    rest = sp.Mul(*(f for f in expr.args if not f.is_Add))
    return len(sums) == 1 and rest.has(var) and _is_monomial(rest, var)


# -- the names of trigonometric quotients -------------------------------------------------------
def trig_names(expr: sp.Expr, memo: dict[sp.Basic, sp.Expr] | None = None) -> sp.Expr:
    """``expr`` with quotients of sines and cosines of one argument named as a textbook names
    them: ``sin(u)/cos(u)`` is ``tan(u)``, ``1/cos(u)`` is ``sec(u)``, ``1/sin(u)`` is
    ``csc(u)``, ``cos(u)/sin(u)`` is ``cot(u)``, and ``1 + tan(u)**2`` is ``sec(u)**2``
    (their definitions, true wherever both sides are defined). Each distinct subexpression
    is named once (``memo``), and only a node whose arguments changed is built again."""
    if expr.is_Atom:
        return expr
    memo = {} if memo is None else memo
    found = memo.get(expr)
    if found is not None:
        return found
    # a product's powers are named together (sin(x)/cos(x), not sin(x)*sec(x))
    args = [_inside(a, memo) if expr.is_Mul else trig_names(a, memo) for a in expr.args]
    named = quick.rebuilt(expr.func, tuple(args)) if args != list(expr.args) else expr
    if named.is_Add:
        named = _secant_squared(named)
    elif named.is_Mul or named.is_Pow:
        named = _named_quotient(named)
    memo[expr] = named
    return named


def _inside(factor: sp.Expr, memo: dict[sp.Basic, sp.Expr]) -> sp.Expr:
    """A factor of a product with names inside it, a power of a sine or cosine left as it is."""
    if factor.is_Pow:
        base, exponent = trig_names(factor.base, memo), trig_names(factor.exp, memo)
        if base == factor.base and exponent == factor.exp:
            return factor
        return quick.power(base, exponent)
    return trig_names(factor, memo)


def _secant_squared(expr: sp.Add) -> sp.Expr:
    """``1 + tan(u)**2`` as ``sec(u)**2``."""
    terms = list(expr.args)
    if len(terms) == 2 and sp.S.One in terms:
        (other,) = [t for t in terms if t != 1]
        base, exponent = other.as_base_exp()
        if isinstance(base, sp.tan) and exponent == 2:
            return sp.sec(base.args[0]) ** 2
    return expr


def _named_quotient(expr: sp.Expr) -> sp.Expr:
    """In a product, ``sin(u)**a`` over ``cos(u)**b`` as ``tan(u)**min(a, b)`` times what is
    left (``sec``, ``sin``), and ``cos(u)**a`` over ``sin(u)**b`` as ``cot`` and ``csc``."""
    powers: dict[tuple[type, sp.Expr], sp.Expr] = {}
    others = []
    for factor in sp.Mul.make_args(expr):
        base, exponent = factor.as_base_exp()
        if isinstance(base, sp.sin | sp.cos) and exponent.is_Integer:
            key = (type(base), base.args[0])
            powers[key] = powers.get(key, sp.S.Zero) + exponent
        else:
            others.append(factor)
    if not any(e < 0 for e in powers.values()):
        return expr
    out = []
    for argument in {u for _, u in powers}:
        a, b = powers.get((sp.sin, argument), 0), powers.get((sp.cos, argument), 0)
        out += _named_pair(argument, sp.Integer(a), sp.Integer(b))
    return sp.Mul(*others, *out)


def _named_pair(u: sp.Expr, a: sp.Integer, b: sp.Integer) -> list[sp.Expr]:
    """``sin(u)**a * cos(u)**b`` as factors named ``tan``, ``cot``, ``sec``, ``csc``."""
    if a >= 0 and b < 0:  # sin^a / cos^|b|
        t = min(a, -b)
        return [sp.tan(u) ** t, sp.sin(u) ** (a - t), sp.sec(u) ** (-b - t)]
    if b >= 0 and a < 0:  # cos^b / sin^|a|
        t = min(b, -a)
        return [sp.cot(u) ** t, sp.cos(u) ** (b - t), sp.csc(u) ** (-a - t)]
    if a < 0 and b < 0:
        return [sp.csc(u) ** (-a), sp.sec(u) ** (-b)]
    return [sp.sin(u) ** a, sp.cos(u) ** b]
