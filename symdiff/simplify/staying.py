"""Which SymPy constructions leave their operands as they are, known without asking SymPy.

SymPy's constructors evaluate: ``Pow(b, e)`` asks ``b._eval_power(e)``, and for a sum ``b``
that asks whether a term is infinite, an assumption query that derives every fact of the term
(and of its factors) from scratch, and for a term that holds a nested quotient walks and
rewrites every denominator below it. The predicates here, read from SymPy's ``Pow.__new__``,
``Mul.flatten`` and ``Add.flatten`` (1.12-1.14), say when the outcome is known in advance:
:mod:`symdiff.simplify.quick` then builds SymPy's node directly.
"""

from __future__ import annotations

import functools

import sympy as sp
from sympy.core.basic import _cmp_name

#: Comparisons of pairs of subexpressions already made (:func:`compare`), up to about
#: :data:`MEMO_SIZE` of them, by the pair's identities (with the pair, kept alive).
_COMPARISONS: dict[tuple[int, int], tuple[sp.Basic, sp.Basic, int]] = {}


def compare(left: sp.Basic, right: sp.Basic) -> int:
    """``left.compare(right)``, SymPy's canonical order (-1, 0 or 1), with the comparisons of
    pairs of subexpressions remembered: two sums or products that differ deep down are
    compared level by level, and a nest compares the same inner pairs again at every level
    around them (quadratic in its depth)."""
    if left is right:
        return 0
    if type(left).compare is not sp.Basic.compare:
        return left.compare(right)
    key = (id(left), id(right))
    found = _COMPARISONS.get(key)
    if found is not None:
        return found[2]
    c = _cmp_name(type(left), type(right))
    if not c:
        st, ot = left._hashable_content(), right._hashable_content()
        c = (len(st) > len(ot)) - (len(st) < len(ot))
        for one, other in zip(st, ot, strict=True) if not c else ():
            if isinstance(one, sp.Basic):
                c = compare(one, other)
            elif isinstance(one, frozenset):
                c = compare(sp.Basic(*one), sp.Basic(*other) if isinstance(other, frozenset)
                            else other)
            else:
                c = (one > other) - (one < other)
            if c:
                break
    if len(_COMPARISONS) > MEMO_SIZE:
        _COMPARISONS.clear()
    _COMPARISONS[key] = (left, right, c)
    return c


#: SymPy's canonical order of the terms of a sum and of the factors of a product.
COMPARED = functools.cmp_to_key(compare)


def sum_power_stays(base: sp.Expr, exponent: sp.Expr) -> bool:
    """Whether ``sp.Pow(base, exponent)`` is the unevaluated power: ``base`` a sum that is not a
    number and ``exponent`` an integer other than 0 and 1.

    Read from SymPy's ``Pow.__new__`` (1.12-1.14): with such operands, every rule before
    ``base._eval_power(exponent)`` passes (they need a number, a symbol or a base of 1), and
    ``Add._eval_power`` returns a value only for a number (excluded) or for a two-term sum with
    an infinite term written ``a + b*I`` (excluded: no term of the sum contains ``I``)."""
    if not (exponent.is_Integer and base.is_Add) or exponent.p in (0, 1) or is_number(base):
        return False
    return len(base.args) != 2 or not any(_has_imaginary_unit(arg) for arg in base.args)


class _ByArguments:
    """A property of expressions that follows from their arguments' (``combine(node, values)``)
    unless ``own(node)`` gives it (not None), computed for each distinct subexpression once and
    kept for later calls (the last :data:`MEMO_SIZE` or so): SymPy's ``has`` and ``is_number``
    walk the tree below a node each time they are asked, quadratic over the levels of a nest
    and exponential in the depth of a derivative that reuses its inner derivatives. Iterative:
    no recursion however deep the expression.

    The memory is by identity (the node kept alive with its value): an equal copy of a node
    remembered, made after SymPy's cache was cleared, is worked out again in time linear in
    its DAG, where a lookup by equality compared the two trees level by level (quadratic over
    the levels of a chain)."""

    def __init__(self, own, combine):
        self.own, self.combine = own, combine
        self.known: dict[int, tuple[sp.Basic, bool]] = {}

    def __call__(self, expr: sp.Basic) -> bool:
        known = self.known
        found = known.get(id(expr))
        if found is not None:
            return found[1]
        if len(known) > MEMO_SIZE:
            known.clear()
        stack = [expr]
        while stack:
            node = stack[-1]
            if id(node) in known:
                stack.pop()
                continue
            value = self.own(node)
            if value is None:
                missing = [a for a in node.args if id(a) not in known]
                if missing:
                    stack.extend(missing)
                    continue
                value = self.combine(node, [known[id(a)][1] for a in node.args])
            known[id(node)] = (node, value)
            stack.pop()
        return known[id(expr)][1]


#: How many subexpressions a :class:`_ByArguments` property remembers before starting over.
MEMO_SIZE = 1 << 16

