"""Exponentials of one argument computed once (:func:`cheapest_program`).

Simplification writes equal exponentials in whatever form is shortest to read: the Morse
potential's gradient ``2*D*a*(1 - exp(-u))*exp(-u)`` comes back as
``2*D*a*expm1(u)*exp(-2*u)`` once the stable forms are taken, three calls on the arrays
(``exp(-u)``, ``exp(-2*u)``, ``expm1(u)``) and a multiplication where a person computes one
``exp`` and reuses it. Here every ``exp(k*c*u)`` and ``expm1(k*c*u)`` of one direction ``u``
(integer ``k``, ``|k| <=`` :data:`K_MAX`) is written with two bases computed once,
``E = exp(c*u)`` and, only where the program had an ``expm1`` of ``u`` already,
``M = expm1(c*u)``:

* ``exp(k*c*u) = E**k`` (a square or a product, no call);
* ``expm1(k*c*u) = M*(1 + E + ... + E**(k-1))`` for ``k > 0`` and
  ``-M*(1 + ... + E**(|k|-1))/E**|k|`` for ``k < 0``: sums of terms of one sign, so the
  accuracy ``expm1`` was chosen for (no cancellation where the argument is near 0) is kept,
  and ``E`` keeps the accuracy of ``exp`` in the tails (``1 + M`` would cancel there, so ``E``
  is never written as ``1 + M``);
* where ``M`` is computed anyway, a sum ``a*E - a`` (``2 - 2*exp(-u)``) is ``a*M``: the same
  value without the cancellation, one pass fewer.

SymPy's products then merge the powers of ``E`` (``E**2*(-M/E)`` is ``-E*M``). Each choice of
``c`` among the coefficients found is tried, and a rewrite is kept only where the whole program
(after CSE and :func:`~symdiff.codegen.forms.cheaper_program`) costs fewer array passes by
:mod:`.cost`, whose calls are weighted by what they take (``exp`` about three multiplications).
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp
from sympy.codegen.cfunctions import expm1

from ..simplify import operation_nodes, shared_subexpressions
from ..simplify.shallow import shallow_lines
from .forms import SEARCH_MAX_NODES, Line, cheaper_program, program_passes
from .naming import TEMPORARY, exp_base

#: The largest multiple ``|k|`` of the base argument written as a power of the base.
K_MAX = 4

Direction = tuple[sp.Rational, sp.Expr]


def cheapest_program(
    outputs: Sequence[sp.Expr], cse: bool = True
) -> tuple[list[Line], list[sp.Expr]]:
    """CSE (when ``cse``) and :func:`~symdiff.codegen.forms.cheaper_program` of ``outputs``,
    with the exponentials of each direction shared where that costs fewer passes (module
    notes)."""
    if not cse:
        return shallow_lines([], outputs)
    best = _program(outputs, {})
    if sum(operation_nodes(e) for e in outputs) > SEARCH_MAX_NODES:
        return best
    cost = program_passes(*best)
    chosen: dict[sp.Expr, sp.Rational] = {}
    for u, coefficients in _groups(outputs).items():
        pick = None
        for c in coefficients:
            trial = _program(outputs, {**chosen, u: c})
            trial_cost = program_passes(*trial)
            if trial_cost < cost:
                best, cost, pick = trial, trial_cost, c
        if pick is not None:
            chosen[u] = pick
    return best


def _direction(arg: sp.Expr) -> Direction | None:
    """``(c, u)`` with ``arg = c*u``, ``c`` a rational number and ``u`` without a leading sign;
    None for a float coefficient."""
    c, u = arg.as_content_primitive()
    if not c.is_Rational:
        return None
    if u.could_extract_minus_sign():
        c, u = -c, -u
    return sp.Rational(c), u


def _calls(exprs: Sequence[sp.Expr]) -> dict[sp.Expr, Direction]:
    """Every ``exp`` and ``expm1`` call in ``exprs`` with its direction."""
    found: dict[sp.Expr, Direction] = {}
    for e in exprs:
        for node in sp.preorder_traversal(e):
            if isinstance(node, sp.exp | expm1) and node not in found:
                direction = _direction(node.args[0])
                if direction is not None:
                    found[node] = direction
    return found


def _groups(exprs: Sequence[sp.Expr]) -> dict[sp.Expr, list[sp.Rational]]:
    """Directions with calls of at least two coefficients -> the coefficients that could be
    the base (every other one an integer multiple of it, at most :data:`K_MAX`)."""
    by_direction: dict[sp.Expr, set[sp.Rational]] = {}
    for c, u in _calls(exprs).values():
        by_direction.setdefault(u, set()).add(c)
    groups = {}
    for u, coefficients in by_direction.items():
        if len(coefficients) < 2:
            continue
        bases = [
            c0 for c0 in sorted(coefficients, key=lambda c: (abs(c), c))
            if all((c / c0).is_Integer and abs(c / c0) <= K_MAX for c in coefficients)
        ]
        if bases:
            groups[u] = bases
    return groups


def _program(
    outputs: Sequence[sp.Expr], bases: dict[sp.Expr, sp.Rational]
) -> tuple[list[Line], list[sp.Expr]]:
    """CSE and cheaper forms of ``outputs`` with the directions of ``bases`` written with
    their bases (see the module notes)."""
    if not bases:
        return cheaper_program(*shared_subexpressions(outputs))
    calls = _calls(outputs)
    definitions: list[tuple[sp.Symbol, sp.Expr]] = []
    swap: dict[sp.Expr, sp.Expr] = {}
    ones: dict[sp.Symbol, sp.Symbol] = {}
    for index, (u, c0) in enumerate(bases.items()):
        members = {node: c for node, (c, v) in calls.items() if v == u}
        e = sp.Symbol(exp_base(index), real=True)
        definitions.append((e, sp.exp(c0 * u)))
        m = None
        if any(isinstance(node, expm1) for node in members):
            m = sp.Symbol(exp_base(index, minus_one=True), real=True)
            definitions.append((m, expm1(c0 * u)))
            ones[e] = m
        for node, c in members.items():
            swap[node] = _in_bases(isinstance(node, expm1), int(c / c0), e, m)
    rewritten = [e.xreplace(swap) for e in outputs]
    if ones:
        rewritten = [_minus_one(e, ones) for e in rewritten]
    used = set().union(*(e.free_symbols for e in rewritten))
    definitions = [(s, v) for s, v in definitions if s in used]
    count = len(definitions)
    assignments, reduced = shared_subexpressions([v for _, v in definitions] + rewritten)
    bases_lines = [(s, r) for (s, _), r in zip(definitions, reduced[:count], strict=True)]
    lines = _ordered([*assignments, *bases_lines])
    lines, outs = _renamed(lines, reduced[count:], {s for s, _ in definitions})
    return cheaper_program(lines, outs)


def _in_bases(is_expm1: bool, k: int, e: sp.Symbol, m: sp.Symbol | None) -> sp.Expr:
    """``exp(k*c*u)`` (or ``expm1``) in the bases ``e = exp(c*u)``, ``m = expm1(c*u)``."""
    if not is_expm1:
        return e**k
    assert m is not None
    series = sp.Add(*(e**j for j in range(abs(k))))
    return m * series if k > 0 else -m * series / e ** abs(k)


def _minus_one(expr: sp.Expr, ones: dict[sp.Symbol, sp.Symbol]) -> sp.Expr:
    """Sums ``a*E + ... - a`` as ``a*M + ...`` for each base ``E`` with ``M = E - 1``."""

    def fold(node: sp.Add) -> sp.Expr:
        terms = list(node.args)
        for e, m in ones.items():
            for term in terms:
                a, rest = term.as_coeff_Mul()
                if rest == e and -a in terms:
                    terms.remove(term)
                    terms.remove(-a)
                    terms.append(a * m)
                    break
        return sp.Add(*terms)

    def has_base(node: sp.Basic) -> bool:
        return node.is_Add and any(t.as_coeff_Mul()[1] in ones for t in node.args)

    return expr.replace(has_base, fold)


def _ordered(lines: list[Line]) -> list[Line]:
    """``lines`` in an order where each line follows the lines it reads (stable otherwise)."""
    defined = {s for s, _ in lines}
    done: set[sp.Symbol] = set()
    result: list[Line] = []
    pending = list(lines)
    while pending:
        for i, (s, v) in enumerate(pending):
            if all(f in done or f not in defined for f in v.free_symbols):
                result.append((s, v))
                done.add(s)
                del pending[i]
                break
        else:  # a cycle cannot happen: the definitions read only the program's inputs
            raise AssertionError("cyclic temporaries")
    return result


def _renamed(
    lines: list[Line], outs: list[sp.Expr], placeholders: set[sp.Symbol]
) -> tuple[list[Line], list[sp.Expr]]:
    """The bases' ``placeholders`` renamed to fresh temporaries (``_t<n>``)."""
    taken = {s.name for s, _ in lines}
    numbers = (n for n in range(10**9) if f"{TEMPORARY}{n}" not in taken)
    rename = {
        s: sp.Symbol(f"{TEMPORARY}{next(numbers)}", real=True)
        for s, _ in lines if s in placeholders
    }
    return (
        [(rename.get(s, s), v.xreplace(rename)) for s, v in lines],
        [e.xreplace(rename) for e in outs],
    )
