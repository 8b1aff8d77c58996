"""SymPy nodes built without SymPy's evaluation where its outcome is known in advance.

SymPy's constructors evaluate: ``Pow(b, e)`` asks ``b._eval_power(e)``, and for a sum ``b``
that asks whether a term is infinite, an assumption query that derives every fact of the term
(and of its factors) from scratch: about a millisecond per fresh node, most of the cost of
parsing a 1,000-name Rosenbrock function. :func:`power` gives exactly the node SymPy would build
(same class, arguments and flags) and skips the evaluation only where its outcome is known
without asking; everywhere else it is ``sp.Pow(base, exponent)``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp
from sympy.core.mul import _keep_coeff
from sympy.core.parameters import global_parameters

from .staying import (
    COMPARED,
    call_power_stays,
    is_number,
    name_power_stays,
    plain_call,
    power_of_power,
    staying_factor,
    stays,
    sum_power_stays,
    unevaluated,
)


def power(base: sp.Expr, exponent: sp.Expr) -> sp.Expr:
    """``sp.Pow(base, exponent)``, the same node, without SymPy's assumption queries where the
    evaluation cannot change it (:func:`sum_power_stays`, :func:`name_power_stays`,
    :func:`_product_power`)."""
    if stays(base, exponent):
        return sp.Pow(base, exponent, evaluate=False)
    if power_of_power(base, exponent):  # (b**e)**k is b**(e*k), made the same way
        return power(base.base, base.exp * exponent)
    made = _product_power(base, exponent)
    return sp.Pow(base, exponent) if made is None else made


def _staying_factors(expr: sp.Expr) -> tuple[sp.Expr, list[sp.Expr]] | None:
    """``(c, [factors])`` for a product of a rational ``c`` (not 0) and staying factors
    (:func:`staying_factor`) with distinct bases, or one such factor; else None."""
    coefficient, rest = expr.as_coeff_Mul() if expr.is_Mul else (sp.S.One, expr)
    if not coefficient.is_Rational or coefficient.p == 0:
        return None
    factors = list(sp.Mul.make_args(rest))
    if any(staying_factor(f) is None for f in factors):
        return None
    return coefficient, factors


def _product_of_staying(coefficient: sp.Expr, factors: list[sp.Expr]) -> sp.Expr | None:
    """SymPy's ``Mul`` of a rational ``coefficient`` (not 0) and staying factors, when their
    bases are distinct (nothing to combine) and it is not a coefficient times one sum (which
    ``Mul`` distributes): the coefficient (unless 1), then the factors in canonical order; else
    None."""
    bases = [staying_factor(f)[0] for f in factors]  # type: ignore[index]
    if not factors or len(set(bases)) != len(bases):
        return None
    if len(factors) == 1:
        if coefficient is sp.S.One:
            return factors[0]
        if factors[0].is_Add:
            return None
    ordered = sorted(factors, key=COMPARED)
    return unevaluated(sp.Mul, ordered if coefficient is sp.S.One else [coefficient, *ordered])


def _product_power(base: sp.Expr, exponent: sp.Expr) -> sp.Expr | None:
    """``Pow(base, k)`` for a product ``base`` of a rational and staying factors
    (:func:`_staying_factors`) and an integer ``k`` other than 0 and 1: ``Mul._eval_power``
    gives the product of each factor to the power ``k`` (``(x/(1 + y**2))**2`` is
    ``x**2/(1 + y**2)**2``), made here without re-evaluating the powers of sums (each an
    assumption query that clears every nested denominator below it); else None."""
    if not (base.is_Mul and exponent.is_Integer) or exponent.p in (0, 1) or is_number(base):
        return None
    found = _staying_factors(base)
    if found is None:
        return None
    coefficient, factors = found
    powered = []
    for factor in factors:
        inner, k = staying_factor(factor)  # type: ignore[misc]
        k = k * exponent
        if not (stays(inner, k) or k is sp.S.One):
            return None
        powered.append(inner if k is sp.S.One else sp.Pow(inner, k, evaluate=False))
    return _product_of_staying(coefficient**exponent, powered)


def _staying_product(left: sp.Expr, right: sp.Expr) -> sp.Expr | None:
    """``Mul(left, right)`` unevaluated when that is what SymPy builds for a rational
    coefficient (not 0 or 1) and a staying power of a sum (:func:`sum_power_stays`), else None.
    SymPy's ``Mul`` rebuilds every power factor with ``Pow(b, e)``, and distributes a
    coefficient only over a bare sum."""
    coefficient, factor = (left, right) if left.is_Rational else (right, left)
    if (
        coefficient.is_Rational
        and coefficient.p != 0
        and coefficient is not sp.S.One
        and factor.is_Pow
        and (sum_power_stays(*factor.args) or call_power_stays(*factor.args))
    ):
        return unevaluated(sp.Mul, [coefficient, factor])
    return None


def _name_factor(factor: sp.Expr) -> sp.Expr | None:
    """The name of a factor that is a commutative name or an integer power of one (the base
    by which ``Mul`` would combine it with another factor), else None."""
    if factor.is_Symbol:
        return factor if factor.is_commutative else None
    if factor.is_Pow and name_power_stays(*factor.args) and factor.base.is_commutative:
        return factor.base
    return None


def _names_times(expr: sp.Expr) -> tuple[sp.Expr, list[sp.Expr]] | None:
    """``(c, [factors])`` for a rational ``c`` (``expr`` itself), a name or an integer power of
    one (:func:`_name_factor`), or a product of a rational coefficient and such factors; else
    None."""
    if expr.is_Rational:
        return expr, []
    if _name_factor(expr) is not None:
        return sp.S.One, [expr]
    if not expr.is_Mul:
        return None
    coefficient, rest = expr.as_coeff_Mul()
    factors = list(sp.Mul.make_args(rest))
    if not coefficient.is_Rational or any(_name_factor(f) is None for f in factors):
        return None
    return coefficient, factors


def _names_product(left: sp.Expr, right: sp.Expr) -> sp.Expr | None:
    """``Mul(left, right)`` for two products of names and integer powers of names with rational
    coefficients (:func:`_names_times`), at least one name among them, when no name is in both
    (nothing to combine into a power) and the coefficient is not 0: SymPy's result, the
    coefficient (unless 1) then the factors in its canonical order (``Mul.flatten`` rebuilds
    each factor ``Pow(name, n)``, the same node); else None."""
    one, other = _names_times(left), _names_times(right)
    if one is None or other is None or not (one[1] or other[1]):
        return None
    factors = one[1] + other[1]
    coefficient = one[0] * other[0]
    if coefficient.p == 0 or len({_name_factor(f) for f in factors}) != len(factors):
        return None
    if len(factors) == 1 and coefficient is sp.S.One:
        return factors[0]
    factors.sort(key=COMPARED)
    args = factors if coefficient is sp.S.One else [coefficient, *factors]
    return unevaluated(sp.Mul, args)


def _distributed(left: sp.Expr, right: sp.Expr) -> sp.Expr | None:
    """``Mul(left, right)`` for a rational ``c`` (not 0 or 1) and a commutative sum ``s``:
    SymPy's two-factor rule distributes it, ``Add(*[_keep_coeff(c, t) for t in s.args])``
    (``Mul.flatten``, 1.12-1.14; a sum's ``as_coeff_Mul`` is ``(1, s)``), built here through
    :func:`addition`; else None."""
    coefficient, factor = (left, right) if left.is_Rational else (right, left)
    if not (coefficient.is_Rational and factor.is_Add and factor.is_commutative) or (
            coefficient.p == 0 or coefficient is sp.S.One or not global_parameters.distribute):
        return None
    return addition([_kept(coefficient, term) for term in factor.args])


def _kept(coefficient: sp.Expr, term: sp.Expr) -> sp.Expr:
    """SymPy's ``_keep_coeff(coefficient, term)`` for a rational ``coefficient``: its own rules
    for a product, a sum, a number, the coefficients 1 and -1; otherwise it is
    ``coefficient*term`` (unless that is a number), made here by :func:`product`."""
    if term.is_Mul or term.is_Add or term.is_Number or coefficient in (sp.S.One, sp.S.NegativeOne):
        return _keep_coeff(coefficient, term)
    made = product(coefficient, term)
    return _keep_coeff(coefficient, term) if made.is_Number else made


def _quick_product(left: sp.Expr, right: sp.Expr) -> sp.Expr | None:
    """``Mul(left, right)`` by the first quick rule that applies, else None: a factor 1 (which
    ``AssocOp.__new__`` drops), :func:`_staying_product`, :func:`_names_product`,
    :func:`_distributed`."""
    if left is sp.S.One and isinstance(right, sp.Expr) and not right.is_Number:
        return right
    if right is sp.S.One and isinstance(left, sp.Expr) and not left.is_Number:
        return left
    made = _staying_product(left, right)
    if made is None:
        made = _names_product(left, right)
    if made is None:
        made = _distributed(left, right)
    if made is None:
        made = _factors_product(left, right)
    return made


def _factors_product(left: sp.Expr, right: sp.Expr) -> sp.Expr | None:
    """``Mul(left, right)`` for two products of staying factors (:func:`_staying_factors`:
    names, sums, staying integer powers of them) with rational coefficients and no base in
    both: ``x*(1 + y**2)**-1``, made without ``Mul.flatten`` re-evaluating each power of a sum;
    else None (SymPy's two-factor rule for a rational and a sum included)."""
    for one, other in ((left, right), (right, left)):
        if one.is_Rational and other.as_coeff_Mul()[1].is_Add:
            return None
    one, other = _staying_factors(left), _staying_factors(right)
    if one is None or other is None:
        return None
    return _product_of_staying(one[0] * other[0], one[1] + other[1])


def product(left: sp.Expr, right: sp.Expr) -> sp.Expr:
    """``left * right``, the same node, without re-evaluating a staying power of a sum
    (:func:`_quick_product`, then :func:`_collected`)."""
    made = _two_factors(left, right)
    return left * right if made is None else made


def _two_factors(left: sp.Expr, right: sp.Expr) -> sp.Expr | None:
    """``Mul(left, right)`` by :func:`_quick_product` or :func:`_collected`, else None."""
    made = _quick_product(left, right)
    if made is None and not _rational_times_sum(left, right):
        made = _collected([left, right])
    return made


def negative(expr: sp.Expr) -> sp.Expr:
    """``-expr``, the same node: SymPy's negation, which builds ``-1*expr`` without evaluating,
    except for a sum, which ``Mul(-1, s)`` distributes (made by :func:`product`)."""
    if expr.is_Add and global_parameters.distribute:
        return product(sp.S.NegativeOne, expr)
    return -expr


def multiplication(args: Sequence[sp.Expr]) -> sp.Expr:
    """``sp.Mul(*args)``, the same node: :func:`product`'s rules for two factors (after
    dropping the factors 1, as ``AssocOp.__new__`` does), :func:`_collected` for more; else
    ``sp.Mul(*args)``."""
    factors = [a for a in args if a is not sp.S.One]
    if len(factors) == 2:
        made = _two_factors(*factors)
    else:
        made = _collected(factors) if len(factors) > 2 else None
    return sp.Mul(*args) if made is None else made


def _rational_times_sum(left: sp.Expr, right: sp.Expr) -> bool:
    """Whether ``Mul(left, right)`` takes SymPy's two-factor rule: a rational (not 0) and a
    sum or a rational times a sum (``Mul.flatten``'s "2-arg hack")."""
    for one, other in ((left, right), (right, left)):
        if one.is_Rational and one.p != 0 and other.as_coeff_Mul()[1].is_Add:
            return True
    return False


_INFINITIES = (sp.S.Infinity, sp.S.NegativeInfinity, sp.S.ComplexInfinity)


def _collected(args: list[sp.Expr]) -> sp.Expr | None:
    """SymPy's ``Mul`` of commutative products, rationals and staying factors
    (:func:`~symdiff.simplify.staying.staying_factor`), the factors 1 dropped and not the
    two-factor rule (:func:`_rational_times_sum`); else None.

    Read from ``Mul.flatten`` (1.12-1.14): the arguments of products are read as factors, the
    rationals multiply into the coefficient, the integer exponents of equal bases add up (a
    base whose exponents sum to 0 is dropped), each base is powered again by ``Pow(b, e)``
    (which here stays: :func:`~symdiff.simplify.staying.stays`), the factors are sorted and
    the coefficient (unless 1) goes first; a coefficient times one sum is distributed
    (``Add(*[c*t for t in s.args])``). A coefficient 0 is left to SymPy."""
    coefficient, exponents = sp.S.One, {}
    seq = list(args)
    for arg in seq:  # (the list grows while it is read, as Mul.flatten's does)
        if arg.is_Mul and arg.is_commutative:
            seq.extend(arg.args)
        elif arg.is_Rational:
            coefficient *= arg
        else:
            found = staying_factor(arg)
            if found is None:
                return None
            base, k = found
            exponents[base] = exponents.get(base, sp.S.Zero) + k
    if coefficient.p == 0:
        return None
    factors = []
    for base, k in exponents.items():
        if k == 0:
            if base.is_Add and any(a in _INFINITIES for a in base.args):
                return None  # (SymPy's nan)
        elif k == 1:
            factors.append(base)
        elif stays(base, k):
            factors.append(sp.Pow(base, k, evaluate=False))
        else:
            return None
    if len(factors) == 1 and factors[0].is_Add and coefficient is not sp.S.One:
        if not global_parameters.distribute:
            return None
        return addition([product(coefficient, term) for term in factors[0].args])
    factors.sort(key=COMPARED)
    if coefficient is not sp.S.One:
        factors.insert(0, coefficient)
    if len(factors) < 2:
        return factors[0] if factors else sp.S.One
    return unevaluated(sp.Mul, factors)


def rebuilt(func: type, args: tuple[sp.Expr, ...]) -> sp.Expr:
    """``func(*args)`` evaluated as SymPy would, through :func:`power`, :func:`multiplication`
    and :func:`addition` where they apply."""
    if func is sp.Pow:
        return power(*args)
    if func is sp.Add:
        return addition(args)
    if func is sp.Mul:
        return multiplication(args)
    return func(*args)


def substitute(expr: sp.Basic, rule: dict) -> sp.Basic:
    """``expr.xreplace(rule)``, the same result, built through :func:`rebuilt`, and each
    distinct subexpression visited once (``xreplace`` walks the tree: a subexpression shared
    ``k`` times is rebuilt ``k`` times)."""
    memo: dict[sp.Basic, tuple[sp.Basic, bool]] = {}

    def walk(node: sp.Basic) -> tuple[sp.Basic, bool]:
        if node in rule:
            return rule[node], True
        if not node.args:
            return node, False
        done = memo.get(node)
        if done is None:
            walked = [walk(a) if isinstance(a, sp.Basic) else (a, False) for a in node.args]
            if any(changed for _, changed in walked):
                done = rebuilt(node.func, tuple(a for a, _ in walked)), True
            else:
                done = node, False
            memo[node] = done
        return done

    return walk(expr)[0] if rule else expr


def _staying_term(term: sp.Expr) -> sp.Expr | None:
    """The part ``s`` of ``term = c*s`` by which SymPy's ``Add`` collects like terms, when
    ``Add`` keeps ``term`` as it is (rebuilding ``c*s`` gives it back); else None.

    Read from SymPy's ``Add.flatten`` (1.12-1.14): a name or a power (not of a number) stays;
    a product with a rational coefficient is split into ``c`` and ``s`` and rebuilt from
    ``s``'s own factors when ``s`` is a product or a sum, with ``Mul(c, s)`` otherwise, which
    gives back ``term`` for a name, a plain call (:func:`plain_call`), an integer power of a
    name, or a staying power of a sum or of a plain call."""
    if not term.is_commutative:
        return None
    if term.is_Symbol or isinstance(term, sp.Function):
        return term
    if term.is_Pow:
        return None if term.base.is_Number else term
    if not term.is_Mul:
        return None
    coefficient, rest = term.as_coeff_Mul()
    if coefficient is sp.S.One or rest.is_Mul or rest.is_Add:
        return rest
    if not coefficient.is_Rational:
        return None
    if rest.is_Symbol or plain_call(rest) or (rest.is_Pow and (
            (rest.base.is_Symbol and rest.exp.is_Integer) or sum_power_stays(*rest.args)
            or call_power_stays(*rest.args))):
        return rest
    return None


def _quick_total(terms: list[sp.Expr], constant: sp.Expr) -> sp.Expr | None:
    """:func:`total`'s node when no two terms are like terms and each stays as it is, else
    None."""
    if not terms:
        return None
    seen: set[sp.Expr] = set()
    for term in terms:
        part = _staying_term(term)
        if part is None or part in seen:
            return None
        seen.add(part)
    if len(terms) == 1 and constant == 0:
        return terms[0]
    ordered = sorted(terms, key=COMPARED)
    if constant != 0:
        ordered.insert(0, constant)
    return unevaluated(sp.Add, ordered)


def total(terms: list[sp.Expr], constant: sp.Expr = sp.S.Zero) -> sp.Expr:
    """``sp.Add(*terms, constant)`` (``constant`` a rational), the same node, without SymPy's
    rebuilding of every term (``Add`` splits each ``c*s`` and multiplies it back, which
    re-evaluates a power of a sum: an assumption query per term) when no two terms are like
    terms and each stays as it is (:func:`_staying_term`): the terms in SymPy's canonical
    order, the constant first. (``AssocOp.__new__`` drops a constant 0, returns a lone
    argument as it is, and ``Add.flatten``'s one special case, a rational and a product, gives
    the same two arguments as its general path.)"""
    made = _quick_total(terms, constant)
    return sp.Add(*terms, constant) if made is None else made


def addition(args: Sequence[sp.Expr]) -> sp.Expr:
    """``sp.Add(*args)``, the same node. The arguments are read as ``Add.flatten`` reads them
    (a sum's terms appended to the arguments, rational numbers summed: exactly, so in any
    order), then made into the node by :func:`total`'s rule when it applies; else
    ``sp.Add(*args)``."""
    seq = list(args)
    terms: list[sp.Expr] = []
    constant = sp.S.Zero
    for arg in seq:  # (the list grows while it is read, as Add.flatten's does)
        if arg.is_Rational:
            constant += arg
        elif arg.is_Add:
            seq.extend(arg.args)
        else:
            terms.append(arg)
    made = _quick_total(terms, constant)
    return sp.Add(*args) if made is None else made
