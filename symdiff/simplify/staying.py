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

#: SymPy's canonical order of the terms of a sum and of the factors of a product.
COMPARED = functools.cmp_to_key(sp.Basic.compare)


def sum_power_stays(base: sp.Expr, exponent: sp.Expr) -> bool:
    """Whether ``sp.Pow(base, exponent)`` is the unevaluated power: ``base`` a sum that is not a
    number and ``exponent`` an integer other than 0 and 1.

    Read from SymPy's ``Pow.__new__`` (1.12-1.14): with such operands, every rule before
    ``base._eval_power(exponent)`` passes (they need a number, a symbol or a base of 1), and
    ``Add._eval_power`` returns a value only for a number (excluded) or for a two-term sum with
    an infinite term written ``a + b*I`` (excluded: no term of the sum contains ``I``)."""
    if not (exponent.is_Integer and base.is_Add) or exponent.p in (0, 1) or base.is_number:
        return False
    return len(base.args) != 2 or not any(_has_imaginary_unit(arg) for arg in base.args)


@functools.lru_cache(maxsize=1 << 16)
def _has_imaginary_unit(expr: sp.Basic) -> bool:
    """``expr.has(sp.I)``, each distinct subexpression visited once (``has`` walks the tree: a
    subexpression shared ``k`` times is walked ``k`` times, exponential in the depth of a
    derivative that reuses its inner derivatives)."""
    return expr is sp.I or any(
        _has_imaginary_unit(arg) for arg in expr.args if isinstance(arg, sp.Basic))


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
            and cls._eval_power is sp.Expr._eval_power and not expr.is_number)


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
        if factor.is_commutative and not factor.is_number:
            return factor, sp.S.One
        return None
    if factor.is_Pow and factor.base.is_commutative and stays(*factor.args):
        return factor.base, factor.exp
    return None
