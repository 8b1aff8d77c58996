"""No cliffs in the build's work as an expression grows deeper or longer, counted (never timed):
the assumption facts SymPy derives while symdiff builds, and the size of what it builds.

A nested quotient ``x/(1 + (x/(1 + ...)**2)**2)`` once cost exponential time in its depth: every
power of a sum SymPy's constructors built again asked whether a term was infinite, a query that
cleared every denominator nested below it (40 s at depth 26). symdiff builds those nodes itself
(:mod:`symdiff.simplify.quick`), so at depth 20 and 40 the grad, derive and Hessian builds ask
SymPy almost nothing; a sum of trigonometric terms asks a fixed number per term. The times are
in ``benchmarks/bench_growth.py``.
"""

from __future__ import annotations

import importlib

import mpmath
import numpy as np
import pytest
from sympy.core.cache import clear_cache

import symdiff as sd
from symdiff.simplify.dag import node_count

_ASSUMPTIONS = importlib.import_module("sympy.core.assumptions")


def nested(depth: int) -> str:
    text = "x"
    for _ in range(depth):
        text = f"x/(1 + ({text})**2)"
    return text


def trig_sum(terms: int) -> str:
    return " + ".join(f"sin({k}*x + y/{k})/{k}" for k in range(1, terms + 1))


def _queries(monkeypatch: pytest.MonkeyPatch, build) -> int:
    """How many assumption facts SymPy derives (``_ask``) while ``build()`` runs, from an empty
    cache (nodes made fresh)."""
    count = [0]
    ask = _ASSUMPTIONS._ask

    def counted(fact, obj):
        count[0] += 1
        return ask(fact, obj)

    clear_cache()
    with monkeypatch.context() as patch:
        patch.setattr(_ASSUMPTIONS, "_ask", counted)
        build()
    return count[0]


BUILDS = {
    "grad": lambda text: sd.grad(text, cache=False),
    "derive": lambda text: sd.derive(text, wrt="x"),
    "hessian": lambda text: sd.hessian(text, cache=False),
}


@pytest.mark.parametrize("builder", BUILDS)
def test_nested_quotients_ask_sympy_almost_nothing(monkeypatch, builder):
    build = BUILDS[builder]
    at_20 = _queries(monkeypatch, lambda: build(nested(20)))
    at_40 = _queries(monkeypatch, lambda: build(nested(40)))
    assert at_40 <= 2 * at_20 + 50, (at_20, at_40)
    assert at_40 <= 300, at_40  # (the exponential walk asked tens of thousands at depth 20)


def test_trig_sums_ask_sympy_a_fixed_amount_per_term(monkeypatch):
    at_40 = _queries(monkeypatch, lambda: sd.grad(trig_sum(40), cache=False))
    at_80 = _queries(monkeypatch, lambda: sd.grad(trig_sum(80), cache=False))
    assert at_80 <= 2.3 * at_40, (at_40, at_80)


def test_nested_gradient_is_right_and_linear_in_size():
    """At depth 40 the gradient matches a 40-digit numeric derivative, and its code grows
    with the expression's DAG (each level a few lines), not with its tree."""
    depth = 40
    g = sd.grad(nested(depth), cache=False)

    def f(x):
        y = x
        for _ in range(depth):
            y = x / (1 + y**2)
        return y

    for x0 in (0.3, 1.7, -2.2):
        with mpmath.workdps(40):
            want = mpmath.diff(f, mpmath.mpf(x0))
        np.testing.assert_allclose(float(g(np.float64(x0))[0]), float(want), rtol=1e-12)
    body = g.source.split("\ndef ")[1]
    lines = [line for line in body.splitlines() if " = " in line]
    assert len(lines) <= 3 * node_count([sd.parse(nested(depth))]), len(lines)
