"""The layout of a generated module: the public function and its formulas, with one import of
the runtime helpers the code calls; its standalone form (``save``) with exactly those helpers,
and the ones they call, copied after it; for the scalar and the tensor layer."""

from __future__ import annotations

import ast

import numpy as np
import pytest

import symdiff as sd
from symdiff.codegen.standalone import HELPERS_HEADING, runtime_closure
from symdiff.verify import RUNTIME, check_module
from tests.tensor_cases import LOGISTIC, LOGISTIC_SHAPES, MLP, MLP_SHAPES

MODULES = {
    "compile-constant": lambda: sd.compile("pi"),
    "compile-constant-expression": lambda: sd.compile("exp(1) + 2"),
    "compile-one-argument": lambda: sd.compile("sin(x)"),
    "grad-erf-max": lambda: sd.grad("max(x, y, 0) + erf(y)", wrt=["x", "y"]),
    "grad-reverse": lambda: sd.grad("x*y*z*w + gamma(x)", mode="reverse"),
    "value-and-grad": lambda: sd.value_and_grad("softplus(-y*w)", wrt=["w"]),
    "jacobian": lambda: sd.jacobian(["x*y", "sin(x)"], wrt=["x", "y"]),
    "hessian": lambda: sd.hessian("100*(y - x**2)**2 + (1 - x)**2", wrt=["x", "y"]),
    "hvp": lambda: sd.hvp("x**2*y + loggamma(y)", wrt=["x", "y"]),
    "tensor-grad": lambda: sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES),
    "tensor-mlp": lambda: sd.value_and_grad(MLP, wrt=["W1", "W2"], shapes=MLP_SHAPES),
    "tensor-prod": lambda: sd.grad("prod(x)", wrt="x", shapes={"x": ("n",)}),
}


def _defined(tree: ast.Module) -> list[str]:
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]


def _read_names(nodes: list[ast.AST]) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}


@pytest.mark.parametrize("case", sorted(MODULES))
def test_the_module_imports_exactly_the_helpers_its_code_calls(case):
    compiled = MODULES[case]()
    tree = check_module(compiled.source)
    names = _defined(tree)
    assert names[0] == compiled.name and set(names) <= {compiled.name, "_formulas", "_packed"}
    imports = [n for n in tree.body if isinstance(n, ast.ImportFrom)]
    imported = {a.name for node in imports for a in node.names}
    assert len(imports) <= 1 and all(node.module == RUNTIME for node in imports)
    code = [node for node in tree.body if isinstance(node, ast.FunctionDef)]
    assert imported == _read_names(code) & imported and imported <= _read_names(code)


@pytest.mark.parametrize("case", sorted(MODULES))
def test_the_standalone_module_copies_exactly_the_helpers_it_needs(case):
    compiled = MODULES[case]()
    source = compiled.standalone_source
    tree = ast.parse(source)
    assert not [n for n in tree.body if isinstance(n, ast.ImportFrom)]
    assert {a.name for n in tree.body if isinstance(n, ast.Import) for a in n.names} <= {
        "numpy", "math"}
    own = {compiled.name, "_formulas", "_packed"}
    helpers = [name for name in _defined(tree) if name not in own]
    imported = {a.name for n in ast.parse(compiled.source).body
                if isinstance(n, ast.ImportFrom) for a in n.names}
    assert set(helpers) == {n for n in runtime_closure(sorted(imported)) if not n.isupper()
                            and not n.startswith("_POINT")}
    # every copied helper is reached from the module's own code, directly or through another
    code = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in own]
    reached, pending = set(), [n for n in _read_names(code) if n in helpers]
    by_name = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    while pending:
        name = pending.pop()
        if name not in reached:
            reached.add(name)
            pending.extend(n for n in _read_names([by_name[name]]) if n in helpers)
    assert reached == set(helpers)
    lines = source.splitlines()
    if helpers:  # one section under one comment, after the module's own functions
        start = lines.index(HELPERS_HEADING)
        assert lines.count(HELPERS_HEADING) == 1
        assert all(not ln.startswith(("_ShapeError", "def _")) or ln.startswith(
            ("def _formulas", "def _packed")) for ln in lines[:start])
    else:
        assert HELPERS_HEADING not in source and source == compiled.source


@pytest.mark.parametrize("case", sorted(MODULES))
def test_the_same_request_gives_the_same_bytes(case):
    first = MODULES[case]().source
    sd.clear_cache()  # built again from scratch, not found in the memo or on disk
    assert MODULES[case]().source == first


def test_a_function_without_arguments_has_no_block_splitter():
    f = sd.compile("pi")
    assert "_in_blocks" not in f.standalone_source and "_elementwise" not in f.source
    assert f() == np.pi and f().dtype == np.float64
    assert sd.compile("exp(1) + 2")() == pytest.approx(np.e + 2, rel=1e-15)
    assert len(f.source.splitlines()) < 25


def test_a_function_with_arguments_keeps_the_block_splitter_for_long_arrays():
    f = sd.compile("sin(x)*exp(y)")
    assert "return _elementwise(_formulas, (x, y), threads=threads)" in f.source
    assert "def _in_blocks(" in f.standalone_source
    x = np.linspace(0, 1, 100_000)  # long enough to be computed in blocks
    np.testing.assert_array_equal(f(x, 0.5), np.sin(x) * np.exp(0.5))


def test_a_tensor_module_has_no_block_splitter_and_no_threads():
    g = sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)
    standalone = g.standalone_source
    assert "_in_blocks" not in standalone and "_on_threads" not in standalone
