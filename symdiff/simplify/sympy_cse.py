"""SymPy's ``cse`` (``order="canonical"``, no extra optimizations) without its re-evaluations:
:func:`cse`.

``sympy.cse`` looks for shared work with ``opt_cse`` and then names the repeated subexpressions
with ``tree_cse``. Both build nodes again with SymPy's evaluating constructors (``Pow(b, 2)``
for ``b**-2``, every product's commutative part ``Mul(*c)``, each node whose arguments were
renamed), and for a power of a sum that asks whether a term of the sum is infinite: an
assumption query that, for a term holding a nested quotient, clears every denominator below it
(seconds for a 20-deep nest, doubling with each level). Both also walk the expressions
recursively through C calls, one level of the interpreter's C stack per level of the
expression. Here the same algorithm builds its nodes with :mod:`symdiff.simplify.quick`
(SymPy's own nodes, made without the queries), counts the nodes its canonical order sorts by
once per distinct subexpression, and walks with explicit stacks; the result is SymPy's
(``tests/test_simplify_cse.py`` compares them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import sympy as sp
from sympy.core.containers import OrderedSet
from sympy.core.function import Derivative
from sympy.core.sorting import _nodes, default_sort_key, ordered
from sympy.simplify.cse_main import Unevaluated, match_common_args
from sympy.utilities.iterables import iterable, topological_sort

from .postorder import bottom_up
from .quick import addition, multiplication, negative, power, rebuilt

Assignment = tuple[sp.Symbol, sp.Expr]


def cse(exprs: Sequence[sp.Expr], symbols: Iterator[sp.Symbol]
        ) -> tuple[list[Assignment], list[sp.Expr]]:
    """``sympy.cse(exprs, symbols=symbols, order="canonical")``: (assignments in evaluation
    order, reduced outputs)."""
    exprs = list(exprs)
    return _tree_cse(exprs, symbols, _opt_subs(exprs))


def _walk(roots: Sequence[object], enter: Callable[[object], Sequence[object] | None],
          leave: Callable[[object], None] = lambda node: None) -> None:
    """Depth first over ``roots``, children left to right, as a recursive walk would go:
    ``enter(node)`` gives the children to visit (None: none, and no ``leave``), ``leave(node)``
    runs once they are done."""
    for root in roots:
        children = enter(root)
        if children is None:
            continue
        stack = [(root, iter(children))]
        while stack:
            node, pending = stack[-1]
            child = next(pending, _DONE)
            if child is _DONE:
                stack.pop()
                leave(node)
                continue
            grand = enter(child)
            if grand is not None:
                stack.append((child, iter(grand)))


_DONE = object()


def _opt_subs(exprs: list[sp.Expr]) -> dict:
    """SymPy's ``opt_cse(exprs, "canonical")`` (scalars): a negation pulled out of each node
    that can lose its sign, ``b**-k`` read as ``1/(b**k)``, a product's commutative part, and
    the common arguments of sums and of products."""
    opt_subs: dict = {}
    adds: OrderedSet = OrderedSet()
    muls: OrderedSet = OrderedSet()
    seen: set = set()
    collapsible: set = set()

    def enter(expr: object) -> Sequence[object] | None:
        if not isinstance(expr, (sp.Basic, Unevaluated)):
            return None
        if isinstance(expr, sp.Basic) and (expr.is_Atom or expr.is_Order):
            return None
        if iterable(expr):
            return list(expr)  # (a Tuple: its elements, nothing else)
        if expr in seen:
            return None
        seen.add(expr)
        return expr.args

    def leave(expr: sp.Basic) -> None:
        if iterable(expr):
            return
        if expr.could_extract_minus_sign():
            if isinstance(expr, sp.Add):
                flipped = addition([-term for term in expr.args])
            else:
                flipped = negative(expr)
            if not flipped.is_Atom:
                opt_subs[expr] = Unevaluated(sp.Mul, (sp.S.NegativeOne, flipped))
                seen.add(flipped)
                expr = flipped
        if isinstance(expr, (sp.Mul, sp.Add)):
            if len(expr.args) == 1:
                collapsible.add(expr)
            else:
                (muls if isinstance(expr, sp.Mul) else adds).add(expr)
        elif isinstance(expr, sp.Pow) and expr.exp.could_extract_minus_sign():
            base, exponent = expr.base, expr.exp
            opt_subs[expr] = Unevaluated(sp.Pow, (power(base, negative(exponent)), -1))

    _walk([e for e in exprs if isinstance(e, (sp.Basic, Unevaluated))], enter, leave)
    edges = [(s, s.args[0]) for s in collapsible if s.args[0] in collapsible]
    for e in reversed(topological_sort((collapsible, edges))):
        opt_subs[e] = opt_subs.get(e.args[0], e.args[0])
    commutative_muls: OrderedSet = OrderedSet()
    for m in muls:
        c, nc = m.args_cnc(cset=False)
        if c:
            c_mul = multiplication(c)
            if nc:
                opt_subs[m] = m.func(*nc) if c_mul == 1 else m.func(
                    c_mul, m.func(*nc), evaluate=False)
            if len(c) > 1:
                commutative_muls.add(c_mul)
    match_common_args(sp.Add, adds, opt_subs)
    match_common_args(sp.Mul, commutative_muls, opt_subs)
    return opt_subs


def _tree_cse(exprs: list[sp.Expr], symbols: Iterator[sp.Symbol], opt_subs: dict
              ) -> tuple[list[Assignment], list[sp.Expr]]:
    """SymPy's ``tree_cse`` (``order="canonical"``, nothing ignored): every subexpression met
    twice (after ``opt_subs``) is named, arguments of sums and products in SymPy's canonical
    order (:func:`_ordered`)."""
    to_eliminate: set = set()
    seen: set = set()
    excluded: set[str] = set()

    def enter(expr: object) -> Sequence[object] | None:
        if not isinstance(expr, (sp.Basic, Unevaluated)) or isinstance(expr, sp.RootOf):
            return None
        if isinstance(expr, sp.Basic) and (expr.is_Atom or expr.is_Order):
            if expr.is_Symbol:
                excluded.add(expr.name)
            return None
        if iterable(expr):
            return list(expr)
        if expr in seen:
            to_eliminate.add(expr)
            return None
        seen.add(expr)
        return opt_subs.get(expr, expr).args

    _walk([e for e in exprs if isinstance(e, sp.Basic)], enter)
    rebuild = _Rebuild(opt_subs, to_eliminate,
                       (s for s in symbols if s.name not in excluded))
    reduced = [rebuild(e) if isinstance(e, sp.Basic) else e for e in exprs]
    return rebuild.replacements, reduced


class _Rebuild:
    """``tree_cse``'s ``_rebuild``, with an explicit stack: each node built again from its
    rebuilt arguments (by :func:`symdiff.simplify.quick.rebuilt`, SymPy's node), or named
    when it is to be eliminated (then its name wherever it is met again)."""

    def __init__(self, opt_subs: dict, to_eliminate: set, names: Iterator[sp.Symbol]):
        self.opt_subs, self.to_eliminate, self.names = opt_subs, to_eliminate, names
        self.replacements: list[Assignment] = []
        self.subs: dict = {}
        self.counts: dict[sp.Basic, float] = {}

    def __call__(self, root: sp.Basic) -> sp.Basic:
        results: list[object] = []
        stack = [self._frame(root)]
        while stack:
            node, args, new = stack[-1]
            if args is not None and len(new) < len(args):
                stack.append(self._frame(args[len(new)]))
                continue
            stack.pop()
            value = new[0] if args is None else self._built(node, args, new)
            (stack[-1][2] if stack else results).append(value)
        return results[0]

    def _frame(self, expr: object) -> tuple[object, Sequence[object] | None, list[object]]:
        """(node, the arguments ``_rebuild`` visits below it, their rebuilt forms so far); no
        arguments (None) for a node that is its own result (given as its one rebuilt form)."""
        if not isinstance(expr, (sp.Basic, Unevaluated)) or not expr.args:
            return expr, None, [expr]
        if iterable(expr):
            return expr, list(expr.args), []
        if expr in self.subs:
            return expr, None, [self.subs[expr]]
        value = self.opt_subs.get(expr, expr)
        if isinstance(value, sp.Mul):
            c, nc = value.args_cnc()
            return expr, (nc if c == [1] else [*_ordered(c, self.counts), *nc]), []
        if isinstance(value, sp.Add):
            return expr, _ordered(list(value.args), self.counts), []
        return expr, value.args, []  # (a tuple: SymPy builds these again whatever the args)

    def _built(self, node: object, args: Sequence[object], new: list[object]) -> object:
        if iterable(node):
            return node.func(*new)
        value = self.opt_subs.get(node, node)
        if isinstance(value, Unevaluated) or isinstance(args, tuple) or new != list(args):
            value = rebuilt(value.func, tuple(sp.sympify(a) for a in new))
        if node in self.to_eliminate:
            symbol = next(self.names)
            self.subs[node] = symbol
            self.replacements.append((symbol, value))
            return symbol
        return value


def _ordered(seq: list[sp.Basic], counts: dict[sp.Basic, float]) -> list[sp.Basic]:
    """``list(sympy.ordered(seq))``: by the number of nodes of each tree (counted over the
    DAG, memoised in ``counts``), ties by ``default_sort_key``."""
    if len(seq) < 2:
        return list(seq)
    return list(ordered(seq, keys=(lambda e: _node_total(e, counts), default_sort_key),
                        default=False))


def _node_total(expr: sp.Basic, counts: dict[sp.Basic, float]) -> float:
    """SymPy's ``_nodes(expr)``: the nodes of the tree (a float counts one half)."""
    if not isinstance(expr, sp.Basic) or isinstance(expr, Derivative):
        return _nodes(expr)
    return bottom_up(expr, counts, lambda node: 0.5 if node.is_Float
                     else 1 + sum(counts[a] for a in node.args))
