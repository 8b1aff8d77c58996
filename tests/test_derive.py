"""Derivations for people: the rules a student expects, in order, rendered as text/LaTeX/HTML."""

from __future__ import annotations

import pytest
import sympy as sp

import symdiff as sd
from symdiff.parsing.written import canonical

from .conftest import X


def _rules(step):
    return [s.rule for _, s in step.walk()]


def test_product_with_power_and_sine_inside():
    d = sd.derive("x**2*sin(x)", wrt="x")
    root = d.steps[0]
    assert root.rule == "product"
    assert [s.rule for s in root.substeps] == ["power", "trigonometric"]
    assert sp.simplify(d.result - sp.diff(X**2 * sp.sin(X), X)) == 0


def test_quotient_rule_for_a_division():
    d = sd.derive("sin(x)/x", wrt="x")
    assert d.steps[0].rule == "quotient"
    assert [s.rule for s in d.steps[0].substeps] == ["trigonometric", "variable"]


def test_chain_rule_names_the_inner_function():
    d = sd.derive("exp(x**2)", wrt="x")
    root = d.steps[0]
    assert root.rule == "chain"
    outer, inner = root.substeps
    (u, definition), = root.defines
    # as the student wrote it (symdiff.parsing.written), standing for SymPy's x**2
    assert u.name == "u" and canonical(definition) == X**2 and str(definition) == "x**2"
    # the outer step is written in u, and is a true equality there: d/du [exp(u)] = exp(u)
    assert outer.rule == "exponential" and outer.var == u
    assert outer.expr == sp.exp(u) and outer.result == sp.exp(u)
    assert root.outer == (outer,) and root.inner == (inner,)
    assert inner.rule == "power" and canonical(inner.expr) == X**2 and inner.var == X
    assert d.result == 2 * X * sp.exp(X**2)


def test_log_with_a_base_and_x_to_the_x():
    d = sd.derive("log(x, 2)", wrt="x")  # as typed: the logarithm to base 2
    assert _rules(d.steps[0]) == ["logarithm"]
    assert sp.simplify(d.result - 1 / (X * sp.log(2))) == 0
    d = sd.derive(sd.parse("log(x, 2)"), wrt="x")  # SymPy's log(x)/log(2)
    assert _rules(d.steps[0]) == ["constant multiple", "logarithm"]
    assert sp.simplify(d.result - 1 / (X * sp.log(2))) == 0
    d = sd.derive("x**x", wrt="x")
    assert d.steps[0].rule == "general power"
    assert sp.simplify(d.result - X**X * (sp.log(X) + 1)) == 0


#: Textbook expressions and the rules they start with (tests/test_derive_text.py checks that
#: every equality their derivations print is true).
RULE_SEQUENCES = [
    ("3", ["constant"]),
    ("x", ["variable"]),
    ("x + 1", ["sum", "variable", "constant"]),  # the terms in the order written
    ("5*x**3", ["constant multiple", "power"]),
    ("2**x", ["exponential"]),
    ("sin(cos(x))", ["chain", "trigonometric", "trigonometric"]),
    ("where(x > 0, x**2, -x)", ["piecewise", "power", "constant multiple", "variable"]),
]


@pytest.mark.parametrize("text, rules", RULE_SEQUENCES)
def test_rule_sequences(text, rules):
    d = sd.derive(text, wrt="x")
    assert d.rules[: len(rules)] == rules


def test_result_is_simplified_with_a_final_step():
    d = sd.derive("(x**2 - 1)/(x - 1)", wrt="x")
    assert d.result == 1
    assert d.steps[-1].rule == "simplify"
    assert sd.derive("x**2", wrt="x").steps[-1].rule == "power"


def test_text_lists_one_numbered_step_a_line():
    text = str(sd.derive("x**2*sin(x)", wrt="x"))
    lines = text.splitlines()
    assert lines[0].startswith("d/dx [x**2*sin(x)] = ")
    assert lines[1].startswith("1. [product]")
    assert lines[2].startswith("  f': [power]")  # sub-steps: indented, labelled by their part
    assert lines[3].startswith("  g': [trigonometric]")


def test_latex_is_one_katex_safe_aligned_block():
    latex = sd.derive("sin(x)/x", wrt="x")._repr_latex_()
    assert latex.startswith("$$\\begin{aligned}") and latex.endswith("\\end{aligned}$$")
    assert "\\begin{align}" not in latex and "\\text{(quotient rule)}" in latex
    depth = 0
    for char in latex:
        depth += {"{": 1, "}": -1}.get(char, 0)
        assert depth >= 0
    assert depth == 0


def test_html_is_an_escaped_tree():
    html = sd.derive("max(x, 0)", wrt="x")._repr_html_()
    assert html.startswith('<div class="symdiff-steps">') and "maximum" in html
    assert "<script" not in html and "[a &gt; b]" in html


def test_derive_needs_wrt_when_ambiguous_and_checks_it():
    with pytest.raises(sd.SymdiffError, match="wrt"):
        sd.derive("x*y")
    assert sd.derive("y**2").var.name == "y"
    with pytest.raises(sd.SymdiffError):
        sd.derive("x", wrt="not a name")


def test_derive_and_grad_use_the_same_engine():
    expr = "atan2(y, x) * softplus(x)"
    d = sd.derive(expr, wrt="x")
    g = sd.grad(expr, wrt="x", simplify=False)
    assert sp.simplify(g.exprs[0] - d.raw) == 0
