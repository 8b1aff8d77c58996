"""Forward mode: differentiate an expression tree by the local rules, recording the steps.

``differentiate(expr, var)`` returns a :class:`~symdiff.engine.steps.Step` whose ``result`` is the
derivative and whose substeps are the rules that produced it. The rules themselves (sum,
product, quotient, power, piecewise and every function row) are those of
:mod:`symdiff.engine.local`,
which reverse mode (:mod:`symdiff.engine.reverse`) reads too; this module decides how a student
reads
an expression (a constant multiple, a quotient, the chain rule with a named inner function) and
applies the rules top down. The code generator and the teaching view both use this one
recursion, so the explanation can never disagree with the code.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp

from ..errors import UnsupportedError
from ..parsing.written import (
    BaseLog,
    Called,
    Negation,
    Power,
    Product,
    Quotient,
    SignedSum,
    canonical_values,
)
from ..simplify import quick
from ..simplify.budget import own_free_symbols
from ..simplify.dag import free_symbols
from .local import (
    Local,
    base_log_rule,
    constant_multiple,
    function_rule,
    piecewise_rule,
    power_rule,
    product_rule,
    quotient_rule,
    reciprocal_product,
    signed_sum_rule,
    sum_rule,
)
from .rules import rule_for
from .steps import Note, Step, inner_names

#: An expression written in the inner functions' names, and the rule there (the outer step).
Written = tuple[sp.Expr, Local]


class Deriver:
    """Differentiates SymPy expressions with respect to one symbol, memoising shared subtrees."""

    def __init__(self, var: sp.Symbol, as_written: bool = False):
        self.var = var
        self._memo: dict[sp.Expr, Step] = {}
        self._varying: dict[sp.Expr, bool] = {}
        self._structural: dict[type, Callable[[sp.Expr], Step]] = {
            sp.Symbol: self._variable,
            sp.Add: self._sum,
            sp.Mul: self._mul,
            sp.Pow: self._pow,
            sp.Piecewise: self._piecewise,
            # the expression as written (symdiff.parsing.written): the same rules, read as typed
            SignedSum: self._signed_sum,
            Product: self._written_product,
            Quotient: self._written_quotient,
            Negation: self._negation,
            Power: self._pow,
            Called: self._written_call,
            BaseLog: self._base_log,
        }
        #: The SymPy value of a (sub)expression: itself, unless the expressions are written as
        #: typed (``as_written``: :mod:`symdiff.parsing.written`); every result and partial is
        #: built from values, only what is differentiated is shown as written.
        self._value: Callable[[sp.Expr], sp.Expr] = canonical_values() if as_written else _itself
        #: Names of the variables of the first expression differentiated (the root): the chain
        #: rule's inner functions get names not among them, found once, not at every chain step.
        self._taken: set[str] | None = None
        self._inner: dict[int, tuple[sp.Symbol, ...]] = {}
        #: The outer function written in the inner names, and its rule, by rule and arguments.
        self._written: dict[tuple, Written] = {}

    def __call__(self, expr: sp.Expr) -> Step:
        """The step tree of ``d expr / d var``."""
        step = self._memo.get(expr)
        if step is None:
            if self._taken is None:
                self._taken = {s.name for s in free_symbols([expr])} | {self.var.name}
            step = self._differentiate(expr)
            self._memo[expr] = step
        return step

    def _varies(self, expr: sp.Expr) -> bool:
        """Whether ``expr`` depends on the variable, memoised over the DAG (SymPy's
        ``free_symbols`` walks the tree below a node each time: exponential in the depth of a
        traced recurrence)."""
        found = self._varying.get(expr)
        if found is None:
            if expr.is_Atom or own_free_symbols(type(expr)):
                found = self.var in expr.free_symbols
            else:
                found = any(self._varies(arg) for arg in expr.args)
            self._varying[expr] = found
        return found

    # -- dispatch ------------------------------------------------------------------------------
    def _differentiate(self, expr: sp.Expr) -> Step:
        if not self._varies(expr):
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
        result = sum_rule(expr.args).derivative([t.result for t in terms])
        return self._step("sum", expr, result, terms)

    def _mul(self, expr: sp.Mul) -> Step:
        """Constant multiple, quotient or product rule, as a student reads the product.

        SymPy stores ``f/g`` as ``f * g**-1``: factors with a negative number as exponent are the
        denominator. With a numerator, it is the quotient rule with ``f`` the other factors and
        ``g`` the product of every denominator factor (``g'`` by the product rule). With only
        denominator factors, several of them (``1/(x**5*(exp(1/x) - 1))``), it is the quotient
        rule with ``f = 1``; a single one (``1/g``, ``g**-3``) stays the power rule, with the
        chain rule when ``g`` is not the variable itself.
        """
        constant = [f for f in expr.args if not self._varies(f)]
        varying = [f for f in expr.args if self._varies(f)]
        if constant:
            c, rest = quick.multiplication(constant), quick.multiplication(varying)
            inner = self(rest)
            result = constant_multiple(c).derivative([inner.result])
            return self._step("constant multiple", expr, result, [inner])
        denominators = [f for f in varying if _is_reciprocal(f)]
        if denominators and len(denominators) < len(varying):
            numerator = sp.Mul(*(f for f in varying if not _is_reciprocal(f)))
            return self._quotient(expr, numerator, reciprocal_product(denominators))
        if len(denominators) > 1:
            return self._reciprocal(expr, varying)
        return self._product(expr, varying)

    def _product(self, expr: sp.Expr, factors: list[sp.Expr]) -> Step:
        steps = [self(f) for f in factors]
        result = product_rule(factors).derivative([step.result for step in steps])
        return self._step("product", expr, result, steps)

    def _quotient(self, expr: sp.Expr, numerator: sp.Expr, denominator: sp.Expr) -> Step:
        top, bottom = self(numerator), self(denominator)
        local = quotient_rule(self._value(numerator), self._value(denominator))
        result = local.derivative([top.result, bottom.result])
        note = Note("(f/g)' = (f' g - f g')/g^2 with f = {0}, g = {1}", (numerator, denominator))
        return self._step("quotient", expr, result, [top, bottom], note)

    def _reciprocal(self, expr: sp.Expr, factors: list[sp.Expr]) -> Step:
        """``1/(g_1 g_2 ...)``: shown as the quotient rule with ``f = 1``, ``g = g_1 g_2 ...``.

        The result is ``-g'/g^2`` with ``g'`` the product rule's sum over the factors of ``g``
        (the steps shown) and each of its terms divided out, ``-g_i'/(g_i^2 prod_{j != i} g_j)``:
        what the product rule over the factors ``g_i**-k`` gives (the generated code is
        unchanged), from the one derivation shown, and never forming ``g**2``, which can
        overflow where ``g`` does not.
        """
        denominator = reciprocal_product(factors)
        top, bottom = self(sp.S.One), self(denominator)
        parts = list(sp.Mul.make_args(denominator))
        if bottom.rule == "product" and len(bottom.substeps) == len(parts):
            derivatives = [step.result for step in bottom.substeps]
        else:  # g is a single power (1/(x**2)**3 kept apart): its derivative as one term
            parts, derivatives = [denominator], [bottom.result]
        result = quick.addition([
            quick.multiplication([sp.S.NegativeOne, quick.power(part, sp.Integer(-2)), d, *(
                quick.power(p, sp.S.NegativeOne) for j, p in enumerate(parts) if j != i)])
            for i, (part, d) in enumerate(zip(parts, derivatives, strict=True))
        ])
        note = Note("(f/g)' = (f' g - f g')/g^2 = -g'/g^2 with f = 1, g = {0}", (denominator,))
        return self._step("quotient", expr, result, [top, bottom], note)

    def _pow(self, expr: sp.Pow) -> Step:
        base, exponent = expr.args
        base_varies = self._varies(base)
        exponent_varies = self._varies(exponent)
        value = self._value
        local = power_rule(value(base), value(exponent), base_varies, exponent_varies, value(expr))
        if base_varies and exponent_varies:
            steps = [self(base), self(exponent)]
            result = local.derivative([s.result for s in steps])
            return self._step(local.rule, expr, result, steps)
        index = 0 if base_varies else 1

        def in_names(*args: sp.Expr) -> Written:
            written = sp.Pow(*args, evaluate=False)
            return written, power_rule(*args, base_varies, exponent_varies)

        pairs = [(index, local.partials[index])]
        return self._outer_then_chain(local, expr, pairs, in_names)

    def _piecewise(self, expr: sp.Piecewise) -> Step:
        branches = [self(branch) for branch, _ in expr.args]
        local = piecewise_rule([cond for _, cond in expr.args])
        return self._step("piecewise", expr, local.derivative([s.result for s in branches]),
                          branches)

    # -- the expression as written (symdiff.parsing.written) -----------------------------------
    def _signed_sum(self, expr: SignedSum) -> Step:
        """``a + b - c`` as typed: term by term, each subtracted term's derivative subtracted
        (the difference rule)."""
        terms = [self(term) for term in expr.terms]
        local = signed_sum_rule(expr.signs)
        return self._step(local.rule, expr, local.derivative([t.result for t in terms]), terms)

    def _negation(self, expr: Negation) -> Step:
        """``-f``: the constant multiple rule with ``c = -1``."""
        inner = self(expr.args[0])
        result = constant_multiple(sp.S.NegativeOne).derivative([inner.result])
        return self._step("constant multiple", expr, result, [inner], NEGATION)

    def _written_product(self, expr: Product) -> Step:
        """``a*b*c`` as typed: the constant multiple rule when some factors are constant (the
        others, in their order, are ``f``), else the product rule over the factors."""
        factors = list(expr.args)
        constant = [f for f in factors if not self._varies(f)]
        if constant:
            varying = [f for f in factors if self._varies(f)]
            rest = varying[0] if len(varying) == 1 else Product(*varying)
            inner = self(rest)
            c = sp.Mul(*(self._value(f) for f in constant))
            result = constant_multiple(c).derivative([inner.result])
            return self._step("constant multiple", expr, result, [inner])
        steps = [self(f) for f in factors]
        local = product_rule([self._value(f) for f in factors])
        return self._step("product", expr, local.derivative([s.result for s in steps]), steps)

    def _written_quotient(self, expr: Quotient) -> Step:
        """``f/g`` as typed: the quotient rule, or the constant multiple rule ``f'/c`` when the
        denominator is a constant ``c``."""
        numerator, denominator = expr.args
        if self._varies(denominator):
            if self._varies(numerator):
                return self._quotient(expr, numerator, denominator)
            constants, rest = self._constant_factors(denominator)
            c = self._value(numerator) / sp.Mul(*(self._value(f) for f in constants))
            if c == 1 and not constants:
                return self._written_reciprocal(expr, denominator)
            inner = self(Quotient(sp.S.One, rest))
            result = constant_multiple(c).derivative([inner.result])
            note = Note("(c f)' = c f' with c = {0}, f = {1}", (c, inner.expr))
            return self._step("constant multiple", expr, result, [inner], note)
        inner = self(numerator)
        result = constant_multiple(1 / self._value(denominator)).derivative([inner.result])
        note = Note("(f/c)' = f'/c with c = {0}", (denominator,))
        return self._step("constant multiple", expr, result, [inner], note)

    def _constant_factors(self, expr: sp.Expr) -> tuple[list[sp.Expr], sp.Expr]:
        """The constant factors of a product as typed, and the product of the others (``expr``
        itself when it is no product)."""
        if not isinstance(expr, Product):
            return [], expr
        constants = [f for f in expr.args if self.var not in f.free_symbols]
        varying = [f for f in expr.args if self.var in f.free_symbols]
        return constants, varying[0] if len(varying) == 1 else Product(*varying)

    def _written_reciprocal(self, expr: Quotient, denominator: sp.Expr) -> Step:
        """``1/g`` and ``1/g**n`` as typed: the power rule on ``g**-n`` (with the chain rule when
        ``g`` is not the variable), as a textbook reads a lone reciprocal; the outer step
        keeps the reciprocal as written (``d/du [1/u**2] = -2/u**3``)."""
        power = isinstance(denominator, Power | sp.Pow)
        if power and self.var not in denominator.args[1].free_symbols:
            base, n = denominator.args[0], self._value(denominator.args[1])
        else:
            base, n = denominator, sp.S.One
        local = power_rule(self._value(base), -n, True, False)

        def in_names(u: sp.Expr, exponent: sp.Expr) -> Written:
            shown = u if n == 1 else sp.Pow(u, n, evaluate=False)
            return Quotient(sp.S.One, shown), power_rule(u, exponent, True, False)

        return self._outer_then_chain(local, expr, [(0, local.partials[0])], in_names, (base, -n))

    def _base_log(self, expr: BaseLog) -> Step:
        """``log(u, b)`` as typed: the logarithm rule to base ``b`` (with the chain rule for
        ``u``); a base that varies is the change of base ``log(u)/log(b)`` and the quotient
        rule."""
        argument, base = expr.args
        if self._varies(base):
            quotient = Quotient(sp.log(argument, evaluate=False), sp.log(base, evaluate=False))
            inner = self(quotient)
            note = Note("log_b(u) = ln(u)/ln(b) with b = {0}", (base,))
            return self._step("change of base", expr, inner.result, [inner], note)

        def in_names(u: sp.Expr, b: sp.Expr) -> Written:
            return BaseLog(u, b), base_log_rule(u, b)

        local = base_log_rule(self._value(argument), self._value(base))
        return self._outer_then_chain(local, expr, [(0, local.partials[0])], in_names)

    # -- functions and the chain rule ----------------------------------------------------------
    def _function(self, expr: sp.Expr) -> Step:
        """A function from the rule table: its own rule, with the chain rule when needed."""

        def spelt(*args: sp.Expr) -> sp.Expr:
            # unevaluated where the class allows it (logaddexp does not): the arguments are
            # distinct names, and max(u_1, ..., u_n) evaluated would compare every pair of them
            try:
                return expr.func(*args, evaluate=False)
            except TypeError:
                return expr.func(*args)

        return self._apply(expr, expr.func, expr.args, spelt)

    def _written_call(self, expr: Called) -> Step:
        """A function by the name typed (``max(a, b)``, ``ln(u)``): the function's rule over the
        arguments in the order written (the chain rule's outer step keeps name and order)."""
        return self._apply(
            expr, expr.function, expr.operands, lambda *args: Called.of(expr.name, args)
        )

    def _apply(
        self,
        expr: sp.Expr,
        func: type[sp.Expr],
        args: tuple[sp.Expr, ...],
        spelt: Callable[..., sp.Expr],
    ) -> Step:
        """``func`` (a row of the rule table) applied to ``args``, which ``expr`` shows;
        ``spelt(*names)`` writes the function applied to the inner functions' names."""
        local = function_rule(func, [self._value(arg) for arg in args])
        pairs = []
        for i, (arg, partial) in enumerate(zip(args, local.partials, strict=True)):
            if not self._varies(arg):
                continue
            if partial is None:
                raise UnsupportedError(
                    f"{func.__name__}: argument {sp.sstr(arg)} must not depend on {self.var}"
                )
            pairs.append((i, partial))

        def in_names(*named: sp.Expr) -> Written:
            return spelt(*named), function_rule(func, named)

        return self._outer_then_chain(local, expr, pairs, in_names, args)

    def _outer_then_chain(
        self,
        local: Local,
        expr: sp.Expr,
        pairs: list[tuple[int, sp.Expr]],
        in_names: Callable[..., Written],
        args: tuple[sp.Expr, ...] | None = None,
    ) -> Step:
        """Apply rule ``local`` directly when every varying argument is the variable itself,
        otherwise the chain rule: the outer derivative times each inner derivative, summed.

        ``pairs`` are (argument index, outer derivative at the arguments); ``in_names(*args)``
        gives the expression and its rule with the varying arguments replaced by the inner
        functions' names (``u**2`` and ``2*u``), which the chain step records as its outer
        step(s): ``d/du [u**2] = 2*u`` with ``u = sin(x)``. ``args`` are the operands (default:
        ``expr.args``).
        """
        name, identity = local.rule, local.identity
        args = expr.args if args is None else args
        if all(args[i] == self.var for i, _ in pairs):
            total = quick.addition([outer for _, outer in pairs])
            return self._step(name, expr, total, note=identity)
        inner = [self(args[i]) for i, _ in pairs]
        names = self._inner_names(len(pairs))
        named = [self._value(arg) for arg in args]
        for (i, _), symbol in zip(pairs, names, strict=True):
            named[i] = symbol
        # sin(u) once for every sin(...) of a large sum; a function called by another name
        # (arcsin, arctan: both Called nodes) keyed by that name
        key = (name, expr.func, getattr(expr, "name", None), *named)
        written = self._written.get(key)
        if written is None:
            written = self._written[key] = in_names(*named)
        outer_expr, outer_rule = written
        outer_steps = [
            Step(name, outer_expr, outer_rule.partials[i], symbol, (), identity)
            for (i, _), symbol in zip(pairs, names, strict=True)
        ]
        result = quick.addition(
            [quick.product(outer, step.result)
             for (_, outer), step in zip(pairs, inner, strict=True)]
        )
        defines = tuple((symbol, args[i]) for (i, _), symbol in zip(pairs, names, strict=True))
        note = EXPLANATION_CHAIN if len(pairs) == 1 else EXPLANATION_CHAIN_SEVERAL
        return Step("chain", expr, result, self.var, (*outer_steps, *inner), note, defines)

    def _inner_names(self, count: int) -> tuple[sp.Symbol, ...]:
        """The inner functions' names for a chain rule with ``count`` of them (``u`` or
        ``u_1, u_2, ...``): real like every variable, none a variable of the root expression."""
        names = self._inner.get(count)
        if names is None:
            assumptions = self.var.assumptions0
            names = tuple(
                sp.Symbol(name, **assumptions) for name in inner_names(count, self._taken or ())
            )
            self._inner[count] = names
        return names


EXPLANATION_CHAIN = "(f(u))' = f'(u) u': outer derivative times inner derivative"
EXPLANATION_CHAIN_SEVERAL = (
    "(f(u_1, u_2, ...))' = sum of (d/du_i f) u_i': each partial derivative times its inner"
    " derivative"
)


NEGATION = "(-f)' = -f'"


def _itself(expr: sp.Expr) -> sp.Expr:
    return expr


def _is_reciprocal(factor: sp.Expr) -> bool:
    """True for ``g**-k`` (a denominator factor as SymPy stores ``f/g``)."""
    return factor.is_Pow and factor.exp.is_number and bool(factor.exp.is_negative)


def differentiate(expr: sp.Expr, var: sp.Symbol, as_written: bool = False) -> Step:
    """Differentiate ``expr`` with respect to ``var`` by the rule table; returns the step tree.
    ``as_written``: ``expr`` may hold the nodes of :mod:`symdiff.parsing.written`."""
    return Deriver(var, as_written)(expr)
