"""Reverse mode: linearise the expression DAG into temporaries, then sweep adjoints backwards.

``reverse_program(outputs, wrt)`` returns SymPy assignments ``(target, value)`` in evaluation
order: the forward pass (``_t0 = x*y``, ``_t1 = sin(_t0)``, ...), then for each output a backward
pass (``_t1_bar = ...``, accumulating at fan-out, where a node branches), ending in the
adjoint of every ``wrt`` variable (``_x_bar``; names from :mod:`symdiff.codegen.naming`).
Local partials come from the same rules as forward mode (:mod:`symdiff.engine.local`: the
structural rules and the registry's function rows), so both modes compute the same
derivatives. The cost is a small constant times the cost of the function, however many
variables there are. Given a :class:`~symdiff.engine.adjoints.ReverseSteps`, the
sweep records what it does as it does it (the teaching view of ``explain()``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import sympy as sp

from ..codegen import naming
from ..errors import UnsupportedError
from ..simplify import own_free_symbols, quick, stable_forms, zero_power_log
from ..simplify.dag import free_symbols
from .adjoints import AdjointStep, Contribution, Definition, GradientStep, ReverseSteps, Sweep
from .local import Local, operation_rule, piecewise_rule

Assignment = tuple[sp.Symbol, sp.Expr]


@dataclass
class _Node:
    symbol: sp.Symbol
    value: sp.Expr  # in terms of child symbols
    children: tuple[sp.Expr, ...]  # symbols of temporaries, variables or constants
    partials: tuple[sp.Expr | None, ...]  # d value / d child, in terms of symbols
    local: Local | None = None  # the rule that gave the partials (None: drawn nodes of graphs)


class Linearizer:
    """Assigns one temporary per distinct compound subexpression, children first.

    ``nodes`` are the assignments made so far, in order; ``seen`` maps each subexpression
    linearised so far to the symbol (or constant) standing for it. A subclass (the computational
    graphs' :class:`symdiff.graphs.written.AsWritten`) may fill ``seen`` and record nodes of its
    own with :meth:`add`. Temporaries are named ``_t0, _t1, ...``, never after one of
    ``variables`` (:func:`symdiff.codegen.naming.temporaries`: the adjoint ``_t0_bar`` of a
    temporary is never the gradient ``_t0_bar`` of a variable ``t0``).
    """

    def __init__(self, variables: Iterable[str] = ()) -> None:
        self.nodes: list[_Node] = []
        self.seen: dict[sp.Expr, sp.Expr] = {}
        self.constants: dict[sp.Expr, bool] = {}
        self.names = naming.temporaries(variables)

    def __call__(self, expr: sp.Expr) -> sp.Expr:
        """The symbol (or constant) standing for ``expr`` after linearisation."""
        if expr in self.seen:
            return self.seen[expr]
        if expr.is_Atom or self._constant(expr):
            result = expr
        elif isinstance(expr, sp.Mul) and len(expr.args) > 2:
            head, *rest = expr.args
            result = self._binary_product(self(head), rest)
        else:
            result = self._node(expr)
        self.seen[expr] = result
        return result

    def _constant(self, expr: sp.Expr) -> bool:
        """Whether ``expr`` has no free symbol, memoised over the DAG (SymPy's ``free_symbols``
        walks the whole tree below a node each time it is asked: asked of every node, that is
        the tree's size times its depth). A type with its own ``free_symbols`` (bound
        variables) is asked directly."""
        found = self.constants.get(expr)
        if found is None:
            if expr.is_Atom or own_free_symbols(type(expr)):
                found = not expr.free_symbols
            else:
                found = all(self._constant(arg) for arg in expr.args)
            self.constants[expr] = found
        return found

    def _binary_product(self, left: sp.Expr, factors: list[sp.Expr]) -> sp.Expr:
        for factor in factors:
            right = self(factor)
            children = (left, right)
            value = quick.unevaluated(sp.Mul, [left, right])
            local = operation_rule(sp.Mul, children, value)
            left = self.add(value, children, local.partials, local)
        return left

    def _node(self, expr: sp.Expr) -> sp.Expr:
        if isinstance(expr, sp.Piecewise):
            return self._piecewise(expr)
        children = tuple(self(arg) for arg in expr.args)
        # operands that stand for themselves (names, constants) leave the node as it is
        value = expr if children == expr.args else quick.rebuilt(expr.func, children)
        local = operation_rule(expr.func, children, value)
        return self.add(value, children, _in_code_forms(local, children, value), local)

    def _piecewise(self, expr: sp.Piecewise) -> sp.Expr:
        values = tuple(self(branch) for branch, _ in expr.args)
        conditions = [cond for _, cond in expr.args]
        value = sp.Piecewise(*zip(values, conditions, strict=True))
        local = piecewise_rule(conditions)
        return self.add(value, values, local.partials, local)

    def add(self, value, children, partials, local: Local | None = None) -> sp.Symbol:
        """Record a node: a new temporary for ``value`` with its ``children`` and local
        ``partials`` (and the rule that gave them, if any); returns the temporary."""
        symbol = sp.Symbol(next(self.names), real=True)
        # A partial that repeats the node's own value (exp, sigmoid, ...) reuses its temporary.
        partials = tuple(
            p if p is None or p.is_Atom else p.xreplace({value: symbol}) for p in partials
        )
        self.nodes.append(_Node(symbol, value, tuple(children), partials, local))
        return symbol


def _in_code_forms(local: Local, children: tuple[sp.Expr, ...], value: sp.Expr) -> tuple:
    """The rule's partials in the forms the code computes: the stable forms of the function
    rows (``sigmoid(u)*sigmoid(-u)`` for ``sigmoid(u)*(1 - sigmoid(u))``, exact in both tails),
    and the exponential rule's ``log(base)`` taken as 0 where ``value = base**exponent`` is 0
    (JAX's rule: ``d 0**u/du`` is 0, not ``0*log(0) = nan``)."""
    if isinstance(value, sp.Pow) and local.rule in ("exponential", "general power"):
        base = children[0]
        by_base, by_exponent = local.partials
        log = sp.log(base)
        if by_exponent is not None and by_exponent != 0 and isinstance(log, sp.log):
            by_exponent = by_exponent.xreplace({log: zero_power_log(value, base)})
        return (by_base, by_exponent)
    if isinstance(value, sp.Pow | sp.Add | sp.Mul):
        return local.partials
    return tuple(p if p is None else stable_forms(p) for p in local.partials)


def reverse_program(
    outputs: Sequence[sp.Expr],
    wrt: Sequence[sp.Symbol],
    keep_values: bool = False,
    inline: bool = True,
    record: ReverseSteps | None = None,
) -> tuple[list[Assignment], list[sp.Expr], list[list[sp.Expr]]]:
    """Forward and backward assignments for ``outputs`` differentiated by ``wrt``.

    Returns ``(assignments, values, gradients)``: ``values[k]`` is output ``k`` and
    ``gradients[k][i]`` its derivative by ``wrt[i]``, both in terms of the assigned symbols.
    Assignments nothing needs are dropped (the values too, unless ``keep_values``), and with
    ``inline`` temporaries used once are substituted (:func:`inline_single_use`); a program that
    is differentiated further (forward over reverse) inlines after that instead. ``record``, if
    given, receives the forward pass and every backward step as they are made.
    """
    outputs = [sp.sympify(out) for out in outputs]
    variables = {s.name for s in free_symbols([*outputs, *wrt])}
    linear = Linearizer(variables)
    roots = [linear(out) for out in outputs]
    assignments: list[Assignment] = [(n.symbol, n.value) for n in linear.nodes]
    if record is not None:
        record.wrt = tuple(wrt)
        record.definitions = [Definition(n.symbol, n.value, _rule(n)) for n in linear.nodes]
    gradients: list[list[sp.Expr]] = []
    for k, root in enumerate(roots):
        output = None if len(roots) == 1 else k
        backward, grads = _backward(linear.nodes, root, wrt, output, record)
        assignments += backward
        gradients.append(grads)
    needed = [*(roots if keep_values else []), *(g for grads in gradients for g in grads)]
    assignments = prune(assignments, needed)
    if not inline:
        return assignments, roots, gradients
    flat = [*roots, *(g for grads in gradients for g in grads)]
    assignments, flat = inline_single_use(assignments, flat)
    roots, rest = flat[: len(roots)], flat[len(roots) :]
    width = len(wrt)
    gradients = [rest[k * width : (k + 1) * width] for k in range(len(gradients))]
    return assignments, roots, gradients


def _rule(node: _Node) -> str:
    return node.local.rule if node.local is not None else type(node.value).__name__.lower()


def _backward(
    nodes: list[_Node], root: sp.Expr, wrt: Sequence[sp.Symbol], output: int | None,
    record: ReverseSteps | None = None,
):
    """One backward sweep from ``root`` (seeded with 1): adjoint assignments and the grads;
    ``output`` numbers the sweep of one output of several (adjoints ``_t0_bar_1``)."""
    contributions: dict[sp.Expr, list[sp.Expr]] = {root: [sp.S.One]}
    adjoint: dict[sp.Expr, sp.Expr] = {}
    assignments: list[Assignment] = []
    steps: list[AdjointStep] = []
    for node in reversed(nodes):
        parts = contributions.get(node.symbol)
        if not parts:
            continue
        bar = quick.addition(parts)
        named = None
        if not bar.is_Atom:
            named = sp.Symbol(naming.adjoint(node.symbol.name, output), real=True)
            assignments.append((named, bar))
            bar = named
        adjoint[node.symbol] = bar
        sends: list[Contribution] = []
        rule_partials = node.local.partials if node.local is not None else node.partials
        for child, partial, own in zip(node.children, node.partials, rule_partials, strict=True):
            if child.is_Atom and not child.free_symbols:
                continue
            if partial is None:
                if child.free_symbols & set(wrt):
                    raise UnsupportedError(f"{sp.sstr(node.value)}: argument {child} cannot vary")
                continue
            term = quick.product(partial, bar)
            if term != 0:
                contributions.setdefault(child, []).append(term)
                if record is not None:  # the rule's own form, where the code's differs
                    own = own if own is None else own.xreplace({node.value: node.symbol})
                    shown = own if own != partial else None
                    sends.append(Contribution(child, partial, term, shown))
        if record is not None:
            definition = Definition(node.symbol, node.value, _rule(node))
            identity = node.local.explanation() if node.local is not None else ""
            seed = node.symbol == root
            steps.append(AdjointStep(definition, identity, tuple(parts), named, tuple(sends), seed))
    grads = []
    for var in wrt:
        total = quick.addition(contributions.get(var, []))
        grads.append(total)
    if record is not None:
        gradients = tuple(GradientStep(v, tuple(contributions.get(v, []))) for v in wrt)
        record.sweeps.append(Sweep(root, tuple(steps), gradients, output))
    return assignments, grads


def inline_single_use(
    assignments: list[Assignment], outputs: list[sp.Expr]
) -> tuple[list[Assignment], list[sp.Expr]]:
    """Substitute every temporary used exactly once into its one use.

    Linearisation gives every operation its own temporary (``_t0 = -x0``, ``_t1 = _t0 + 1``),
    and each becomes a full pass over memory at run time; a temporary read once saves nothing by
    being named. Substituting it keeps the total size linear (each is placed exactly once) and
    leaves the shared values, those read two or more times, as the assignments.
    """
    targets = {symbol for symbol, _ in assignments}
    uses: dict[sp.Symbol, int] = dict.fromkeys(targets, 0)
    for expr in [*(value for _, value in assignments), *outputs]:
        for node in sp.preorder_traversal(expr):
            if node in targets:
                uses[node] += 1
    substitute: dict[sp.Symbol, sp.Expr] = {}
    kept: list[Assignment] = []
    for symbol, value in assignments:
        value = quick.substitute(value, substitute)
        if uses[symbol] == 1:
            substitute[symbol] = value
        else:
            kept.append((symbol, value))
    return kept, [quick.substitute(sp.sympify(out), substitute) for out in outputs]


def prune(assignments: list[Assignment], needed: list[sp.Expr]) -> list[Assignment]:
    """Drop assignments that no output depends on (dead code), keeping the order."""
    live = set().union(*(e.free_symbols for e in needed)) if needed else set()
    kept: list[Assignment] = []
    for symbol, value in reversed(assignments):
        if symbol in live:
            kept.append((symbol, value))
            live |= value.free_symbols
    return kept[::-1]
