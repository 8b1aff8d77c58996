"""Derivations operate on the expression as written.

``sd.derive(text)`` differentiates the tree of :mod:`symdiff.parsing.written`: the order of
terms, subtraction and division, powers of quotients and constants as the student typed them,
walked by the one engine (:class:`symdiff.engine.forward.Deriver`) with the same rule rows. For
a corpus of textbook expressions: the first line is the expression as typed (up to spacing),
every printed equality is true at random points, the result equals ``sympy.diff`` (the
reference, never the engine) and the compiled code's derivative.
"""

from __future__ import annotations

import mpmath
import numpy as np
import pytest
import sympy as sp

import symdiff as sd
from symdiff.engine.inputtext import teaching_text
from symdiff.parsing.teaching import parse_as_written
from symdiff.parsing.written import BaseLog, Called, Quotient, SignedSum, canonical

from .test_derive_text import check_printed_equalities

#: Textbook expressions, each with its variable; every variable is drawn from (0.2, 0.8), where
#: all of them are defined (asin, atanh(x/2), acosh(x + 2), 1/sqrt(1 - x**2), log(sin(x))).
CORPUS = [
    # polynomials, sums and differences
    ("3*x**2 + 2*x + 1", "x"),
    ("x**3 - 4*x**2 + 7", "x"),
    ("5*x**4 - 3*x**-2", "x"),
    ("a - b - c*x", "x"),
    ("x - 2 - x**2 - 3*x", "x"),
    ("a*x**2 + b*x + c", "x"),
    ("x**2/2 - x/3", "x"),
    ("0.5*x**2 - 1.5*x", "x"),
    ("-(x**2 - 1)", "x"),
    ("x**(3/2)", "x"),
    # products
    ("(x + 1)*(x - 1)", "x"),
    ("x**2*sin(x)", "x"),
    ("x*exp(x)*log(x)", "x"),
    ("(x + 1)**2*(x - 1)**3", "x"),
    ("x*sqrt(1 - x)", "x"),
    ("sinh(x)*cosh(x)", "x"),
    # quotients and rational functions
    ("sin(x)/x", "x"),
    ("(x**2 + 1)/(x - 1)", "x"),
    ("(1 - x)/(1 + x)", "x"),
    ("x/(1 + x/(1 + x))", "x"),
    ("1/x", "x"),
    ("3/(2*x + 1)", "x"),
    ("(x**2 - 1)/(x - 1)", "x"),
    ("x**2/(x**3 + 1)**2", "x"),
    ("exp(x)/(1 + exp(x))", "x"),
    ("1/(1 + exp(-x))", "x"),
    ("x*y - y/x", "x"),
    # the chain rule, Lennard-Jones
    ("(sigma/r)**12", "r"),
    ("4*eps*((sigma/r)**12 - (sigma/r)**6)", "r"),
    ("(sigma/r)**12 - x - y/z", "r"),
    ("(2*x + 3)**5", "x"),
    ("sqrt(1 + x**2)", "x"),
    ("sqrt(x)", "x"),
    ("1/sqrt(1 - x**2)", "x"),
    ("sin(x**2)", "x"),
    ("cos(3*x - 1)", "x"),
    ("tan(x)**2", "x"),
    ("sin(cos(tan(x)))", "x"),
    ("sin(x)**2 + cos(x)**2", "x"),
    # exponentials and logarithms
    ("exp(-x**2/2)", "x"),
    ("exp(sin(x))", "x"),
    ("e**(2*x)", "x"),
    ("log(1 + x**2)", "x"),
    ("log(sin(x))", "x"),
    ("log(x**2 + x)", "x"),
    ("2**x", "x"),
    ("x**x", "x"),
    ("x**sin(x)", "x"),
    # inverse trigonometric and hyperbolic
    ("asin(x)", "x"),
    ("acos(2*x)", "x"),
    ("atan(x/2)", "x"),
    ("atan(1/x)", "x"),
    ("tanh(2*x)", "x"),
    ("asinh(x) - acosh(x + 2)", "x"),
    ("atanh(x/2)", "x"),
    # max and min keep their arguments in the order typed (SymPy sorts them)
    ("min(x, 1)", "x"),
    ("max(x**2, y)", "x"),
    ("3*min(x, 1 - x) + max(sin(x), x/2)", "x"),
    # a logarithm to a base stays one (SymPy makes it log(u)/log(b))
    ("log(x, 2)", "x"),
    ("log(x**2 + 1, 10)*y", "x"),
    ("log(3, x)", "x"),
    # another name of a function is kept (SymPy prints log, atan, asin, acosh)
    ("ln(x)*x", "x"),
    ("arctan(x**2) + arcsin(x/2)", "x"),
    ("arccosh(x + 2)/ln(1 + y**2)", "y"),
]


