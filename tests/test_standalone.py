"""A saved module runs with NumPy alone: in a fresh virtual environment that has only NumPy (of
the version these tests run with), it gives the numbers of the function in this process, bit
for bit, at a point, on short and long arrays (blocks, threads) and in float32."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import symdiff as sd
from tests.tensor_cases import LOGISTIC, LOGISTIC_SHAPES

#: The four functions of the readability targets (``tests/test_readable_modules.py``).
FUNCTIONS = {
    "grad_quotient": lambda: sd.grad("sin(x)*exp(y)/(1 + x**2)"),
    "value": lambda: sd.compile("x**2 + y"),
    "hessian_rosenbrock": lambda: sd.hessian("100*(y - x**2)**2 + (1 - x)**2"),
    "grad_logistic": lambda: sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES),
}

#: Runs in the fresh environment: imports each saved module and writes what each call returns.
SCRIPT = r"""
import importlib, json, sys
import numpy as np

folder = sys.argv[1]
sys.path.insert(0, folder)
try:
    import symdiff  # noqa: F401
except ImportError:
    pass
else:
    raise SystemExit("symdiff is importable here")
calls = json.load(open(f"{folder}/calls.json"))
inputs = np.load(f"{folder}/inputs.npz")
results = {}
for index, (module, name, args, kwargs) in enumerate(calls):
    function = getattr(importlib.import_module(module), name)
    arrays = [float(inputs[a[6:]]) if a.startswith("float:") else inputs[a] for a in args]
    got = function(*arrays, **kwargs)
    stack = [got]
    leaves = []
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            stack.extend(reversed(item))
        else:
            leaves.append(np.asarray(item))
    for k, leaf in enumerate(leaves):
        results[f"{index}_{k}"] = leaf
np.savez(f"{folder}/results.npz", **results)
"""


def _leaves(tree) -> list[np.ndarray]:
    if isinstance(tree, tuple):
        return [leaf for item in tree for leaf in _leaves(item)]
    return [np.asarray(tree)]


def _calls(rng: np.random.Generator) -> tuple[dict[str, np.ndarray], list]:
    """The inputs (by key) and the calls (module, function, input keys, keywords)."""
    inputs: dict[str, np.ndarray] = {}
    calls = []
    for points in (0, 7, 100_000, 600_000):  # a point of floats, short arrays, blocks, threads
        for dtype in (np.float64, np.float32):
            if points == 0 and dtype is np.float32:
                continue
            keys = []
            for name in ("x", "y"):
                key = f"{name}{points}{np.dtype(dtype).name}"
                values = rng.uniform(0.5, 2.0, points or 1).astype(dtype)
                inputs[key] = values[0] if points == 0 else values
                keys.append(f"float:{key}" if points == 0 else key)
            for module in ("grad_quotient", "value", "hessian_rosenbrock"):
                calls.append((module, None, keys, {}))
                if points == 600_000:
                    calls.append((module, None, keys, {"threads": 2}))
    inputs["X"] = rng.normal(size=(50, 5))
    inputs["w"] = rng.normal(size=5)
    inputs["yl"] = rng.choice([-1.0, 1.0], 50)
    calls.append(("grad_logistic", None, ["X", "w", "yl"], {}))
    return inputs, calls


@pytest.mark.slow
def test_saved_modules_give_the_same_numbers_in_an_environment_with_only_numpy(tmp_path):
    folder = tmp_path / "saved"
    folder.mkdir()
    functions = {name: build() for name, build in FUNCTIONS.items()}
    for name, g in functions.items():
        text = g.save(folder / f"{name}.py").read_text(encoding="utf-8")
        assert "symdiff" not in "".join(
            line for line in text.splitlines() if line.startswith(("import", "from")))
    inputs, calls = _calls(np.random.default_rng(0))
    calls = [(module, functions[module].name, args, kwargs) for module, _, args, kwargs in calls]
    np.savez(folder / "inputs.npz", **inputs)
    (folder / "calls.json").write_text(json.dumps(calls), encoding="utf-8")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / ("Scripts" if os.name == "nt" else "bin") / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", f"numpy=={np.__version__}"],
        env=env, capture_output=True, text=True, timeout=600)
    if install.returncode:
        pytest.fail(f"pip could not install numpy=={np.__version__} into a fresh environment:"
                    f"\n{install.stderr[-2000:]}")
    listed = subprocess.run([str(python), "-m", "pip", "list", "--format=freeze"], env=env,
                            capture_output=True, text=True, check=True).stdout
    assert {line.split("==")[0].lower() for line in listed.split()} <= {"numpy", "pip",
                                                                         "setuptools"}
    subprocess.run([str(python), "-I", "-c", SCRIPT, str(folder)], env=env, check=True,
                   timeout=600, cwd=tmp_path)
    results = np.load(folder / "results.npz")
    for index, (module, _, args, kwargs) in enumerate(calls):
        arrays = [float(inputs[a[6:]]) if a.startswith("float:") else inputs[a] for a in args]
        want = _leaves(functions[module](*arrays, **kwargs))
        for k, leaf in enumerate(want):
            got = results[f"{index}_{k}"]
            assert got.dtype == leaf.dtype and got.shape == leaf.shape, (module, args, k)
            assert np.array_equal(got, leaf, equal_nan=True), (module, args, k)
        assert f"{index}_{len(want)}" not in results


def test_the_standalone_text_names_no_symdiff_import_and_runs_here(tmp_path):
    """The same check in this process, quickly: every saved module imports NumPy and the
    standard library only, and its function computes the in-process numbers."""
    for name, build in FUNCTIONS.items():
        g = build()
        path = Path(g.save(tmp_path / f"{name}.py"))
        namespace: dict = {"__name__": name}
        exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
        assert "from symdiff" not in path.read_text(encoding="utf-8")
        if name == "grad_logistic":
            rng = np.random.default_rng(1)
            args = (rng.normal(size=(9, 3)), rng.normal(size=3), rng.choice([-1.0, 1.0], 9))
        else:
            args = (np.linspace(0.5, 2, 5), np.linspace(-1, 1, 5))
        for got, want in zip(_leaves(namespace[g.name](*args)), _leaves(g(*args)), strict=True):
            assert np.array_equal(got, want)
