"""symdiff.verify.literals: the small syntax-tree tests the verifier's checks share."""

from __future__ import annotations

import ast

import pytest

from symdiff.verify.literals import all_axes, literal_int, names_tuple, plain_index


def expr(text: str) -> ast.AST:
    return ast.parse(text, mode="eval").body


@pytest.mark.parametrize("text, ok", [("3", True), ("-1", True), ("True", False), ("1.0", False),
                                      ("x", False), ("--1", False), ("'1'", False)])
def test_literal_int(text, ok):
    assert literal_int(expr(text)) is ok


@pytest.mark.parametrize(
    "text, ok",
    [("a[1]", True), ("a[1:3]", True), ("a[::-1]", True), ("a[:, None]", True), ("a[..., 0]", True),
     ("a[i]", False), ("a[1:n]", False), ("a[b[0]]", False), ("a[0.5]", False)],
)
def test_plain_index(text, ok):
    assert plain_index(expr(text).slice) is ok


def test_names_tuple_holds_only_parameter_names():
    params = {"x", "y"}
    assert names_tuple(expr("('x', 'y')"), params)
    assert not names_tuple(expr("('x', 'z')"), params)
    assert not names_tuple(expr("()"), params)
    assert not names_tuple(expr("('x', 1)"), params)
    assert not names_tuple(expr("['x']"), params)


def test_axis_none_is_a_reduction_over_every_axis():
    call = expr("f(a, axis=None, keepdims=None)")
    assert [all_axes(k) for k in call.keywords] == [True, False]
    assert not all_axes(expr("f(axis=0)").keywords[0])
