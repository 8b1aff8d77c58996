"""``--shapes`` on the command line: tensor functions and tensor derivations from the shell."""

from __future__ import annotations

import pathlib
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

import symdiff as sd
from symdiff.cli import main, parse_shapes_option

from .test_cli import ROOT, load, run, subprocess_env

LOGISTIC = "sum(log(1 + exp(-y * (X @ w))))"
SHAPES_TEXT = "X=n,d;y=n;w=d"
SHAPES = {"X": ("n", "d"), "y": ("n",), "w": ("d",)}


@pytest.fixture(autouse=True)
def _isolated_cache(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SYMDIFF_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SYMDIFF_DEBUG", raising=False)


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.normal(size=(6, 3)), rng.choice([-1.0, 1.0], size=6), rng.normal(size=3)


# -- the syntax ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, expected",
    [
        ("X=n,d;y=n;w=d", {"X": ("n", "d"), "y": ("n",), "w": ("d",)}),
        ("w=3", {"w": (3,)}),
        ("s=", {"s": ()}),
        ("X=n,3; s= ;w=3;", {"X": ("n", 3), "s": (), "w": (3,)}),
        (" X = ( n , d ) ; w = (d,) ", {"X": ("n", "d"), "w": ("d",)}),
        ("A=0,1", {"A": (0, 1)}),
    ],
)
def test_the_syntax(text, expected):
    assert parse_shapes_option(text) == expected


@pytest.mark.parametrize(
    "text, needle",
    [
        ("", "no NAME=DIMS entry"),
        ("X:n,d", "'X:n,d' is not NAME=DIMS"),
        ("X=n,d;;y=n", "empty entry"),
        ("1x=3", "'1x'"),
        ("=3", "'' in '=3' is not a variable name"),
        ("x=n-1", "dimension 'n-1' of 'x'"),
        ("x=n,,d", "dimension '' of 'x'"),
        ("x=-3", "dimension '-3' of 'x'"),
        ("x=2.5", "dimension '2.5' of 'x'"),
        ("x=3;x=4", "'x' is declared twice"),
    ],
)
def test_bad_syntax_names_the_bad_part(text, needle):
    with pytest.raises(sd.SymdiffError) as info:
        parse_shapes_option(text)
    assert str(info.value).startswith("--shapes: ")
    assert needle in str(info.value)


# -- in-process runs ----------------------------------------------------------------------------
def test_grad_with_shapes_prints_a_tensor_module_with_the_right_numbers(capsys):
    code, out, err = run(capsys, "grad", LOGISTIC, "--wrt", "w", "--shapes", SHAPES_TEXT)
    assert (code, err) == (0, "")
    assert "def grad_f(X, w, y):" in out
    assert "Arguments (in this order, or by name): X (n, d), w (d,), y (n,)." in out
    X, y, w = _data()
    got = load(out, "grad_f")(X, w, y)  # --wrt w: one array, as wrt="w" in Python
    python = sd.grad(LOGISTIC, wrt="w", shapes={"X": ("n", "d"), "y": ("n",), "w": ("d",)})
    np.testing.assert_array_equal(got, python(X, w, y))
    expected = X.T @ (-y / (1 + np.exp(y * (X @ w))))
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize(
    "argv, name, shape",
    [
        (["grad", LOGISTIC, "--wrt", "w"], "grad_f", (3,)),
        (["value-and-grad", LOGISTIC, "--wrt", "w"], "value_and_grad_f", (3,)),
        (["hessian", LOGISTIC, "--wrt", "w"], "hessian_f", (3, 3)),
        (["hvp", LOGISTIC, "--wrt", "w"], "hvp_f", (3,)),
        (["jacobian", "X @ w", "--wrt", "w"], "jacobian_f", (1, 6, 3)),
        (["compile", LOGISTIC], "f", ()),
    ],
)
def test_every_builder_command_takes_shapes(capsys, argv, name, shape):
    code, out, err = run(capsys, *argv, "--shapes", SHAPES_TEXT)
    assert (code, err) == (0, "")
    fn = load(out, name)
    X, y, w = _data()
    result = fn(
        **{
            k: v
            for k, v in {"X": X, "y": y, "w": w, "_v": np.ones(3)}.items()
            if k in fn.__code__.co_varnames[: fn.__code__.co_argcount]
        }
    )
    while isinstance(result, tuple):  # (value, (grad,)), (grad,), ((hess,),)
        result = result[-1]
    assert np.shape(result) == shape


