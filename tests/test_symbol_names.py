"""SymPy symbols whose names are not identifiers (``x_{1}``, ``\\alpha``: SymPy code that prints
LaTeX) work: generated code uses safe code names, while ``args``, ``wrt``, ``exprs`` and keyword
calls keep the original names. No original name, however hostile, reaches the source."""

from __future__ import annotations

import ast
import pickle

import numpy as np
import pytest
import sympy as sp

import symdiff as sd
from symdiff import pipeline
from symdiff import request_index as warm
from symdiff.codegen.naming import code_names, is_code_name

X1, ALPHA, PLAIN = sp.Symbol("x_{1}"), sp.Symbol("\\alpha"), sp.Symbol("x_1")
EXPR = sp.sin(X1) * ALPHA + PLAIN**2


def test_code_names_are_safe_deterministic_and_never_collide():
    names = ["x_{1}", "x_1", "\\alpha", "alpha", "lambda", "for", "1x", "a b", "\uff58", "", "x"]
    mapping = code_names(names)
    assert set(mapping) == {"x_{1}", "\\alpha", "lambda", "for", "1x", "a b", "\uff58", ""}
    assert mapping["x_{1}"] == "x_1_2" and mapping["\\alpha"] == "alpha_2"
    assert mapping["lambda"] == "lambda_" and mapping["1x"] == "v1x"
    codes = list(mapping.values())
    assert len(set(codes)) == len(codes)
    assert not set(codes) & {n for n in names if n not in mapping}
    assert all(is_code_name(c) and not c.startswith("_") for c in codes)
    assert code_names(reversed(names)) == mapping
    assert code_names(["x", "y", "_v"]) == {}


def test_args_wrt_exprs_and_calls_use_the_original_names():
    g = sd.grad(EXPR)
    assert g.args == ("\\alpha", "x_1", "x_{1}") and g.wrt == g.args  # sorted by name
    values = {"x_{1}": 0.5, "\\alpha": 2.0, "x_1": 3.0}
    expected = (np.sin(0.5), 6.0, 2.0 * np.cos(0.5))
    np.testing.assert_allclose(g(**values), expected)
    np.testing.assert_allclose(g(*(values[a] for a in g.args)), expected)
    x1, alpha, plain = (sp.Symbol(n, real=True) for n in ("x_{1}", "\\alpha", "x_1"))
    assert g.exprs == [sp.sin(x1), 2 * plain, alpha * sp.cos(x1)]


def test_wrt_by_original_name_and_by_symbol():
    assert sd.grad(EXPR, wrt=X1).wrt == "x_{1}"
    assert sd.grad(EXPR, wrt=[X1, "\\alpha"]).wrt == ("x_{1}", "\\alpha")
    g = sd.grad(EXPR, wrt=["x_{1}"])
    assert g.wrt == ("x_{1}",)
    (d,) = g(**{"x_{1}": 0.0, "\\alpha": 2.0, "x_1": 3.0})
    assert d == 2.0
    assert sd.grad(EXPR, wrt="x_{1}").wrt == "x_{1}"
    assert sd.derive(sp.sin(X1) * ALPHA, wrt="x_{1}").result == sp.Symbol(
        "\\alpha", real=True
    ) * sp.cos(sp.Symbol("x_{1}", real=True))


def test_messages_name_the_arguments_as_the_caller_does():
    g = sd.grad(EXPR, wrt=["x_{1}"])
    with pytest.raises(sd.ArgumentError, match=r"argument 'x_\{1\}' is None"):
        g(**{"x_{1}": None, "\\alpha": 2.0, "x_1": 3.0})
    with pytest.raises(TypeError, match=r"missing 1 required positional argument: 'x_\{1\}'"):
        g(**{"\\alpha": 2.0, "x_1": 3.0})
    with pytest.raises(sd.ShapeError, match=r"'x_\{1\}' with shape \(3,\)"):
        g(**{"x_{1}": np.ones(3), "\\alpha": np.ones(2), "x_1": 3.0})
    with pytest.raises(TypeError, match="multiple values"):
        g(**{"x_{1}": 1.0, "x_1_2": 1.0, "\\alpha": 2.0, "x_1": 3.0})


