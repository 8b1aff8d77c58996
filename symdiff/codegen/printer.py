"""SymPy -> NumPy expression strings: SymPy's ``NumPyPrinter`` plus our overrides only.

Generated code imports NumPy as ``_np``; every name the printer introduces starts with an
underscore, and user variables never do, so the two cannot collide. Functions NumPy lacks (erf,
gamma, ...) print as calls of helpers from :mod:`symdiff.runtime`; the printer records which
helpers an expression needs in :attr:`CodePrinter.helpers`.
"""

from __future__ import annotations

from typing import ClassVar

import sympy as sp
from sympy.printing.numpy import NumPyPrinter
from sympy.printing.precedence import PRECEDENCE, precedence
from sympy.printing.str import StrPrinter

from .. import registry
from ..simplify.dag import tree_size
from .quickprint import joined_terms, minus_sign, names_product_text
from .terms import ordered_terms

#: Sums of more terms than this print in SymPy's stored order instead of the conventional one:
#: sorting terms for display costs far more than deriving them (seconds for a sum of thousands
#: of terms, and once per printed subexpression). The stored order is just as deterministic.
ORDERED_TERMS_MAX = 64


class _OrderedTerms:
    """Conventional term order for sums up to :data:`ORDERED_TERMS_MAX` terms, stored beyond."""

    def _as_ordered_terms(self, expr, order=None):
        if len(expr.args) > ORDERED_TERMS_MAX:
            return list(expr.args)
        if (order or self.order) is None and expr.is_Add:  # type: ignore[attr-defined]
            return ordered_terms(expr)  # SymPy's order, without evalf of every coefficient
        return super()._as_ordered_terms(expr, order=order)  # type: ignore[misc]


#: Terms of a long sum that :func:`brief_text` shows.
BRIEF_TERMS = 4


class _BriefPrinter(_OrderedTerms, StrPrinter):
    """SymPy's plain text (``sstr``) with long sums cut to their first terms and a count of the
    rest (and, through :class:`_OrderedTerms`, never sorting a large sum)."""

    def _as_ordered_terms(self, expr, order=None):
        terms = super()._as_ordered_terms(expr, order=order)
        if len(terms) <= 2 * BRIEF_TERMS:
            return terms
        return [*terms[:BRIEF_TERMS], sp.Symbol(f"...({len(terms) - BRIEF_TERMS} more terms)")]


class _ShallowPrinter(_BriefPrinter):
    """:class:`_BriefPrinter` that writes subexpressions deeper than ``depth`` as ``...``."""

    def __init__(self, depth: int) -> None:
        super().__init__()
        self.depth, self.level = depth, 0

    def _print(self, expr, **kwargs) -> str:
        if self.level >= self.depth and isinstance(expr, sp.Basic) and expr.args:
            return "(...)"
        self.level += 1
        try:
            return super()._print(expr, **kwargs)
        finally:
            self.level -= 1


#: Expressions whose tree has more operations than this are written to :data:`BRIEF_DEPTH`
#: levels only in titles (a traced recurrence shares its subexpressions: its tree, which the
#: text spells out, grows exponentially with the number of steps).
BRIEF_MAX_OPS = 2_000
BRIEF_DEPTH = 6


def brief_text(expr: sp.Basic) -> str:
    """``expr`` as plain text for titles and comments: a long sum shows its first terms only,
    a very large expression its outer levels only."""
    if tree_size(expr, BRIEF_MAX_OPS + 1) > BRIEF_MAX_OPS:
        return _ShallowPrinter(BRIEF_DEPTH).doprint(expr)
    return _BriefPrinter().doprint(expr)


#: Integers from here on are printed as float literals: NumPy cannot take larger Python ints
#: (it would make object arrays), and a float holds them only approximately anyway.
EXACT_INT_LIMIT = 2**53


def _float_literal(number: sp.Rational) -> str:
    """The nearest double as a literal that reads back exactly (``1e999`` beyond the range)."""
    value = sp.Float(number, 20)
    if abs(value) > sp.Float("1.7976931348623157e308"):
        return "1e999" if value > 0 else "-1e999"
    return repr(float(value))


