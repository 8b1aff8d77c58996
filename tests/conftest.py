"""Shared test helpers: independent references built from SymPy's own primitives."""

from __future__ import annotations

import functools
import importlib.util
import os
import pathlib

import pytest
import sympy as sp
from hypothesis import HealthCheck, settings

from symdiff import registry
from symdiff.parsing.written import canonical

settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=False
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory):
    """Every test session caches into its own directory, never the user's (and writes the
    copies of generated sources that tracebacks read into another); progress reports of long
    builds are off (the tests of them turn them on)."""
    from symdiff.cache import reset_store

    previous = {name: os.environ.get(name)
                for name in ("SYMDIFF_CACHE_DIR", "SYMDIFF_SOURCE_DIR", "SYMDIFF_PROGRESS")}
    os.environ["SYMDIFF_CACHE_DIR"] = str(tmp_path_factory.mktemp("symdiff-cache"))
    os.environ["SYMDIFF_SOURCE_DIR"] = str(tmp_path_factory.mktemp("symdiff-sources"))
    os.environ["SYMDIFF_PROGRESS"] = "0"  # builds slowed by a loaded machine stay silent
    reset_store()
    yield
    for name, value in previous.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    reset_store()

X, Y, Z = sp.symbols("x y z", real=True)

#: The builders the ``backend`` fixture makes build on the backend it names.
BUILDERS = ("grad", "value_and_grad", "jacobian", "hessian", "hvp", "compile")
#: Whether Numba is installed (the ``numba`` extra, in ``dev``).
NUMBA = importlib.util.find_spec("numba") is not None


@pytest.fixture(params=["numpy", pytest.param("numba", marks=pytest.mark.skipif(
    not NUMBA, reason="Numba is not installed (the numba extra)"))])
def backend(request, monkeypatch):
    """The backend a test's builders build on: a test that takes this fixture runs once with
    ``sd.grad`` and the others as they are (NumPy) and once with ``backend="numba"``."""
    if request.param != "numpy":
        import symdiff as sd

        for name in BUILDERS:
            monkeypatch.setattr(sd, name, functools.partial(getattr(sd, name),
                                                            backend=request.param))
    return request.param


def to_reference(expr: sp.Expr) -> sp.Expr:
    """``expr`` with symdiff's own functions rewritten in SymPy primitives, for ``sympy.diff``:
    each registry row's ``reference`` (for the classes whose ``fdiff`` SymPy lacks or gets
    wrong: ours, and the codegen classes).

    Repeated until none is left: a replacement can expose another (``relu(relu(u))``). A
    tree as the student wrote it (:mod:`symdiff.parsing.written`) is first the SymPy expression
    it stands for."""
    expr = canonical(expr)
    rewrites = [(registry.head_class(row), row.reference) for row in registry.ROWS if row.reference]
    for _ in range(20):
        if not any(expr.has(func) for func, _ in rewrites):
            return expr
        for func, rewrite in rewrites:
            expr = expr.replace(func, rewrite)
    raise AssertionError(f"could not rewrite {expr}")


def mpmath_met_complex(error: Exception) -> bool:
    """Whether ``error`` (raised by a lambdified reference evaluated with mpmath) is mpmath
    refusing a complex value where only real ones go (``Min``, ``Max``, ``atan2``): SymPy's
    form of a reference can be complex at a point (``1j*tan(1j*y)``), with no real value to
    compare there."""
    return isinstance(error, TypeError | AttributeError) and (
        "mpc" in str(error) or "complex" in str(error))


def sympy_cannot_print(error: Exception) -> bool:
    """Whether ``error`` (raised by ``sympy.lambdify``) is SymPy failing to print its own form
    of an expression: printing rewrites ``tanh(c)`` through ``tan(I*c)``, and ``Min`` or
    ``Max`` of such constants is "not comparable"."""
    return isinstance(error, ValueError) and "not comparable" in str(error)


def drop_step_derivatives(expr: sp.Expr) -> sp.Expr:
    """``expr`` without the derivatives sympy.diff leaves unevaluated of piecewise-constant
    functions (floor, ceiling, sign of a non-real-looking argument): 0 away from their jumps,
    as the rows' conventions say."""
    steps = (sp.floor, sp.ceiling, sp.sign)
    found = expr.atoms(sp.Derivative, sp.Subs)
    return expr.xreplace({d: sp.S.Zero for d in found if d.has(*steps)})


def reference_value(expr: sp.Expr, point: dict[sp.Symbol, float], digits: int = 30) -> float:
    """High-precision value of a SymPy expression at a point (derivative terms like DiracDelta
    vanish away from their support)."""
    expr = expr.replace(sp.DiracDelta, lambda *args: sp.S.Zero)
    expr = drop_step_derivatives(expr)
    value = sp.N(expr.subs(point), digits)
    return float(value)


def reset_memory() -> None:
    """Forget every function held in memory (the store, both layers' memos, the warm index),
    keeping what is on disk: the next request behaves as in a fresh process."""
    from symdiff import cache, pipeline
    from symdiff import request_index as warm

    cache.reset_store()
    pipeline.clear_memo()
    warm.forget()


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A fresh cache directory for this test (and a fresh in-process state)."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("SYMDIFF_CACHE_DIR", str(directory))
    reset_memory()
    yield directory
    reset_memory()
