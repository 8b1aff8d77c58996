"""The training example (examples/train_digits.py); optional: it needs scikit-learn's digits."""

from __future__ import annotations

import importlib.util

import pytest

from .conftest import ROOT

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("sklearn") is None,
    reason="optional: the digits example needs scikit-learn (pip install scikit-learn)",
)


def _example():
    spec = importlib.util.spec_from_file_location("train_digits", ROOT / "examples" /
                                                  "train_digits.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_mlp_trained_with_symdiff_gradients_reaches_95_percent_on_digits(capsys):
    results = _example().main(["--epochs", "30", "--show-source"])
    assert results["MLP"] >= 0.95
    assert results["softmax regression"] >= 0.9
    out = capsys.readouterr().out
    assert "X.T @ " in out and "_W1_bar = " in out and "test accuracy, MLP" in out
