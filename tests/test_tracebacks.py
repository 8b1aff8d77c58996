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
from symdiff.codegen import sources

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


def test_without_a_cache_the_copy_is_written_only_for_a_traceback(tmp_path):
    sources = tmp_path / "sources"
    env = {"SYMDIFF_SOURCE_DIR": str(sources), "SYMDIFF_CACHE_DIR": str(tmp_path / "cache")}
    build = SCALAR.replace("sd.grad('x*y')", "sd.grad('x*y', cache=False)")
    fine = build.replace("np.ones(4)", "np.ones(3)") + "\nraise SystemExit(1)"
    assert "Traceback" not in _run(tmp_path, fine, **env)  # no error in generated code
    assert not sources.exists() or not list(sources.iterdir())  # nothing written
    stderr = _run(tmp_path, build, **env)
    assert "return _elementwise(_formulas, (x, y), threads=threads)" in stderr
    (copy,) = sources.iterdir()  # written for the traceback, just before it was printed
    assert copy.name.startswith("grad_f-")


def test_the_copy_is_the_verified_source_in_a_private_directory(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMDIFF_SOURCE_DIR", str(tmp_path / "sources"))
    g = sd.grad("x*y + 7")
    path = g._fn.__code__.co_filename
    assert path.startswith(str(tmp_path / "sources"))
    with open(path, encoding="utf-8") as handle:
        assert handle.read() == g.source
    if os.name == "posix":
        assert os.stat(tmp_path / "sources").st_mode & 0o777 == 0o700
    assert sources.write_copy(g.source, g.name) == path  # written once, found again
    assert sources.clear_copies() == 1
    unkept = sd.grad("x*y + 8", cache=False)
    assert not os.path.exists(unkept._fn.__code__.co_filename)  # not written: no traceback


@pytest.mark.parametrize("cache", [True, False])
def test_without_a_usable_directory_linecache_still_serves_the_lines(tmp_path, monkeypatch,
                                                                    cache):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("SYMDIFF_SOURCE_DIR", str(blocker))
    g = sd.grad("x*y + 9", cache=cache)
    if cache:
        assert g._fn.__code__.co_filename.startswith("<symdiff grad_f")
    try:
        g(np.ones(2), np.ones(3))
    except sd.ShapeError as error:
        sources._write_needed(error)  # what the hook does: nothing here, and no error
        text = "".join(traceback.format_exception(error))
    assert "return _elementwise(_formulas, (x, y), threads=threads)" in text


@pytest.mark.skipif(os.name != "posix", reason="permissions")
def test_a_directory_others_can_write_is_not_used(tmp_path, monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("SYMDIFF_SOURCE_DIR", str(shared))
    assert sources.write_copy("x = 1\n", "f") is None
    assert not list(shared.iterdir())


def test_copies_are_capped_least_recently_used_first(tmp_path, monkeypatch):
    directory = tmp_path / "sources"
    monkeypatch.setenv("SYMDIFF_SOURCE_DIR", str(directory))
    monkeypatch.setattr(sources, "SOURCES_MAX_MB", 0.05)  # 52 KB; each copy below is ~5 KB
    monkeypatch.setattr(sources, "SCAN_EVERY_WRITES", 4)
    kept = sources.write_copy("first = 1\n" * 500, "f")
    for i in range(60):
        sources.write_copy(f"c{i} = {i}\n" * 500, "f")
        assert sources.write_copy("first = 1\n" * 500, "f") == kept  # used again: touched
    total = sum(p.stat().st_size for p in directory.iterdir())
    assert total <= 0.05 * 1024 * 1024 + 4 * 6000  # the cap, plus the writes between scans
    assert os.path.exists(kept)
    left = len(list(directory.iterdir()))
    assert sources.clear_copies() == left
    assert list(directory.iterdir()) == []


def test_a_load_marks_its_copy_used_without_changing_when_it_was_written(tmp_path,
                                                                         monkeypatch):
    """The modification time of a copy is what Numba's cache of a backend='numba' module beside
    it compares (before Numba 0.68): a second load must keep it, and still count as a use."""
    monkeypatch.setenv("SYMDIFF_SOURCE_DIR", str(tmp_path / "sources"))
    path = sources.write_copy("x = 1\n", "f")
    os.utime(path, ns=(10**18, 10**18))  # written long ago
    assert sources.write_copy("x = 1\n", "f") == path
    info = os.stat(path)
    assert info.st_mtime_ns == 10**18
    assert info.st_atime_ns > 1.7e18  # now


def test_clear_cache_removes_the_copies(tmp_path, monkeypatch, cache_dir):
    directory = tmp_path / "sources"
    monkeypatch.setenv("SYMDIFF_SOURCE_DIR", str(directory))
    sd.grad("x*y + 10")
    assert list(directory.iterdir())
    sd.clear_cache()
    assert list(directory.iterdir()) == []
