"""The ``symdiff`` command line: in-process through ``main`` and, for exit codes, pipes and
import costs, as a real ``python -m symdiff`` subprocess."""

from __future__ import annotations

import ast
import os
import pathlib
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import symdiff as sd
from symdiff.cache import FORMAT_VERSION
from symdiff.cli import main
from symdiff.cli.commands import describe_removed

ROOT = pathlib.Path(__file__).resolve().parent.parent
COMMANDS = [
    "grad", "value-and-grad", "hessian", "hvp", "jacobian", "compile", "derive", "cache"
]


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMDIFF_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SYMDIFF_DEBUG", raising=False)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``main(argv)`` in-process: (exit code, stdout, stderr)."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def load(source: str, name: str) -> Any:
    """The function ``name`` of a generated module."""
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<{name}>", "exec"), namespace)
    return namespace[name]


def subprocess_env(tmp_path: pathlib.Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "SYMDIFF_DEBUG"}
    env.update(PYTHONPATH=str(ROOT), SYMDIFF_CACHE_DIR=str(tmp_path / "cache"), **extra)
    return env


def symdiff_process(
    tmp_path: pathlib.Path, *argv: str, **extra: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "symdiff", *argv],
        cwd=ROOT,
        env=subprocess_env(tmp_path, **extra),
        capture_output=True,
        text=True,
        timeout=120,
    )


# -- help and version --------------------------------------------------------------------------
def test_help_lists_every_command_with_examples(capsys):
    code, out, _ = run(capsys, "--help")
    assert code == 0
    assert "examples:" in out
    for name in COMMANDS:
        assert name in out


@pytest.mark.parametrize("command", COMMANDS)
def test_each_subcommand_help_shows_examples(capsys, command):
    code, out, _ = run(capsys, command, "--help")
    assert code == 0
    assert "examples:" in out
    assert f"symdiff {command}" in out


