"""Derivations never print a false equality, and name the rule a student expects at every node.

Each shown line is data (:meth:`symdiff.engine.steps.Derivation.lines`): the text, LaTeX and HTML
views
print exactly those lines. The checks below read that data, not the printed text, and then check
that the printed text holds each line (with its variable ``x`` or ``u``). The reference for every
``d/dv [lhs] = rhs`` is ``sympy.diff(lhs, v)``, compared with ``rhs`` symbolically for the
textbook expressions and at random points (after substituting the ``u = ...`` in force) for the
property corpus of ``tests/test_property.py``.
"""

from __future__ import annotations

import math
import re
import time

import mpmath
import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings

import symdiff as sd
from symdiff import registry
from symdiff.cli import main as cli_main
from symdiff.engine.inputtext import teaching_text
from symdiff.engine.steps import Derivation, Step
from symdiff.engine.texnames import tex

from .conftest import (
    X,
    Y,
    Z,
    canonical,
    drop_step_derivatives,
    mpmath_met_complex,
    sympy_cannot_print,
    to_reference,
)
from .test_derive import RULE_SEQUENCES
from .test_property import _away_from_kinks, _heaviside, expressions
from .test_rules import ROWS, rule_case, rule_points

#: Textbook expressions (with the variable), besides those of tests/test_derive.py.
TEXTBOOK = [
    *((text, "x") for text, _ in RULE_SEQUENCES),
    ("x**2*sin(x)", "x"),
    ("sin(x)/x", "x"),
    ("exp(x**2)", "x"),
    ("log(x, 2)", "x"),
    ("x**x", "x"),
    ("(x**2 - 1)/(x - 1)", "x"),
    ("max(x, 0)", "x"),
    ("atan2(y, x) * softplus(x)", "x"),
    ("sin(x)**2", "x"),
    ("(x**2 + 1)**12", "x"),
    ("(1 + exp(x))**-3", "x"),
    ("1/(x**2 + 1)", "x"),
    ("exp(sin(x)**2)", "x"),
    ("sin(cos(x**2))", "x"),
    ("atan2(x**2, x)", "x"),
    ("2**sin(x)", "x"),
    ("sin(x)/(x*(x + 1))", "x"),
    ("1/(x*(x + 1))", "x"),
    ("1/(sqrt(x)*sqrt(x + 1))", "x"),
    ("exp(u**2)", "u"),
    ("1/(lam**5*(exp(h*c/(lam*k*T)) - 1))", "lam"),
    ("2*h*c**2/(lam**5*(exp(h*c/(lam*k*T)) - 1))", "lam"),
    ("(sigma/r)**12 - (sigma/r)**6", "r"),
]

#: Functions whose sympy.diff differs from the rule table's only at a kink (Heaviside(0) = 1/2
#: against the documented conventions): compared at points away from it, not symbolically.
KINKED = (
    *(registry.head_class(row) for row in registry.ROWS if row.head and row.domain.kinks),
    sp.Piecewise,
)


def _scoped(lines):
    """Each derivative or equality line with the inner-function definitions in force for it.

    A definition line at depth ``d + 1`` belongs to the chain step at depth ``d`` above it and
    holds for the lines below until one at depth ``d`` or less (sibling chains both use ``u``).
    """
    stack: list[tuple[int, sp.Symbol, sp.Expr]] = []
    for line in lines:
        if line.kind == "definition":
            stack.append((line.depth - 1, line.lhs, line.rhs))
            continue
        while stack and stack[-1][0] >= line.depth:
            stack.pop()
        yield line, {symbol: expr for _, symbol, expr in stack}


def _sides(line):
    """The two sides of the equality a line prints: ``sympy.diff(lhs, var)`` and ``rhs``."""
    if line.kind == "derivative":
        reference = sp.diff(to_reference(line.lhs), line.var)
    else:
        reference = to_reference(line.lhs)
    reference = drop_step_derivatives(reference.replace(sp.DiracDelta, lambda *a: sp.S.Zero))
    return reference, to_reference(line.rhs)


