"""The disk cache for tensor functions: keys, warm loads in a second process, corrupt entries."""

from __future__ import annotations

import os
import pathlib
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import symdiff as sd
from symdiff import cache
from symdiff import request_index as warm

from .conftest import ROOT, reset_memory

LOGISTIC = "sum(log(1 + exp(-y * (X @ w))))"
SHAPES = {"X": ("n", "d"), "y": ("n",), "w": ("d",)}


def _entries(directory: pathlib.Path, namespace: str) -> list[pathlib.Path]:
    return sorted((directory / f"v{cache.FORMAT_VERSION}" / namespace).glob("*/*.py"))


def _python(code: str, cache_dir: pathlib.Path) -> subprocess.CompletedProcess:
    environment = {**os.environ, "SYMDIFF_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, env=environment, cwd=ROOT, check=True,
    )


def _data(seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(7, 3)), rng.normal(size=3), rng.choice([-1.0, 1.0], size=7)


def test_second_process_loads_a_string_request_without_sympy_or_jinja(cache_dir):
    code = f"""
        import sys
        import numpy as np
        import symdiff as sd
        g = sd.grad({LOGISTIC!r}, wrt="w", shapes={SHAPES!r})
        X = np.arange(21.0).reshape(7, 3) / 10
        print(repr(g(X, np.ones(3) / 10, np.linspace(-1, 1, 7)).tolist()))
        print("sympy" in sys.modules, "jinja2" in sys.modules)
    """
    cold = _python(code, cache_dir).stdout.splitlines()
    warm_run = _python(code, cache_dir).stdout.splitlines()
    assert cold[0] == warm_run[0]
    assert cold[1] == "True True"
    assert warm_run[1] == "False False"
    assert len(_entries(cache_dir, "module")) == 1
    assert len(_entries(cache_dir, "index")) == 1


def test_second_process_loads_the_module_without_deriving(cache_dir):
    """Another spelling of the request (an unused shape, lists) misses the raw index but finds
    the module entry: the request is parsed, never differentiated or emitted."""
    first = f"""
        import symdiff as sd
        sd.hessian({LOGISTIC!r}, wrt="w", shapes={SHAPES!r})
    """
    second = f"""
        import numpy as np
        import symdiff as sd
        from symdiff.tensor import build

        def refuse(*args, **kwargs):
            raise AssertionError("derived again")

        build._plan = build._build = refuse
        shapes = {{"X": ["n", "d"], "y": ["n"], "w": ["d"], "unused": [2]}}
        h = sd.hessian({LOGISTIC!r}, wrt="w", shapes=shapes)
        X = np.arange(21.0).reshape(7, 3) / 10
        print(h(X, np.ones(3) / 10, np.linspace(-1, 1, 7)).shape)
    """
    _python(first, cache_dir)
    assert _python(second, cache_dir).stdout.split() == ["(3,", "3)"]
    assert len(_entries(cache_dir, "module")) == 1
    assert len(_entries(cache_dir, "index")) == 2


@pytest.mark.parametrize(
    "builder", [sd.grad, sd.hessian, sd.value_and_grad, sd.jacobian, sd.compile]
)
def test_every_builder_is_cached_on_disk_and_reloads_equal(cache_dir, builder):
    kwargs = {} if builder is sd.compile else {"wrt": "w"}
    expr = "X @ w" if builder is sd.jacobian else LOGISTIC
    f = builder(expr, shapes=SHAPES, **kwargs)
    assert f.key is not None
    assert len(_entries(cache_dir, "module")) == 1
    reset_memory()
    again = builder(expr, shapes=SHAPES, **kwargs)
    assert again is not f
    assert again.source == f.source
    X, w, y = _data()
    args = {"X": X, "w": w, "y": y}
    expected, got = f(**{a: args[a] for a in f.args}), again(**{a: args[a] for a in f.args})
    if builder is sd.value_and_grad:
        expected, got = np.hstack(expected), np.hstack(got)
    np.testing.assert_array_equal(expected, got)
    assert [str(e) for e in again.exprs] == [str(e) for e in f.exprs]