def _points(d, n: int = 2) -> np.ndarray:
    return np.random.default_rng(19).uniform(0.2, 0.8, (n, len(d.expr.free_symbols)))


def _at(expr: sp.Expr, variables: list[sp.Symbol], point) -> complex:
    with mpmath.workdps(30):
        fn = sp.lambdify(variables, expr, modules="mpmath")
        return complex(fn(*(mpmath.mpf(float(v)) for v in point)))


def test_the_corpus_is_large_enough():
    assert len(CORPUS) >= 40 and len({text for text, _ in CORPUS}) == len(CORPUS)


@pytest.mark.parametrize(("text", "wrt"), CORPUS)
def test_a_textbook_derivation_starts_as_typed_and_prints_only_true_equalities(text, wrt):
    d = sd.derive(text, wrt=wrt)
    shown = sp.sstr(d.shown)  # d.written, or d.expr where SymPy's form is the same tree
    # 1. the first line (and the first step) is the expression as typed, up to spacing
    assert shown.replace(" ", "") == text.replace(" ", "")
    first, step = str(d).splitlines()[:2]
    printed = teaching_text(d.shown)  # the same tree, the natural logarithm printed ln
    assert printed.replace("ln(", "log(") == shown.replace("ln(", "log(")
    assert first.startswith(f"d/d{wrt} [{printed}] = ")
    assert f"d/d{wrt} [{printed}] = " in step
    assert canonical(d.shown) == sd.parse(text) == d.expr
    # 2. every printed equality is true at random points (each d/dv [f] = g against sympy.diff)
    points = _points(d)
    assert check_printed_equalities(d, points) == []
    # 3. the result is sympy.diff's, and the last line is the final answer
    variables = sorted(d.expr.free_symbols, key=str)
    reference = sp.diff(sd.parse(text), sp.Symbol(wrt, real=True))
    for point in points:
        want = _at(reference, variables, point)
        for got in (_at(d.result, variables, point), _at(d.raw, variables, point)):
            assert abs(got - want) <= 1e-12 * max(1.0, abs(want)), (text, point, got, want)
    assert canonical([line for line in d.lines() if line.depth == 0][-1].rhs) == d.result


@pytest.mark.parametrize(
    ("text", "wrt"),
    [("(sigma/r)**12 - x - y/z", "r"), ("x/(1 + x/(1 + x))", "x"), ("x**x", "x")],
)
def test_the_compiled_gradient_computes_the_linked_result(text, wrt):
    d = sd.derive(text, wrt=wrt)
    g = sd.grad(text, wrt=wrt)
    variables = [sp.Symbol(name, real=True) for name in g.args]
    for point in np.random.default_rng(3).uniform(0.2, 0.8, (3, len(variables))):
        want = float(d.result.subs(dict(zip(variables, point, strict=True))))
        assert float(g(*point)) == pytest.approx(want, rel=1e-10)


