"""symdiff's run of SymPy's ``cse`` (:mod:`symdiff.simplify.sympy_cse`: the nodes it builds made
without re-evaluation, walks with explicit stacks) gives exactly ``sympy.cse(exprs,
order="canonical")``: the same temporaries, in the same order, with the same values, and the
same reduced outputs, on seeded random lists of expressions that share subexpressions (with
negated sums, reciprocal powers, products with common factors, piecewise functions)."""

from __future__ import annotations

import random

import pytest
import sympy as sp

from symdiff.simplify.sympy_cse import cse

from .test_quick_forms import _random

X, Y = sp.symbols("x y", real=True)


def _expressions(rng: random.Random) -> list[sp.Expr]:
    shared = _random(rng, 2)
    exprs = [_random(rng, rng.randrange(1, 5)) for _ in range(rng.randrange(1, 4))]
    extras = [lambda e: e + shared * exprs[0], lambda e: e / (1 + shared**2),
              lambda e: -e - shared, lambda e: sp.Piecewise((e, X < 1), (shared, True)),
              lambda e: e * (X + Y) ** -3 + (X + Y) ** 2]
    return [rng.choice(extras)(e) for e in exprs]


@pytest.mark.parametrize("seed", range(3))
def test_cse_is_sympys(seed: int) -> None:
    rng = random.Random(seed)
    checked = 0
    for _ in range(150):
        try:
            exprs = _expressions(rng)
        except (ArithmeticError, ValueError, TypeError):
            continue
        want = sp.cse(exprs, symbols=sp.numbered_symbols("_t", real=True), order="canonical")
        got = cse(exprs, sp.numbered_symbols("_t", real=True))
        assert sp.srepr(got) == sp.srepr(want), exprs
        checked += bool(want[0])
    assert checked > 50  # (most lists share something)
