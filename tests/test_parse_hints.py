"""Refused strings say what was probably meant: shapes= for tensor operations, did-you-mean for
misspelt functions, '*' for implicit multiplication (with the caret at the gap), and no odd
token (a stray backslash) slips through."""

from __future__ import annotations

import pytest

import symdiff as sd
from symdiff.parsing import parse
from symdiff.parsing.functions import TENSOR_FUNCTIONS


def parse_error(text: str) -> sd.ParseError:
    with pytest.raises(sd.ParseError) as info:
        parse(text)
    return info.value


@pytest.mark.parametrize(
    "text",
    ["sum(x)", "mean(x*y)", "logsumexp(x)", "softmax(x)", "transpose(X)", "reshape(x, 2)",
     "prod(x)", "repeat(x, 2)", "max(x)", "max(x, axis=0)", "min(x, keepdims=1)", "X @ w",
     "x[0]", "x.T"],
)
def test_tensor_operations_in_a_scalar_expression_name_shapes_with_an_example(text):
    error = parse_error(text)
    assert "shapes=" in error.reason and "e.g. sd.grad(" in error.reason
    assert "shapes={" in error.reason


def test_the_shapes_example_uses_the_expression_and_its_variables():
    reason = parse_error("mean(x*y)").reason
    assert reason.startswith("mean() is a tensor operation")
    assert 'sd.grad("mean(x*y)", shapes={"x": ("n",), "y": ("n",)})' in reason
    with pytest.raises(sd.ParseError, match="shapes="):
        sd.grad("sum(x)")


def test_the_scalar_parser_knows_every_tensor_operation():
    from symdiff.tensor.parse import TENSOR_FUNCTIONS as TENSOR_PARSER

    assert TENSOR_FUNCTIONS == TENSOR_PARSER


@pytest.mark.parametrize(
    ("text", "suggestion"),
    [("sinn(x)", "sin"), ("Sin(x)", "sin"), ("expp(x)", "exp"), ("sigmoide(x)", "sigmoid"),
     ("arctn(x)", "arctan"), ("summ(x)", "sum")],
)
def test_misspelt_functions_get_a_did_you_mean(text, suggestion):
    assert f"did you mean {suggestion!r}?" in parse_error(text).reason


def test_unknown_functions_without_a_close_match_just_name_themselves():
    assert parse_error("frob(x)").reason == "unknown function 'frob'"  # not foo: floor
    assert "x*(...)" in parse_error("x(y + 1)").reason  # one letter: a product, probably


@pytest.mark.parametrize(
    ("text", "position", "fix"),
    [
        ("2x + y", 1, "2*x"),
        ("x + 2y", 5, "2*y"),
        ("3.5e2x", 5, "3.5e2*x"),
        ("1.5x", 3, "1.5*x"),
        ("2pi", 1, "2*pi"),
        ("2e", 1, "2*e"),
        ("2sin(x)", 1, "2*sin(...)"),
        ("0x1fy", 4, "0x1f*y"),
        ("x y", 2, "x*y"),
        ("2 x", 2, "2*x"),
        ("sin(x) + 2 y", 11, "2*y"),
        ("sin x", 4, "sin(x)"),
        ("sin(x)cos(x)", 6, ")*cos"),
        ("2(x + 1)", 1, "2*(...)"),
        ("(x + 1)(x - 1)", 7, "(x + 1)*(...)"),
    ],
)
def test_implicit_multiplication_is_located_at_the_gap(text, position, fix):
    error = parse_error(text)
    assert "implicit multiplication is not supported" in error.reason
    assert fix in error.reason
    assert error.position == position
    assert str(error).endswith(f"\n  {text}\n  {' ' * position}^")


def test_keywords_after_numbers_keep_their_own_messages():
    assert "where(c, a, b)" in parse_error("1if x else 2").reason
    assert "'or'" in parse_error("1or x").reason


@pytest.mark.parametrize(
    ("text", "position", "fragment"),
    [
        ("x\\", 1, "ends with a line continuation"),
        ("\\", 0, "ends with a line continuation"),
        ("x + \\\n", 4, "nothing follows"),
        ("x + \\\n  # only a comment", 4, "nothing follows"),
        ("x\\y", 1, "only allowed as a line continuation"),
        ("x \\ + y", 2, "only allowed as a line continuation"),
        ("x\\ \n + y", 1, "only allowed as a line continuation"),
    ],
)
def test_backslashes_are_only_line_continuations(text, position, fragment):
    error = parse_error(text)
    assert fragment in error.reason and error.position == position


def test_real_line_continuations_still_parse():
    assert parse("x + \\\n y") == parse("x + y")
    assert parse("x + \\\r\n y") == parse("x + y")
    assert parse("x + y  # a comment with a backslash \\") == parse("x + y")


def test_the_tensor_parser_shares_the_messages():
    shapes = {"x": ("n",)}
    with pytest.raises(sd.ParseError, match=r"write 2\*x") as info:
        sd.grad("sum(2x)", wrt="x", shapes=shapes)
    assert info.value.position == 5
    with pytest.raises(sd.ParseError, match="ends with a line continuation"):
        sd.grad("sum(x)\\", wrt="x", shapes=shapes)


def test_the_tensor_parser_suggests_names_too():
    with pytest.raises(sd.ParseError, match="did you mean 'softmax'"):
        sd.grad("sum(sofmax(x))", wrt="x", shapes={"x": ("n",)})
