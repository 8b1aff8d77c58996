"""The ResNet example (examples/train_resnet_digits.py), kept short for CI: its emitted gradient
against central differences of the same NumPy network, a few epochs of training on scikit-learn's
digits (a dev dependency) at a small width, and the script's entry point on the synthetic
digits it falls back to."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import symdiff as sd

from .conftest import ROOT


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location(
        "train_resnet_digits", ROOT / "examples" / "train_resnet_digits.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_gradient_of_the_network_matches_central_differences(example):
    params = example.init(seed=3, width=3)
    images, labels = example.synthetic_digits(6, seed=0)
    x, y = images[:, None], np.eye(example.CLASSES)[labels]
    vg = sd.value_and_grad(example.loss, wrt=example.PARAMS, shapes=example.shapes(params))
    value, grads = vg(x, y, **params)
    assert np.isclose(value, example.loss(x, y, **params), rtol=1e-12)
    named = dict(zip(example.PARAMS, grads, strict=True))
    rng = np.random.default_rng(0)
    # A weight of the stem, of each block's convolutions, batch-norm scales and shifts (the
    # second block's come through the residual path), and the classifier.
    for name in ("stem", "w1a", "w2a", "w1b", "w2b", "gs", "g1a", "b2a", "g2b", "W", "c"):
        for _ in range(2):
            index = tuple(int(rng.integers(0, d)) for d in params[name].shape)
            h = 1e-6

            def at(step, name=name, index=index):
                moved = {k: v.copy() for k, v in params.items()}
                moved[name][index] += step
                return example.loss(x, y, **moved)

            numeric = (at(h) - at(-h)) / (2 * h)
            assert np.isclose(named[name][index], numeric, rtol=1e-5, atol=1e-8), (name, index)


def test_a_few_epochs_on_the_real_digits_learn_them(example, capsys):
    data = example.load()
    assert "scikit-learn's 8x8 digits, 1797 images" in capsys.readouterr().out
    assert len(data[0]) + len(data[2]) == 1797
    run = example.train(data, epochs=4, width=8, show=False)
    assert len(run.accuracies) == len(run.losses) == 4
    assert run.losses[-1] < 0.5 * run.losses[0]
    # Chance is 10%; the full run (12 channels, 8 epochs) reaches about 99%.
    assert run.accuracy >= 0.88, run.accuracies


def test_the_script_falls_back_to_synthetic_digits_and_says_so(example, capsys):
    accuracy = example.main(["--synthetic", "--epochs", "2", "--width", "4", "--show-source"])
    out = capsys.readouterr().out
    assert "data: synthetic 8x8 strokes in ten classes" in out
    assert "sliding_window_view" in out and "_w1a_bar = " in out  # the emitted module
    assert "test accuracy" in out and "gradient built in" in out
    assert 0.3 < accuracy <= 1.0
