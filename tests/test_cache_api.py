"""The disk cache as users meet it: warm starts, many processes, corrupt entries, bad dirs."""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import symdiff as sd
from symdiff import cache
from symdiff import request_index as warm
from symdiff.codegen import render

from .conftest import ROOT, reset_memory


def _entries(directory: pathlib.Path, namespace: str) -> list[pathlib.Path]:
    return sorted((directory / f"v{cache.FORMAT_VERSION}" / namespace).glob("*/*.py"))


def _python(code: str, cache_dir: pathlib.Path, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "SYMDIFF_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(ROOT)}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, env=environment, cwd=ROOT, check=True,
    )


def test_second_process_loads_without_sympy_or_jinja(cache_dir):
    code = """
        import sys
        import symdiff as sd
        g = sd.grad("sin(x)*exp(y)/(1 + x**2)", wrt=["x", "y"])
        print(float(g(0.3, 0.7)[0]))
        print("sympy" in sys.modules, "jinja2" in sys.modules)
    """
    cold = _python(code, cache_dir).stdout.split()
    warm_run = _python(code, cache_dir).stdout.split()
    assert cold[0] == warm_run[0]
    assert cold[1:] == ["True", "True"]
    assert warm_run[1:] == ["False", "False"]


def test_same_request_in_one_process_is_a_dict_lookup(cache_dir):
    g = sd.grad("x**2*y", wrt="x")
    assert sd.grad("x**2*y", wrt="x") is g
    assert sd.grad("y*x**2", wrt="x") is not None  # another spelling: canonical entry shared
    assert len(_entries(cache_dir, "module")) == 1
    assert len(_entries(cache_dir, "index")) == 2


@pytest.mark.slow
def test_four_processes_build_the_same_eight_functions(cache_dir):
    worker = """
        import sys
        import symdiff as sd
        out = []
        for k in range(1, 9):
            g = sd.grad(f"x**{k}*sin(y) + {k}*y", wrt=["x", "y"])
            dx, dy = g(1.5, 0.5)
            out.append(f"{float(dx)!r},{float(dy)!r}")
        print(";".join(out))
    """
    environment = {**os.environ, "SYMDIFF_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(ROOT)}
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(worker)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment,
        )
        for _ in range(4)
    ]
    results = [p.communicate(timeout=300) for p in processes]
    assert all(p.returncode == 0 for p in processes), [err for _, err in results]
    for out, err in results:
        assert "Traceback" not in err
        for k, pair in enumerate(out.strip().split(";"), start=1):
            dx, dy = map(float, pair.split(","))
            assert dx == pytest.approx(k * 1.5 ** (k - 1) * np.sin(0.5), rel=1e-14)
            assert dy == pytest.approx(1.5**k * np.cos(0.5) + k, rel=1e-14)
    assert len(_entries(cache_dir, "module")) == 8
    assert len(_entries(cache_dir, "index")) == 8
    assert not list(cache_dir.rglob(".tmp-*"))


def _only_module_entry(cache_dir):
    (entry,) = _entries(cache_dir, "module")
    return entry


def test_truncated_entry_is_rebuilt(cache_dir):
    expected = sd.grad("exp(x)*y", wrt="x")(1.0, 2.0)
    entry = _only_module_entry(cache_dir)
    entry.write_bytes(entry.read_bytes()[:200])
    reset_memory()
    assert sd.grad("exp(x)*y", wrt="x")(1.0, 2.0) == expected
    assert "def grad_f" in _only_module_entry(cache_dir).read_text()


def test_edited_entry_is_rebuilt_and_its_code_never_runs(cache_dir, tmp_path):
    sd.grad("exp(x)*y", wrt="x")
    entry = _only_module_entry(cache_dir)
    canary = tmp_path / "canary"
    header, body = entry.read_text().split("\n", 1)
    payload = f"open({str(canary)!r}, 'w').write('ran')\n"
    entry.write_text(header + "\n" + payload + body)  # checksum in the header no longer matches
    reset_memory()
    g = sd.grad("exp(x)*y", wrt="x")
    assert g(1.0, 2.0) == pytest.approx(2 * np.e)
    assert not canary.exists()
    assert "canary" not in g.source
    assert "canary" not in _only_module_entry(cache_dir).read_text()


