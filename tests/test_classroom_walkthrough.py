"""A derivation revealed one hint and one step at a time: every line once as a hint and once
as a step, a rule's parts between its hint and its own line; and what the classroom shows of
an expression (its derivatives up to the 5th, partial ones too)."""

from __future__ import annotations

import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

import symdiff as sd
from symdiff.classroom import lesson
from symdiff.classroom.walkthrough import reveal_order, walkthrough


@st.composite
def trees(draw):
    """The depths of a depth-first list of lines: each at most one deeper than the one
    before."""
    depths = [0]
    for _ in range(draw(st.integers(0, 30))):
        depths.append(draw(st.integers(0, depths[-1] + 1)))
    return depths


@given(trees())
def test_each_line_is_hinted_then_shown_after_its_parts(depths):
    order = reveal_order(depths)
    assert sorted(order) == sorted([("hint", i) for i in range(len(depths))]
                                   + [("step", i) for i in range(len(depths))])
    at = {item: k for k, item in enumerate(order)}
    for i, depth in enumerate(depths):
        assert at["hint", i] < at["step", i]
        end = next((j for j in range(i + 1, len(depths)) if depths[j] <= depth), len(depths))
        for j in range(i + 1, end):  # the lines inside it
            assert at["hint", i] < at["hint", j] < at["step", j] < at["step", i]


def test_the_product_rule_comes_first_and_the_answer_last():
    derivation = sd.derive("sin(x)**2*cos(3*x)", wrt="x")
    lines = derivation.lines()
    reveals = walkthrough(lines)
    assert len(reveals) == 2 * len(lines)
    first, last = reveals[0], reveals[-1]
    assert first.kind == "hint" and "product rule" in first.text and "f = sin(x)**2" in first.text
    answer = max(i for i, line in enumerate(lines) if line.depth == 0)  # its result line
    assert last.kind == "step" and last.line == answer and last.text == lines[answer].text()
    for reveal in reveals:
        if reveal.kind == "step":
            assert reveal.text == lines[reveal.line].text()
            assert f'alttext="{lines[reveal.line].text()}"' in reveal.html.replace("&#x27;", "'")
    hinted = {r.line for r in reveals if r.kind == "hint" and r.checkable}
    assert hinted == {i for i, line in enumerate(lines) if line.kind != "definition"}


def test_the_hint_names_the_rule_and_what_it_applies_to_without_the_result():
    derivation = sd.derive("x**2*sin(x)", wrt="x")
    hints = [r for r in walkthrough(derivation.lines()) if r.kind == "hint"]
    assert hints[0].text.startswith("Use the product rule on d/dx [x**2*sin(x)]")
    for reveal in hints:
        line = derivation.lines()[reveal.line]
        if line.rule != "simplify":
            assert str(line.rhs) not in reveal.text.split(":", 1)[0]


def test_partial_derivatives_of_several_variables_are_written_with_a_round_d():
    shown = lesson.lesson("x**2*y", ["x", "y"])
    assert len(shown["orders"]) == 2
    assert "\u2202" in shown["orders"][0]["title"] and "\u2202" in shown["answer"]["html"]
    x = sp.Symbol("x", real=True)
    assert sp.simplify(sd.parse(shown["answer"]["text"]) - 2 * x) == 0


@pytest.mark.parametrize("order", [1, 2, 3, 4, 5])
def test_higher_derivatives_up_to_the_fifth_are_sympys(order):
    shown = lesson.lesson("x**7*exp(x)", ["x"] * order)
    x = sp.Symbol("x", real=True)
    expected = sp.diff(x**7 * sp.exp(x), x, order)
    assert sp.simplify(sd.parse(shown["answer"]["text"]) - expected) == 0
    assert "\u2202" not in shown["answer"]["html"]


@pytest.mark.parametrize(("wrt", "message"), [
    (["z"], "'z' is not a variable of the expression (its variables: x, y)"),
    (["x"] * 6, "differentiate 1 to 5 times; 6 variables were given"),
])
def test_the_variables_to_differentiate_by_are_checked(wrt, message):
    with pytest.raises(sd.SymdiffError, match=message.replace("(", r"\(").replace(")", r"\)")):
        lesson.lesson("x*y", wrt)


def test_the_preview_says_what_was_understood():
    understood = lesson.preview("2*x^2 - ln(y)")
    assert understood["variables"] == ["x", "y"]
    assert understood["text"] == "2*x**2 - log(y)"
    assert "<mi>ln</mi>" in understood["html"]
    with pytest.raises(sd.ParseError) as caught:
        lesson.preview("sin(x")
    assert caught.value.position == 3