def test_lennard_jones_is_the_chain_rule_with_u_the_quotient():
    d = sd.derive("(sigma/r)**12 - x - y/z", wrt="r")
    r, sigma = sp.symbols("r sigma", real=True)
    root = d.steps[0]
    assert root.rule == "difference"
    assert [sp.sstr(s.expr) for s in root.substeps] == ["(sigma/r)**12", "x", "y/z"]
    chain = root.substeps[0]
    ((u, inner),) = chain.defines
    assert chain.rule == "chain" and isinstance(inner, Quotient) and sp.sstr(inner) == "sigma/r"
    (outer,) = chain.outer
    assert (outer.rule, outer.expr, outer.result) == ("power", u**12, 12 * u**11)
    (multiple,) = chain.inner  # sigma/r: sigma times the reciprocal 1/r, the power rule
    assert multiple.rule == "constant multiple" and multiple.result == -sigma / r**2
    assert "with c = sigma, f = 1/r" in multiple.explanation()
    assert multiple.substeps[0].rule == "power"
    text = str(d).splitlines()
    assert text[0] == "d/dr [(sigma/r)**12 - x - y/z] = -12*sigma**12/r**13"
    assert "    u = sigma/r   (inner function)" in text
    assert "    f'(u): [power] d/du [u**12] = 12*u**11   (d/du u^12 = 12 u^11)" in text
    latex = d.latex()
    assert r"\left(\frac{\sigma}{r}\right)^{12} - x - \frac{y}{z}" in latex
    assert r"\text{(difference rule)}" in latex


def test_subtraction_and_division_as_typed_are_the_difference_and_quotient_rules():
    d = sd.derive("a - b - c*x", wrt="x")
    assert d.rules[:4] == ["difference", "constant", "constant", "constant multiple"]
    assert d.steps[0].result == -sp.Symbol("c", real=True)
    d = sd.derive("x/(1 + x/(1 + x))", wrt="x")
    assert d.rules[:5] == ["quotient", "variable", "sum", "constant", "quotient"]
    assert "with f = x, g = 1 + x/(1 + x)" in d.steps[0].explanation()
    # x/c is the constant multiple rule with c as typed; 1/x (a lone reciprocal) the power rule
    d = sd.derive("x**2/2 - x/3", wrt="x")
    assert d.rules[:3] == ["difference", "constant multiple", "power"]
    assert "(f/c)' = f'/c with c = 2" in d.steps[0].substeps[0].explanation()
    assert sd.derive("1/x", wrt="x").rules == ["power"]
    assert sd.derive("1/x**2", wrt="x").rules == ["power"]
    assert sd.derive("3/x", wrt="x").rules == ["constant multiple", "power"]


def test_the_final_form_is_only_shown_and_the_code_computes_the_same_derivative():
    """1/(x*(x + 1)) as typed is the power rule on u**-1 (a lone reciprocal); SymPy's form is a
    product of reciprocals (the code's product rule). The final line is the textbook form, an
    equal expression; the compiled gradient computes it, and ``simplify=False`` stops at the
    rules' result."""
    text = "1/(x*(x + 1))"
    d = sd.derive(text, wrt="x")
    assert d.rules[:2] == ["chain", "power"]
    assert str(d).splitlines()[0] == f"d/dx [{text}] = -(2*x + 1)/(x**2*(x + 1)**2)"
    code = sd.derive(sd.parse(text), wrt="x", simplify=False)
    assert code.rules[0] == "quotient"  # SymPy's x**-1*(x + 1)**-1: f = 1, g = x*(x + 1)
    x = sp.Symbol("x", real=True)
    assert sp.simplify(d.result - code.result) == 0
    g = sd.grad(text, wrt="x")
    for point in (0.5, 1.5):
        assert float(g(point)) == pytest.approx(float(d.result.subs(x, point)), rel=1e-12)
    raw = sd.derive(text, wrt="x", simplify=False)
    assert raw.result == raw.raw and raw.steps[-1].rule != "simplify"
    assert check_printed_equalities(d, [(0.5,), (1.5,)]) == []
    assert check_printed_equalities(raw, [(0.5,), (1.5,)]) == []


