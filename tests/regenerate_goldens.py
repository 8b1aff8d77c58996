"""Regenerate every golden file: ``python -m tests.regenerate_goldens`` from the repository root.

Golden files pin the exact generated source of a handful of functions, scalar
(``tests/golden/*.py``) and tensor (``tests/golden/tensor_*.py``), the runtime those modules
import (``tests/golden/runtime.txt``: every helper's signature and a digest of its source, see
:func:`runtime_snapshot`), plus the printed code of every function head
(``tests/golden/print_snapshot.json``, see ``tests/test_print_snapshot.py``).
``tests/test_golden.py`` fails on any difference. After an intended change to generated code,
run this script and review ``git diff tests/golden`` like any other code change; say in the
commit message why the generated code changed.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import subprocess
import sys
import tempfile
from collections.abc import Callable

import symdiff as sd
from tests.tensor_cases import LOGISTIC, LOGISTIC_SHAPES, MLP, MLP_SHAPES

GOLDEN = pathlib.Path(__file__).resolve().parent / "golden"
REGENERATE = "python -m tests.regenerate_goldens"

#: Scalar modules: name -> how to build it (the golden file is ``golden/<name>.py``).
SCALAR_CASES: dict[str, Callable[[], sd.CompiledFunction]] = {
    "grad_sin_exp_quotient": lambda: sd.grad("sin(x)*exp(y)/(1 + x**2)"),
    "value_and_grad_logistic": lambda: sd.value_and_grad("softplus(-y*w) + w**2/2", wrt=["w"]),
    "hessian_rosenbrock": lambda: sd.hessian("100*(y - x**2)**2 + (1 - x)**2", wrt=["x", "y"]),
    "grad_max_relu_erf": lambda: sd.grad("max(x, y, 0) + relu(x)*erf(y)", wrt="x"),
    "compile_constant": lambda: sd.compile("pi"),
}

#: The slice/reshape/transpose chain of the tensor goldens (a view of a view of a slice).
CHAIN = "sum((reshape(X[1:3], (d, 2)).T * W) ** 2)"
CHAIN_SHAPES = {"X": ("n", "d"), "W": (2, "d")}
#: Reductions and an elementwise max, both of which split the gradient evenly among ties.
MAX_TIES = "sum(max(X, axis=1)) + sum(max(X, Y))"
MAX_TIES_SHAPES = {"X": ("n", "d"), "Y": ("d",)}

#: Tensor modules: name -> how to build it (the golden file is ``golden/<name>.py``).
TENSOR_CASES: dict[str, Callable[[], sd.CompiledFunction]] = {
    "tensor_grad_logistic": lambda: sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES),
    "tensor_hessian_logistic": lambda: sd.hessian(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES),
    "tensor_hvp_logistic": lambda: sd.hvp(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES),
    "tensor_value_and_grad_mlp": lambda: sd.value_and_grad(
        MLP, wrt=["W1", "b1", "W2", "b2"], shapes=MLP_SHAPES
    ),
    "tensor_grad_slice_reshape_transpose": lambda: sd.grad(CHAIN, wrt="X", shapes=CHAIN_SHAPES),
    "tensor_grad_max_ties": lambda: sd.grad(MAX_TIES, wrt=["X", "Y"], shapes=MAX_TIES_SHAPES),
}

CASES = {**SCALAR_CASES, **TENSOR_CASES}


#: The golden file of the runtime (``symdiff.runtime``).
RUNTIME_GOLDEN = GOLDEN / "runtime.txt"


def runtime_snapshot() -> str:
    """One line per helper and constant of :mod:`symdiff.runtime`, in the order of its files:
    its module, its first line (a helper's signature) and the SHA-256 of its source (the first
    16 hex digits), as a standalone module copies it. Any change of the runtime changes a line
    that names what changed."""
    from symdiff.codegen.standalone import runtime_definitions

    lines = ["# symdiff.runtime: every helper and constant, its first line and a digest of its",
             f"# source. Regenerate with `{REGENERATE}` after an intended change."]
    for name, definition in runtime_definitions().items():
        digest = hashlib.sha256(definition.text.encode()).hexdigest()[:16]
        first = definition.text.splitlines()[0].split("  #")[0]
        lines.append(f"{definition.module:12} {digest}  {first}")
        assert name in first
    return "\n".join(lines) + "\n"


def golden_path(name: str) -> pathlib.Path:
    """The golden file of the case ``name``."""
    return GOLDEN / f"{name}.py"


def write_modules() -> list[str]:
    """Write the golden file of every case; return the names whose file changed."""
    GOLDEN.mkdir(exist_ok=True)
    changed = []
    for name, build in sorted(CASES.items()):
        path = golden_path(name)
        source = build().source
        if not path.exists() or path.read_text() != source:
            path.write_text(source)
            changed.append(name)
    return changed


def main() -> int:
    """Regenerate the golden modules, then the print snapshot (through its own test).

    Every module is built anew, in an empty cache directory of its own (never found in the
    user's cache)."""
    os.environ["SYMDIFF_CACHE_DIR"] = tempfile.mkdtemp(prefix="symdiff-goldens-")
    changed = write_modules()
    print(f"golden modules: {len(CASES)}, rewritten: {', '.join(changed) or 'none'}")
    runtime = runtime_snapshot()
    if not RUNTIME_GOLDEN.exists() or RUNTIME_GOLDEN.read_text() != runtime:
        RUNTIME_GOLDEN.write_text(runtime)
        print(f"rewritten: {RUNTIME_GOLDEN.name}")
    env = {**os.environ, "SYMDIFF_UPDATE_GOLDEN": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "tests/test_print_snapshot.py"]
    snapshot = subprocess.run(command, env=env, cwd=GOLDEN.parent.parent, check=False)
    print("review the changes with: git diff tests/golden")
    return snapshot.returncode


if __name__ == "__main__":
    sys.exit(main())
