"""One scalar engine: the steps are those of the engine that wrote the code.

For every mode (forward, reverse, auto; a Hessian's forward over forward and forward over
reverse; a Hessian-vector product) the steps' final result is checked against the compiled
function's output and against ``sympy.diff``, over random expressions (hypothesis) and over the
rule table's rows. The recorded reverse sweep is checked as data (adjoints, fan-out sums, rule
names), and ``explain()`` is checked to show it.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given, settings

import symdiff as sd
from symdiff import registry as R
from symdiff.codegen import naming
from symdiff.engine import local
from symdiff.engine.adjoints import ReverseSteps
from symdiff.engine.forward import Deriver, differentiate
from symdiff.engine.reverse import reverse_program
from symdiff.engine.rules import RULES
from symdiff.engine.sweeps import recorded
from symdiff.simplify import stable_forms
from symdiff.teach.explain import engine_mode

from .conftest import X, Y, Z, drop_step_derivatives, mpmath_met_complex, to_reference
from .test_property import _away_from_kinks, _heaviside, expressions, points
from .test_registry import _args, _node

XYZ = (X, Y, Z)


def _at(expr: sp.Expr, values: dict[sp.Symbol, float]) -> float:
    """``expr`` at a point, by mpmath at 30 digits (symdiff's functions in SymPy primitives)."""
    expr = to_reference(sp.sympify(expr)).replace(sp.DiracDelta, lambda *a: sp.S.Zero)
    # sympy.diff leaves d sign(u)/dx (floor, ceiling, Heaviside) unevaluated: 0 away from the
    # kinks and jumps, where the tests stay
    expr = expr.replace(
        lambda e: isinstance(e, sp.Derivative) and isinstance(e.expr, sp.sign | sp.Heaviside),
        lambda e: sp.S.Zero,
    )
    expr = drop_step_derivatives(expr)
    symbols = sorted(expr.free_symbols, key=lambda s: s.name)
    with mpmath.workdps(30):
        fn = sp.lambdify(symbols, expr, modules=[{"Heaviside": _heaviside}, "mpmath"])
        try:
            return float(mpmath.re(fn(*(mpmath.mpf(values[s]) for s in symbols))))
        except (TypeError, AttributeError) as error:
            if mpmath_met_complex(error):
                assume(False)  # SymPy's form of the reference is complex here: none to compare
            raise


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-8 * max(1.0, abs(b))


def _wrt(expr: sp.Expr) -> list[sp.Symbol]:
    wrt = [v for v in XYZ if v in expr.free_symbols]
    assume(wrt)
    return wrt


def _call(f, values: dict[sp.Symbol, float], **extra) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.asarray(f(**{a: values[sp.Symbol(a, real=True)] for a in f.args
                               if a not in extra}, **extra), dtype=float)


# -- 1. every mode, random expressions ---------------------------------------------------------
@settings(max_examples=25)
@given(expr=expressions, point=points)
def test_the_steps_result_is_the_compiled_gradient_in_every_mode(expr, point):
    assume(_away_from_kinks(expr, point))
    wrt = _wrt(expr)
    values = dict(zip(XYZ, point, strict=True))
    names = [v.name for v in wrt]
    references = [_at(sp.diff(to_reference(expr), var), values) for var in wrt]
    parsed = stable_forms(expr)
    for mode in ("forward", "reverse", "auto"):
        g = sd.grad(expr, wrt=names, mode=mode, simplify=False, cache=False)
        ours = np.atleast_1d(_call(g, values))
        engine = engine_mode(g)
        if engine == "reverse":
            sweep = recorded("grad", [parsed], names).reverse
            steps = [sweep.gradient(0, i) for i in range(len(wrt))]
        else:
            assert engine == "forward"
            steps = [differentiate(parsed, v).result for v in wrt]
        for var, step, value, reference in zip(wrt, steps, ours, references, strict=True):
            assert _close(_at(step, values), float(value)), (mode, expr, var)
            assert _close(_at(step, values), reference), (mode, expr, var)


@settings(max_examples=5)
@given(expr=expressions, point=points)
def test_the_second_order_steps_are_the_compiled_hessian_and_hvp(expr, point):
    assume(_away_from_kinks(expr, point))
    wrt = _wrt(expr)
    values = dict(zip(XYZ, point, strict=True))
    names = [v.name for v in wrt]
    parsed = stable_forms(expr)
    h = sd.hessian(expr, wrt=names, mode="reverse", simplify=False, cache=False)
    assert engine_mode(h) == "forward over reverse"
    ours = np.asarray(_call(h, values)).reshape(len(wrt), len(wrt))
    sweeps = recorded("hessian", [parsed], names)
    for j in range(len(wrt)):
        column = sweeps.output_tangents(j)
        for i in range(len(wrt)):
            step = _at(column[i], values)
            assert _close(step, float(ours[i, j])), (expr, i, j)
            reference = _at(sp.diff(to_reference(expr), wrt[i], wrt[j]), values)
            assert _close(step, reference), (expr, i, j)
    forward = sd.hessian(expr, wrt=names, mode="forward", simplify=False, cache=False)
    assert engine_mode(forward) == "forward"
    ours = np.asarray(_call(forward, values)).reshape(len(wrt), len(wrt))
    for i, vi in enumerate(wrt):
        first = differentiate(parsed, vi).result
        for j, vj in enumerate(wrt):
            assert _close(_at(differentiate(first, vj).result, values), float(ours[i, j]))
    v = np.linspace(0.5, 1.5, len(wrt))
    hv = sd.hvp(expr, wrt=names, simplify=False, cache=False)
    ours = np.ravel(_call(hv, values, _v=v))  # one wrt name: the point's shape (1,) too
    directions = {
        sp.Symbol(naming.direction(n), real=True): float(c)
        for n, c in zip(names, v, strict=True)
    }
    tangents = recorded("hvp", [parsed], names).output_tangents(0)
    for i, tangent in enumerate(tangents):
        assert _close(_at(tangent, {**values, **directions}), float(ours[i])), (expr, i)


# -- 2. the rule table's rows -----------------------------------------------------------------
ROWS = [pytest.param(row, id=row.names[0] if row.names else row.head)
        for row in R.ROWS if row.partials is not None]


@pytest.mark.parametrize("row", ROWS)
def test_both_engines_read_the_rows_rule(row):
    """Reverse mode's local partials at a row's node are the row's (the registry's partials,
    in stable forms), its steps name the row's rule, and its gradient, forward mode's and the
    compiled function's agree with sympy.diff inside the row's domain."""
    node = _node(row)
    # the variables the node was built from (sinc(x) is the node sinc(pi*x)), at a point
    # inside the domain but off its centre (0 for symmetric domains: cbrt'(0) is inf, sinc's
    # closed forms are 0/0 there), shifted apart so that max/min have no ties
    args = sorted(node.free_symbols, key=lambda s: s.name)
    assert args, "every row's node has a varying argument"
    domain = dict(zip(_args(row), row.domain.args, strict=False))
    mids = {s: domain[s][0] + 0.37 * (domain[s][1] - domain[s][0]) + 0.1 * i
            for i, s in enumerate(args)}
    record = ReverseSteps()
    reverse_program([node], args, record=record)
    (sweep,) = record.sweeps
    assert sweep.steps[0].rule == RULES[R.head_class(row)].name
    for i, var in enumerate(args):
        reference = _at(sp.diff(to_reference(node), var), mids)
        assert _close(_at(record.gradient(0, i), mids), reference), (row.head, var)
        assert _close(_at(differentiate(node, var).result, mids), reference), (row.head, var)
    names = [a.name for a in args]
    for mode in ("forward", "reverse"):
        g = sd.grad(node, wrt=names, mode=mode, cache=False)
        ours = np.atleast_1d(_call(g, mids))
        for var, value in zip(args, ours, strict=True):
            assert _close(float(value), _at(sp.diff(to_reference(node), var), mids)), mode


def test_the_structural_rules_are_one_table():
    """Forward mode's derivative of an operation is its local partials times the operands'
    derivatives (arranged as taught): one rule, read by both engines."""
    u, v = sp.symbols("u v", real=True)
    du, dv = sp.symbols("du dv", real=True)
    three, two = sp.Integer(3), sp.Integer(2)
    cases = [
        (local.sum_rule([u, v]), u + v, (u, v)),
        (local.product_rule([u, v]), u * v, (u, v)),
        (local.quotient_rule(u, v), u / v, (u, v)),
        (local.power_rule(u, v, True, True), u**v, (u, v)),
        (local.power_rule(u, three, True, False), u**3, (u, three)),
        (local.power_rule(two, v, False, True), 2**v, (two, v)),
    ]
    t = sp.Symbol("t", real=True)
    path = {u: sp.sin(t) + 2, v: sp.cos(t) + 2}
    for rule, expr, operands in cases:
        pairs = zip(operands, (du, dv), strict=True)
        derivatives = [d if o.free_symbols else None for o, d in pairs]
        combined = rule.derivative(derivatives)
        by_partials = sp.Add(*(p * d for p, d in zip(rule.partials, derivatives, strict=True)
                               if d is not None))
        assert sp.simplify(combined - by_partials) == 0, rule.rule
        on_path = combined.subs({du: sp.diff(path[u], t), dv: sp.diff(path[v], t)}).subs(path)
        assert sp.simplify(on_path - sp.diff(expr.subs(path), t)) == 0, rule.rule


# -- 3. the recorded sweep as data ------------------------------------------------------------
def test_the_sweep_records_adjoints_fan_out_and_rule_names():
    record = ReverseSteps()
    expr = sp.sin(X) * sp.cos(X) + X**2 * Y
    reverse_program([expr], [X, Y], record=record)
    (sweep,) = record.sweeps
    rules = [step.rule for step in sweep.steps]
    assert rules[0] == "sum" and sweep.steps[0].seed and sweep.steps[0].parts == (1,)
    assert {"product", "power", "trigonometric"} <= set(rules)
    # x feeds sin, cos and x**2: its gradient is the sum of three contributions (fan-out)
    x_bar, y_bar = sweep.gradients
    assert x_bar.var == X and len(x_bar.parts) == 3 and len(y_bar.parts) == 1
    for step in sweep.steps:
        for c in step.sends:  # every contribution is local partial times the adjoint
            adjoint = step.adjoint if step.adjoint is not None else sp.Add(*step.parts)
            assert c.term == c.partial * adjoint
    for i, var in enumerate((X, Y)):
        assert sp.simplify(record.gradient(0, i) - sp.diff(expr, var)) == 0
    assert "fan-out" in str(record) and "[product rule]" in str(record)


def test_a_shared_node_adds_up_its_contributions():
    record = ReverseSteps()
    shared = sp.exp(X * Y)
    reverse_program([shared * X + shared], [X, Y], record=record)
    (sweep,) = record.sweeps
    exp_steps = [s for s in sweep.steps if s.definition.value.func == sp.exp]
    assert len(exp_steps) == 1 and len(exp_steps[0].parts) == 2  # used twice: fan-out
    assert exp_steps[0].adjoint is not None  # named, _tK_bar, as in the code


@settings(max_examples=60)
@given(expr=expressions)
def test_forward_mode_differentiates_only_what_its_steps_show(expr):
    """No hidden derivation over random expressions: each expression Deriver differentiates is
    the expression of a step in the tree it returns (or an inner function's, by the chain)."""
    seen: list[sp.Expr] = []
    deriver = Deriver(X)
    original = deriver._differentiate

    def spy(e):
        seen.append(e)
        return original(e)

    deriver._differentiate = spy  # type: ignore[method-assign]
    root = deriver(stable_forms(expr))
    assert set(seen) <= {step.expr for _, step in root.walk()}


def test_forward_mode_derives_each_expression_once_and_shows_it():
    """Every expression forward mode differentiates is a step of the tree it returns: no hidden
    second derivation (the f = 1 quotient used to derive the reciprocal factors apart)."""
    seen = []
    original = Deriver._differentiate

    def spy(self, expr):
        seen.append(expr)
        return original(self, expr)

    lam = sp.Symbol("lam", real=True)
    expr = sd.parse("2*h*c**2/(lam**5*(exp(h*c/(lam*k*T)) - 1))")
    Deriver._differentiate = spy
    try:
        root = differentiate(expr, lam)
    finally:
        Deriver._differentiate = original
    shown = {step.expr for _, step in root.walk()}
    assert set(seen) <= shown
    assert sp.simplify(root.result - sp.diff(expr, lam)) == 0


# -- 4. explain() shows the engine that wrote the code ------------------------------------------
def test_explain_of_a_reverse_mode_function_shows_its_sweep():
    g = sd.grad("x*y*z + sin(x*y) + w**2", mode="reverse")
    text = g.explain()
    assert "backward pass" in text and "forward pass" in text
    assert "[product rule]" in text and "[trigonometric rule]" in text and "fan-out" in text
    assert "<- rule tree" not in text  # no forward-mode rule tree beside reverse-mode code
    assert "_x_bar = " in text and "<- the sum the backward pass leaves for x" in text


def test_auto_mode_explains_whichever_engine_it_picked():
    small = sd.grad("x*sin(y)")
    large = sd.grad("x*sin(y) + z*w")  # four variables: reverse mode
    assert engine_mode(small) == "forward" and "<- rule tree" in small.explain()
    assert engine_mode(large) == "reverse" and "backward pass" in large.explain()


def test_explain_of_second_order_functions_shows_the_tangent_sweeps():
    h = sd.hessian("x*y*z + sin(x*y) + w**2", mode="reverse")
    text = h.explain()
    assert "backward pass" in text and "tangent sweep for column 0" in text
    assert "no rule tree" not in text
    hv = sd.hvp("x*sin(y)")
    assert "tangent sweep along the direction _v" in hv.explain()
    assert "no rule tree" in sd.hessian("x*sin(y)", mode="forward").explain()


def test_value_and_grad_explains_the_given_expression():
    given_text = "x*(x+1) - x**2"
    text = sd.value_and_grad(given_text).explain()
    assert "[product]" in text and "[sum]" in text
    assert text.split("<- rule tree:")[1] == sd.grad(given_text).explain().split(
        "<- rule tree:")[1]


def test_explain_with_an_expression_reruns_the_same_sweep():
    g = sd.grad("a*b + c*d", mode="reverse")
    assert g.explain(expr="a*b + c*d") == g.explain()


def test_a_traced_function_explains_its_sweep_and_takes_itself_as_expr():
    def f(a, b, c, d):
        return a * np.sin(b) + c * d

    g = sd.grad(f)  # four parameters: reverse mode
    assert engine_mode(g) == "reverse"
    text = g.explain()
    assert "[trigonometric rule] _t0 = sin(b)" in text and "leaves for a\n" in text
    assert g.explain(expr=f) == text


def test_symbols_with_unsafe_names_explain_in_their_code_names():
    hostile, x1 = sp.Symbol("a<b>&", real=True), sp.Symbol("x_{1}", real=True)
    c, d = sp.symbols("c d", real=True)
    g = sd.grad(sp.sin(x1) * hostile + c * d, mode="reverse")
    text = g.explain(width=None)  # (whole lines: the generated line with out= is long)
    assert "_x_1_bar = " in text and "leaves for x_1\n" in text
    assert "  _x_1_bar = a_b*cos(x_1)" in text  # the backward pass ends in the output's name


def test_a_contribution_shows_the_rules_form_beside_the_codes():
    """The registry's sigmoid rule reads sigmoid(u)*(1 - sigmoid(u)); the code computes its
    stable form sigmoid(u)*sigmoid(-u); 0**y's guard is the code's, log(x) the rule's."""
    record = ReverseSteps()
    reverse_program([sd.parse("sigmoid(x*y) + x**y")], [X, Y], record=record)
    (sweep,) = record.sweeps
    (sig,) = [s for s in sweep.steps if s.rule == "sigmoid"]
    (send,) = sig.sends
    t = sig.definition.symbol
    assert send.rule_partial == t * (1 - t) and send.partial != send.rule_partial
    assert sp.simplify(to_reference(send.rule_partial.subs(t, sig.definition.value)
                                    - send.partial.subs(t, sig.definition.value))) == 0
    (power,) = [s for s in sweep.steps if s.rule == "general power"]
    by_y = next(c for c in power.sends if c.target == Y)
    assert by_y.rule_partial == power.definition.symbol * sp.log(X)
    assert by_y.partial.has(sp.Piecewise)  # log(x) taken as 0 where x**y is 0
    assert "computed as" in str(record)