def test_version(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == 0
    assert out.strip() == f"symdiff {sd.__version__}"


def test_wrt_help_documents_the_single_name_forms(capsys):
    _, out, _ = run(capsys, "grad", "--help")
    assert "trailing comma (--wrt x,) a 1-tuple" in " ".join(out.split())


# -- builders ----------------------------------------------------------------------------------
def test_grad_prints_valid_python_with_the_right_numbers(capsys):
    code, out, err = run(capsys, "grad", "sin(x)*y", "--wrt", "x,y")
    assert code == 0, err
    ast.parse(out)
    assert "def grad_f" in out
    dx, dy = load(out, "grad_f")(np.array([0.1, 0.2]), 3.0)
    np.testing.assert_allclose(dx, 3.0 * np.cos([0.1, 0.2]))
    np.testing.assert_allclose(dy, np.sin([0.1, 0.2]))


def test_grad_wrt_order_is_kept(capsys):
    _, out, _ = run(capsys, "grad", "x**2 * y", "--wrt", "y, x")
    dy, dx = load(out, "grad_f")(2.0, 5.0)
    assert (float(dy), float(dx)) == (4.0, 20.0)


def test_single_wrt_name_returns_one_array_as_in_python(capsys):
    _, out, _ = run(capsys, "grad", "x**2 + y", "--wrt", "x")
    result = load(out, "grad_f")(3.0, 1.0)
    assert isinstance(result, np.ndarray) and float(result) == 6.0
    _, out, _ = run(capsys, "grad", "x**2 + y", "--wrt", "x,")  # a list of one: a 1-tuple
    result = load(out, "grad_f")(3.0, 1.0)
    assert isinstance(result, tuple) and len(result) == 1
    assert float(result[0]) == 6.0


def test_grad_without_wrt_uses_every_variable(capsys):
    _, out, _ = run(capsys, "grad", "x*y + z")
    assert len(load(out, "grad_f")(1.0, 2.0, 3.0)) == 3


def test_value_and_grad(capsys):
    code, out, _ = run(capsys, "value-and-grad", "x**2 * y", "--wrt", "x,y")
    assert code == 0
    value, (dx, dy) = load(out, "value_and_grad_f")(2.0, 3.0)
    assert (float(value), float(dx), float(dy)) == (12.0, 12.0, 4.0)


def test_hessian(capsys):
    code, out, _ = run(capsys, "hessian", "x**2 * y", "--wrt", "x,y")
    assert code == 0
    h = load(out, "hessian_f")(2.0, 3.0)
    np.testing.assert_allclose(h, [[6.0, 4.0], [4.0, 0.0]])


def test_hvp_takes_the_direction_last(capsys):
    code, out, _ = run(capsys, "hvp", "x**2 * y", "--wrt", "x,y")
    assert code == 0
    product = load(out, "hvp_f")(2.0, 3.0, np.array([1.0, -1.0]))
    np.testing.assert_allclose(product, [6.0 - 4.0, 4.0])


def test_jacobian_takes_several_expressions(capsys):
    code, out, _ = run(capsys, "jacobian", "x*y", "sin(x) + y", "--wrt", "x,y")
    assert code == 0
    j = load(out, "jacobian_f")(0.5, 2.0)
    np.testing.assert_allclose(j, [[2.0, 0.5], [np.cos(0.5), 1.0]])


def test_compile(capsys):
    code, out, _ = run(capsys, "compile", "sin(x)*exp(y)")
    assert code == 0
    assert float(load(out, "f")(0.5, 1.0)) == pytest.approx(np.sin(0.5) * np.e)


def test_expression_starting_with_minus_after_double_dash(capsys):
    code, out, _ = run(capsys, "grad", "--wrt", "x", "--", "-x**2")
    assert code == 0
    assert float(load(out, "grad_f")(3.0)) == -6.0


def test_options_reach_the_builder(capsys, monkeypatch):
    seen: dict[str, Any] = {}
    real = sd.grad

    def spy(expr, wrt=None, **options):
        seen.update(expr=expr, wrt=wrt, **options)
        return real(expr, wrt, **options)

    monkeypatch.setattr(sd, "grad", spy)
    argv = ["grad", "x*y", "--wrt", "x", "--no-simplify", "--no-cse", "--no-cache"]
    code, _, _ = run(capsys, *argv, "--mode", "forward")
    assert code == 0
    assert seen == {
        "expr": "x*y",
        "wrt": "x",
        "simplify": False,
        "cse": False,
        "mode": "forward",
        "cache": False,
        "backend": "numpy",
    }


def test_output_file_is_written(capsys, tmp_path):
    target = tmp_path / "grad_f.py"
    code, out, err = run(capsys, "grad", "sin(x)*y", "--wrt", "x,y", "-o", str(target))
    assert code == 0
    assert out == ""
    assert str(target) in err
    source = target.read_text(encoding="utf-8")
    assert "def grad_f" in source
    ast.parse(source)


def test_grad_prints_the_short_module_and_standalone_the_one_that_runs_alone(capsys, tmp_path):
    code, out, _ = run(capsys, "grad", "sin(x)*exp(y)/(1 + x**2)", "--wrt", "x,y")
    assert code == 0 and len(out.splitlines()) <= 40
    assert "from symdiff.runtime import _elementwise" in out and "def _in_blocks" not in out
    code, standalone, _ = run(capsys, "grad", "sin(x)*exp(y)/(1 + x**2)", "--wrt", "x,y",
                              "--standalone", "-o", str(tmp_path / "grad_f.py"))
    assert code == 0 and standalone == ""
    text = (tmp_path / "grad_f.py").read_text(encoding="utf-8")
    assert "symdiff.runtime import" not in text and "def _in_blocks(" in text
    assert text.startswith(out.split("from symdiff.runtime")[0])
    fn = load(text, "grad_f")
    x, y = np.linspace(0.5, 2, 9), np.linspace(-1, 1, 9)
    want = sd.grad("sin(x)*exp(y)/(1 + x**2)", wrt=["x", "y"])(x, y)
    for got, expected in zip(fn(x, y), want, strict=True):
        np.testing.assert_array_equal(got, expected)


def test_unwritable_output_file_is_bad_input(capsys, tmp_path):
    code, _, err = run(capsys, "compile", "x", "--output", str(tmp_path / "missing" / "f.py"))
    assert code == 2
    assert len(err.splitlines()) == 1
    assert err.startswith("symdiff: error: cannot write")


# -- derive ------------------------------------------------------------------------------------
def test_derive_prints_the_rule_names(capsys):
    code, out, _ = run(capsys, "derive", "sin(x)/x", "--wrt", "x")
    assert code == 0
    assert "quotient" in out
    assert "trigonometric" in out


def test_derive_latex(capsys):
    code, out, _ = run(capsys, "derive", "sin(x)/x", "--latex")
    assert code == 0
    assert r"\begin{aligned}" in out


def test_derive_needs_wrt_when_ambiguous(capsys):
    code, out, err = run(capsys, "derive", "x*y")
    assert code == 2
    assert out == ""
    assert err.startswith("symdiff: error: ") and len(err.splitlines()) == 1


# -- errors ------------------------------------------------------------------------------------
def test_bad_expression_is_one_line_with_position(capsys):
    code, out, err = run(capsys, "grad", "frob(x)")
    assert code == 2
    assert out == ""
    assert err == "symdiff: error: unknown function 'frob' (at position 0)\n"


def test_syntax_error_has_no_caret_lines(capsys):
    code, _, err = run(capsys, "derive", "x +", "--wrt", "x")
    assert code == 2
    assert len(err.splitlines()) == 1
    assert "(at position" in err and "^" not in err


@pytest.mark.parametrize(
    "argv",
    [
        ["grad", "sin(x", "--wrt", "x"],  # ParseError
        ["grad", "x", "--wrt", "x,x"],  # duplicate wrt
        ["hessian", "x", "--wrt", "1x"],  # not an identifier
    ],
)
def test_symdiff_errors_exit_2(capsys, argv):
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert err.startswith("symdiff: error: ")
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize(
    "argv",
    [
        ["grad", "x**2*y"],
        ["hessian", "x**2*y", "--wrt", "x,y"],
        ["grad", "sum(X @ w)", "--wrt", "w", "--shapes", "X=n,d;w=d"],
    ],
)
def test_backend_array_api_writes_a_module_of_the_standard(capsys, argv):
    pytest.importorskip("array_api_compat", reason="the array-api extra is not installed")
    code, out, _ = run(capsys, *argv, "--backend", "array_api")
    assert code == 0
    imports = [line for line in out.splitlines() if line.startswith(("import ", "from "))]
    assert len(imports) == 1 and imports[0].startswith("from symdiff.runtime import _")
    assert "_xp_" in imports[0]
    code, standalone, _ = run(capsys, *argv, "--backend", "array_api", "--standalone")
    assert code == 0
    imports = [line for line in standalone.splitlines() if line.startswith(("import ", "from "))]
    assert imports == ["import array_api_compat as _xpc"]
    name = "hessian_f" if argv[0] == "hessian" else "grad_f"
    fn = load(standalone, name)
    args = (np.ones((3, 2)), np.arange(2.0)) if "--shapes" in argv else (2.0, 3.0)
    python = getattr(sd, argv[0])(argv[1], **({"wrt": "w", "shapes": {
        "X": ("n", "d"), "w": ("d",)}} if "--shapes" in argv else {}))
    for got, want in zip(np.atleast_1d(fn(*args)), np.atleast_1d(python(*args)), strict=True):
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-12)


