"""Each example says at its top what it needs, and stops with one clear line when something is
missing (never a traceback such as ``ModuleNotFoundError: scipy``)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_every_example_says_what_it_needs(path):
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    assert doc is not None and "\nNeeds: " in doc, path.name


def _run_without(path: Path, blocked: list[str], *args: str) -> subprocess.CompletedProcess:
    """Run the example as a script with the modules ``blocked`` made unimportable."""
    code = (
        "import runpy, sys\n"
        f"for name in {blocked!r}:\n"
        "    sys.modules[name] = None\n"
        f"sys.argv = [{path.name!r}, *{list(args)!r}]\n"
        f"runpy.run_path({str(path)!r}, run_name='__main__')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=300)


@pytest.mark.parametrize(("name", "blocked", "hint"), [
    ("dask_logistic.py", ["scipy"], 'needs scipy: pip install "symdiff[dask]"'),
    ("dask_logistic.py", ["dask", "distributed"], 'needs dask, distributed: pip install'),
    ("train_digits.py", ["sklearn"], "needs scikit-learn for its bundled digits"),
])
def test_a_missing_package_is_one_line(name, blocked, hint):
    done = _run_without(ROOT / "examples" / name, blocked)
    assert done.returncode == 1
    assert done.stderr.strip().count("\n") == 0, done.stderr
    assert hint in done.stderr and done.stderr.startswith(name.partition(".")[0])
