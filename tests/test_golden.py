"""Golden files pin the exact generated source of a handful of functions.

Regenerate after an intended change with ``SYMDIFF_UPDATE_GOLDEN=1 python -m pytest
tests/test_golden.py`` and review the diff like any other code change.
"""

from __future__ import annotations

import os
import pathlib

import pytest

import symdiff as sd

GOLDEN = pathlib.Path(__file__).resolve().parent / "golden"

CASES = {
    "grad_sin_exp_quotient": lambda: sd.grad("sin(x)*exp(y)/(1 + x**2)"),
    "value_and_grad_logistic": lambda: sd.value_and_grad("softplus(-y*w) + w**2/2", wrt=["w"]),
    "hessian_rosenbrock": lambda: sd.hessian("100*(y - x**2)**2 + (1 - x)**2", wrt=["x", "y"]),
    "grad_max_relu_erf": lambda: sd.grad("max(x, y, 0) + relu(x)*erf(y)", wrt="x"),
    "compile_constant": lambda: sd.compile("pi"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_source_matches_golden_file(name):
    source = CASES[name]().source
    path = GOLDEN / f"{name}.py"
    if os.environ.get("SYMDIFF_UPDATE_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(source)
    assert path.exists(), f"missing golden file {path}; run with SYMDIFF_UPDATE_GOLDEN=1"
    assert source == path.read_text()