def _value(expr, variables, point) -> complex | None:
    """``expr`` at ``point`` through mpmath at 30 digits; None where SymPy cannot print its
    form of it, or mpmath meets a complex value where only real ones go (no value to compare:
    the point is skipped)."""
    with mpmath.workdps(30):
        try:
            fn = sp.lambdify(variables, expr, modules=[{"Heaviside": _heaviside}, "mpmath"])
            return complex(fn(*(mpmath.mpf(v) for v in point)))
        except (ValueError, TypeError, AttributeError) as error:
            if sympy_cannot_print(error) or mpmath_met_complex(error):
                return None
            raise


def _agree(a: complex, b: complex) -> bool:
    return abs(a - b) <= 1e-9 * max(1.0, abs(b))


def check_printed_equalities(d, points, *, symbolic: bool = False) -> list[str]:
    """Every line ``d`` shows states a true equality, in the variable the text prints.

    Returns the printed lines that no point could check numerically (all at a kink or a pole)."""
    printed = str(d).splitlines()[1:]
    lines = d.lines("all")
    assert len(printed) == len(lines)
    variables = sorted(d.expr.free_symbols, key=str)
    unchecked = []
    rows = [row for row, line in zip(printed, lines, strict=True) if line.kind != "definition"]
    for (line, scope), row in zip(_scoped(lines), rows, strict=True):
        assert line.text() in row
        if line.kind == "other":
            continue
        if line.kind == "derivative":
            # the text names the variable of the step, and an inner name is defined above it
            assert f"d/d{line.var} [" in row
            if line.var != d.var:
                assert line.var in scope, (line, scope)
                definition = f"{line.var} = {teaching_text(scope[line.var])}"
                assert any(r.strip().startswith(definition) for r in printed), definition
            else:
                assert not (line.lhs.free_symbols & set(scope)), line
        reference, rhs = _sides(line)
        if symbolic and not line.lhs.has(*KINKED):
            assert sp.simplify(reference - rhs) == 0, row
        # numerically, in the derivation's own variables, with u = ... substituted
        compared = 0
        # an assembly line's parts hold partials (tie shares): probe the step's own expression
        probe = line.step.expr if line.kind == "assembly" else line.lhs
        lhs_x = probe.xreplace(scope)
        in_x = {symbol: to_reference(expr) for symbol, expr in scope.items()}
        reference, rhs = reference.xreplace(in_x), rhs.xreplace(in_x)
        for point in points:
            if not _away_from_kinks(lhs_x, _padded(variables, point)):
                continue
            want = _value(reference, variables, point)
            if want is None or not all(map(math.isfinite, (want.real, want.imag))):
                continue
            got = _value(rhs, variables, point)
            if got is None:
                continue
            assert _agree(got, want), (row, dict(zip(variables, point, strict=True)), got, want)
            compared += 1
        if not compared:
            unchecked.append(row)
    return unchecked


def _padded(variables, point):
    """The point as (x, y, z) values for ``_away_from_kinks`` (other names do not kink)."""
    values = dict(zip(variables, point, strict=True))
    return tuple(float(values.get(v, 0.5)) for v in (X, Y, Z))


# -- 2. every printed equality is true ------------------------------------------------------------
@pytest.mark.parametrize("text, wrt", TEXTBOOK)
def test_every_printed_equality_of_a_textbook_derivation_is_true(text, wrt):
    d = sd.derive(text, wrt=wrt)
    rng = np.random.default_rng(7)
    points = rng.uniform(0.3, 2.0, (3, len(d.expr.free_symbols)))
    assert check_printed_equalities(d, points, symbolic=True) == []


@pytest.mark.parametrize("row", ROWS)
def test_every_printed_equality_is_true_for_every_function_of_the_rule_table(row):
    """Each rule-table function applied to inner functions over its registry domain (the cases
    of tests/test_rules.py), at points away from its kinks."""
    expr = rule_case(row)[0]
    points = np.column_stack(rule_points(row, n=3))
    for var in (X, Y):
        d = sd.derive(expr, wrt=str(var), simplify=False)
        assert check_printed_equalities(d, points) == []