def test_the_key_changes_with_everything_that_changes_the_code(cache_dir):
    sd.grad(LOGISTIC, wrt="w", shapes=SHAPES)
    sd.grad(LOGISTIC, wrt=["w"], shapes=SHAPES)  # a tuple of one gradient
    sd.grad(LOGISTIC, wrt="X", shapes=SHAPES)
    sd.grad(LOGISTIC, wrt="w", shapes={**SHAPES, "w": (3,), "X": ("n", 3)})
    sd.grad(LOGISTIC, wrt="w", shapes=SHAPES, simplify=False)
    sd.grad(LOGISTIC, wrt="w", shapes=SHAPES, mode="forward")
    sd.value_and_grad(LOGISTIC, wrt="w", shapes=SHAPES)
    sd.grad(LOGISTIC.replace("1 +", "2 +"), wrt="w", shapes=SHAPES)
    assert len(_entries(cache_dir, "module")) == 8
    sd.grad(LOGISTIC, wrt="w", shapes={**SHAPES, "unused": ()})  # same code, same module
    assert len(_entries(cache_dir, "module")) == 8


def test_same_request_in_one_process_is_a_dict_lookup(cache_dir):
    g = sd.grad(LOGISTIC, wrt="w", shapes=SHAPES)
    assert sd.grad(LOGISTIC, wrt="w", shapes=SHAPES) is g
    assert sd.grad(LOGISTIC, wrt="w", shapes={k: list(v) for k, v in SHAPES.items()}) is g


def _only_module_entry(cache_dir):
    (entry,) = _entries(cache_dir, "module")
    return entry


def test_truncated_entry_is_rebuilt(cache_dir):
    X, w, y = _data()
    expected = sd.grad(LOGISTIC, wrt="w", shapes=SHAPES)(X, w, y)
    entry = _only_module_entry(cache_dir)
    entry.write_bytes(entry.read_bytes()[:300])
    reset_memory()
    np.testing.assert_array_equal(sd.grad(LOGISTIC, wrt="w", shapes=SHAPES)(X, w, y), expected)
    assert "def grad_f" in _only_module_entry(cache_dir).read_text()


def _forge(entry: pathlib.Path, payload: str) -> None:
    """Rewrite an entry with a valid checksum around a changed body (a forged entry)."""
    import hashlib

    body = entry.read_text().split("\n", 1)[1].replace("    _t0 = ", payload + "    _t0 = ", 1)
    data = body.encode()
    header = f"# symdiff-cache v1 sha256={hashlib.sha256(data).hexdigest()} bytes={len(data)}"
    entry.write_text(header + "\n" + body)


@pytest.mark.parametrize("forged", [False, True])
def test_corrupted_entry_is_rebuilt_and_its_code_never_runs(cache_dir, tmp_path, forged):
    sd.grad(LOGISTIC, wrt="w", shapes=SHAPES)
    entry = _only_module_entry(cache_dir)
    canary = tmp_path / "canary"
    payload = f"    open({str(canary)!r}, 'w').write('ran')\n"
    if forged:  # checksum valid: verification of the module refuses it
        _forge(entry, payload)
    else:  # checksum no longer matches
        header, body = entry.read_text().split("\n", 1)
        entry.write_text(header + "\n" + body.replace("    _t0 = ", payload + "    _t0 = ", 1))
    assert "canary" in entry.read_text()
    reset_memory()
    g = sd.grad(LOGISTIC, wrt="w", shapes=SHAPES)
    X, w, y = _data()
    np.testing.assert_allclose(g(X, w, y), -X.T @ (y / (1 + np.exp(y * (X @ w)))), rtol=1e-12)
    assert not canary.exists()
    assert "canary" not in g.source
    assert "canary" not in _only_module_entry(cache_dir).read_text()


def test_index_pointing_at_a_missing_module_is_rebuilt(cache_dir):
    sd.grad(LOGISTIC, wrt="w", shapes=SHAPES)
    _only_module_entry(cache_dir).unlink()
    reset_memory()
    assert sd.grad(LOGISTIC, wrt="w", shapes=SHAPES)(*_data()).shape == (3,)
    assert len(_entries(cache_dir, "module")) == 1


def test_an_entry_for_other_arguments_is_not_loaded(cache_dir):
    """A module whose signature is not the request's (a mixed-up entry) is rebuilt."""
    sd.grad(LOGISTIC, wrt="w", shapes=SHAPES)
    entry = _only_module_entry(cache_dir)
    other = sd.grad("sum(a * b)", wrt="a", shapes={"a": ("k",), "b": ("k",)}, cache=False)
    reset_memory()
    store = cache.open_store()
    store.put("module", entry.stem, other.source)
    g = sd.grad(LOGISTIC, wrt="w", shapes=SHAPES)
    assert g.args == ("X", "w", "y")
    assert g(*_data()).shape == (3,)


