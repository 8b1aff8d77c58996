"""Shape keys of expression trees, for packing isomorphic lines (:mod:`symdiff.codegen.pack`).

Two expressions have the same shape key when their trees are identical modulo the symbols at
their leaves and the float-exact numbers there (what SLP vectorisers and loop rerollers call
isomorphic): ``200*(x4 - x3**2)`` and ``200*(x9 - x8**2)``, or ``3*x1`` and ``-7*x5``.
Exponents, other numbers (``1/3``, ``pi``) and function names are part of the shape. The
arguments of a sum or product are taken in the order of their keys (the operation is
commutative; SymPy orders them by name, which differs between isomorphic lines), and a class of
at least :data:`REDUCE_MIN` arguments of one key is one *reduction* whose length may differ
between lines (a long sum of ``c*x`` terms is a sum over them, whatever their number).

Keys are small ints interned from tuples, computed once per distinct subexpression: the work is
linear in the size of the expressions' DAG, and grouping lines is one dictionary pass.
"""

from __future__ import annotations

from typing import NamedTuple

import sympy as sp

#: Arguments of one key in a sum or product from which they form one reduction.
REDUCE_MIN = 4
#: Integers up to this size pack into float64 constant arrays exactly.
EXACT = 2**53

#: Kinds of node.
SYMBOL, NUMBER, ATOM, SUM, PRODUCT, POWER, CALL, OPAQUE = range(8)


class Shape(NamedTuple):
    """One node's shape: its key, its kind, its children in key order (``singles``) and its
    reductions (``many``: per key of the class, the arguments of that class)."""

    key: int
    kind: int
    singles: tuple[sp.Basic, ...]
    many: tuple[tuple[int, tuple[sp.Basic, ...]], ...]
    #: Operations of the tree (an n-ary sum or product counts n - 1; a call or power one).
    operations: int
    #: Its symbols' names (that of a symbol; the union of its children's).
    names: frozenset[str]


class Shapes:
    """Shape keys, memoised per subexpression."""

    def __init__(self) -> None:
        self._ids: dict[object, int] = {}
        self._memo: dict[int, Shape] = {}

    def _intern(self, key: object) -> int:
        found = self._ids.get(key)
        if found is None:
            found = self._ids[key] = len(self._ids)
        return found

    def of(self, expr: sp.Basic) -> Shape:
        """The shape of ``expr`` (computed bottom-up, iteratively: no recursion limit). The
        memo is keyed by identity (SymPy's hash is a Python call; the expressions of one
        program are alive while it is packed and share their subexpressions)."""
        memo = self._memo
        found = memo.get(id(expr))
        if found is not None:
            return found
        stack = [(expr, False)]
        while stack:
            node, ready = stack.pop()
            if id(node) in memo:
                continue
            children = _children(node)
            if not ready:
                pending = [c for c in children if id(c) not in memo]
                if pending:
                    stack.append((node, True))
                    stack.extend((c, False) for c in pending)
                    continue
            key, kind, singles, many = self._make(node, children)
            if children:
                below = [memo[id(c)] for c in children]
                own = len(children) - 1 if kind in (SUM, PRODUCT) else 1
                operations = own + sum(b.operations for b in below)
                names = below[0].names.union(*(b.names for b in below[1:]))
            elif kind == SYMBOL:
                operations, names = 0, frozenset((node.name,))
            elif kind == OPAQUE:
                operations, names = 1, frozenset(s.name for s in node.free_symbols)
            else:
                operations, names = 0, _NONE
            memo[id(node)] = Shape(key, kind, singles, many, operations, names)
        return memo[id(expr)]

    def _make(self, node: sp.Basic, children: tuple[sp.Basic, ...]) -> tuple:
        """(key, kind, singles, many) of ``node``, its children's shapes known."""
        if node.is_Symbol:
            return self._intern("symbol"), SYMBOL, (), ()
        if (node.is_Integer and abs(int(node)) <= EXACT) or node.is_Float:
            return self._intern("number"), NUMBER, (), ()
        if node.is_Atom:
            return self._intern(("atom", node)), ATOM, (), ()
        if isinstance(node, sp.Pow) and node.exp.is_Number:
            base = self._memo[id(node.base)]
            return self._intern(("pow", node.exp, base.key)), POWER, (node.base,), ()
        if isinstance(node, sp.Add | sp.Mul):
            return self._reduction(node, children)
        if children:  # a function of expressions; a number argument is part of its shape
            keys = tuple(("number", a) if a.is_Number else self._memo[id(a)].key
                         for a in children)
            return self._intern(("call", node.func, keys)), CALL, children, ()
        return self._intern(("opaque", node)), OPAQUE, (), ()

    def _reduction(self, node: sp.Basic, children: tuple[sp.Basic, ...]) -> tuple:
        memo = self._memo
        kind = SUM if isinstance(node, sp.Add) else PRODUCT
        if len(children) < REDUCE_MIN:  # no reduction (most lines): the quick path
            keys = [memo[id(c)].key for c in children]
            order = sorted(range(len(children)), key=keys.__getitem__)
            return (self._intern((kind, tuple([keys[i] for i in order]), ())), kind,
                    tuple([children[i] for i in order]), ())
        keyed = sorted([(memo[id(c)].key, i) for i, c in enumerate(children)])
        counts: dict[int, int] = {}
        for key, _ in keyed:
            counts[key] = counts.get(key, 0) + 1
        if all(c < REDUCE_MIN for c in counts.values()):
            key = self._intern((kind, tuple(k for k, _ in keyed), ()))
            return key, kind, tuple(children[i] for _, i in keyed), ()
        many_keys = [k for k, c in counts.items() if c >= REDUCE_MIN]
        singles = tuple(children[i] for k, i in keyed if counts[k] < REDUCE_MIN)
        many = tuple(
            (k, tuple(children[i] for key, i in keyed if key == k)) for k in many_keys
        )
        key = self._intern((kind, tuple(k for k, _ in keyed if counts[k] < REDUCE_MIN),
                            tuple(many_keys)))
        return key, kind, singles, many


_NONE: frozenset[str] = frozenset()


def _children(node: sp.Basic) -> tuple[sp.Basic, ...]:
    """The subexpressions whose shapes make ``node``'s."""
    if node.is_Atom:
        return ()
    if isinstance(node, sp.Pow):
        return (node.base,) if node.exp.is_Number else ()
    if isinstance(node, sp.Add | sp.Mul):
        return tuple(node.args)
    if isinstance(node, sp.Function) and all(isinstance(a, sp.Expr) for a in node.args):
        return tuple(node.args)
    return ()