def test_sympy_input_and_explain_keep_sympys_form():
    """A SymPy expression is derived as SymPy stores it; ``explain`` shows the derivation of
    the form the code was built from (forward mode), whose result the written one links to."""
    d = sd.derive(sd.parse("(sigma/r)**12 - x - y/z"), wrt="r")
    assert d.written is None
    assert str(d).splitlines()[0] == "d/dr [-x - y/z + sigma**12/r**12] = -12*sigma**12/r**13"
    text = sd.grad("(sigma/r)**12 - x - y/z", wrt="r").explain()
    assert "d/dr [-x - y/z + sigma**12/r**12] = -12*sigma**12/r**13" in text
    assert sd.derive("(sigma/r)**12 - x - y/z", wrt="r").result == d.result


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("a - (b - c)", SignedSum),
        ("x*-y", None),
        ("(-x)**2", None),
        ("-x**2", None),
        ("2**x**3", None),
        ("a*(b*c)", None),
        ("a/(b/c)", Quotient),
        ("a/b/c", Quotient),
        ("x**-1", None),
        ("1.25e-3*x", None),
        ("min(x, 1)", Called),
        ("log(x, 2)", BaseLog),
        ("max(x**2, y, z)", Called),
        ("ln(x)", Called),
        ("arctan2(y, x)", Called),
    ],
)
def test_written_text_round_trips(text, kind):
    written, value = parse_as_written(text)
    assert sp.sstr(written) == text and canonical(written) == value == sd.parse(text)
    assert kind is None or isinstance(written, kind)


def test_what_the_written_parse_does_not_keep():
    """Calls the parser rewrites keep SymPy's form (where) and the
    derivation is still true; redundant brackets are not kept."""
    for text in ("where(x > 0, x**2, -x) - x", "((x))"):
        d = sd.derive(text, wrt="x")
        assert check_printed_equalities(d, [(0.5,)]) == []
    assert sp.sstr(sd.derive("((x))", wrt="x").shown) == "x"


def test_min_and_max_are_drawn_and_derived_with_the_arguments_as_typed():
    """``min(x, 1)`` is not shown as SymPy's ``Min(1, x)``: the derivation's first line, its
    LaTeX and the graph node keep the typed order, and the gradient is the same."""
    d = sd.derive("min(x, 1)*y", wrt="x")
    assert str(d).splitlines()[0].startswith("d/dx [min(x, 1)*y] = ")
    assert r"\min\left(x, 1\right)" in d._repr_latex_()
    assert sp.simplify(d.result - sp.diff(sd.parse("min(x, 1)*y"), sp.Symbol("x", real=True))) == 0
    g = sd.graph("max(x**2, y) - x", at={"x": 0.5, "y": 2.0})
    assert [n.expr for n in g.nodes if n.label == "max"] == ["max(x**2, y)"]
    assert g.gradient["x"] == pytest.approx(-1.0) and g.gradient["y"] == pytest.approx(1.0)


def test_another_name_of_a_function_is_shown_as_typed():
    """``ln(x)`` and ``arctan(x)`` are not shown as SymPy's ``log(x)``, ``atan(x)``: the first
    line, the LaTeX (``\\ln``, ``\\arctan``) and the graph node keep the name typed."""
    d = sd.derive("ln(x)*arctan(x)", wrt="x")
    assert str(d).splitlines()[0].startswith("d/dx [ln(x)*arctan(x)] = ")
    assert r"\ln\left(x\right)" in d.latex() and r"\arctan\left(x\right)" in d.latex()
    x = sp.Symbol("x", real=True)
    assert sp.simplify(d.result - sp.diff(sp.log(x) * sp.atan(x), x)) == 0
    assert [n.expr for n in sd.graph("ln(x)*x").nodes if n.label == "log"] == ["ln(x)"]


def test_a_logarithm_to_a_base_is_the_logarithm_rule_as_typed():
    """``log(x, 2)`` is derived as typed (``log_2``), not as ``log(x)/log(2)``; a varying base
    is the change of base and the quotient rule."""
    d = sd.derive("log(x, 2)", wrt="x")
    assert [s.rule for s in d.steps] == ["logarithm"]
    assert r"\log_{2}\left(x\right)" in d._repr_latex_()
    varying = sd.derive("log(3, x)", wrt="x")
    assert [s.rule for s in varying.steps][:1] == ["change of base"]
    assert varying.steps[0].substeps[0].rule == "constant multiple"  # ln(3) times 1/ln(x)