#: Sums and products of more terms than this print as parenthesised groups of this many: Python
#: parses a chain of ``a + b + ...`` recursively and gives up near 3,000 terms.
CHUNK = 64


def _negative(term: sp.Expr) -> bool:
    """Whether ``term`` prints with a leading minus sign (``-y``, ``-2*x``):
    ``term.could_extract_minus_sign()``, read off a product's rational coefficient
    (:func:`~symdiff.codegen.quickprint.minus_sign`)."""
    sign = minus_sign(term)
    return term.could_extract_minus_sign() if sign is None else sign


def _free_sign(term: sp.Expr) -> bool:
    """Whether the minus sign of negative ``term`` costs nothing: Python applies it to a number
    (``-3*x`` is ``(-3)*x``), not to an array (``-x*y`` negates ``x`` first, a pass of its own)."""
    coefficient, _ = term.as_coeff_Mul()
    return term.is_Number or coefficient != -1


#: Integer powers up to this exponent print as multiplications and squares (:func:`_power_chain`)
#: when their base is a name: NumPy's ``pow`` costs about eight multiplications.
CHAIN_MAX = 16


def _power_chain(base: str, n: int) -> str:
    """``base**n`` for ``n >= 2`` by squaring and multiplying: ``x**2*x``, ``(x**2)**2``,
    ``((x**2*x)**2)**2`` (NumPy squares quickly): at most ``2*log2(n)`` passes."""
    if n == 1:
        return base
    if n == 2:
        return f"{base}**2"
    if n % 2 == 0:
        return f"({_power_chain(base, n // 2)})**2"
    return f"{_power_chain(base, n - 1)}*{base}"


def _chunks(func, args: list) -> list[sp.Expr]:
    """``args`` in unevaluated groups of at most :data:`CHUNK`, order kept."""
    return [func(*args[i : i + CHUNK], evaluate=False) for i in range(0, len(args), CHUNK)]


