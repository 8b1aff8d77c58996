"""No blow-up: differentiation, simplification and CSE stay within a small multiple
of the input's size for the expressions that once expanded or hung (a power of a sum, a
Lennard-Jones pair in 3-D coordinates, a logistic log-likelihood written out over 30 points, a
product of 30 factors with every variable differentiated, 20-deep nested quotients).

Sizes are counted as distinct subexpressions (the DAG a CSE pass would share), so a test fails
when a phase expands a power or distributes a product, whatever the machine's speed. The time
each takes is in ``benchmarks/bench_blowups.py``, not here.
"""

from __future__ import annotations

import random

import mpmath
import numpy as np
import pytest
import sympy as sp

import symdiff as sd
from symdiff.simplify.dag import distinct_nodes


def dag_size(expr: sp.Basic) -> int:
    """Distinct subexpressions of ``expr``."""
    return len(distinct_nodes([expr]))


def _lennard_jones() -> str:
    r = "sqrt((x1 - x2)**2 + (y1 - y2)**2 + (z1 - z2)**2)"
    return f"4*eps*((sigma/{r})**12 - (sigma/{r})**6)"


def _logistic(points: int = 30) -> str:
    rng = random.Random(1)
    terms = []
    for _ in range(points):
        x, y = round(rng.uniform(-2, 2), 2), rng.choice((0, 1))
        p = f"1/(1 + exp(-(w*{x} + b)))"
        terms.append(f"{y}*log({p}) + {1 - y}*log(1 - {p})")
    return " + ".join(terms)


def _nested(depth: int = 20) -> str:
    text = "x"
    for i in range(depth):
        text = f"(({text})**2/(1 + x**{i % 3 + 1}))"
    return text


def _nested_reciprocal(depth: int = 20) -> str:
    text = "x"
    for _ in range(depth):
        text = f"x/(1 + ({text})**2)"
    return text


#: (name, expression, the variable derive() walks, bound on result size / input size)
CASES = [
    ("power of a sum", "(a + b + c + d + u + v)**60", "a", 3),
    ("Lennard-Jones pair", _lennard_jones(), "x1", 3),
    ("logistic over 30 points", _logistic(), "w", 3),
    ("product of 30 factors", "*".join(f"(1 + x{i})" for i in range(30)), "x7", 3),
    ("nested quotient of powers", _nested(), "x", 3),
    ("nested x/(1 + u**2)", _nested_reciprocal(), "x", 3),
]


@pytest.mark.parametrize("name, text, wrt, factor", CASES, ids=[c[0] for c in CASES])
def test_derivation_stays_small(name, text, wrt, factor):
    expr = sd.parse(text)
    d = sd.derive(text, wrt=wrt)
    size = dag_size(expr)
    assert dag_size(d.result) <= factor * size + 20, (name, dag_size(d.result), size)
    # the raw walk is linear in the DAG: each node contributes a bounded number of new nodes
    assert dag_size(d.raw) <= 15 * size, (name, dag_size(d.raw), size)


def test_power_of_a_sum_is_not_expanded():
    d = sd.derive("(a + b + c + d + u + v)**60", wrt="a")
    s = sp.Add(*sp.symbols("a b c d u v", real=True))
    assert d.result == 60 * s**59


@pytest.mark.parametrize("name, text, wrt, factor", CASES, ids=[c[0] for c in CASES])
def test_gradient_code_is_linear_in_the_input(name, text, wrt, factor):
    """Every variable differentiated: the generated function's lines grow with the DAG (each
    partial shares the subexpressions), not with the expanded tree."""
    expr = sd.parse(text)
    g = sd.grad(text, cache=False)
    body = g.source.split("\ndef ")[1]  # the public function, before the helpers
    lines = [line for line in body.splitlines() if " = " in line]
    assert len(lines) <= 2 * dag_size(expr) + 4 * len(expr.free_symbols) + 20, (name, len(lines))
    point = {str(s): 0.3 + 0.1 * i for i, s in enumerate(sorted(expr.free_symbols, key=str))}
    with np.errstate(over="ignore", under="ignore"):  # the 20-deep nest is 2**20-th powers
        got = g(**point)
    # the reference: a 30-digit numeric derivative of the input (SymPy's diff of the nested
    # quotients is a tree exponential in their depth)
    names = [sp.Symbol(s, real=True) for s in g.wrt]
    f = sp.lambdify(names, expr, modules="mpmath")
    args = [mpmath.mpf(point[s]) for s in g.wrt]
    for i, value in enumerate(got):
        with mpmath.workdps(30):
            want = mpmath.diff(f, args, tuple(int(j == i) for j in range(len(args))))
        np.testing.assert_allclose(float(value), float(want), rtol=1e-9)
