"""A generated module is its math: a short module whose every formula appears once, near the
top, with the helpers imported from symdiff's runtime in one line."""

from __future__ import annotations

import ast
import re

import numpy as np
import pytest

import symdiff as sd
from symdiff.verify import RUNTIME, check_module
from tests.tensor_cases import LOGISTIC, LOGISTIC_SHAPES

#: name -> (how to build it, the most lines its module may have)
CASES = {
    "quotient gradient": (lambda: sd.grad("sin(x)*exp(y)/(1 + x**2)"), 40),
    "value": (lambda: sd.compile("x**2 + y"), 25),
    "Rosenbrock Hessian": (lambda: sd.hessian("100*(y - x**2)**2 + (1 - x)**2"), 45),
    "tensor logistic gradient": (lambda: sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES), 30),
}


def formula_lines(source: str) -> list[str]:
    """The statements that compute something: the body of ``_formulas`` (or of the one
    function of a tensor module after its argument checks), without docstring and return."""
    tree = ast.parse(source)
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    function = functions.get("_formulas") or next(iter(functions.values()))
    body = [s for s in function.body if not isinstance(s, ast.Return | ast.If)
            and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    lines = source.splitlines()
    return [lines[s.lineno - 1].strip() for s in body]


@pytest.mark.parametrize("name", sorted(CASES))
def test_module_is_short_and_every_formula_appears_once_near_the_top(name):
    build, most = CASES[name]
    source = build().source
    lines = source.splitlines()
    assert len(lines) <= most, f"{name}: {len(lines)} lines, at most {most}:\n{source}"
    formulas = formula_lines(source)
    assert formulas, source
    stripped = [line.strip() for line in lines]
    for formula in formulas:
        assert stripped.count(formula) == 1, f"{formula!r} appears more than once:\n{source}"
        assert stripped.index(formula) < 30, f"{formula!r} is not within the first 30 lines"
    assert "if _out" not in source and "_into" not in source


@pytest.mark.parametrize("name", sorted(CASES))
def test_runtime_helpers_are_imported_in_one_line_and_defined_nowhere(name):
    source = CASES[name][0]().source
    tree = check_module(source)
    imports = [n for n in tree.body if isinstance(n, ast.ImportFrom)]
    assert len(imports) == 1 and imports[0].module == RUNTIME
    assert sum(line.startswith(f"from {RUNTIME} import") for line in source.splitlines()) == 1
    defined = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
    assert all(not name.startswith("_") or name in ("_formulas", "_packed") for name in defined)


def test_each_scalar_output_is_one_statement_written_where_it_goes():
    source = sd.grad("sin(x)*exp(y)/(1 + x**2)").source
    assert len(re.findall(r"^    _x_bar = ", source, re.M)) == 1
    assert "_x_bar = _np.divide(" in source and "out=_out[0])" in source
    assert "_y_bar = _np.divide(" in source and "out=_out[1])" in source
    assert "def _formulas(x, y, _out=(None, None)):" in source


def test_a_temporary_that_is_an_output_takes_its_name():
    source = sd.value_and_grad("sin(x)*exp(y)/(1 + x**2)").source
    assert "_value = _np.divide(" in source and "_y_bar = _value" in source
    g = sd.value_and_grad("sin(x)*exp(y)/(1 + x**2)")
    x, y = np.linspace(0.5, 2, 7), np.linspace(-1, 1, 7)
    value, (_, d_y) = g(x, y)
    assert d_y is not value and np.array_equal(d_y, value)  # an array handed out twice: copied


def test_an_argument_returned_as_an_output_is_a_copy():
    g = sd.grad("x*y")
    assert "_x_bar = y" in g.source
    x, y = np.arange(3.0), np.arange(3.0) + 1
    d_x, d_y = g(x, y)
    assert d_x is not y and d_y is not x
    d_x[0] = 99.0
    assert y[0] == 1.0
