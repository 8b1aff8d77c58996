"""Recurrent models over 30 steps, traced with ``shapes=`` (``tests/recurrent_models.py``):
an LSTM and the forward algorithm of a hidden Markov model build (a loop's state is one node
per step, every step's expressions the same) and their gradients match central differences.
Their build times are a benchmark (``benchmarks/bench_recurrent_models.py``)."""

from __future__ import annotations

import numpy as np
import pytest

import symdiff as sd

from .recurrent_models import central_gradient, hmm, lstm


@pytest.mark.parametrize("model", [lstm, hmm], ids=["lstm", "hmm"])
def test_a_30_step_model_matches_central_differences(model):
    f, shapes, params = model(30)
    g = sd.value_and_grad(f, wrt=list(shapes), shapes=shapes, cache=False)
    value, grads = g(**params)
    assert float(value) == pytest.approx(float(f(**params)), rel=1e-12)
    for name, got in zip(shapes, grads, strict=True):
        expected = central_gradient(f, params, name)
        scale = max(np.max(np.abs(expected)), 1e-3)
        assert np.max(np.abs(got - expected)) <= 1e-6 * scale, name


def test_the_steps_of_a_loop_are_temporaries_of_one_size():
    """The LSTM's generated code grows linearly with the steps: every step adds about the same
    number of lines (a loop unrolled into repeated blocks, not one expression)."""
    lines = []
    for steps in (4, 8, 16):
        f, shapes, _ = lstm(steps)
        source = sd.grad(f, wrt=list(shapes), shapes=shapes, cache=False).source
        body = source[source.index("def grad_"):]  # (the helpers live in symdiff.runtime)
        lines.append(body.count("\n"))
    per_step = [(b - a) / d for a, b, d in zip(lines, lines[1:], (4, 8), strict=False)]
    assert per_step[1] <= 1.25 * per_step[0], lines