@settings(max_examples=20)
@given(expr=expressions)
def test_every_printed_equality_of_a_random_derivation_is_true(expr):
    """Over the property corpus. Unsimplified: simplifying is most of the time, and its line is
    checked on the textbook expressions (its value in tests/test_property.py)."""
    var = sorted(expr.free_symbols, key=str)[-1]
    d = sd.derive(expr, wrt=str(var), simplify=False)
    rng = np.random.default_rng(0)
    points = rng.uniform(-2, 2, (2, len(d.expr.free_symbols)))
    check_printed_equalities(d, points)


@pytest.mark.parametrize("symbolic", [True, False])
def test_the_checker_catches_the_old_false_chain_line(symbolic):
    """The text of before: the outer step in x, ``d/dx [sin(x)**2] = 2*sin(x)``."""
    d = sd.derive("sin(x)**2", wrt="x")
    chain = d.steps[0]
    (outer,) = chain.outer
    old = Step(outer.rule, chain.expr, 2 * sp.sin(X), X)
    bad = Step("chain", chain.expr, chain.result, X, (old, *chain.inner))
    with pytest.raises(AssertionError, match=re.escape("[power] d/dx [sin(x)**2] = 2*sin(x)")):
        check_printed_equalities(
            Derivation(chain.expr, X, chain.result, chain.result, [bad]), [(0.7,)],
            symbolic=symbolic,
        )


# -- 1. the text names u as the LaTeX view does ---------------------------------------------------
def test_chain_text_writes_the_outer_step_in_u_with_its_definition():
    text = str(sd.derive("sin(x)**2", wrt="x"))
    assert text.splitlines() == [
        "d/dx [sin(x)**2] = 2*sin(x)*cos(x)",
        "1. [chain] d/dx [sin(x)**2] = 2*sin(x)*cos(x)"
        "   ((f(u))' = f'(u) u': outer derivative times inner derivative)",
        "  u = sin(x)   (inner function)",
        "  f'(u): [power] d/du [u**2] = 2*u   (d/du u^2 = 2 u)",
        "  u': [trigonometric] d/dx [sin(x)] = cos(x)   (d/dx sin(x) = cos(x))",
        "  f'(u) u' = 2*sin(x)*cos(x)",
    ]
    assert "d/dx [sin(x)**2] = 2*sin(x)\n" not in text + "\n"


@pytest.mark.parametrize(
    "text, wrt",
    [("exp(x**2)", "x"), ("exp(sin(x)**2)", "x"), ("atan2(x**2, x)", "x"), ("exp(u**2)", "u"),
     ("log(x**2)", "x"), ("1/(lam**5*(exp(h*c/(lam*k*T)) - 1))", "lam")],
)
def test_text_latex_and_html_name_the_same_inner_functions(text, wrt):
    d = sd.derive(text, wrt=wrt)
    plain, latex, page = str(d), d.latex(), d.html()
    definitions = [line for line in d.lines() if line.kind == "definition"]
    assert definitions
    for line in definitions:
        assert f"{line.lhs} = {teaching_text(line.rhs)}   (inner function)" in plain
        assert f"{tex(line.lhs)} &= {tex(line.rhs)} && " in latex  # names as names
        assert f"<code>{line.lhs} = " in page
    for line in d.lines():
        if line.kind == "derivative" and line.var != d.var:
            assert f"d/d{line.var} [{teaching_text(line.lhs)}]" in plain
            d_latex = (rf"\frac{{\partial}}{{\partial {tex(line.var)}}}" if line.partial
                       else rf"\frac{{d}}{{d{tex(line.var)}}}")
            assert f"{d_latex}\\left[{tex(line.lhs)}\\right]" in latex


def test_nested_chains_name_v_in_text_too_and_a_variable_u_is_not_reused():
    text = str(sd.derive("exp(sin(x)**2)", wrt="x"))
    assert "  u = sin(x)**2   (inner function)" in text
    assert "    v = sin(x)   (inner function)" in text
    assert "    f'(v): [power] d/dv [v**2] = 2*v" in text
    text = str(sd.derive("exp(u**2)", wrt="u"))
    assert "  v = u**2   (inner function)" in text
    assert "[exponential] d/dv [exp(v)] = exp(v)" in text