class CodePrinter(_OrderedTerms, NumPyPrinter):
    """NumPy printer for generated modules: ``_np.`` prefix, stable forms, helper calls."""

    _default_settings: ClassVar[dict] = {**NumPyPrinter._default_settings, "strict": True}

    def __init__(self, settings=None):
        super().__init__(settings)
        self.helpers: set[str] = set()

    # -- long sums and products ---------------------------------------------------------
    def _print_Add(self, expr, order=None):
        terms = self._as_ordered_terms(expr, order=order)
        if len(terms) > CHUNK:
            return " + ".join(f"({self._print(group)})" for group in _chunks(sp.Add, terms))
        if terms and _negative(terms[0]):
            # ``x - y`` rather than ``-y + x``: NumPy would spend a whole pass on the negation.
            first = next((i for i, t in enumerate(terms) if not _negative(t)), None)
            if first is None:  # all negative: lead with one whose sign is free (``-3*y - x``)
                first = next((i for i, t in enumerate(terms) if _free_sign(t)), None)
            if first is not None:
                terms = [terms[first], *terms[:first], *terms[first + 1 :]]
        # in the order found (sorting a sum's terms is most of the cost of printing it)
        return joined_terms(self, terms)

    def _print_Mul(self, expr):
        if len(expr.args) > CHUNK:
            return "*".join(
                f"({self._print(group)})" for group in _chunks(sp.Mul, list(expr.args)))
        text = names_product_text(self, expr)
        return super()._print_Mul(expr) if text is None else text

    # -- names ---------------------------------------------------------------------------
    def _module_format(self, fqn: str, register: bool = True) -> str:
        if fqn.startswith("numpy."):
            return "_np." + fqn[len("numpy.") :]
        return super()._module_format(fqn, register)

    def helper_call(self, name: str, *args: str) -> str:
        """A call of runtime helper ``name`` on printed arguments (recorded for inclusion)."""
        self.helpers.add(name)
        return f"{name}({', '.join(args)})"

    def _print_Symbol(self, expr: sp.Symbol) -> str:
        return expr.name

    # -- numbers -------------------------------------------------------------------------
    def _print_Float(self, expr: sp.Float) -> str:
        return repr(float(expr))

    def _print_Integer(self, expr: sp.Integer) -> str:
        return str(expr.p) if abs(expr.p) < EXACT_INT_LIMIT else _float_literal(expr)

    def _print_ComplexInfinity(self, expr: sp.Expr) -> str:
        """``zoo`` (e.g. ``log(0)`` in the derivative of ``0**y``) has no real value: nan, what
        SymPy's own derivative evaluates to there."""
        return "_np.nan"

    def _print_Rational(self, expr: sp.Rational) -> str:
        if max(abs(expr.p), expr.q) >= EXACT_INT_LIMIT:
            return _float_literal(expr)
        return f"{expr.p}/{expr.q}"

    def _print_Half(self, expr: sp.Rational) -> str:
        return "1/2"

    # -- arithmetic ----------------------------------------------------------------------
    def _chain(self, base: sp.Expr, exp: sp.Expr, one: str) -> str | None:
        """A small integer power of a name as multiplications (``(x**2*x)``, ``1/(x**2*x)``),
        parenthesised whole; None for other powers."""
        if not (exp.is_Integer and base.is_Symbol and 3 <= abs(exp) <= CHAIN_MAX):
            return None
        text = f"({_power_chain(self._print(base), abs(int(exp)))})"
        return text if exp > 0 else f"{one}/{text}"

    def _print_Pow(self, expr: sp.Pow, rational: bool = False) -> str:
        base, exp = expr.args
        chain = self._chain(base, exp, "1")
        if chain is not None:
            return chain
        if exp == sp.S.Half:
            return f"_np.sqrt({self._print(base)})"
        if exp.is_number and exp.is_negative:
            return "1/" + self.parenthesize(sp.Pow(base, -exp), PRECEDENCE["Mul"], strict=True)
        left = self.parenthesize(base, PRECEDENCE["Pow"], strict=True)
        right = self.parenthesize(exp, PRECEDENCE["Pow"], strict=True)
        if exp.is_Rational and not exp.is_Integer:
            right = f"({self._print(exp)})"
        return f"{left}**{right}"

    def _nested(self, func: str, args: tuple[sp.Expr, ...]) -> str:
        text = self._print(args[-1])
        for arg in reversed(args[:-1]):
            text = f"{func}({self._print(arg)}, {text})"
        return text

    def _print_Piecewise(self, expr: sp.Piecewise) -> str:
        denominators = _reciprocal_branches(expr)
        if denominators is not None:  # where(c, 1, 1/x) would divide by x where c guards it
            return f"(1/{self._print(denominators)})"
        *branches, (last, last_cond) = expr.args
        if last_cond != sp.true:
            branches.append((last, last_cond))
            last = sp.nan
        numbers = all(value.is_number for value, _ in expr.args)
        text = self.number_default(last) if numbers else self._print(last)
        for value, cond in reversed(branches):
            text = self.where(self._print(cond), self._print(value), text)
        return text

    def where(self, cond: str, value: str, otherwise: str) -> str:
        """The printed value of one branch of a piecewise: ``value`` where ``cond``, else
        ``otherwise`` (``_np.where`` over arrays)."""
        return f"_np.where({cond}, {value}, {otherwise})"

    def number_default(self, value: sp.Expr) -> str:
        """The last value of a piecewise whose values are all numbers (``where(c, 1, 0)``)."""
        return self._print(value)

    def _print_And(self, expr: sp.And) -> str:
        return self._nested("_np.logical_and", expr.args)

    def _print_Or(self, expr: sp.Or) -> str:
        return self._nested("_np.logical_or", expr.args)

    def _print_Not(self, expr: sp.Not) -> str:
        return f"_np.logical_not({self._print(expr.args[0])})"

    def _print_Relational(self, expr: sp.core.relational.Relational) -> str:
        lhs = self.parenthesize(expr.lhs, precedence(expr))
        rhs = self.parenthesize(expr.rhs, precedence(expr))
        return f"({lhs} {expr.rel_op} {rhs})"

    # -- functions: each row of the registry says how its node prints ---------------------
    def _print(self, expr, **kwargs) -> str:
        row = registry.by_class_name().get(type(expr).__name__)
        if row is None:
            return super()._print(expr, **kwargs)
        if row.method == "nested":
            return self._nested(f"_np.{row.ufunc}", expr.args)
        if row.method == "heaviside":
            return self._heaviside(expr)
        if row.method == "sinc":  # SymPy's sin(u)/u is NumPy's normalized sinc of u/pi
            return f"_np.sinc({self._print(expr.args[0] / sp.pi)})"
        printed = [
            str(int(arg)) if i in row.int_args else self._print(arg)
            for i, arg in enumerate(expr.args)
        ]
        return self.function_call(row, printed)

    def function_call(self, row: registry.Fn, printed: list[str]) -> str:
        """Registry row ``row``'s function of the ``printed`` arguments: its runtime helper,
        its template, or its NumPy ufunc."""
        if row.helper:
            return self.helper_call(row.helper, *printed)
        if row.template:
            return registry.print_template(row.template, printed)
        return f"_np.{row.ufunc}({', '.join(printed)})"

    def _heaviside(self, expr: sp.Heaviside) -> str:
        """``np.heaviside`` is a slow ufunc (about 5x ``np.sign`` over 64K doubles): the steps
        the rules make (relu's ``H(u, 0)``, the ties ``H(u, 1/2)`` of max) are written with
        ``sign``, equal bit for bit (0 at -0.0, nan at nan); any other value at 0 calls it."""
        arg = self._print(expr.args[0])
        at_zero = expr.args[1] if len(expr.args) > 1 else sp.S.Half
        if at_zero == 0:
            return f"_np.maximum(_np.sign({arg}), 0.0)"
        if at_zero == sp.S.Half:
            return f"((_np.sign({arg}) + 1)/2)"
        return f"_np.heaviside({arg}, {float(at_zero)!r})"


