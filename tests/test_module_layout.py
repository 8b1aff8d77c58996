"""The layout of a generated module: the public function and its formulas first, then one section
with only the runtime helpers the code calls (#14 item 6), for the scalar and the tensor layer."""

from __future__ import annotations

import ast

import numpy as np
import pytest

import symdiff as sd
from symdiff.codegen.helpers import HELPER_DEPENDENCIES
from symdiff.codegen.render import HELPERS_HEADING
from symdiff.verify import check_module
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


def _called_names(nodes: list[ast.AST]) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node) if isinstance(n, ast.Name)}


@pytest.mark.parametrize("case", sorted(MODULES))
def test_the_function_comes_first_and_only_the_helpers_it_calls_follow(case):
    compiled = MODULES[case]()
    source = compiled.source
    check_module(source)
    tree = ast.parse(source)
    names = _defined(tree)
    own = [n for n in names if n in (compiled.name, "_formulas")]
    assert names[: len(own)] == own and names[0] == compiled.name, names
    helpers = set(names[len(own) :])
    assert helpers <= set(HELPER_DEPENDENCIES)
    # every helper is reached from the function's code: directly or through another helper
    code = [node for node in tree.body if getattr(node, "name", None) in own]
    wanted = set(HELPER_DEPENDENCIES) & _called_names(code)
    pending = list(wanted)
    while pending:
        for dependency in HELPER_DEPENDENCIES[pending.pop()]:
            if dependency not in wanted:
                wanted.add(dependency)
                pending.append(dependency)
    assert helpers == wanted
    # the helpers, and the error classes they raise, sit in one section under one comment
    if helpers:
        lines = source.splitlines()
        start = lines.index(HELPERS_HEADING)
        first_helper = min(i for i, ln in enumerate(lines) if ln.startswith("def _") and
                           ln[4:].split("(")[0] in helpers)
        assert lines.count(HELPERS_HEADING) == 1 and start < first_helper
        assert all(not ln.startswith("_ShapeError") for ln in lines[:start])
        assert f"def {compiled.name}(" in "\n".join(lines[:start])
    else:
        assert HELPERS_HEADING not in source


@pytest.mark.parametrize("case", sorted(MODULES))
def test_the_same_request_gives_the_same_bytes(case):
    first = MODULES[case]().source
    sd.clear_cache()  # built again from scratch, not found in the memo or on disk
    assert MODULES[case]().source == first


def test_a_function_without_arguments_has_no_block_splitter():
    f = sd.compile("pi")
    assert "_in_blocks" not in f.source and "def _formulas" not in f.source
    assert f() == np.pi and f().dtype == np.float64
    assert sd.compile("exp(1) + 2")() == pytest.approx(np.e + 2, rel=1e-15)
    # 76 lines before (47 of them the block splitter); the helper it calls is one short function
    assert len(f.source.splitlines()) < 35


def test_a_function_with_arguments_keeps_the_block_splitter_for_long_arrays():
    f = sd.compile("sin(x)*exp(y)")
    assert "_in_blocks(_formulas, (x, y), _shape, _dtype, threads)" in f.source
    x = np.linspace(0, 1, 100_000)  # long enough to be computed in blocks
    np.testing.assert_array_equal(f(x, 0.5), np.sin(x) * np.exp(0.5))
