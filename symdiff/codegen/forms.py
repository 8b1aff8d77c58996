"""Cheaper equal forms of a program's lines, chosen by their cost in array passes (:mod:`.cost`).

:func:`cheaper_program` rewrites the assignments and outputs that CSE produced, keeping each
rewrite only where the printed program makes fewer passes over arrays:

* integer powers of a compound base get the base as a temporary (the printer writes powers of a
  name as multiplications, ``t**2*t``, instead of NumPy's costly ``pow``);
* powers of a name reuse a power of it already computed: with ``_t1 = 1/sigma**2``,
  ``sigma**-3`` is ``_t1/sigma``; with ``_t1 = r**6``, ``r**12`` is ``_t1**2``;
* an output that is the negative of another is computed once (``_t = a*b``; ``-_t``);
* a sum that appears with both signs (``x**2 - y`` and ``y - x**2``) is computed once;
* an output that is a factor of another (``v*(1 - h)`` and ``v*x*(1 - h)``) is computed once;
* a temporary that is used negated is defined negated when that saves passes (``-_t0*x``
  becomes ``_t0*x`` with the sign folded into ``_t0``'s definition);
* a name negated in several products is negated once (``_t = -y``), also after a temporary's
  sign is folded into its definition (the logistic loss: ``_t0 = _t1*f(_t1*u)``, ``_t1 = -y``);
* a temporary that only names another (``_t1 = _t0``) is dropped;
* a line is written with its common factors taken out (``200*y - 200*_t0`` as
  ``200*(y - _t0)``) when that is cheaper.

Every rewrite is an identity of real arithmetic; the values printed differ from the original
forms by rounding only. Programs with more than :data:`SEARCH_MAX` temporaries keep the power
rewrites only (the sign search prints the program once per temporary), and so do programs of
more than :data:`SEARCH_MAX_NODES` operation nodes or :data:`SEARCH_MAX_WORK` temporaries times
operation nodes (a dense quadratic form of 100 names has a
handful of temporaries but outputs of 100 terms each: factoring and reprinting them per trial took
minutes).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sympy as sp

from ..simplify import operation_nodes
from ..simplify.literals import common_factors
from .cost import total_passes
from .naming import TEMPORARY
from .printer import CHAIN_MAX, CodePrinter

Line = tuple[sp.Symbol, sp.Expr]

#: Programs with more temporaries than this skip the sign and factor search.
SEARCH_MAX = 48
#: ... and so do programs with more operation nodes than this (lines and outputs together): the
#: search reprints and factors whole lines per trial, so its cost grows with their size.
SEARCH_MAX_NODES = 1_500
#: ... and those whose temporaries times operation nodes exceed this: a trial per temporary,
#: each reprinting the lines that read it, so the search costs at most this much work.
SEARCH_MAX_WORK = 30_000


def cheaper_program(
    assignments: Sequence[Line], outputs: Sequence[sp.Expr]
) -> tuple[list[Line], list[sp.Expr]]:
    """Equal assignments and outputs that cost no more array passes (see the module notes)."""
    lines, outs = list(assignments), list(outputs)
    if any(e.has(sp.Piecewise) for e in (*outs, *(v for _, v in lines))):
        return lines, outs
    fresh = _fresh_names(lines, outs)
    cost = _Costs()
    lines, outs = _compound_power_bases(lines, outs, fresh)
    lines, outs = _reuse_powers(lines, outs, cost)
    nodes = _nodes(lines, outs)
    if len(lines) <= SEARCH_MAX and nodes <= SEARCH_MAX_NODES and (
            len(lines) * nodes <= SEARCH_MAX_WORK):
        lines, outs = _share_negated_outputs(lines, outs, fresh)
        lines, outs = _factor_lines(lines, outs, cost)
        lines, outs = _share_negated_sums(lines, outs, fresh, cost)
        lines, outs = _share_output_factors(lines, outs, fresh, cost)
        lines, outs = _fold_signs(lines, outs, cost, fresh)
        lines, outs = _share_negated_names(lines, outs, fresh, cost)
        lines, outs = _factor_lines(lines, outs, cost)
        lines, outs = _drop_aliases(lines, outs)
    if lines == list(assignments) and outs == list(outputs):
        return lines, outs
    if cost.program(lines, outs) > cost.program(assignments, outputs):
        return list(assignments), list(outputs)  # the power rewrites are kept only when they pay
    return lines, outs


def _nodes(lines: Sequence[Line], outs: Sequence[sp.Expr]) -> int:
    return sum(operation_nodes(e) for e in (*(v for _, v in lines), *outs))


def program_passes(assignments: Sequence[Line], outputs: Sequence[sp.Expr]) -> int:
    """Array passes of the printed program (assignments and outputs)."""
    return _Costs().program(assignments, outputs)


class _Costs:
    """Array passes of printed expressions, each expression printed once."""

    def __init__(self) -> None:
        self.printer = CodePrinter()
        self.known: dict[sp.Expr, int] = {}

    def __call__(self, expr: sp.Expr) -> int:
        passes = self.known.get(expr)
        if passes is None:
            passes = self.known[expr] = total_passes([self.printer.doprint(expr)])
        return passes

    def program(self, lines: Sequence[Line], outs: Sequence[sp.Expr]) -> int:
        return sum(self(e) for e in (*(v for _, v in lines), *outs))


def _fresh_names(lines: Sequence[Line], outs: Sequence[sp.Expr]) -> Callable[[], sp.Symbol]:
    taken = {s.name for s, _ in lines}
    for e in (*outs, *(v for _, v in lines)):
        taken |= {s.name for s in e.free_symbols}
    counter = iter(range(10**9))

    def fresh() -> sp.Symbol:
        while True:
            name = f"{TEMPORARY}{next(counter)}"
            if name not in taken:
                taken.add(name)
                return sp.Symbol(name, real=True)

    return fresh


def _chained(e: sp.Basic) -> bool:
    return bool(e.is_Pow and e.exp.is_Integer and 3 <= abs(e.exp) <= CHAIN_MAX)


def _compound_power_bases(
    lines: list[Line], outs: list[sp.Expr], fresh: Callable[[], sp.Symbol]
) -> tuple[list[Line], list[sp.Expr]]:
    """A temporary for each compound base of a small integer power, before its first use."""
    bases: dict[sp.Expr, sp.Symbol] = {}
    new_lines: list[Line] = []

    def visit(expr: sp.Expr) -> sp.Expr:
        found = [
            p.base for p in sp.preorder_traversal(expr)
            if _chained(p) and not p.base.is_Symbol and p.base not in bases
        ]
        for base in dict.fromkeys(found):
            symbol = fresh()
            bases[base] = symbol
            new_lines.append((symbol, base))
        if not bases:
            return expr
        return expr.replace(
            lambda p: _chained(p) and p.base in bases, lambda p: bases[p.base] ** p.exp
        )

    for symbol, value in lines:
        value = visit(value)
        new_lines.append((symbol, value))
    outs = [visit(e) for e in outs]
    return new_lines, outs


def _reuse_powers(
    lines: list[Line], outs: list[sp.Expr], cost: _Costs
) -> tuple[list[Line], list[sp.Expr]]:
    """Powers of a name written with a power of it that a temporary holds, where cheaper."""
    table: dict[sp.Symbol, list[tuple[sp.Symbol, int]]] = {}

    def rewrite(expr: sp.Expr) -> sp.Expr:
        if not table:
            return expr
        return expr.replace(
            lambda p: p.is_Pow and p.base in table and p.exp.is_Integer and abs(p.exp) >= 2,
            lambda p: _best_power(p, table[p.base], cost),
        )

    new_lines: list[Line] = []
    for symbol, value in lines:
        value = rewrite(value)
        new_lines.append((symbol, value))
        power = _power_of(value, table)
        if power is not None:
            base, k = power
            table.setdefault(base, []).append((symbol, k))
    return new_lines, [rewrite(e) for e in outs]


def _power_of(value: sp.Expr, table) -> tuple[sp.Symbol, int] | None:
    """(base name, integer exponent) when ``value`` is an integer power of a name, through
    temporaries that are powers themselves (``1/_t0`` with ``_t0 = sigma**2``: sigma, -2)."""
    if not (value.is_Pow and value.exp.is_Integer and value.base.is_Symbol):
        return None
    base, k = value.base, int(value.exp)
    for root, entries in table.items():
        for symbol, j in entries:
            if symbol == base:
                return root, j * k
    return base, k


def _best_power(p: sp.Pow, entries: list[tuple[sp.Symbol, int]], cost: _Costs) -> sp.Expr:
    m = int(p.exp)
    choices: list[sp.Expr] = [p]
    for symbol, k in entries:
        if m % k == 0:
            choices.append(symbol ** (m // k))
        elif (k > 0) == (m > 0) and abs(k) < abs(m):
            choices.append(sp.Mul(symbol ** (m // k), p.base ** (m - k * (m // k))))
    return min(choices, key=cost)


def _share_negated_outputs(
    lines: list[Line], outs: list[sp.Expr], fresh: Callable[[], sp.Symbol]
) -> tuple[list[Line], list[sp.Expr]]:
    """An output that is minus another compound output reads it from a temporary."""
    outs = list(outs)
    for i, e in enumerate(outs):
        if e.is_Atom or e.could_extract_minus_sign():
            continue
        partners = [j for j, f in enumerate(outs) if j != i and f == -e]
        if not partners:
            continue
        symbol = fresh()
        lines = [*lines, (symbol, e)]
        outs[i] = symbol
        for j in partners:
            outs[j] = -symbol
    return lines, outs


def _insert_at(lines: list[Line], expr: sp.Expr) -> int:
    """The first place where every temporary ``expr`` reads is defined."""
    defined = {s: i for i, (s, _) in enumerate(lines)}
    return max((defined[s] + 1 for s in expr.free_symbols if s in defined), default=0)


def _share_negated_sums(
    lines: list[Line], outs: list[sp.Expr], fresh: Callable[[], sp.Symbol], costs: _Costs
) -> tuple[list[Line], list[sp.Expr]]:
    """A sum found with both signs (``_t0 - y`` in one line, ``y - _t0`` in another) computed
    once into a temporary, where the program then costs fewer passes."""
    sums: dict[sp.Expr, None] = {}
    for e in (*(v for _, v in lines), *outs):
        sums.update((node, None) for node in sp.preorder_traversal(e) if node.is_Add)
    cost = costs.program(lines, outs)
    for total in list(sums):
        negated = -total
        if negated not in sums or total.could_extract_minus_sign() or total in dict(lines).values():
            continue
        symbol = fresh()
        swap = {total: symbol, negated: -symbol}
        trial = [(s, v.xreplace(swap)) for s, v in lines]
        trial.insert(_insert_at(lines, total), (symbol, total))
        trial_outs = [e.xreplace(swap) for e in outs]
        trial_cost = costs.program(trial, trial_outs)
        if trial_cost < cost:
            lines, outs, cost = trial, trial_outs, trial_cost
    return lines, outs


def _share_output_factors(
    lines: list[Line], outs: list[sp.Expr], fresh: Callable[[], sp.Symbol], costs: _Costs
) -> tuple[list[Line], list[sp.Expr]]:
    """An output whose factored form divides another output (``v*(1 - h)`` and
    ``v*x*(1 - h)``) computed once into a temporary, where that costs fewer passes."""
    cost = costs.program(lines, outs)
    for j in range(len(outs)):
        factored = common_factors(outs[j])
        if not factored.is_Mul:
            continue
        factors = sp.Mul.make_args(factored)
        users = [
            i for i, e in enumerate(outs)
            if i != j and e.is_Mul and all(f in e.args for f in factors)
        ]
        if not users:
            continue
        symbol = fresh()
        trial_outs = list(outs)
        trial_outs[j] = symbol
        for i in users:
            rest = [a for a in outs[i].args if a not in factors]
            trial_outs[i] = sp.Mul(symbol, *rest)
        trial = [*lines, (symbol, factored)]
        trial_cost = costs.program(trial, trial_outs)
        if trial_cost < cost:
            lines, outs, cost = trial, trial_outs, trial_cost
    return lines, outs


def _fold_signs(
    lines: list[Line], outs: list[sp.Expr], costs: _Costs, fresh: Callable[[], sp.Symbol]
) -> tuple[list[Line], list[sp.Expr]]:
    """Each temporary defined negated, where the program then costs fewer passes, also once
    a name it then negates twice is negated once (``_t0 = y*f(-y*u)`` used as ``-_t0``
    becomes ``_t0 = _t1*f(_t1*u)`` with ``_t1 = -y``: the logistic loss's gradient)."""
    cost = costs.program(lines, outs)
    for index in range(len(lines)):
        symbol, value = lines[index]
        flip = {symbol: -symbol}
        trial = [
            *lines[:index],
            (symbol, -value),
            *((s, v.xreplace(flip)) for s, v in lines[index + 1 :]),
        ]
        trial_outs = [e.xreplace(flip) for e in outs]
        trial_cost = costs.program(trial, trial_outs)
        if trial_cost >= cost:
            trial, trial_outs = _share_negated_names(trial, trial_outs, fresh, costs)
            trial_cost = costs.program(trial, trial_outs)
        if trial_cost < cost:
            lines, outs, cost = trial, trial_outs, trial_cost
    return lines, outs


def _drop_aliases(lines: list[Line], outs: list[sp.Expr]) -> tuple[list[Line], list[sp.Expr]]:
    """Without temporaries that only name another name (``_t1 = _t0`` once a sign is folded):
    their readers read that name."""
    alias: dict[sp.Symbol, sp.Expr] = {}
    kept: list[Line] = []
    for symbol, value in lines:
        value = value.xreplace(alias) if alias else value
        if value.is_Symbol:
            alias[symbol] = value
        else:
            kept.append((symbol, value))
    if not alias:
        return lines, outs
    return kept, [e.xreplace(alias) for e in outs]


def _negating(symbol: sp.Symbol) -> Callable[[sp.Basic], bool]:
    def test(node: sp.Basic) -> bool:
        return bool(node.is_Mul and node.args[0] == -1 and symbol in node.args)

    return test


def _share_negated_names(
    lines: list[Line], outs: list[sp.Expr], fresh: Callable[[], sp.Symbol], costs: _Costs
) -> tuple[list[Line], list[sp.Expr]]:
    """A name that products negate in several places, negated once into a temporary, where
    the program then costs fewer passes (``-y*f(-y*u)`` reads ``_t = -y`` twice)."""
    exprs = [*(v for _, v in lines), *outs]
    counts: dict[sp.Symbol, int] = {}
    for e in exprs:
        for node in sp.preorder_traversal(e):
            if node.is_Mul and node.args[0] == -1:
                for factor in node.args[1:]:
                    if factor.is_Symbol:
                        counts[factor] = counts.get(factor, 0) + 1
    cost = costs.program(lines, outs)
    defined = [s for s, _ in lines]
    for symbol in sorted((s for s, n in counts.items() if n >= 2), key=str):
        negated = fresh()
        found = _negating(symbol)

        def swap(e: sp.Expr, symbol=symbol, negated=negated, found=found) -> sp.Expr:
            return e.replace(found, lambda m: negated * (m / -symbol))

        where = defined.index(symbol) + 1 if symbol in defined else 0
        trial = [(s, swap(v)) for s, v in lines]
        trial.insert(where, (negated, -symbol))
        trial_outs = [swap(e) for e in outs]
        trial_cost = costs.program(trial, trial_outs)
        if trial_cost < cost:
            lines, outs, cost = trial, trial_outs, trial_cost
            defined = [s for s, _ in lines]
    return lines, outs


def _factor_lines(
    lines: list[Line], outs: list[sp.Expr], cost: _Costs
) -> tuple[list[Line], list[sp.Expr]]:
    """Each line with its common factors taken out, where that is cheaper."""

    def cheaper(expr: sp.Expr) -> sp.Expr:
        if not expr.is_Add:
            return expr
        factored = common_factors(expr)
        if factored == expr:
            return expr
        return factored if cost(factored) < cost(expr) else expr

    return [(s, cheaper(v)) for s, v in lines], [cheaper(e) for e in outs]
