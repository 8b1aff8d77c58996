"""Subtraction and division as they are written: the reverse-mode linearisation for pictures.

:class:`AsWritten` extends :class:`symdiff.engine.reverse.Linearizer` (the linearisation the
generated
reverse-mode code comes from) so that ``x - y`` is a ``-`` node and ``x / y`` a ``/`` node in
:func:`symdiff.graphs.graph`, where SymPy has ``x + (-1)*y`` and ``x * y**-1``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from ..engine.local import operation_rule, signed_sum_rule
from ..engine.reverse import Linearizer
from ..parsing.written import (
    BaseLog,
    Called,
    Negation,
    Power,
    Product,
    Quotient,
    SignedSum,
    Written,
    canonical_values,
)


class AsWritten(Linearizer):
    """The reverse-mode linearisation, with subtraction and division drawn as they are written.

    SymPy stores ``a - b`` as ``a + (-1)*b`` and ``a / b`` as ``a * b**-1``; a student who wrote
    ``x - y`` should see a ``-`` node, not a multiply by a constant -1. So:

    - an Add with negated terms (a negative coefficient: ``-y``, ``-2*y``, ``-1``) is the sum of
      its other terms minus each negated one in turn: ``a - b`` is a ``-`` node of (a, b) with local
      partials 1 and -1, ``a - b - c`` is ``(a - b) - c`` and ``a + b - c`` is ``(a + b) - c``;
      with no positive term the first negated term leads: ``-x - y`` is ``(-x) - y``;
    - a Mul with factors of negative numeric power (or a fraction coefficient) is one ``/`` node,
      numerator / denominator, with local partials 1/b and -a/b**2: ``x*y/(z*w)`` is
      ``(x*y) / (w*z)``, ``x/2`` is ``x / 2``, ``-x/y`` is ``(-x) / y``;
    - a lone ``b**-1`` is ``1 / b`` (``1/x``), other negative powers stay powers (``x**-2``, as
      SymPy prints it), and a symbolic exponent stays a power (``b**(-y)``);
    - a Mul with coefficient exactly -1 and no denominator is a unary ``-`` (local partial -1):
      ``-x`` and ``-(x*y)``; other coefficients stay products (``-2*x``).

    Values and gradients are those of the plain linearisation; only the nodes differ. Each such
    node's label is kept in ``labels`` (symbol -> ``"-"`` or ``"/"``).
    """

    def __init__(self) -> None:
        super().__init__()
        self.labels: dict[sp.Expr, str] = {}
        self._value = canonical_values()
        #: The node of each written subexpression, as typed (its text in the views).
        self.typed: dict[sp.Expr, sp.Expr] = {}

    def __call__(self, expr: sp.Expr) -> sp.Expr:
        if isinstance(expr, Written) or (expr.args and not expr.free_symbols):
            return self._typed(expr)
        if expr not in self.seen and expr.free_symbols and not expr.is_Atom:
            result = self._as_written(expr)
            if result is not None:
                self.seen[expr] = result
                return result
        return super().__call__(expr)

    def _typed(self, expr: sp.Expr) -> sp.Expr:
        """A node of the expression as the student typed it (:mod:`symdiff.parsing.written`):
        ``a + b - c`` is ``(a + b) - c`` in the order typed, ``a/b`` a ``/`` node, ``-a`` a unary
        ``-``, ``a*b*c`` is ``(a*b)*c`` and ``(sigma/r)**12`` a power of the ``/`` node. A
        constant part is its value (one constant node)."""
        if not expr.free_symbols:
            return self._value(expr)
        found = self.seen.get(expr)
        if found is None:
            found = self.seen[expr] = self._typed_node(expr)
            self.typed.setdefault(found, expr)
        return found

    def _typed_node(self, expr: sp.Expr) -> sp.Expr:
        if isinstance(expr, Quotient):
            return self._division(*expr.args)
        if isinstance(expr, Negation):
            operand = self(expr.args[0])
            return self._labelled("-", -operand, (operand,), (sp.S.NegativeOne,))
        if isinstance(expr, Product):
            head, *rest = expr.args
            return self._binary_product(self(head), rest)
        if isinstance(expr, Power):
            return self._operation(sp.Pow, expr.args)
        if isinstance(expr, BaseLog):  # log(u, b) is drawn as ln(u) / ln(b)
            argument, base = (sp.log(a, evaluate=False) for a in expr.args)
            return self._division(argument, base)
        if isinstance(expr, Called):  # min(x, 1): the children in the order typed
            return self._operation(expr.function, expr.operands)
        assert isinstance(expr, SignedSum)
        left = self(expr.terms[0])
        for k, (sign, term) in enumerate(zip(expr.signs[1:], expr.terms[1:], strict=True), 2):
            right = self(term)
            partials = signed_sum_rule((1, sign)).partials
            value = left + right if sign > 0 else left - right
            left = self._labelled("+" if sign > 0 else "-", value, (left, right), partials)
            self.typed[left] = SignedSum.of(expr.signs[:k], expr.terms[:k])
        return left

    def _operation(self, function: type[sp.Expr], operands: Sequence[sp.Expr]) -> sp.Expr:
        """A node applying ``function`` to the nodes of ``operands``, in their order."""
        children = tuple(self(a) for a in operands)
        value = function(*children)
        return self.add(value, children, operation_rule(function, children, value).partials)

    def _as_written(self, expr: sp.Expr) -> sp.Expr | None:
        if isinstance(expr, sp.Add):  # (children in the order SymPy prints the terms)
            return self._subtraction(expr) or self._operation(sp.Add, expr.as_ordered_terms())
        if isinstance(expr, sp.Pow) and expr.exp == -1:
            return self._division(sp.S.One, expr.base)
        if not isinstance(expr, sp.Mul):
            return None
        numerator, denominator = [], []
        for factor in expr.args:
            if factor.is_Pow and factor.exp.is_Number and factor.exp.is_negative:
                denominator.append(factor.base**-factor.exp)
            elif factor.is_Rational and factor.q != 1:
                numerator.append(sp.Integer(factor.p))
                denominator.append(sp.Integer(factor.q))
            else:
                numerator.append(factor)
        if denominator:
            return self._division(sp.Mul(*numerator), sp.Mul(*denominator))
        if expr.args[0] == -1:
            operand = self(sp.Mul(*expr.args[1:]))
            return self._labelled("-", -operand, (operand,), (sp.S.NegativeOne,))
        return self._operation(sp.Mul, expr.as_ordered_factors())  # as SymPy prints it

    def _subtraction(self, expr: sp.Add) -> sp.Expr | None:
        terms = expr.as_ordered_terms()  # as SymPy prints them
        negated = [t for t in terms if t.as_coeff_Mul()[0].is_negative]
        if not negated:
            return None
        positive = [t for t in terms if t not in negated]
        so_far = sp.Add(*positive) if positive else negated.pop(0)
        left = self(so_far)
        for term in negated:
            so_far = so_far + term
            right = self(-term)
            if so_far not in self.seen:  # (a - b) seen before: reuse its node
                self.seen[so_far] = self._labelled(
                    "-", left - right, (left, right), (sp.S.One, sp.S.NegativeOne)
                )
            left = self.seen[so_far]
        return left

    def _division(self, numerator: sp.Expr, denominator: sp.Expr) -> sp.Expr:
        a, b = self(numerator), self(denominator)
        return self._labelled("/", a / b, (a, b), (1 / b, -a / b**2))

    def _labelled(self, label: str, value, children, partials) -> sp.Symbol:
        symbol = self.add(value, children, partials)
        self.labels[symbol] = label
        return symbol
