"""An uncaught error inside a generated function shows the generated line, also in a plain
``python script.py`` (whose interpreter-level printer reads lines from a file, not linecache),
for a function built now, loaded from the disk cache or built without a cache."""

from __future__ import annotations

import os
import subprocess
import sys
import traceback

import numpy as np
import pytest

import symdiff as sd
from symdiff.codegen import load

from .conftest import ROOT

SCRIPT = """
import sys
sys.path.insert(0, {root!r})
import numpy as np
import symdiff as sd
{build}
"""

SCALAR = "sd.grad('x*y')(np.ones(3), np.ones(4))"
TENSOR = "sd.grad('sum(x*y)', wrt='x', shapes={'x': ('n',), 'y': ('n',)})(np.ones(3), np.ones(4))"


def _run(tmp_path, build: str, **env: str) -> str:
    script = tmp_path / "script.py"
    script.write_text(SCRIPT.format(root=str(ROOT), build=build))
    environment = {**os.environ, **env}
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=environment,
        timeout=300, check=False,
    )
    assert done.returncode == 1, done.stderr
    return done.stderr


@pytest.mark.parametrize(
    ("build", "line"),
    [(SCALAR, "return _elementwise(_formulas, (x, y), threads=threads)"),
     (TENSOR, "_check_shapes(('x', 'y')")],
)
def test_a_plain_script_shows_the_generated_line(tmp_path, build, line):
    cache = {"SYMDIFF_CACHE_DIR": str(tmp_path / "cache"), "SYMDIFF_SOURCE_DIR": ""}
    for _ in range(2):  # built now, then loaded from the disk cache by a second process
        stderr = _run(tmp_path, build, **cache)
        assert line in stderr and "raise _ShapeError(" in stderr
        assert "symdiff.errors.ShapeError" in stderr.splitlines()[-1]
    stderr = _run(tmp_path, build, SYMDIFF_DISABLE_CACHE="1", SYMDIFF_SOURCE_DIR="")
    assert line in stderr


def test_the_copy_is_the_verified_source_in_a_private_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMDIFF_SOURCE_DIR", str(tmp_path / "sources"))
    g = sd.grad("x*y", cache=False)
    path = g._fn.__code__.co_filename
    assert path.startswith(str(tmp_path / "sources"))
    with open(path, encoding="utf-8") as handle:
        assert handle.read() == g.source
    if os.name == "posix":
        assert os.stat(tmp_path / "sources").st_mode & 0o777 == 0o700
    assert load.source_file(g.source, g.name) == path  # written once, found again


def test_without_a_usable_directory_linecache_still_serves_the_lines(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("SYMDIFF_SOURCE_DIR", str(blocker))
    g = sd.grad("x*y", cache=False)
    assert g._fn.__code__.co_filename.startswith("<symdiff grad_f")
    try:
        g(np.ones(2), np.ones(3))
    except sd.ShapeError as error:
        text = "".join(traceback.format_exception(error))
    assert "return _elementwise(_formulas, (x, y), threads=threads)" in text


@pytest.mark.skipif(os.name != "posix", reason="permissions")
def test_a_directory_others_can_write_is_not_used(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("SYMDIFF_SOURCE_DIR", str(shared))
    assert load.source_file("x = 1\n", "f") is None
    assert not list(shared.iterdir())