def test_cache_false_writes_nothing_and_builds_anew(cache_dir):
    g = sd.grad(LOGISTIC, wrt="w", shapes=SHAPES, cache=False)
    assert g.key is None
    assert sd.grad(LOGISTIC, wrt="w", shapes=SHAPES, cache=False) is not g
    assert not _entries(cache_dir, "module")
    assert not _entries(cache_dir, "index")


def test_clear_cache_forgets_tensor_functions(cache_dir):
    g = sd.grad(LOGISTIC, wrt="w", shapes=SHAPES)
    assert sd.clear_cache() == 2
    assert not _entries(cache_dir, "module")
    assert sd.grad(LOGISTIC, wrt="w", shapes=SHAPES) is not g


def test_a_loaded_function_pickles_and_derives_its_exprs_lazily(cache_dir):
    g = sd.grad(LOGISTIC, wrt="w", shapes=SHAPES)
    reset_memory()
    loaded = sd.grad(LOGISTIC, wrt="w", shapes=SHAPES)
    assert callable(loaded._exprs)  # not derived on load
    copy = pickle.loads(pickle.dumps(loaded))
    assert [str(e) for e in copy.exprs] == [str(e) for e in g.exprs]
    assert [str(e) for e in loaded.exprs] == [str(e) for e in g.exprs]


def test_raw_keys_only_for_plain_requests():
    from symdiff.options import Options

    options = Options()
    assert warm.raw_key("grad", LOGISTIC, "w", options, SHAPES) is not None
    same = warm.raw_key("grad", LOGISTIC, ("w",), options, SHAPES)
    assert same == warm.raw_key("grad", LOGISTIC, ["w"], options, SHAPES)
    assert same != warm.raw_key("grad", LOGISTIC, "w", options, SHAPES)
    assert warm.raw_key("grad", LOGISTIC, "w", options, {"X": (np.int64(3),)}) is None
    assert warm.raw_key("grad", LOGISTIC, "w", options, {"X": (True,)}) is None
    assert warm.raw_key("grad", lambda w: w, "w", options, SHAPES) is None
    assert warm.raw_key("grad", LOGISTIC, "w", Options(cache=False), SHAPES) is None
    # the scalar layer's raw keys never meet the tensor layer's
    assert warm.raw_key("grad", LOGISTIC, "w", options) != warm.raw_key(
        "grad", LOGISTIC, "w", options, {}
    )


def test_a_traced_function_is_cached_by_its_graph(cache_dir):
    """A second process traces the function (cheap) and loads the module without deriving."""
    code = f"""
        import sys
        import numpy as np
        import symdiff as sd
        from symdiff.tensor import build

        def loss(X, w, y):
            return np.sum(np.log(1 + np.exp(-y * (X @ w))))

        if sys.argv[1] == "warm":
            def refuse(*args, **kwargs):
                raise AssertionError("derived again")

            build._plan = build._build = refuse
        g = sd.grad(loss, wrt="w", shapes={SHAPES!r})
        X = np.arange(21.0).reshape(7, 3) / 10
        print(repr(g(X, np.ones(3) / 10, np.linspace(-1, 1, 7)).tolist()))
    """
    environment = {**os.environ, "SYMDIFF_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(ROOT)}

    def run(mode: str) -> str:
        return subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code), mode], capture_output=True, text=True,
            env=environment, cwd=ROOT, check=True,
        ).stdout

    assert run("cold") == run("warm")
    assert len(_entries(cache_dir, "module")) == 1
    assert not _entries(cache_dir, "index")  # a function has no raw key
    # a different function body is a different graph, so a different entry
    sd.grad(lambda X, w, y: np.sum(np.log(1 + np.exp(y * (X @ w)))), wrt="w", shapes=SHAPES)
    assert len(_entries(cache_dir, "module")) == 2


def _logistic(X, w, y):
    return np.sum(np.log(1 + np.exp(-y * (X @ w))))


def test_a_traced_function_loaded_from_disk_derives_its_exprs_lazily(cache_dir):
    g = sd.hessian(_logistic, wrt="w", shapes=SHAPES)
    reset_memory()
    loaded = sd.hessian(_logistic, wrt="w", shapes=SHAPES)
    assert loaded is not g and loaded.source == g.source
    assert callable(loaded._exprs)
    copy = pickle.loads(pickle.dumps(loaded))
    assert copy.exprs == g.exprs == loaded.exprs
    assert copy.exprs[0].shape == ("d", "d")