class ArrayCodePrinter(CodePrinter):
    """The printer of tensor code, whose operands are arrays however small: integer constants
    print as float literals (``400.0*x``, ``x - 1.0``, ``1.0/x``, ``x**3.0``), because NumPy
    takes a Python float next to a float array about 90 ns quicker than a Python int, and at a
    single point of a 10-element vector that is a tenth of an operation. The numbers are the
    same: an int below 2**53 is exactly its float, and either is rounded once to a float32
    array's dtype. The exponent 2 stays ``x**2`` (NumPy squares for the int, which is quicker
    still). (``2*x`` is not written ``x + x``: quicker below a few thousand elements, but an
    array-array operation reads two streams and takes 1.6x as long as ``2.0*x`` on long
    arrays.)"""

    def _print_Integer(self, expr: sp.Integer) -> str:
        return f"{expr.p}.0" if abs(expr.p) < EXACT_INT_LIMIT else _float_literal(expr)

    def number_default(self, value: sp.Expr) -> str:
        """``where(x > 0, 1.0, 0.0)`` is float64 whatever ``x`` is: its last value is a 0-d
        array of the arguments' dtype (``_dtype``), so float32 stays float32."""
        return f"_np.asarray({self._print(value)}, dtype=_dtype)"

    def _print_Pow(self, expr: sp.Pow, rational: bool = False) -> str:
        base, exp = expr.args
        if exp == 2:
            return f"{self.parenthesize(base, PRECEDENCE['Pow'], strict=True)}**2"
        chain = self._chain(base, exp, "1.0")
        if chain is not None:
            return chain
        if exp.is_number and exp.is_negative:
            return "1.0/" + self.parenthesize(sp.Pow(base, -exp), PRECEDENCE["Mul"], strict=True)
        return super()._print_Pow(expr, rational)


def _reciprocal_branches(expr: sp.Piecewise) -> sp.Piecewise | None:
    """``where(c, 1, 1/x)`` as ``1/where(c, 1, x)`` when every branch is a reciprocal (or a
    nonzero number): NumPy evaluates both branches, and ``1/x`` warns and makes ``inf`` exactly
    where the condition guards it (the derivative of ``log(where(x**y == 0, 1, x))``)."""
    pairs, reciprocals = [], 0
    for value, cond in expr.args:
        if value.is_Pow and value.exp == -1:
            pairs.append((value.base, cond))
            reciprocals += 1
        elif value.is_Number and value.is_finite and value != 0:
            pairs.append((1 / value, cond))
        else:
            return None
    return sp.Piecewise(*pairs, evaluate=False) if reciprocals else None