HOSTILE = [
    "a); import os",
    "b\nimport os",
    "c'''\"\"\"",
    "d # comment",
    "lambda",
    "e\x00f",
    "g\\h",
    "__import__('os')",
    "print(1)",
    "\u202eevil",
]


def test_hostile_names_never_reach_the_source():
    symbols = [sp.Symbol(n) for n in HOSTILE if not n.startswith("_")]
    expr = sum((i + 1) * s**2 for i, s in enumerate(symbols))
    for builder in (sd.grad, sd.value_and_grad, sd.hessian, sd.compile):
        g = builder(expr)
        for name in HOSTILE:
            if not name.isidentifier():  # ("lambda" is in "lambda_", its code name)
                assert name not in g.source
        ast.parse(g.source)
        names = {n.id for n in ast.walk(ast.parse(g.source)) if isinstance(n, ast.Name)}
        assert not {"os", "print", "__import__"} & names
        assert set(g.args) == {s.name for s in symbols}
    g = sd.grad(expr)
    values = {s.name: float(i + 1) for i, s in enumerate(symbols)}
    grads = g(**values)
    np.testing.assert_allclose(grads, [2 * values[name] ** 2 for name in g.args])
    with pytest.raises(sd.ParseError, match="symbol name"):
        sd.grad(sp.Symbol("__import__('os')") + 1)


def test_jacobian_hvp_and_check_grad_with_original_names():
    J = sd.jacobian([X1 * ALPHA, X1 + ALPHA], wrt=["x_{1}", "\\alpha"])
    np.testing.assert_allclose(J(**{"x_{1}": 2.0, "\\alpha": 3.0}), [[3.0, 2.0], [1.0, 1.0]])
    h = sd.hvp(X1**2 * ALPHA, wrt=["x_{1}", "\\alpha"])
    assert h.args == ("\\alpha", "x_{1}", "_v")
    np.testing.assert_allclose(h(**{"x_{1}": 1.0, "\\alpha": 2.0, "_v": [1.0, 0.0]}), [4.0, 2.0])
    assert sd.check_grad(EXPR, at={"x_{1}": 0.3, "\\alpha": 1.5, "x_1": -2.0}) < 1e-6


def test_the_cache_and_pickling_keep_the_names():
    g = sd.grad(EXPR)
    pipeline.clear_memo()
    warm.forget()
    again = sd.grad(EXPR)  # from the disk cache
    assert again is not g and again.args == g.args and again.source == g.source
    np.testing.assert_allclose(again(**{"x_{1}": 1.0, "\\alpha": 2.0, "x_1": 3.0}),
                               g(2.0, 3.0, 1.0))
    copy = pickle.loads(pickle.dumps(g))
    assert copy(**{"x_{1}": 1.0, "\\alpha": 2.0, "x_1": 3.0})[0] == np.sin(1.0)


def test_different_originals_with_the_same_code_names_are_different_functions():
    a = sd.grad(sp.Symbol("x_{1}") ** 2)
    b = sd.grad(sp.Symbol("x-1") ** 2)
    assert a.args == ("x_{1}",) and b.args == ("x-1",)
    assert a.key != b.key
    code = [line for line in a.source.splitlines() if "key:" not in line]
    assert code == [line for line in b.source.splitlines() if "key:" not in line]


def test_explain_and_displays_read_the_original_names():
    hostile = sp.Symbol("a<b>&")
    for builder in (sd.grad, sd.value_and_grad):
        g = builder(sp.sin(X1) * hostile)
        text = g.explain()
        assert "d/dx_{1} [a<b>&*sin(x_{1})] = a<b>&*cos(x_{1})" in text
        assert "_x_1_bar = " in text
        assert "a<b>" not in g._repr_html_()
