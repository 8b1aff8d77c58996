"""The teaching notebooks: all six are there, committed without outputs, and run by the test
command (nbmake executes them: ``--nbmake`` and ``notebooks`` are in pyproject's pytest options)."""

from __future__ import annotations

import json
import pathlib
import tomllib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
EXPECTED = [
    "01_derivations.ipynb",
    "02_generated_code.ipynb",
    "03_computational_graphs.ipynb",
    "04_training.ipynb",
    "05_performance.ipynb",
    "06_convolutional_networks.ipynb",
]

pytestmark = pytest.mark.skipif(
    not NOTEBOOKS.is_dir(), reason="no notebooks/ folder here (an sdist ships without them)"
)


def test_all_six_notebooks_exist():
    found = sorted(path.name for path in NOTEBOOKS.glob("*.ipynb"))
    assert found == EXPECTED


@pytest.mark.parametrize("name", EXPECTED)
def test_notebook_is_committed_with_outputs_stripped(name):
    notebook = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))
    assert notebook["nbformat"] == 4
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"
    code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert code, "a notebook without code"
    for cell in code:
        source = "".join(cell["source"])[:60]
        assert cell["outputs"] == [], f"{name}: outputs left in the cell starting {source!r}"
        assert cell["execution_count"] is None, f"{name}: execution count in {source!r}"
        assert "execution" not in cell.get("metadata", {}), f"{name}: run timings in {source!r}"
    for cell in notebook["cells"]:
        assert "attachments" not in cell or not cell["attachments"]


def test_the_test_command_runs_the_notebooks():
    options = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    pytest_options = options["tool"]["pytest"]["ini_options"]
    assert "notebooks" in pytest_options["testpaths"]
    assert "--nbmake" in pytest_options["addopts"].split()
    dev = options["project"]["optional-dependencies"]["dev"]
    assert any(dep.startswith("nbmake") for dep in dev)
