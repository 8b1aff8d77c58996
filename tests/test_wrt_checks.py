"""A ``wrt`` name that is not a variable is an error, never a silent zero gradient: for strings,
SymPy, traced functions, the tensor layer, every builder and the command line."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import symdiff as sd
from symdiff.cli import main

X, Y = sp.symbols("x y", real=True)
BUILDERS = [sd.grad, sd.value_and_grad, sd.hessian, sd.hvp]


# -- strings ------------------------------------------------------------------------------------
@pytest.mark.parametrize("builder", BUILDERS)
def test_an_absent_name_is_a_parse_error_in_every_builder(builder):
    message = r"wrt name 'z' does not occur in the expression \(its variables: x, y\)"
    with pytest.raises(sd.ParseError, match=message + r"; did you mean 'x'\?$") as info:
        builder("x**2 + y", wrt="z")
    assert info.value.position is None
    assert isinstance(info.value, ValueError)


def test_jacobian_checks_every_expression():
    with pytest.raises(sd.ParseError, match="'q' does not occur"):
        sd.jacobian(["x*y", "sin(x)"], wrt=["x", "q"])
    J = sd.jacobian(["x", "y - y"], wrt=["y", "x"])  # y occurs in the text of one of them
    np.testing.assert_array_equal(J(2.0, 3.0), [[0.0, 1.0], [0.0, 0.0]])


def test_a_near_miss_gets_a_did_you_mean():
    with pytest.raises(sd.ParseError, match=r"'yy' does not occur.*; did you mean 'y'\?$"):
        sd.grad("x**2 + y", wrt=["x", "yy"])
    with pytest.raises(sd.ParseError, match=r"did you mean 'rate'\?"):
        sd.grad("rate * time", wrt="rte")


def test_a_name_that_cancels_still_occurs_and_gives_zeros():
    g = sd.grad("x - x", wrt="x")
    assert g.args == ("x",)
    np.testing.assert_array_equal(g(np.array([1.0, 2.0])), [0.0, 0.0])
    g = sd.grad("sin(x) + y - y", wrt=["y", "x"])
    assert g.args == ("x", "y")
    d_y, d_x = g(0.5, 2.0)
    assert d_y == 0.0 and d_x == pytest.approx(float(sp.diff(sp.sin(X), X).subs(X, 0.5)))


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("sin", "'sin' is a function, not a variable"),
        ("arcsin", "is a function"),
        ("where", "is a function"),
        ("log", "is a function"),
        ("pi", "'pi' is the constant pi, not a variable"),
        ("e", "'e' is the constant e = 2.71828"),
    ],
)
def test_function_names_and_constants_are_not_variables(name, message):
    with pytest.raises(sd.ParseError, match=message):
        sd.grad("sin(x)*pi + e*y", wrt=[name])
    with pytest.raises(sd.ParseError, match=message):
        sd.grad("sin(x)", wrt=["x", name])


def test_sympy_input_uses_its_free_symbols():
    e = sp.Symbol("e")
    g = sd.grad(e * X, wrt="e")  # a SymPy symbol called e is a variable
    assert g(2.0, 3.0) == 3.0
    with pytest.raises(sd.ParseError, match="'w' does not occur"):
        sd.grad(X**2 + Y, wrt="w")


def test_the_existing_checks_are_kept():
    with pytest.raises(sd.SymdiffError, match="duplicate"):
        sd.grad("x*y", wrt=["x", "x"])
    with pytest.raises(sd.SymdiffError, match="empty"):
        sd.grad("x*y", wrt=[])
    with pytest.raises(sd.SymdiffError, match="not a set"):
        sd.grad("x*y", wrt={"x", "y"})
    with pytest.raises(sd.ParseError, match="must start with an ASCII letter"):
        sd.grad("x*y", wrt="1x")


def test_the_right_names_give_the_right_values():
    g = sd.grad("x**2 * y + sin(y)", wrt=["y", "x"])
    d_y, d_x = g(1.5, 0.25)
    expr = X**2 * Y + sp.sin(Y)
    at = {X: 1.5, Y: 0.25}
    assert d_y == pytest.approx(float(sp.diff(expr, Y).subs(at)), rel=1e-14)
    assert d_x == pytest.approx(float(sp.diff(expr, X).subs(at)), rel=1e-14)


def test_check_grad_and_objective_check_too():
    with pytest.raises(sd.ParseError, match="'z' does not occur"):
        sd.check_grad("x**2", wrt="z", at={"x": 1.0, "z": 1.0})
    with pytest.raises(sd.ParseError, match="'z' does not occur"):
        sd.objective("x**2 + y**2", wrt=["x", "z"])


# -- traced functions -----------------------------------------------------------------------------
def test_a_traced_function_takes_only_its_parameters():
    def f(rate, time, unused):
        return rate * time

    with pytest.raises(sd.ParseError, match=r"'rte' is not a parameter of f \(its parameters: "
                                            r"rate, time, unused\); did you mean 'rate'\?"):
        sd.grad(f, wrt="rte")
    with pytest.raises(sd.ParseError, match="'sin' is not a parameter of f"):
        sd.grad(f, wrt=["rate", "sin"])
    g = sd.grad(f, wrt=["unused", "rate"])  # a parameter is a variable, used or not
    assert g(2.0, 3.0, 4.0) == (0.0, 3.0)


def test_a_parameter_may_be_called_like_a_function_or_a_constant():
    def f(e, sin):
        return e * sin**2

    g = sd.grad(f, wrt=["sin", "e"])
    assert g(3.0, 2.0) == (12.0, 4.0)


# -- the tensor layer ---------------------------------------------------------------------------
SHAPES = {"X": ("n", 2), "w": (2,), "z": ()}


def test_tensor_an_absent_name_is_a_parse_error():
    with pytest.raises(sd.ParseError, match=r"'z' does not occur.*variables: X, w\)"):
        sd.grad("sum(X @ w)", wrt=["w", "z"], shapes=SHAPES)
    with pytest.raises(sd.ParseError, match="did you mean 'w'"):
        sd.hessian("sum(X @ w)", wrt="ww", shapes=SHAPES)
    with pytest.raises(sd.ParseError, match="'sum' is a function"):
        sd.grad("sum(X @ w)", wrt="sum", shapes=SHAPES)
    with pytest.raises(sd.ParseError, match="'softmax' is a function"):
        sd.grad("sum(X @ w)", wrt="softmax", shapes=SHAPES)
    with pytest.raises(sd.ParseError, match="constant pi"):
        sd.grad("sum(X @ w)", wrt="pi", shapes=SHAPES)


def test_tensor_a_name_that_cancels_gives_zeros_of_its_shape():
    g = sd.grad("sum(X @ w) + z - z", wrt=["z", "w"], shapes=SHAPES)
    d_z, d_w = g(np.ones((3, 2)), np.ones(2), 5.0)
    assert d_z == 0.0
    np.testing.assert_array_equal(d_w, [3.0, 3.0])


def test_tensor_traced_function_takes_only_its_parameters():
    def loss(w, X):
        return np.sum(X @ w)

    with pytest.raises(sd.ParseError, match=r"'z' is not a parameter of loss"):
        sd.grad(loss, wrt="z", shapes=SHAPES)


# -- the command line -----------------------------------------------------------------------------
def _run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["grad", "x**2+y", "--wrt", "q"], "wrt name 'q' does not occur in the expression"),
        (["hessian", "x**2+y", "--wrt", "x,yy"], "did you mean 'y'?"),
        (["jacobian", "x", "y", "--wrt", "pi"], "'pi' is the constant pi"),
        (["grad", "sum(X @ w)", "--wrt", "ww", "--shapes", "X=n,2;w=2"], "did you mean 'w'?"),
        (["derive", "x*y"], "say which one with --wrt"),
        (["grad", "3"], "give --wrt explicitly"),
    ],
)
def test_cli_reports_one_line_and_exit_2(capsys, argv, message):
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err, err
    assert "wrt=" not in err


def test_cli_a_name_that_cancels_is_fine(capsys):
    code, out, _ = _run(capsys, "grad", "x - x + y", "--wrt", "x")
    assert code == 0 and "def grad_f(x, y, *, threads=None):" in out
