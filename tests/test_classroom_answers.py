"""Checking a student's answer: equivalent, equivalent but not in simplest form, or not
equivalent with a point where the two differ; decided by simplification and by numbers, and
neither trusted alone."""

from __future__ import annotations

import mpmath
import pytest
import sympy as sp
from hypothesis import given, settings

import symdiff as sd
from symdiff.classroom.answers import check, compare_numbers, operations
from symdiff.engine.inputtext import input_text
from symdiff.parsing.teaching import parse_as_written

from .classroom_texts import texts

F = "sin(x)**2*cos(3*x)"


@pytest.fixture(scope="module")
def derivative():
    return sd.derive(F, wrt="x")


def _verdict(derivative, answer):
    return check(answer, derivative.result, [derivative.raw])


@pytest.mark.parametrize("answer", [
    "2*sin(x)*cos(x)*cos(3*x) - 3*sin(x)**2*sin(3*x)",   # the product rule's
    "(-cos(2*x) + 5*cos(4*x))*sin(x)/2",                 # symdiff's simplified result
    "sin(2*x)*cos(3*x) - 3*sin(x)^2*sin(3*x)",           # needs a trigonometric identity
])
def test_a_right_answer_is_equivalent(derivative, answer):
    assert _verdict(derivative, answer).verdict == "equivalent"


@pytest.mark.parametrize(("answer", "simpler"), [
    ("2*sin(x)*cos(x)*cos(3*x) + sin(x)*sin(x)*(-3*sin(3*x)) + 0",
     "-3*sin(x)**2*sin(3*x) + 2*sin(x)*cos(x)*cos(3*x)"),
    ("2*sin(x)**1*cos(x)*cos(3*x)*1 - 3*sin(x)**2*sin(3*x)",
     "-3*sin(x)**2*sin(3*x) + 2*sin(x)*cos(x)*cos(3*x)"),
    ("2*sin(x)*cos(x)*cos(3*x) - 3*sin(x)*sin(x)*sin(3*x)",
     "-3*sin(x)**2*sin(3*x) + 2*sin(x)*cos(x)*cos(3*x)"),
])
def test_arithmetic_left_to_do_is_not_simplest(derivative, answer, simpler):
    verdict = _verdict(derivative, answer)
    assert verdict.verdict == "unsimplified"
    assert input_text(verdict.simpler) == simpler


def test_more_operations_than_every_form_of_the_derivative_is_not_simplest():
    d = sd.derive("(x**2 + 1)**3", wrt="x")
    verdict = check("6*x**5 + 12*x**3 + 6*x", d.result, [d.raw])
    assert verdict.verdict == "unsimplified"
    assert sp.count_ops(verdict.simpler) < sp.count_ops(sd.parse("6*x**5 + 12*x**3 + 6*x"))
    assert check("6*x*(x^2 + 1)^2", d.result, [d.raw]).verdict == "equivalent"


def test_a_wrong_answer_gets_a_point_where_the_two_differ(derivative):
    answer = "2*sin(x)*cos(x)*cos(3*x) + 3*sin(x)**2*sin(3*x)"  # a sign wrong
    verdict = _verdict(derivative, answer)
    assert verdict.verdict == "different"
    (name, at), = verdict.point.items()
    assert name == "x"
    mpmath.mp.dps = 30  # an independent evaluation of both at the point
    x = mpmath.mpf(at)
    got = 2 * mpmath.sin(x) * mpmath.cos(x) * mpmath.cos(3 * x) + 3 * mpmath.sin(x) ** 2 * (
        mpmath.sin(3 * x))
    wanted = 2 * mpmath.sin(x) * mpmath.cos(x) * mpmath.cos(3 * x) - 3 * mpmath.sin(x) ** 2 * (
        mpmath.sin(3 * x))
    assert verdict.values == pytest.approx((float(got), float(wanted)), rel=1e-12)
    assert f"x = {at:g}" in verdict.message


def test_an_answer_undefined_where_the_derivative_is_defined_differs():
    d = sd.derive("sqrt(x**2 + 1)", wrt="x")
    verdict = check("x/sqrt(x**2 - 1)", d.result)
    assert verdict.verdict == "different"
    assert "not a real number" in verdict.message or verdict.values[0] is not None


def test_equal_numbers_without_a_proof_are_only_probably_equivalent():
    d = sd.derive("sqrt(x**2)", wrt="x")
    verdict = check("sign(x)", d.result)  # x/|x| as the derivative says
    assert verdict.verdict == "probably equivalent"
    assert "12 random points" in verdict.message


def test_the_verdict_does_not_change_between_runs(derivative):
    answer = "cos(x)*sin(x)"
    assert _verdict(derivative, answer) == _verdict(derivative, answer)


def test_an_unreadable_answer_is_a_parse_error(derivative):
    with pytest.raises(sd.ParseError):
        _verdict(derivative, "2*sin(x")
    with pytest.raises(sd.ParseError):
        _verdict(derivative, "__import__('os')")


def test_the_inner_functions_name_is_a_variable_of_its_line():
    line = next(ln for ln in sd.derive(F, wrt="x").lines() if ln.var is not None
                and ln.var.name == "u")
    assert check("2*u", line.rhs).verdict == "equivalent"
    assert check("u**2", line.rhs).verdict == "different"


@pytest.mark.parametrize(("text", "more"), [("x*1", True), ("x + 0", True), ("x**1", True),
                                            ("2*3*x", True), ("x*x", True), ("x + x", True),
                                            ("x/2", False), ("-x", False), ("2*x*y", False),
                                            ("1/x", False), ("x - y", False), ("-3*x", False),
                                            ("e^x", False), ("0.5*x", False)])
def test_arithmetic_left_is_more_operations_as_written(text, more):
    written, parsed = parse_as_written(text)
    assert (operations(written) > operations(parsed)) is more


@settings(max_examples=25)
@given(texts)
def test_the_derivative_itself_is_right_and_plus_one_is_wrong(text):
    try:
        expr = sd.parse(text)
        if sp.Symbol("x", real=True) not in expr.free_symbols:
            return
        d = sd.derive(text, wrt="x")
    except sd.SymdiffError:
        return
    if d.result.has(sp.Piecewise, sp.Abs, sp.sign) or compare_numbers(d.result, d.result)[0] == 0:
        return  # nowhere a real number at the test points, or not smooth: nothing to compare
    assert check(input_text(d.result), d.result).verdict in ("equivalent", "unsimplified")
    wrong = check(input_text(d.result) + " + 1", d.result)
    assert wrong.verdict == "different"
    got, wanted = wrong.values
    assert got == pytest.approx(wanted + 1, rel=1e-9, abs=1e-9)


def test_two_real_numbers_that_differ_need_no_simplification(derivative, monkeypatch):
    from symdiff.classroom import answers

    def refuse(expr, *args, **kwargs):
        raise AssertionError(f"simplified {expr}")

    monkeypatch.setattr(answers.sp, "simplify", refuse)
    verdict = _verdict(derivative, "2*x")
    assert verdict.verdict == "different" and None not in verdict.values
    assert "simplification says" not in verdict.message
