"""Shared test helpers: independent references built from SymPy's own primitives."""

from __future__ import annotations

import os
import pathlib

import pytest
import sympy as sp
from hypothesis import HealthCheck, settings
from sympy.codegen.cfunctions import expm1, log1p
from sympy.codegen.numpy_nodes import logaddexp

from symdiff.functions import relu, sigmoid, softplus, tie_share

settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=False
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True, scope="session")
def _private_cache_dir(tmp_path_factory):
    """Every test session caches into its own directory, never the user's (and writes the
    copies of generated sources that tracebacks read into another)."""
    from symdiff.cache import reset_store

    previous = {name: os.environ.get(name) for name in ("SYMDIFF_CACHE_DIR", "SYMDIFF_SOURCE_DIR")}
    os.environ["SYMDIFF_CACHE_DIR"] = str(tmp_path_factory.mktemp("symdiff-cache"))
    os.environ["SYMDIFF_SOURCE_DIR"] = str(tmp_path_factory.mktemp("symdiff-sources"))
    reset_store()
    yield
    for name, value in previous.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    reset_store()

X, Y, Z = sp.symbols("x y z", real=True)


def to_reference(expr: sp.Expr) -> sp.Expr:
    """``expr`` with symdiff's own functions rewritten in SymPy primitives, for ``sympy.diff``.

    Repeated until none is left: a replacement can expose another (``relu(relu(u))``)."""
    rewrites = [
        (relu, lambda u: sp.Max(u, 0)),
        (sigmoid, lambda u: 1 / (1 + sp.exp(-u))),
        (softplus, lambda u: sp.log(1 + sp.exp(u))),
        (tie_share, _unique_max_indicator),
        (log1p, lambda u: sp.log(1 + u)),
        (expm1, lambda u: sp.exp(u) - 1),
        (logaddexp, lambda a, b: sp.log(sp.exp(a) + sp.exp(b))),
    ]
    for _ in range(20):
        if not any(expr.has(func) for func, _ in rewrites):
            return expr
        for func, rewrite in rewrites:
            expr = expr.replace(func, rewrite)
    raise AssertionError(f"could not rewrite {expr}")


def _unique_max_indicator(a, *args):
    """tie_share away from ties: 1 where ``a`` is the maximum, else 0."""
    # a against the others: Eq(a, Max(*args)) lets SymPy move terms across (Eq(y*(x - 1),
    # Max(...) - 2)), and the two sides then round differently where it should hold exactly.
    if a not in args:
        return sp.Piecewise((1, sp.Eq(a, sp.Max(*args))), (0, True))
    others = list(args)
    others.remove(a)
    return sp.Piecewise((1, a - sp.Max(*others) > 0), (0, True)) if others else sp.S.One


def reference_value(expr: sp.Expr, point: dict[sp.Symbol, float], digits: int = 30) -> float:
    """High-precision value of a SymPy expression at a point (derivative terms like DiracDelta
    vanish away from their support)."""
    expr = expr.replace(sp.DiracDelta, lambda *args: sp.S.Zero)
    value = sp.N(expr.subs(point), digits)
    return float(value)


def reset_memory() -> None:
    """Forget every function held in memory (the store, both layers' memos, the warm index),
    keeping what is on disk: the next request behaves as in a fresh process."""
    from symdiff import cache, pipeline, warm

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
