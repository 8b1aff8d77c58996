"""Random compositions of slices, elements, stacks, concatenations, reversals and cumulative
sums of one traced vector: the gradient against central differences of the function itself.

Slices of slices make scatters of scatters in the backward pass; the emitter once left the
inner ones unbuilt (``_w_bar[1:] = _z0 + _z1``: a ``NameError``, for ``np.cross(w[:3], w[1:])``).
"""

from __future__ import annotations

import random

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symdiff as sd

N = 6
SLICES = [(0, 3), (1, 6), (2, 5)]


def _term(rng: random.Random, depth: int) -> tuple[str, int]:
    """A random expression in ``x`` of shape (N,) and its length (0: a scalar)."""
    if depth == 0 or rng.random() < 0.25:
        c = rng.random()
        if c < 0.5:  # few slices, so that one slice is used several times (a shared node)
            a, b = rng.choice(SLICES)
            return (f"x[{a}:{b}]", b - a) if rng.random() < 0.5 else (
                f"x[{a}:{b}][{rng.randint(0, b - a - 1)}]", 0)
        return (f"x[{rng.randint(0, N - 1)}]", 0) if c < 0.7 else ("x", N)
    op = rng.choice(["mul", "add", "sin", "element", "stack", "concat", "sum", "reverse",
                     "cumsum"])
    t, k = _term(rng, depth - 1)
    unary = {
        "sin": (f"np.sin({t})", k), "sum": (f"np.sum({t})", 0),
        "reverse": (f"({t})[::-1]", k), "cumsum": (f"np.cumsum({t})", k),
    }
    if op in unary and (k or op in ("sin", "sum")):
        return unary[op]
    if op == "element" and k:
        return f"({t})[{rng.randint(0, k - 1)}]", 0
    u, m = _term(rng, depth - 1)
    if op in ("mul", "add"):
        sign = "*" if op == "mul" else "+"
        return (f"({t} {sign} {u})", max(k, m)) if k == m or not k or not m else (
            f"(np.sum({t}) * {u})", m)
    if op == "stack" and k == m == 0:
        return f"np.stack([{t}, {u}])", 2
    if op == "concat" and k and m:
        return f"np.concatenate([{t}, {u}])", k + m
    return t, k


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1))
def test_gradients_of_slice_compositions_match_central_differences(seed):
    rng = random.Random(seed)
    text, k = _term(rng, 4)
    body = f"np.sum(({text}) ** 2)" if k else f"({text}) ** 2"
    namespace: dict = {"np": np}
    exec(f"def f(x):\n    return {body}\n", namespace)  # a test's own random function
    f = namespace["f"]
    x = np.random.default_rng(seed).normal(size=N)
    got = sd.grad(f, wrt="x", shapes={"x": (N,)}, cache=False)(x)
    h = 1e-6
    expected = np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(N)])
    assert np.allclose(got, expected, rtol=1e-5, atol=1e-6), body