def test_index_pointing_at_a_missing_module_is_rebuilt(cache_dir):
    sd.grad("x**3", wrt="x")
    _only_module_entry(cache_dir).unlink()
    reset_memory()
    assert sd.grad("x**3", wrt="x")(2.0) == 12.0


@pytest.mark.parametrize("layout", ["under_a_file", "world_writable"])
def test_unusable_cache_dir_warns_once_and_still_works(tmp_path, monkeypatch, layout):
    if layout == "under_a_file":
        (tmp_path / "file").write_text("not a directory")
        directory = tmp_path / "file" / "cache"
    else:
        directory = tmp_path / "open"
        directory.mkdir()
        directory.chmod(0o777)
    monkeypatch.setenv("SYMDIFF_CACHE_DIR", str(directory))
    reset_memory()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert sd.grad("x*y", wrt="y")(3.0, 1.0) == 3.0
        assert sd.grad("x*y + 1", wrt="y")(3.0, 1.0) == 3.0
    relevant = [w for w in caught if issubclass(w.category, cache.SymdiffCacheWarning)]
    assert len(relevant) == 1
    assert sd.cache_info()["kind"] == "memory" and sd.cache_info()["reason"]
    reset_memory()


def test_disabled_cache_writes_nothing(cache_dir, monkeypatch):
    monkeypatch.setenv("SYMDIFF_DISABLE_CACHE", "1")
    reset_memory()
    sd.grad("x**4", wrt="x")
    assert not cache_dir.exists() or not _entries(cache_dir, "module")
    monkeypatch.delenv("SYMDIFF_DISABLE_CACHE")
    reset_memory()
    sd.grad("x**4", wrt="x", cache=False)
    assert not _entries(cache_dir, "module")


def test_changing_a_template_changes_the_key(tmp_path, monkeypatch):
    copy = tmp_path / "templates"
    shutil.copytree(render.templates_dir(), copy)
    monkeypatch.setattr(render, "templates_dir", lambda: copy)
    for cached in (render.templates_digest, warm.fingerprint):
        cached.cache_clear()
    before = warm.module_key("abc")
    path = copy / "function.py.jinja"
    path.write_text(path.read_text() + "\n")
    for cached in (render.templates_digest, warm.fingerprint):
        cached.cache_clear()
    assert warm.module_key("abc") != before
    monkeypatch.undo()
    for cached in (render.templates_digest, warm.fingerprint):
        cached.cache_clear()


def test_cache_info_and_clear(cache_dir):
    sd.grad("x**5", wrt="x")
    info = sd.cache_info()
    assert info["kind"] == "disk" and pathlib.Path(info["path"]).is_relative_to(cache_dir)
    assert info["entries"] == 2 and info["bytes"] > 0 and info["cap"] > 0
    assert sd.clear_cache() == 2
    assert sd.cache_info()["entries"] == 0


def test_two_versions_share_a_cache_dir_without_mixing(cache_dir, monkeypatch):
    """Another symdiff version (or template set) keys its entries apart; each loads its own."""
    old = sd.grad("x**2*y", wrt="x")
    monkeypatch.setattr(warm, "fingerprint", lambda: "symdiff=9.9;templates=other")
    reset_memory()
    new = sd.grad("x**2*y", wrt="x")
    assert new.key != old.key
    assert len(_entries(cache_dir, "module")) == 2
    assert new(3.0, 2.0) == old(3.0, 2.0) == 12.0
    monkeypatch.undo()
    reset_memory()
    assert sd.grad("x**2*y", wrt="x").key == old.key


def test_a_change_to_symdiffs_code_changes_the_key(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "a.py").write_text("x = 1\n")
    (package / "sub" / "b.py").write_text("y = 2\n")
    before = warm.code_digest(package)
    assert warm.code_digest(package) == before
    (package / "sub" / "b.py").write_text("y = 30\n")  # another size
    changed = warm.code_digest(package)
    assert changed != before
    info = os.stat(package / "sub" / "b.py")  # the same size, another modification time
    (package / "sub" / "b.py").write_text("y = 31\n")
    os.utime(package / "sub" / "b.py", ns=(info.st_atime_ns, info.st_mtime_ns + 1_000_000))
    assert warm.code_digest(package) not in (before, changed)
    assert f"code={warm.code_digest()}" in warm.fingerprint()
