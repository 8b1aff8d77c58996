"""The templates travel with the package: in the wheel, and found by an installed copy."""

from __future__ import annotations

import importlib.metadata
import json
import pathlib
import subprocess
import sys
import zipfile

import pytest

from .conftest import ROOT


def _installed_non_editable() -> bool:
    try:
        dist = importlib.metadata.distribution("symdiff")
    except importlib.metadata.PackageNotFoundError:
        return False
    direct = dist.read_text("direct_url.json")
    return not (direct and json.loads(direct).get("dir_info", {}).get("editable"))


@pytest.mark.slow
def test_wheel_contains_the_templates(tmp_path):
    pytest.importorskip("hatchling", reason="building the wheel needs hatchling (dev extra)")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
         "--wheel-dir", str(tmp_path), str(ROOT)],
        check=True, capture_output=True,
    )
    (wheel,) = tmp_path.glob("symdiff-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for template in ("module.py.jinja", "function.py.jinja", "_macros.jinja"):
        assert f"symdiff/templates/{template}" in names
    assert "symdiff/py.typed" in names
    packages = sorted(p.parent.relative_to(ROOT) for p in (ROOT / "symdiff").rglob("__init__.py"))
    assert {"symdiff/cache", "symdiff/cli", "symdiff/parsing", "symdiff/tensor"} <= {
        p.as_posix() for p in packages
    }
    for package in packages:  # every subpackage travels, with all its modules
        for module in (ROOT / package).glob("*.py"):
            assert module.relative_to(ROOT).as_posix() in names


@pytest.mark.skipif(
    not _installed_non_editable(),
    reason="needs symdiff installed with a plain `pip install .` (as .ci/run does)",
)
def test_installed_copy_finds_its_templates_from_another_directory(tmp_path):
    code = (
        "import symdiff, symdiff.codegen.render as r; "
        "print(r.templates_dir()); print(symdiff.__file__); "
        "print(symdiff.grad('x**2', wrt='x')(3.0))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    templates, package = pathlib.Path(out[0]), pathlib.Path(out[1])
    assert package.parent != ROOT / "symdiff", "the installed copy, not the source tree, ran"
    assert "site-packages" in package.parts
    assert templates == package.parent / "templates"
    assert float(out[2]) == 6.0
