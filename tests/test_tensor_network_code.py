"""The code emitted for convolutional networks does no more work than a hand-written backward
pass: node and statement counts of the generated source (never timings; the timings are
``benchmarks/bench_resnet.py``'s). The batch-norm backward pass reads the batch for two sums
only (``sum(G)`` and ``sum(G * xhat)``, shared with the scale and shift gradients), and a long
gradient frees its temporaries after their last read."""

from __future__ import annotations

import ast

import numpy as np

import symdiff as sd
from symdiff import nn
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
