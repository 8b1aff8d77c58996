"""symdiff.tensor internals: shape rules, the peephole rewrites, and the two rule tables."""

from __future__ import annotations

import pytest
import sympy as sp

from symdiff.errors import ShapeError
from symdiff.tensor import families
from symdiff.tensor.formula import text as describe
from symdiff.tensor.ir import VIEWS, arg_symbol
from symdiff.tensor.jvp import TENSOR_JVPS
from symdiff.tensor.ops import Builder
from symdiff.tensor.shapes import (
    broadcast,
    dim_symbol,
    format_shape,
    index_shape,
    matmul_shape,
    parse_shapes,
    reshape_target,
    unbroadcast_axes,
)
from symdiff.tensor.vjp import TENSOR_VJPS

n, d = dim_symbol("n"), dim_symbol("d")
A0, A1 = arg_symbol(0), arg_symbol(1)


def test_every_differentiable_op_has_one_vjp_and_one_jvp():
    ops = {"map", "matmul", "sum", "mean", "max", "min", "logsumexp", "prod", "prod_others",
           "softmax", "share", *VIEWS, "scatter", "repeat", *families.OPS}
    assert set(TENSOR_VJPS) == ops
    assert set(TENSOR_JVPS) == ops


def test_shapes_and_broadcasting():
    assert parse_shapes({"X": ["n", 3]}) == {"X": (n, 3)}
    assert format_shape((n, 3)) == "(n, 3)" and format_shape((d,)) == "(d,)"
    assert format_shape(()) == "()"
    assert broadcast("add", (n, d), (d,)) == (n, d)
    assert broadcast("add", (n, 1), (1, d)) == (n, d)
    assert broadcast("add", (), (n,)) == (n,)
    with pytest.raises(ShapeError, match=r"add: shapes \(n,\) and \(3,\) do not broadcast"):
        broadcast("add", (n,), (3,))
    assert unbroadcast_axes((4, n, d), (1, d)) == ((0,), (1,))


def test_matmul_shapes():
    assert matmul_shape((n, d), (d,)) == (n,)
    assert matmul_shape((d,), (d, 3)) == (3,)
    assert matmul_shape((d,), (d,)) == ()
    assert matmul_shape((2, n, d), (d, 3)) == (2, n, 3)
    with pytest.raises(ShapeError, match=r"matmul: shapes \(n, d\) and \(n,\) do not align"):
        matmul_shape((n, d), (n,))


def test_reshape_infers_minus_one_with_named_dimensions():
    assert reshape_target((n, d), (-1,)) == (n * d,)
    assert reshape_target((n, d, 2), (n, -1)) == (n, 2 * d)
    with pytest.raises(ShapeError, match="cannot infer"):
        reshape_target((n, d), (3, -1))


def test_index_shapes_record_the_least_size_of_named_dimensions():
    assert index_shape((n, d), (1,)) == ((d,), {n: 2})
    assert index_shape((n, d), ((None, None, None), 2)) == ((n,), {d: 3})
    assert index_shape((n,), ((1, 3, None),)) == ((2,), {n: 3})
    assert index_shape((n,), ((1, None, None),)) == ((n - 1,), {n: 1})
    assert index_shape((n,), ((-2, None, None),)) == ((2,), {n: 2})
    assert index_shape((7,), ((None, None, -2),)) == ((4,), {})


def test_peepholes():
    b = Builder()
    X, w = b.var("X", (n, d)), b.var("w", (d,))
    assert b.transpose(b.transpose(X)) is X  # transpose of a transpose
    T = b.var("T", (2, 3, 4))
    assert b.transpose(b.transpose(T, (2, 0, 1)), (1, 2, 0)) is T  # argsort of the permutation
    ones = b.fill(1, (n, d))
    assert b.map(A0 * A1, [X, ones]) is X  # multiplication by ones
    assert b.map(A0 + A1, [b.fill(0, (n, d)), X]) is X
    total = b.reduce_axes("sum", b.broadcast(w, (n, d)), (0,), False)  # sum of a broadcast
    assert total.op == "map" and total.attrs[0] == n * A0 and total.args == (w,)
    assert b.reduce_axes("sum", ones, (0, 1), False).attrs[0] == n * d
    assert b.matmul(X, b.eye((d,))) is X  # the forward-mode seed
    product = b.transpose(b.matmul(X, b.var("B", (d, 3))))
    assert product.op == "matmul" and describe(product) == "B.T @ X.T"
    assert b.map(A0, [X]) is X
    assert b.reshape(b.reshape(X, (n * d,)), (n, d)) is X


def test_nodes_are_interned():
    b = Builder()
    X = b.var("X", (n, d))
    assert b.map(sp.sin(A0), [X]) is b.map(sp.sin(A0), [X])
    assert b.matmul(X, b.var("w", (d,))) is b.matmul(X, b.var("w", (d,)))
