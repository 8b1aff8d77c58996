"""Subtraction and division as they are written: the reverse-mode linearisation for pictures.

:class:`AsWritten` extends :class:`symdiff.engine.reverse.Linearizer` (the linearisation the
generated
reverse-mode code comes from) so that ``x - y`` is a ``-`` node and ``x / y`` a ``/`` node in
:func:`symdiff.graphs.graph`, where SymPy has ``x + (-1)*y`` and ``x * y**-1``.
"""

from __future__ import annotations

import sympy as sp

from ..engine.reverse import Linearizer


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

    def __call__(self, expr: sp.Expr) -> sp.Expr:
        if expr not in self.seen and expr.free_symbols and not expr.is_Atom:
            result = self._as_written(expr)
            if result is not None:
                self.seen[expr] = result
                return result
        return super().__call__(expr)

    def _as_written(self, expr: sp.Expr) -> sp.Expr | None:
        if isinstance(expr, sp.Add):
            return self._subtraction(expr)
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
        return None

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
