"""Train softmax (multinomial logistic) regression and a 2-layer MLP on scikit-learn's bundled
digits with gradients emitted by symdiff, and report test accuracy.

Needs: scikit-learn, for its bundled 8x8 digits (1,797 images, no download):
``pip install scikit-learn`` (it is in the ``dev`` extra); without it the example stops with one
line saying so.

Run: ``python examples/train_digits.py [--show-source] [--epochs N]``.

The losses are written once, as strings over arrays with named dimensions; symdiff derives the
gradients and emits plain NumPy (``--show-source`` prints the MLP's). Training is mini-batch
gradient descent with momentum, all in NumPy.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

import numpy as np

import symdiff as sd

#: Softmax cross-entropy of a linear model, with L2 regularisation (``lam``).
SOFTMAX_REGRESSION = (
    "mean(logsumexp(X @ W + b, axis=1) - sum(Y * (X @ W + b), axis=1)) + lam * sum(W**2)"
)
#: The same on a tanh hidden layer.
MLP = (
    "mean(logsumexp(tanh(X @ W1 + b1) @ W2 + b2, axis=1)"
    " - sum(Y * (tanh(X @ W1 + b1) @ W2 + b2), axis=1))"
    " + lam * (sum(W1**2) + sum(W2**2))"
)
SHAPES = {
    "X": ("n", "d"), "Y": ("n", "k"), "lam": (),
    "W": ("d", "k"), "b": ("k",),
    "W1": ("d", "h"), "b1": ("h",), "W2": ("h", "k"), "b2": ("k",),
}
PREDICT_LINEAR = "X @ W + b"
PREDICT_MLP = "tanh(X @ W1 + b1) @ W2 + b2"


def load_digits(seed: int = 0) -> tuple[np.ndarray, ...]:
    """Digits scaled to [0, 1], one-hot labels, a fixed 80/20 train/test split."""
    try:
        from sklearn.datasets import load_digits as sklearn_digits
    except ImportError:
        sys.exit("train_digits.py needs scikit-learn for its bundled digits: "
                 "pip install scikit-learn")
    data = sklearn_digits()
    X = data.data / 16.0
    Y = np.eye(10)[data.target]
    order = np.random.default_rng(seed).permutation(len(X))
    cut = int(0.8 * len(X))
    train, test = order[:cut], order[cut:]
    return X[train], Y[train], X[test], Y[test]


def train(
    loss: str, params: dict[str, np.ndarray], X: np.ndarray, Y: np.ndarray, *,
    epochs: int, rate: float, lam: float, batch: int = 64, seed: int = 0,
) -> tuple[dict[str, np.ndarray], sd.CompiledFunction]:
    """Mini-batch gradient descent with momentum 0.9 on ``loss`` (gradients by symdiff)."""
    names = sorted(params)
    value_and_grad = sd.value_and_grad(loss, wrt=names, shapes=SHAPES)
    velocity = {k: np.zeros_like(v) for k, v in params.items()}
    rng = np.random.default_rng(seed)
    for epoch in range(epochs):
        order = rng.permutation(len(X))
        for start in range(0, len(X), batch):
            rows = order[start : start + batch]
            _, grads = value_and_grad(X=X[rows], Y=Y[rows], lam=lam, **params)
            for name, g in zip(names, grads, strict=True):
                velocity[name] = 0.9 * velocity[name] - rate * g
                params[name] = params[name] + velocity[name]
        if epoch % max(1, epochs // 5) == 0 or epoch == epochs - 1:
            full, _ = value_and_grad(X=X, Y=Y, lam=lam, **params)
            print(f"  epoch {epoch:3d}  training loss {float(full):.4f}")
    return params, value_and_grad


def accuracy(predict: Callable[..., np.ndarray], params: dict, X: np.ndarray,
             Y: np.ndarray) -> float:
    """Fraction of rows whose largest score is the true class."""
    scores = predict(X=X, **{k: params[k] for k in predict.args if k != "X"})
    return float(np.mean(scores.argmax(axis=1) == Y.argmax(axis=1)))


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--show-source", action="store_true",
                        help="print the generated gradient module of the MLP")
    options = parser.parse_args(argv)
    X, Y, X_test, Y_test = load_digits()
    rng = np.random.default_rng(1)
    d, k, h = X.shape[1], Y.shape[1], options.hidden
    results = {}

    print("softmax regression")
    linear, _ = train(SOFTMAX_REGRESSION, {"W": np.zeros((d, k)), "b": np.zeros(k)}, X, Y,
                      epochs=options.epochs, rate=0.1, lam=1e-4)
    predict = sd.compile(PREDICT_LINEAR, shapes=SHAPES)
    results["softmax regression"] = accuracy(predict, linear, X_test, Y_test)

    print(f"2-layer MLP (tanh, {h} hidden units)")
    init = {"W1": rng.normal(size=(d, h)) / np.sqrt(d), "b1": np.zeros(h),
            "W2": rng.normal(size=(h, k)) / np.sqrt(h), "b2": np.zeros(k)}
    mlp, value_and_grad = train(MLP, init, X, Y, epochs=options.epochs, rate=0.1, lam=1e-4)
    predict = sd.compile(PREDICT_MLP, shapes=SHAPES)
    results["MLP"] = accuracy(predict, mlp, X_test, Y_test)

    if options.show_source:
        print(value_and_grad.source)
    for name, acc in results.items():
        print(f"test accuracy, {name}: {acc:.2%} ({len(X_test)} images)")
    return results


if __name__ == "__main__":
    main()
