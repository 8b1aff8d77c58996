"""The code emitted for convolutional networks does no more work than a hand-written backward
pass: node and statement counts of the generated source (never timings; the timings are
``benchmarks/bench_resnet.py``'s). The batch-norm backward pass reads the batch for two sums
only (``sum(G)`` and ``sum(G * xhat)``, shared with the scale and shift gradients), and a long
gradient frees its temporaries after their last read."""

from __future__ import annotations

import ast
import re

import numpy as np
import pytest
import sympy as sp

import symdiff as sd
from symdiff import nn
from symdiff.tensor.hoist import hoist
from tests.numeric import central

RNG = np.random.default_rng(180)


def _body(source: str) -> list[ast.stmt]:
    tree = ast.parse(source)
    return next(n for n in tree.body if isinstance(n, ast.FunctionDef)).body


# -- temporaries freed ---------------------------------------------------------------------------
def _deep(x, w):
    for _ in range(4):
        x = x + np.maximum(nn.batch_norm(nn.conv2d(x, w, padding=1)), 0)
    return np.sum(x ** 2)


def test_a_long_gradient_frees_each_temporary_after_its_last_read():
    g = sd.grad(_deep, wrt="w", shapes={"x": (2, 2, 4, 4), "w": (2, 2, 3, 3)})
    body = _body(g.source)
    freed = [(k, t.id) for k, s in enumerate(body) if isinstance(s, ast.Delete)
             for t in s.targets]
    assert len(freed) > 20
    for k, name in freed:  # never read (nor deleted) again, never before it is assigned
        later = {n.id for s in body[k + 1:] for n in ast.walk(s) if isinstance(n, ast.Name)}
        assert name not in later, name
        assert any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store)
                   for s in body[:k] for n in ast.walk(s)), name
    x, w = RNG.normal(size=(2, 2, 4, 4)), RNG.normal(size=(2, 2, 3, 3)) * 0.3
    np.testing.assert_allclose(g(x, w), central(lambda v: _deep(x, v), w), rtol=1e-6,
                               atol=1e-6)


def test_a_short_gradient_is_left_as_it_is():
    g = sd.grad("sum(log(1 + exp(-y * (X @ w))))", wrt="w",
                shapes={"X": ("n", "d"), "w": ("d",), "y": ("n",)})
    assert "del " not in g.source


# -- the batch-norm backward pass: two sums over the batch ---------------------------------------
def _reductions(source: str) -> list[str]:
    """The axes of every ``_np.add.reduce`` / ``_np.var`` call of the function body."""
    body = source.split("\n# Helpers")[0]
    return re.findall(r"_np\.(?:add\.reduce|var)\([^()]*(?:\([^()]*\))?[^()]*\)", body)


def test_batch_norm_backward_sums_the_batch_twice():
    """Forward: the mean and the variance; backward: ``sum(G)`` and ``sum(G * (x - mean))``,
    each once, which the scale and shift gradients share: no per-gradient sums, no sums over
    the positions then the batch."""
    shapes = {"x": ("n", 3, 4, 4), "gm": (3,), "bt": (3,), "c": ("n", 3, 4, 4)}
    g = sd.grad("sum(batch_norm(x, gm, bt) * c)", wrt=["x", "gm", "bt"], shapes=shapes,
                cache=False)
    found = _reductions(g.source)
    assert len(found) == 4, found
    assert all("axis=(0, 2, 3), keepdims=True" in call for call in found), found
    assert sum(call.startswith("_np.var(") for call in found) == 1
    x, c = RNG.normal(size=(3, 3, 4, 4)), RNG.normal(size=(3, 3, 4, 4))
    gm, bt = RNG.normal(size=3), RNG.normal(size=3)

    def f(x, gm, bt):
        return np.sum(nn.batch_norm(x, gm, bt) * c)

    args = [x, gm, bt]
    for got, i in zip(g(x=x, gm=gm, bt=bt, c=c), range(3), strict=True):
        want = central(lambda v, i=i: f(*args[:i], v, *args[i + 1:]), args[i])
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_a_network_unit_reads_the_batch_for_two_sums_per_norm():
    def unit(x, w, gm, bt, w2, gm2, bt2):
        h = np.maximum(nn.batch_norm(nn.conv2d(x, w, padding=1), gm, bt), 0)
        return np.sum(np.maximum(h + nn.batch_norm(nn.conv2d(h, w2, padding=1), gm2, bt2), 0))

    shapes = {"x": ("n", 2, 4, 4), "w": (2, 2, 3, 3), "gm": (2,), "bt": (2,),
              "w2": (2, 2, 3, 3), "gm2": (2,), "bt2": (2,)}
    g = sd.grad(unit, wrt=["w", "gm", "bt", "w2", "gm2", "bt2"], shapes=shapes)
    found = _reductions(g.source)
    batch = [call for call in found if "axis=(0, 2, 3)" in call]
    assert len(batch) == 2 * 4, found  # per norm: mean, var; sum(G), sum(G * centred)
    assert not any("axis=(2, 3)" in call or "axis=0" in call for call in found), found