def test_simplify_line_never_differentiates_the_raw_result():
    d = sd.derive("(x**2 - 1)/(x - 1)", wrt="x")
    last = str(d).splitlines()[-1]
    assert last.startswith("2. [simplify] d/dx [(x**2 - 1)/(x - 1)] = 1 ")
    # a simplify step alone: raw = result
    assert d.steps[-1].text() == f"{teaching_text(d.raw)} = 1"


def test_cli_derive_prints_the_same_text(capsys):
    assert cli_main(["derive", "sin(x)**2", "--wrt", "x"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip("\n") == str(sd.derive("sin(x)**2", wrt="x"))
    assert "  u = sin(x)   (inner function)\n" in out and "[power] d/du [u**2] = 2*u" in out


# -- 3. the rule a student expects ----------------------------------------------------------------
@pytest.mark.parametrize(
    "text, base, exponent",
    [
        ("(x**2 + 1)**12", X**2 + 1, 12),
        ("sin(x)**2", sp.sin(X), 2),
        ("(1 + exp(x))**-3", 1 + sp.exp(X), -3),
        ("sqrt(1 + x**2)", 1 + X**2, sp.S.Half),
    ],
)
def test_a_power_of_a_non_trivial_base_is_the_chain_rule_with_u_named(text, base, exponent):
    d = sd.derive(text, wrt="x")
    root = d.steps[0]
    assert root.rule == "chain"
    ((u, inner),) = root.defines
    assert canonical(inner) == base and u.name == "u"
    (outer,) = root.outer
    assert outer.rule == "power" and outer.var == u and outer.expr == u**exponent
    assert outer.result == exponent * u ** (exponent - 1)
    assert [s.expr for s in root.inner] == [inner]
    assert teaching_text(inner) in text  # u as the student wrote it
    assert f"  u = {teaching_text(inner)}   (inner function)" in str(d)


@pytest.mark.parametrize("text", ["x**5", "sqrt(x)", "x**(-3)"])
def test_a_power_of_the_variable_itself_is_the_power_rule_alone(text):
    d = sd.derive(text, wrt="x")
    assert d.steps[0].rule == "power" and not d.steps[0].defines and " u = " not in str(d)


def test_sin_x_over_x_is_the_quotient_rule_with_f_and_g():
    root = sd.derive("sin(x)/x", wrt="x").steps[0]
    assert root.rule == "quotient"
    assert "with f = sin(x), g = x" in root.explanation()
    assert [(s.rule, s.expr) for s in root.substeps] == [("trigonometric", sp.sin(X)),
                                                         ("variable", X)]


def test_planck_law_as_typed_is_the_power_rule_and_in_sympys_form_the_quotient_rule():
    """A lone reciprocal as typed, ``1/g``, is the power rule on ``u**-1`` with ``u = g`` (the
    chain rule); SymPy's form (the code's) is the quotient rule with ``f = 1``."""
    lam, h, c, k, T = (sp.Symbol(n, real=True) for n in ("lam", "h", "c", "k", "T"))
    g = lam**5 * (sp.exp(h * c / (lam * k * T)) - 1)
    text = "1/(lam**5*(exp(h*c/(lam*k*T)) - 1))"
    d = sd.derive(text, wrt="lam")
    root = d.steps[0]
    assert root.rule == "chain" and canonical(root.defines[0][1]) == g
    outer, inner = root.substeps
    assert outer.rule == "power" and teaching_text(outer.expr) == "1/u"
    assert inner.rule == "product" and [s.rule for s in inner.substeps] == ["power", "difference"]
    assert sp.simplify(d.raw - sp.diff(1 / g, lam)) == 0
    d = sd.derive(sd.parse(text), wrt="lam")
    root = d.steps[0]
    assert root.rule == "quotient"
    assert f"with f = 1, g = {teaching_text(g)}" in root.explanation()
    one, bottom = root.substeps
    assert (one.rule, one.expr, one.result) == ("constant", 1, 0)
    assert bottom.rule == "product" and canonical(bottom.expr) == g
    assert sp.simplify(d.raw - sp.diff(1 / g, lam)) == 0
    # SymPy's form (the code's): the product rule's result over the reciprocals, as before,
    # never g**2 = lam**10 ...
    assert d.raw.is_Add and len(d.raw.args) == 2 and not d.raw.has(lam**10)
    # ... and the whole law: a constant multiple of that quotient; as written, of 1/g
    full = sd.derive(sd.parse("2*h*c**2/(lam**5*(exp(h*c/(lam*k*T)) - 1))"), wrt="lam")
    assert full.rules[:4] == ["constant multiple", "quotient", "constant", "product"]
    full = sd.derive("2*h*c**2/(lam**5*(exp(h*c/(lam*k*T)) - 1))", wrt="lam")
    assert full.rules[:4] == ["constant multiple", "chain", "power", "product"]
    assert "with c = 2*c**2*h, f = 1/(lam**5*(exp(h*c/(lam*k*T)) - 1))" in str(full)


def test_several_denominator_factors_make_one_g():
    root = sd.derive("sin(x)/(x*(x + 1))", wrt="x").steps[0]
    assert root.rule == "quotient" and "with f = sin(x), g = x*(x + 1)" in root.explanation()
    assert [s.rule for s in root.substeps] == ["trigonometric", "product"]
    root = sd.derive(sd.parse("1/(x*(x + 1))"), wrt="x").steps[0]
    assert root.rule == "quotient" and "with f = 1, g = x*(x + 1)" in root.explanation()


def test_reciprocal_quotient_keeps_the_generated_code():
    """The f = 1 quotient is how the steps read; grad's code is the product rule's as before."""
    expr = "1/(x**5*(exp(1/x) - 1))"
    root = sd.derive(sd.parse(expr), wrt="x", simplify=False).steps[0]  # SymPy's form, as grad
    factors = [X**-5, (sp.exp(1 / X) - 1) ** -1]
    d_factors = [-5 * X**-6, (sp.exp(1 / X) - 1) ** -2 * sp.exp(1 / X) / X**2]
    assert root.rule == "quotient"
    assert root.result == d_factors[0] * factors[1] + factors[0] * d_factors[1]


# -- 4. fast on large expressions -----------------------------------------------------------------
def _cpu_seconds(n: int) -> float:
    ys = sp.symbols(f"y0:{n}", real=True)
    expr = sum(sp.sin(X * y) ** 2 + 1 / ((X + y) * (X - y) * sp.exp(X * y)) for y in ys)
    best = math.inf
    for _ in range(2):
        start = time.process_time()
        d = sd.derive(expr, wrt="x", simplify=False)
        str(d), d.latex()
        best = min(best, time.process_time() - start)
    return best


def test_derive_and_its_text_stay_linear_in_the_number_of_chain_and_quotient_steps():
    small, large = _cpu_seconds(12), _cpu_seconds(48)
    assert large < 10 * small, (small, large)  # 4x the terms: ~4x the time, not 16x


@pytest.mark.parametrize("text", [
    "abs(x)*x", "mod(x, 3)*x", "ceil(x) + x**2", "where(x > 0, x**2, -x)", "max(x, x**2)",
    "heaviside(x, 0.5)*x", "min(1, x)*exp(x)", "floor(x)*x", "sinc(x)", "sinc(x)**2*x",
])
def test_text_view_uses_the_input_language_names(text):
    """abs, mod, ceil, where, max, min, heaviside as the student types them, never SymPy's Abs,
    Mod, ceiling, Piecewise, Max, Min, Heaviside (which parse() would not read back)."""
    printed = str(sd.derive(text, wrt="x"))
    assert printed.startswith(f"d/dx [{text}] = "), printed.splitlines()[0]
    for sympy_name in ("Abs(", "Mod(", "ceiling(", "Piecewise(", "Max(", "Min(", "Heaviside("):
        assert sympy_name not in printed, (sympy_name, printed)
    assert "sinc_d" not in printed  # internal: written out in closed form
    result = printed.splitlines()[0].split(" = ", 1)[1]
    reread, want = sd.parse(result), sd.derive(text, wrt="x").result
    for point in (0.37, -1.3, 2.71):  # the printed text reads back as the same value
        assert abs(complex(reread.subs(X, point).evalf(30))
                   - complex(want.subs(X, point).evalf(30))) < 1e-20, (result, point)
