"""The derivative engine: structural rules plus :data:`symdiff.rules.RULES`, building steps.

``differentiate(expr, var)`` returns a :class:`~symdiff.steps.Step` whose ``result`` is the
derivative and whose substeps are the rules that produced it. The code generator and the teaching
view both use this one recursion, so the explanation can never disagree with the code.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp

from .errors import UnsupportedError
from .rules import rule_for
from .steps import Note, Step


class Deriver:
    """Differentiates SymPy expressions with respect to one symbol, memoising shared subtrees."""

    def __init__(self, var: sp.Symbol):
        self.var = var
        self._memo: dict[sp.Expr, Step] = {}
        self._structural: dict[type, Callable[[sp.Expr], Step]] = {
            sp.Symbol: self._variable,
            sp.Add: self._sum,
            sp.Mul: self._mul,
            sp.Pow: self._pow,
            sp.Piecewise: self._piecewise,
        }

    def __call__(self, expr: sp.Expr) -> Step:
        """The step tree of ``d expr / d var``."""
        step = self._memo.get(expr)
        if step is None:
            step = self._differentiate(expr)
            self._memo[expr] = step
        return step

    # -- dispatch ------------------------------------------------------------------------------
    def _differentiate(self, expr: sp.Expr) -> Step:
        if self.var not in expr.free_symbols:
            return self._step("constant", expr, sp.S.Zero)
        for cls in type(expr).__mro__:
            handler = self._structural.get(cls)
            if handler is not None:
                return handler(expr)
        if rule_for(expr.func) is not None:
            return self._function(expr)
        raise UnsupportedError(f"cannot differentiate {type(expr).__name__}: {sp.sstr(expr)}")

    def _step(
        self, rule: str, expr: sp.Expr, result: sp.Expr, substeps=(), note: str | Note = ""
    ) -> Step:
        return Step(rule, expr, result, self.var, tuple(substeps), note)

    # -- structural rules ----------------------------------------------------------------------
    def _variable(self, expr: sp.Symbol) -> Step:
        return self._step("variable", expr, sp.S.One)

    def _sum(self, expr: sp.Add) -> Step:
        terms = [self(term) for term in expr.args]
        return self._step("sum", expr, sp.Add(*(t.result for t in terms)), terms)

    def _mul(self, expr: sp.Mul) -> Step:
        constant = [f for f in expr.args if self.var not in f.free_symbols]
        varying = [f for f in expr.args if self.var in f.free_symbols]
        if constant:
            c, rest = sp.Mul(*constant), sp.Mul(*varying)
            inner = self(rest)
            return self._step("constant multiple", expr, c * inner.result, [inner])
        denominators = [f for f in varying if _is_reciprocal(f)]
        if denominators and len(denominators) < len(varying):
            numerator = sp.Mul(*(f for f in varying if not _is_reciprocal(f)))
            denominator = sp.Mul(*(1 / f for f in denominators))
            return self._quotient(expr, numerator, denominator)
        return self._product(expr, varying)

    def _product(self, expr: sp.Expr, factors: list[sp.Expr]) -> Step:
        steps = [self(f) for f in factors]
        terms = [
            sp.Mul(*factors[:i], step.result, *factors[i + 1 :]) for i, step in enumerate(steps)
        ]
        return self._step("product", expr, sp.Add(*terms), steps)

    def _quotient(self, expr: sp.Expr, numerator: sp.Expr, denominator: sp.Expr) -> Step:
        top, bottom = self(numerator), self(denominator)
        result = (top.result * denominator - numerator * bottom.result) / denominator**2
        note = Note("(f/g)' = (f' g - f g')/g^2 with f = {0}, g = {1}", (numerator, denominator))
        return self._step("quotient", expr, result, [top, bottom], note)

    def _pow(self, expr: sp.Pow) -> Step:
        base, exponent = expr.args
        base_varies = self.var in base.free_symbols
        exponent_varies = self.var in exponent.free_symbols
        if base_varies and exponent_varies:
            steps = [self(base), self(exponent)]
            result = expr * (steps[1].result * sp.log(base) + exponent * steps[0].result / base)
            return self._step("general power", expr, result, steps)
        if base_varies:
            outer = exponent * base ** (exponent - 1)
            return self._outer_then_chain("power", expr, [(base, outer)], f"d/du u^{exponent}")
        if base.is_zero:  # 0**u: 0 for u > 0, where u**v*log(0) would give 0*zoo = nan
            return self._outer_then_chain(
                "exponential", expr, [(exponent, sp.S.Zero)], "d/du 0^u = 0  (0^u = 0 for u > 0)"
            )
        outer = expr * sp.log(base)
        return self._outer_then_chain("exponential", expr, [(exponent, outer)], f"d/du {base}^u")

    def _piecewise(self, expr: sp.Piecewise) -> Step:
        branches = [self(branch) for branch, _ in expr.args]
        result = sp.Piecewise(
            *((s.result, cond) for s, (_, cond) in zip(branches, expr.args, strict=True))
        )
        return self._step("piecewise", expr, result, branches)

    # -- functions and the chain rule ----------------------------------------------------------
    def _function(self, expr: sp.Expr) -> Step:
        """A function from the rule table: its own rule, with the chain rule when needed."""
        rule = rule_for(expr.func)
        partials = rule.partials(*expr.args)
        pairs = []
        for arg, partial in zip(expr.args, partials, strict=True):
            if self.var not in arg.free_symbols:
                continue
            if partial is None:
                raise UnsupportedError(
                    f"{expr.func.__name__}: argument {sp.sstr(arg)} must not depend on {self.var}"
                )
            pairs.append((arg, partial))
        return self._outer_then_chain(rule.name, expr, pairs, rule.identity)

    def _outer_then_chain(
        self, name: str, expr: sp.Expr, pairs: list[tuple[sp.Expr, sp.Expr]], identity: str
    ) -> Step:
        """Apply rule ``name`` directly when every varying argument is the variable itself,
        otherwise the chain rule: the outer derivative times each inner derivative, summed."""
        if all(arg == self.var for arg, _ in pairs):
            return self._step(name, expr, sp.Add(*(outer for _, outer in pairs)), note=identity)
        inner = [self(arg) for arg, _ in pairs]
        outer_result = sp.Add(*(outer for _, outer in pairs)) if len(pairs) == 1 else None
        slots = ", ".join(f"{{{i}}}" for i in range(len(pairs)))
        outer_step = self._step(
            name,
            expr,
            outer_result if outer_result is not None else sp.Tuple(*(o for _, o in pairs)),
            note=Note(identity.replace("{", "{{").replace("}", "}}") + ", with u = " + slots,
                      tuple(arg for arg, _ in pairs)),
        )
        result = sp.Add(
            *(outer * step.result for (_, outer), step in zip(pairs, inner, strict=True))
        )
        return self._step("chain", expr, result, [outer_step, *inner], EXPLANATION_CHAIN)


EXPLANATION_CHAIN = "(f(u))' = f'(u) u': outer derivative times inner derivative"


def _is_reciprocal(factor: sp.Expr) -> bool:
    """True for ``g**-k`` (a denominator factor as SymPy stores ``f/g``)."""
    return factor.is_Pow and factor.exp.is_number and bool(factor.exp.is_negative)


def differentiate(expr: sp.Expr, var: sp.Symbol) -> Step:
    """Differentiate ``expr`` with respect to ``var`` by the rule table; returns the step tree."""
    return Deriver(var)(expr)
