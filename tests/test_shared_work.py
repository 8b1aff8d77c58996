"""value_and_grad shares the gradient's work, and the elementwise problems
added to benchmarks/bench_elementwise.py give the numbers of sympy.diff and central
differences. Nothing here times code: the checks count calls and passes in the generated
source (:mod:`symdiff.codegen.cost`)."""

from __future__ import annotations

import ast

import numpy as np
import pytest
import sympy as sp

import symdiff as sd
from symdiff.codegen.cost import HELPER_PASSES, line_passes

LOGISTIC = "sum(log(1 + exp(-y * (X @ w))))"
SHAPES = {"X": ("n", "d"), "y": ("n",), "w": ("d",)}


def _formulas(source: str, name: str = "_formulas") -> list[str]:
    """The right-hand sides of the assignments of function ``name`` (the plain branch of
    ``if _into is None``), unwrapped from ``_as_output``."""
    tree = ast.parse(source)
    body = next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == name)
    values = []
    for node in body.body:
        if isinstance(node, ast.If) and name == "_formulas":
            node = node.body[0]
        if isinstance(node, ast.Assign):
            value = node.value
            if isinstance(value, ast.Call) and getattr(value.func, "id", "") == "_as_output":
                value = value.args[0]
            values.append(ast.unparse(value))
    return values


def test_elementwise_value_and_grad_adds_only_the_value_to_the_gradient():
    text = "log(1 + exp(-y*(w*x + b)))"
    vg, g = sd.value_and_grad(text, wrt=["w", "b"]), sd.grad(text, wrt=["w", "b"])
    lines, grad_lines = _formulas(vg.source), _formulas(g.source)
    assert "logaddexp" not in vg.source.split("# Helpers")[0]  # ten times a vectorised softplus
    extra = sum(map(line_passes, lines)) - sum(map(line_passes, grad_lines))
    assert extra <= HELPER_PASSES["_softplus"] + 1, (lines, grad_lines)  # w*x + b is shared
    rng = np.random.default_rng(3)
    w, b, x = rng.normal(size=(3, 50))
    y = rng.choice([-1.0, 1.0], 50)
    value, (gw, gb) = vg(b=b, w=w, x=x, y=y)
    np.testing.assert_allclose(value, np.logaddexp(0.0, -y * (w * x + b)), rtol=1e-14)
    for got, want in zip((gw, gb), g(b=b, w=w, x=x, y=y), strict=True):
        np.testing.assert_array_equal(got, want)


def test_tensor_value_and_grad_computes_x_w_once_and_no_logaddexp():
    vg = sd.value_and_grad(LOGISTIC, wrt="w", shapes=SHAPES)
    lines = _formulas(vg.source, "value_and_grad_f")
    assert sum(line.count("@") for line in lines) == 2, lines  # X @ w and X.T @ (...)
    assert "logaddexp" not in vg.source, lines
    rng = np.random.default_rng(4)
    X, y, w = rng.normal(size=(40, 3)), rng.choice([-1.0, 1.0], 40), rng.normal(size=3) * 40
    value, gradient = vg(X, w, y)
    z = y * (X @ w)
    np.testing.assert_allclose(value, np.logaddexp(0.0, -z).sum(), rtol=1e-13)
    np.testing.assert_allclose(gradient, X.T @ (-y / (1.0 + np.exp(z))), rtol=1e-12)


#: The problems added to the elementwise benchmark: text, wrt, a point's ranges.
ADDED = [
    ("-(nu + 1)/2*log(1 + ((x - m)/s)**2/nu) - log(s)", ["m", "s"],
     {"m": (-1, 1), "nu": (2, 10), "s": (0.5, 2), "x": (-4, 4)}),
    ("d**2*(sqrt(1 + ((p - t)/d)**2) - 1)", ["p", "d"],
     {"d": (0.5, 2), "p": (-3, 3), "t": (-3, 3)}),
    ("y*log(mu) - (y + k)*log(mu + k)", ["mu"], {"k": (0.5, 5), "mu": (0.5, 20), "y": (0, 9)}),
]


@pytest.mark.parametrize(("text", "wrt", "ranges"), ADDED)
def test_added_benchmark_problems_match_sympy_and_differences(text, wrt, ranges):
    rng = np.random.default_rng(6)
    values = {n: rng.uniform(lo, hi, 7) for n, (lo, hi) in ranges.items()}
    symbols = {n: sp.Symbol(n, real=True) for n in ranges}
    expr = sp.sympify(text, locals=symbols)
    g, f = sd.grad(text, wrt=wrt), sd.compile(text)
    got = g(**values)
    for k, name in enumerate(wrt):
        exact = sp.lambdify(list(symbols.values()), sp.diff(expr, symbols[name]), "numpy")
        np.testing.assert_allclose(got[k], exact(*values.values()), rtol=1e-12)
        h = 1e-6
        up = {**values, name: values[name] + h}
        down = {**values, name: values[name] - h}
        np.testing.assert_allclose(got[k], (f(**up) - f(**down)) / (2 * h), rtol=1e-6, atol=1e-8)
    vg = sd.value_and_grad(text, wrt=wrt)
    value, grads = vg(**values)
    np.testing.assert_allclose(value, f(**values), rtol=1e-14)
    for a, b in zip(grads, got, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-14)