@pytest.mark.parametrize(
    "argv",
    [
        ["frobnicate", "x"],  # unknown subcommand
        [],  # no subcommand
        ["grad"],  # missing EXPR
        ["grad", "x", "--wrt", "x,,y"],  # empty wrt name
        ["grad", "x", "--mode", "sideways"],
        ["grad", "x", "--backend", "torch"],
        ["cache", "explode"],
    ],
)
def test_usage_errors_exit_2(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert "usage:" in err
    assert "Traceback" not in err


def test_internal_error_is_one_line_with_a_hint(capsys, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("kaboom\nsecond line")

    monkeypatch.setattr(sd, "grad", boom)
    code, out, err = run(capsys, "grad", "x")
    assert code == 1
    assert out == ""
    assert err.splitlines() == [
        "symdiff: internal error: RuntimeError: kaboom "
        "(rerun with SYMDIFF_DEBUG=1 for the traceback)"
    ]


def test_internal_error_traceback_with_debug(capsys, monkeypatch):
    def boom(*args, **kwargs):
        raise RuntimeError("kaboom")

    monkeypatch.setattr(sd, "grad", boom)
    monkeypatch.setenv("SYMDIFF_DEBUG", "1")
    code, _, err = run(capsys, "grad", "x")
    assert code == 1
    assert "Traceback (most recent call last)" in err
    assert err.splitlines()[-1] == "symdiff: internal error: RuntimeError: kaboom"


def test_symdiff_error_traceback_with_debug(capsys, monkeypatch):
    monkeypatch.setenv("SYMDIFF_DEBUG", "1")
    code, _, err = run(capsys, "grad", "frob(x)")
    assert code == 2
    assert "Traceback" in err
    assert err.splitlines()[-1] == "symdiff: error: unknown function 'frob' (at position 0)"


# -- cache -------------------------------------------------------------------------------------
def test_cache_info_prints_every_field(capsys):
    code, out, _ = run(capsys, "cache", "info")
    assert code == 0
    keys = [line.split(":", 1)[0] for line in out.splitlines()]
    assert keys == list(sd.cache_info())
    assert "path" in keys


def test_cache_dir(capsys):
    code, out, _ = run(capsys, "cache", "dir")
    assert code == 0
    path = sd.cache_info()["path"]
    assert out.strip() == ("(memory only)" if path is None else str(path))


def test_cache_clear(capsys):
    run(capsys, "grad", "x*y")
    code, out, _ = run(capsys, "cache", "clear")
    assert code == 0
    assert out.startswith("cache cleared")
    assert sd.cache_info().get("memory_entries", 0) == 0


@pytest.mark.parametrize(
    ("removed", "expected"),
    [
        (None, "cache cleared"),
        (1, "cache cleared: removed 1 entry"),
        (3, "cache cleared: removed 3 entries"),
        ({"entries": 2, "bytes": 10}, "cache cleared: removed entries: 2, bytes: 10"),
    ],
)
def test_clear_reports_what_the_api_says_it_removed(removed, expected):
    assert describe_removed(removed) == expected


# -- real processes ----------------------------------------------------------------------------
def test_process_exit_codes_0_and_2(tmp_path):
    ok = symdiff_process(tmp_path, "grad", "sin(x)*y", "--wrt", "x,y")
    assert ok.returncode == 0, ok.stderr
    grad_f = load(ok.stdout, "grad_f")
    dx, dy = grad_f(0.3, 2.0)
    assert float(dx) == pytest.approx(2.0 * np.cos(0.3))
    assert float(dy) == pytest.approx(np.sin(0.3))

    bad = symdiff_process(tmp_path, "grad", "frob(x)")
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert bad.stderr.splitlines() == ["symdiff: error: unknown function 'frob' (at position 0)"]

    unknown = symdiff_process(tmp_path, "frobnicate")
    assert unknown.returncode == 2
    assert "Traceback" not in unknown.stderr


def test_process_version_and_cache(tmp_path):
    version = symdiff_process(tmp_path, "--version")
    assert (version.returncode, version.stdout.strip()) == (0, f"symdiff {sd.__version__}")
    for action in ("info", "dir", "clear"):
        result = symdiff_process(tmp_path, "cache", action)
        assert result.returncode == 0, result.stderr
        assert "Traceback" not in result.stderr


INTERNAL_ERROR_SCRIPT = """
import sys
import symdiff
from symdiff.cli import main

def boom(*args, **kwargs):
    raise RuntimeError("kaboom")

symdiff.grad = boom
sys.exit(main(["grad", "x"]))
"""


@pytest.mark.parametrize("debug", [False, True])
def test_process_internal_error_exit_1(tmp_path, debug):
    extra = {"SYMDIFF_DEBUG": "1"} if debug else {}
    result = subprocess.run(
        [sys.executable, "-c", INTERNAL_ERROR_SCRIPT],
        cwd=ROOT,
        env=subprocess_env(tmp_path, **extra),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert ("Traceback" in result.stderr) is debug
    if not debug:
        assert len(result.stderr.splitlines()) == 1
        assert "SYMDIFF_DEBUG=1" in result.stderr


def test_process_closed_stdout_pipe_is_quiet(tmp_path):
    expr = " + ".join(f"sin(x{i})*x{i + 1}" for i in range(60))
    process = subprocess.Popen(
        [sys.executable, "-m", "symdiff", "grad", expr],
        cwd=ROOT,
        env=subprocess_env(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    process.stdout.close()  # the reader goes away before symdiff writes anything
    err = process.stderr.read().decode()
    assert process.wait(timeout=120) == 1
    assert "Traceback" not in err
    assert "BrokenPipeError" not in err
    assert "Exception ignored" not in err


HELP_SCRIPT = """
import sys
from symdiff.cli import main
try:
    code = main(["--help"])
except SystemExit as exc:
    code = exc.code
print(code, "sympy" in sys.modules)
"""


def test_help_does_not_import_sympy(tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", HELP_SCRIPT],
        cwd=ROOT,
        env=subprocess_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[-1] == "0 False"


ENTRY_POINT = pathlib.Path(sys.executable).with_name("symdiff")


@pytest.mark.skipif(
    not ENTRY_POINT.exists(),
    reason="the `symdiff` console script is installed by `pip install .` (as .ci/run does)",
)
@pytest.mark.parametrize(
    "argv, code, needle",
    [
        (["grad", "sin(x)*y", "--wrt", "x,y"], 0, "def grad_f(x, y, *, threads=None):"),
        (["value-and-grad", "x**2", "--wrt", "x"], 0, "def value_and_grad_f(x, *, threads=None):"),
        (["hessian", "x**2*y"], 0, "def hessian_f(x, y, *, threads=None):"),
        (["jacobian", "x*y", "x+y", "--wrt", "x,y"], 0, "def jacobian_f(x, y, *, threads=None):"),
        (["compile", "x**2 + y"], 0, "def f(x, y, *, threads=None):"),
        (["derive", "sin(x)/x", "--wrt", "x"], 0, "[quotient]"),
        (["derive", "exp(x**2)", "--wrt", "x", "--latex"], 0, "\\begin{aligned}"),
        (["cache", "dir"], 0, f"v{FORMAT_VERSION}"),
        (["cache", "info"], 0, "entries:"),
        (["cache", "clear"], 0, ""),
        (["grad", "__import__('os')"], 2, ""),
        (["grad", "sin(x", "--wrt", "x"], 2, ""),
        (["derive", "frob(x)"], 2, ""),
    ],
)
def test_installed_entry_point(tmp_path, argv, code, needle):
    result = subprocess.run(
        [str(ENTRY_POINT), *argv],
        cwd=tmp_path,
        env=subprocess_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == code, result.stderr
    if code == 0:
        assert needle in result.stdout
    else:
        assert len(result.stderr.splitlines()) == 1
        assert result.stderr.startswith("symdiff: error: ")
        assert "Traceback" not in result.stderr
