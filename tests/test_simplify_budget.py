"""Simplification within budgets: plausible builds finish in seconds, deterministically, with
the same readable forms as SymPy's ``simplify`` for small expressions.

The Hessian below ran for more than ten minutes inside SymPy's ``trigsimp`` (factoring over the
Gaussian rationals) before each phase of simplification got a budget of counts
(:class:`symdiff.simplify.Budget`).
"""

from __future__ import annotations

import logging
import time

import numpy as np
import pytest
import sympy as sp

import symdiff as sd
from symdiff.functions import sigmoid, softplus
from symdiff.parsing import parse
from symdiff.simplify import Budget, expansion_terms, simplify_for_people

from .conftest import X, Y, Z

TRIGSIMP_HESSIAN = "sin(x)*exp(y)/(1 + x**2) + log(1 + z**2)*tanh(x*y)"
PLAUSIBLE = {
    "trigsimp-heavy hessian": ("hessian", TRIGSIMP_HESSIAN, None),
    "gaussian mixture term": (
        "hessian",
        "log(w*exp(-(x - m1)**2/(2*s1**2))/(sqrt(2*pi)*s1)"
        " + (1 - w)*exp(-(x - m2)**2/(2*s2**2))/(sqrt(2*pi)*s2))",
        ["m1", "s1", "w"],
    ),
    "lennard-jones pair": (
        "hessian",
        "4*eps*((sig/sqrt((x1 - x2)**2 + (y1 - y2)**2 + (z1 - z2)**2))**12"
        " - (sig/sqrt((x1 - x2)**2 + (y1 - y2)**2 + (z1 - z2)**2))**6)",
        ["x1", "y1", "z1"],
    ),
    "logistic loss hessian": (
        "hessian", "log(1 + exp(-y*(w1*x1 + w2*x2 + w3*x3 + w4*x4 + b)))", ["w1", "w2", "w3"]
    ),
    "logistic loss grad": (
        "grad", "log(1 + exp(-y*(w1*x1 + w2*x2 + w3*x3 + w4*x4 + b)))",
        ["w1", "w2", "w3", "w4", "b"],
    ),
    "hyperbolic sums": ("hessian", "sigmoid(x**2)*sinh(y - x)*cosh(1 + x**2) + sigmoid(y)", None),
}
#: generous: the budget itself is a count; this only catches a phase that runs away again
SECONDS = 20.0


def _reference(text: str) -> sp.Expr:
    """The input in SymPy's own primitives, for ``sympy.diff``."""
    return parse(text).rewrite(sp.exp).replace(sigmoid, lambda u: 1 / (1 + sp.exp(-u)))


@pytest.mark.parametrize("name", sorted(PLAUSIBLE))
def test_plausible_builds_finish_in_seconds_and_stay_correct(name):
    kind, text, wrt = PLAUSIBLE[name]
    start = time.process_time()  # this process's CPU: other processes' load does not count
    f = getattr(sd, kind)(text, wrt=wrt, cache=False)
    elapsed = time.process_time() - start
    assert elapsed < SECONDS, f"{name}: {elapsed:.1f} s of CPU"

    expr = _reference(text)
    names = sorted(s.name for s in expr.free_symbols)
    symbols = {s.name: s for s in expr.free_symbols}
    wrt = wrt or names
    rng = np.random.default_rng(7)
    point = {n: rng.uniform(0.3, 1.5, 4) for n in names}
    if "x2" in point:  # keep the Lennard-Jones pair apart
        point["x2"] = point["x2"] + 2.0
    got = np.asarray(f(**point))
    for index in np.ndindex(*got.shape[:-1]):
        variables = [symbols[wrt[i]] for i in (index if kind == "hessian" else index[-1:])]
        if kind == "grad" and len(wrt) == 1:
            variables = [symbols[wrt[0]]]
        reference = sp.lambdify([symbols[n] for n in names], sp.diff(expr, *variables), "numpy")
        want = reference(*(point[n] for n in names))
        np.testing.assert_allclose(got[index], want, rtol=1e-9, atol=1e-12, err_msg=str(index))


def test_the_budget_is_deterministic():
    first = sd.hessian(TRIGSIMP_HESSIAN, cache=False).source
    second = sd.hessian(TRIGSIMP_HESSIAN, cache=False).source
    assert first == second


def test_a_skipped_phase_is_logged_with_its_reason(caplog):
    with caplog.at_level(logging.DEBUG, logger="symdiff.simplify"):
        sd.hessian(TRIGSIMP_HESSIAN, cache=False)
    skipped = [r.getMessage() for r in caplog.records if "skipped" in r.getMessage()]
    assert any("trigsimp skipped" in m and "> budget" in m for m in skipped), skipped


@pytest.mark.parametrize(
    "expr",
    [
        sp.sin(X) ** 2 + sp.cos(X) ** 2,
        (X**2 - 1) / (X - 1),
        1 - sp.tanh(X) ** 2,
        2 * sp.sinh(X) * sp.cosh(X),
        sp.exp(X) / (1 + sp.exp(X)) ** 2 * (1 + sp.exp(X)),
        sp.log(X * Y) - sp.log(X),
        X * Y / (X**2 + X * Y),
        sp.cos(X) * sp.exp(Y) / (1 + X**2) - 2 * X * sp.sin(X) * sp.exp(Y) / (1 + X**2) ** 2,
        (sp.sqrt(X) + 1) ** 2 - X,
        sp.gamma(X + 1) / sp.gamma(X),
        sigmoid(X) * (1 - sigmoid(X)) + softplus(Y) * 0 + Z,
    ],
)
def test_small_expressions_simplify_exactly_as_sympy(expr):
    assert simplify_for_people(expr) == sp.simplify(expr)


def test_a_phase_over_budget_keeps_an_equal_expression():
    expr = (sp.sin(X) ** 2 + sp.cos(X) ** 2) * sp.tanh(X * Y)
    tight = simplify_for_people(expr, budget=Budget(trig_ops=1))
    assert tight.has(sp.sin)  # trigsimp skipped: sin^2 + cos^2 stays
    assert simplify_for_people(expr) == sp.tanh(X * Y)
    for point in ((0.3, 0.7), (1.1, -2.0)):
        subs = dict(zip((X, Y), point, strict=True))
        assert abs(float((tight - expr).subs(subs))) < 1e-14


def test_expansion_terms_counts_without_expanding():
    a, b, c, d = sp.symbols("a b c d")
    assert expansion_terms(a + b) == 2
    assert expansion_terms((a + b) * (c + d)) == 4
    assert expansion_terms((a + b) ** 2) == 3
    assert expansion_terms((a + b + c) ** 3 * (a + d)) == 20
    assert expansion_terms((a + b) ** 1000) == 10**6  # capped
    for e in ((a + b) * (c + d), (a + b + c) ** 3, (a + 2) ** 4 * (b - 1)):
        assert len(sp.Add.make_args(sp.expand(e))) <= expansion_terms(e)