# -- sums of products with factors constant along the summed axes ---------------------------------
PRODUCTS = [  # text, shapes, reference
    ("sum(a * b * c, axis=(0, 2))", {"a": (4, 1, 5), "b": (3, 1), "c": (4, 3, 5)},
     lambda a, b, c: np.sum(a * b * c, axis=(0, 2))),
    ("sum(a * b, axis=1, keepdims=True)", {"a": (4, 3), "b": (4, 1)},
     lambda a, b: np.sum(a * b, axis=1, keepdims=True)),
    ("mean(a * b ** 2 / c, axis=0)", {"a": (3, 2), "b": (3, 2), "c": (2,)},
     lambda a, b, c: np.mean(a * b ** 2 / c, axis=0)),
    ("sum(sum(a * b, axis=(1, 2), keepdims=True), axis=0)", {"a": (2, 3, 4), "b": (3, 1)},
     lambda a, b: np.sum(np.sum(a * b, axis=(1, 2), keepdims=True), axis=0)),
    ("sum(exp(a) * b * (a * c))", {"a": (2, 3), "b": (3,), "c": ()},
     lambda a, b, c: np.sum(np.exp(a) * b * (a * c))),
]


@pytest.mark.parametrize("text, shapes, reference", PRODUCTS, ids=[p[0] for p in PRODUCTS])
def test_factors_constant_along_the_sum_are_taken_out(text, shapes, reference):
    values = {k: RNG.uniform(0.5, 1.5, s) for k, s in shapes.items()}
    f = sd.compile(text, shapes=shapes, cache=False)
    np.testing.assert_allclose(f(**values), reference(**values), rtol=1e-12)
    wrt = sorted(shapes)
    grads = sd.grad(f"sum(sin({text}))", wrt=wrt, shapes=shapes, cache=False)(**values)
    for name, got in zip(wrt, grads, strict=True):
        def partial(v, name=name):
            return np.sum(np.sin(reference(**{**values, name: v})))
        np.testing.assert_allclose(got, central(partial, values[name]), rtol=1e-6, atol=1e-8)


# -- small factors first -------------------------------------------------------------------------
def test_small_factors_are_computed_on_their_own_shape():
    """``hoist`` takes the per-channel parts of a product (or sum) out, so that the batch-sized
    arrays are read once; one small factor stays (it is one operation anyway), and so does an
    operand of unknown shape."""
    X, Y, a, b, c, g, u = sp.symbols("X Y a b c g u")
    n = sp.Symbol("_n_dim")
    shapes = {"X": (sp.Symbol("n"), 3, 4), "Y": (sp.Symbol("n"), 3, 4), "a": (1, 3, 1),
              "b": (3, 1), "c": (3, 1), "g": (3, 1)}
    cases = [
        (2 * a * b * X / n, 1),                  # h*X
        (g * (a * X + b * Y + c), 2),           # (g*a)*X + (g*b)*Y + g*c
        ((X / a - Y) / n, 0),                   # one small factor, -Y unscaled: as it is
        (a * b * u * X, 0),                     # u's shape is unknown
    ]
    names = (sp.Symbol(f"_h{k}") for k in range(100))
    shared, forms = hoist([], [e for e, _ in cases], shapes, names)
    defs = dict(shared)
    for (expr, count), form in zip(cases, forms, strict=True):
        whole = form
        for symbol, value in reversed(shared):
            whole = whole.xreplace({symbol: value})
        assert sp.simplify(whole - expr) == 0, (expr, form)
        used = [s for s in form.free_symbols if s in defs]
        assert len(used) == count, (expr, form, shared)
        if count:  # each term reads one large array, once
            assert all(sum(term.has(big) for big in (X, Y)) <= 1
                       for term in sp.Add.make_args(form)), form