def test_int_dimensions_and_a_scalar(capsys):
    code, out, _ = run(
        capsys, "grad", "sum(s * (X @ w))", "--wrt", "s,w", "--shapes", "X=n,3;w=3;s="
    )
    assert code == 0
    X, _, w = _data()
    ds, dw = load(out, "grad_f")(X, 2.0, w)
    assert np.shape(ds) == () and np.shape(dw) == (3,)
    np.testing.assert_allclose(ds, np.sum(X @ w))
    np.testing.assert_allclose(dw, 2.0 * X.sum(axis=0))


def spy_on(monkeypatch, builder: str) -> dict[str, Any]:
    """Record the options the command line passes to ``sd.<builder>``."""
    seen: dict[str, Any] = {}
    real = getattr(sd, builder)

    def spy(expr, wrt=None, **options):
        seen.update(options)
        return real(expr, wrt, **options)

    monkeypatch.setattr(sd, builder, spy)
    return seen


def test_shapes_reach_the_builder(capsys, monkeypatch):
    seen = spy_on(monkeypatch, "hessian")
    code, _, _ = run(capsys, "hessian", LOGISTIC, "--wrt", "w", "--shapes", "X=n,3;y=n;w=3")
    assert code == 0
    assert seen["shapes"] == {"X": ("n", 3), "y": ("n",), "w": (3,)}


def test_without_shapes_the_builder_gets_no_shapes(capsys, monkeypatch):
    seen = spy_on(monkeypatch, "grad")
    assert run(capsys, "grad", "x*y")[0] == 0
    assert "shapes" not in seen


def test_derive_with_shapes_prints_the_tensor_steps(capsys):
    code, out, _ = run(capsys, "derive", LOGISTIC, "--wrt", "w", "--shapes", SHAPES_TEXT)
    assert code == 0
    assert out == str(sd.derive(LOGISTIC, wrt="w", shapes=SHAPES)) + "\n"
    assert "[matmul] z1 = X @ w: w_bar = X.T @ z1_bar" in out
    code, latex, _ = run(
        capsys, "derive", LOGISTIC, "--wrt", "w", "--shapes", SHAPES_TEXT, "--latex"
    )
    assert code == 0 and "\\begin{aligned}" in latex and "\\overline{w}" in latex


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["grad", LOGISTIC, "--wrt", "w", "--shapes", "X=n,d;y:n;w=d"], "'y:n'"),
        (["derive", LOGISTIC, "--wrt", "w", "--shapes", "X=n,d;y=n;w=d-1"], "'d-1'"),
        (["compile", "sum(x)", "--shapes", "x=3;;"], "empty entry"),
        (["hessian", LOGISTIC, "--wrt", "w", "--shapes", "X=n,d;y=n;w=k"], "matmul"),  # ShapeError
        (["grad", "sum(x * y)", "--wrt", "x", "--shapes", "x=n"], "'y'"),  # y has no shape
        (["grad", "sum(x)", "--shapes", "x=if"], "keyword"),
    ],
)
def test_bad_shapes_exit_2_with_one_line(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert out == ""
    assert err.startswith("symdiff: error: ")
    assert len(err.splitlines()) == 1
    assert needle in err


@pytest.mark.parametrize(
    "command", ["grad", "value-and-grad", "hessian", "jacobian", "compile", "derive"]
)
def test_help_documents_shapes(capsys, command):
    code, out, _ = run(capsys, command, "--help")
    assert code == 0
    assert "--shapes" in out and "NAME=DIMS" in out


def test_main_returns_the_code():
    assert main(["grad", "sum(x)", "--shapes", "x=(n"]) == 2


# -- a real process --------------------------------------------------------------------------------
def test_process_grad_with_shapes_and_a_bad_shapes(tmp_path):
    def symdiff(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "symdiff", *argv],
            cwd=ROOT,
            env=subprocess_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=120,
        )

    ok = symdiff("grad", LOGISTIC, "--wrt", "w", "--shapes", SHAPES_TEXT)
    assert ok.returncode == 0, ok.stderr
    assert "def grad_f(X, w, y):" in ok.stdout and "_w_bar = X.T @ " in ok.stdout
    bad = symdiff("grad", LOGISTIC, "--wrt", "w", "--shapes", "X=n,d;y=n;w=d;z")
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert bad.stderr.splitlines() == [
        "symdiff: error: --shapes: 'z' is not NAME=DIMS; write e.g. X=n,d (a scalar: s=)"
    ]