#: ``expr.has(sp.I)``.
_has_imaginary_unit = _ByArguments(
    lambda node: True if node is sp.I else (False if not node.args else None),
    lambda node, values: any(values))

_EXPR_IS_NUMBER = sp.Expr.__dict__["is_number"]


def _own_number(node: sp.Basic) -> bool | None:
    """``node.is_number`` where its class answers it itself, else None (``Expr``'s rule: every
    argument is a number)."""
    if getattr(type(node), "is_number", None) is _EXPR_IS_NUMBER and node.args:
        return None
    return bool(getattr(node, "is_number", False))


#: ``expr.is_number``: no free symbols and no undefined functions (SymPy's definition).
is_number = _ByArguments(_own_number, lambda node, values: all(values))


def unevaluated(cls: type, args: list[sp.Expr]) -> sp.Expr:
    """``cls(*args, evaluate=False)`` for ``Add`` or ``Mul`` and two or more expressions (not
    relationals): what ``AssocOp.__new__`` does then (``_from_args``, then the constructor
    postprocessors), without its cache lookup and argument checks."""
    return cls._exec_constructor_postprocessors(cls._from_args(args))


#: The classes of names whose integer powers SymPy leaves as they are.
_NAMES = (sp.Symbol, sp.Dummy)


def name_power_stays(base: sp.Expr, exponent: sp.Expr) -> bool:
    """Whether ``sp.Pow(base, exponent)`` is the unevaluated power: ``base`` a name (a
    ``Symbol`` or ``Dummy``) and ``exponent`` an integer other than 0 and 1.

    Read from SymPy's ``Pow.__new__`` (1.12-1.14): the rules before ``base._eval_power``
    need a number, a base of 1 or a base with a negative coefficient, and a name has no
    ``_eval_power`` of its own (``Expr._eval_power`` returns None)."""
    return type(base) in _NAMES and exponent.is_Integer and exponent.p not in (0, 1)


def power_of_power(base: sp.Expr, exponent: sp.Expr) -> bool:
    """Whether ``sp.Pow(base, exponent)`` is ``Pow(b, e*exponent)``: ``base = b**e`` with ``b``
    not a number and ``exponent`` an integer other than 0 and 1.

    Read from SymPy's ``Pow.__new__`` (1.12-1.14): with such operands every rule before
    ``base._eval_power(exponent)`` passes (they need a number or a base of 1), and
    ``Pow._eval_power`` gives ``1*Pow(b, e*exponent)`` for an integer exponent (its
    ``as_base_exp`` is ``(b, e)`` unless ``b`` is a rational)."""
    return (base.is_Pow and exponent.is_Integer and exponent.p not in (0, 1)
            and not base.base.is_Number)


def plain_call(expr: sp.Expr) -> bool:
    """Whether ``expr`` is a call of a function (not a number) that SymPy's ``Mul`` reads as
    ``expr**1`` and whose integer powers SymPy leaves as they are: a ``Function`` whose class
    keeps ``Expr``'s ``as_base_exp`` and ``_eval_power`` (``exp``, ``Abs``, ``sign`` and
    ``Piecewise`` have their own)."""
    cls = type(expr)
    return (isinstance(expr, sp.Function) and cls.as_base_exp is sp.Expr.as_base_exp
            and cls._eval_power is sp.Expr._eval_power and not is_number(expr))


def call_power_stays(base: sp.Expr, exponent: sp.Expr) -> bool:
    """Whether ``sp.Pow(base, exponent)`` is the unevaluated power: ``base`` a plain call
    (:func:`plain_call`) and ``exponent`` an integer other than 0 and 1 (``Pow.__new__``'s
    rules before ``base._eval_power`` need a number or a base of 1, and its ``_eval_power``
    is ``Expr``'s, which returns None)."""
    return exponent.is_Integer and exponent.p not in (0, 1) and plain_call(base)


def stays(base: sp.Expr, exponent: sp.Expr) -> bool:
    """Whether ``sp.Pow(base, exponent)`` is ``Pow(base, exponent, evaluate=False)``, known
    without asking SymPy: an integer power (not 0 or 1) of a name, of a sum
    (:func:`sum_power_stays`) or of a plain call (:func:`call_power_stays`)."""
    return (name_power_stays(base, exponent) or sum_power_stays(base, exponent)
            or call_power_stays(base, exponent))


def staying_factor(factor: sp.Expr) -> tuple[sp.Expr, sp.Integer] | None:
    """``(base, k)`` for a factor that ``Mul.flatten`` keeps as it is, ``base**k``: a
    commutative name, a sum that is not a number, a plain call (:func:`plain_call`), or an
    integer power of one of them that stays (:func:`stays`); else None."""
    if factor.is_Symbol or factor.is_Add or plain_call(factor):
        if factor.is_commutative and not is_number(factor):
            return factor, sp.S.One
        return None
    if factor.is_Pow and factor.base.is_commutative and stays(*factor.args):
        return factor.base, factor.exp
    return None
