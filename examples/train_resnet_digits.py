"""Train a small ResNet on 8x8 digits with nothing but NumPy and symdiff's emitted gradient.

Run: ``python examples/train_resnet_digits.py [--epochs N] [--show-source]``. The data are
scikit-learn's bundled digits (1,797 8x8 images, no download) when scikit-learn is installed
(``pip install scikit-learn``); without it, or with ``--synthetic``, a generated set of noisy
8x8 strokes in ten classes stands in, so the example always runs.

The network is an ordinary NumPy function written with :mod:`symdiff.nn`: a stem convolution,
two residual blocks (conv, batch norm, ReLU, conv, batch norm, plus the block's input, ReLU),
global average pooling and a linear classifier, with a softmax cross-entropy loss. symdiff
traces it once (the batch a named dimension), derives the gradient with respect to every
weight and emits it as one NumPy function (``--show-source`` prints it): the convolutions as
im2col matrix products, their input gradients as col2im, the batch norm's backward pass from
the rules of mean and variance. Training is Adam, written in NumPy below. Batch norm runs in its
training form (batch statistics) also for the test set, which is scored in one batch.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import symdiff as sd
from symdiff import nn
from symdiff.math import logsumexp

WIDTH = 16  # channels of the stem and the blocks
CLASSES = 10


def relu(a):
    return np.maximum(a, 0)


def block(h, w1, g1, b1, w2, g2, b2):
    """A residual block: ``relu(h + bn(conv(relu(bn(conv(h))))))``."""
    inner = relu(nn.batch_norm(nn.conv2d(h, w1, padding=1), g1, b1))
    return relu(h + nn.batch_norm(nn.conv2d(inner, w2, padding=1), g2, b2))


def logits(x, stem, gs, bs, w1a, g1a, b1a, w2a, g2a, b2a, w1b, g1b, b1b, w2b, g2b, b2b, W, c):
    """The network: stem, two residual blocks, global average pooling, a linear layer."""
    h = relu(nn.batch_norm(nn.conv2d(x, stem, padding=1), gs, bs))
    h = block(h, w1a, g1a, b1a, w2a, g2a, b2a)
    h = block(h, w1b, g1b, b1b, w2b, g2b, b2b)
    return np.mean(h, axis=(2, 3)) @ W + c


def loss(x, y, stem, gs, bs, w1a, g1a, b1a, w2a, g2a, b2a, w1b, g1b, b1b, w2b, g2b, b2b, W, c):
    """Mean softmax cross-entropy of the network's logits against one-hot labels ``y``."""
    z = logits(x, stem, gs, bs, w1a, g1a, b1a, w2a, g2a, b2a, w1b, g1b, b1b, w2b, g2b, b2b, W, c)
    return np.mean(logsumexp(z, axis=1) - np.sum(y * z, axis=1))


def init(seed: int = 0) -> dict[str, np.ndarray]:
    """He-initialised convolutions, unit batch-norm scales, a small classifier."""
    rng = np.random.default_rng(seed)

    def conv(o: int, i: int) -> np.ndarray:
        return rng.normal(scale=np.sqrt(2 / (9 * i)), size=(o, i, 3, 3))

    params = {"stem": conv(WIDTH, 1), "gs": np.ones(WIDTH), "bs": np.zeros(WIDTH)}
    for b in "ab":
        for layer in "12":
            params[f"w{layer}{b}"] = conv(WIDTH, WIDTH)
            params[f"g{layer}{b}"] = np.ones(WIDTH) if layer == "1" else np.zeros(WIDTH) + 0.5
            params[f"b{layer}{b}"] = np.zeros(WIDTH)
    params["W"] = rng.normal(scale=0.1, size=(WIDTH, CLASSES))
    params["c"] = np.zeros(CLASSES)
    return params


def shapes(params: dict[str, np.ndarray]) -> dict[str, tuple]:
    return {"x": ("n", 1, 8, 8), "y": ("n", CLASSES),
            **{k: v.shape for k, v in params.items()}}


# -- data --------------------------------------------------------------------------------------
def load(synthetic: bool, seed: int = 0) -> tuple[np.ndarray, ...]:
    """Images (N, 1, 8, 8) in [0, 1], one-hot labels, a fixed 80/20 split."""
    images = labels = None
    if not synthetic:
        try:
            from sklearn.datasets import load_digits
        except ImportError:
            print("scikit-learn is not installed: using the synthetic digits instead "
                  "(pip install scikit-learn for the real ones)")
        else:
            data = load_digits()
            images, labels = data.images / 16.0, data.target
    if images is None:
        images, labels = synthetic_digits(1800, seed)
    order = np.random.default_rng(seed).permutation(len(images))
    x = images[order][:, None].astype(np.float64)
    y = np.eye(CLASSES)[labels[order]]
    cut = int(0.8 * len(x))
    return x[:cut], y[:cut], x[cut:], y[cut:]


def synthetic_digits(count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Ten stroke patterns (bars, diagonals, boxes, crosses) on 8x8, shifted by up to a pixel,
    with noise: a stand-in for the digits that needs no download."""
    base = np.zeros((CLASSES, 10, 10))
    base[0, 2:8, 4:6] = 1                          # vertical bar
    base[1, 4:6, 2:8] = 1                          # horizontal bar
    base[2][np.arange(2, 8), np.arange(2, 8)] = 1  # diagonal
    base[3][np.arange(2, 8), np.arange(7, 1, -1)] = 1  # anti-diagonal
    base[4, 2:8, 2] = base[4, 2:8, 7] = base[4, 2, 2:8] = base[4, 7, 2:8] = 1  # box
    base[5, 2:8, 4] = base[5, 4, 2:8] = 1          # cross
    base[6, 2, 2:8] = base[6, 2:8, 2] = 1          # corner
    base[7, 7, 2:8] = base[7, 2:8, 7] = 1          # opposite corner
    base[8, 2:8, 2] = base[8, 2:8, 7] = 1          # two bars
    base[9, 3:7, 3:7] = 1                          # block
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, CLASSES, count)
    shifts = rng.integers(0, 3, (count, 2))
    images = np.stack([base[k, i:i + 8, j:j + 8] for k, (i, j) in zip(labels, shifts,
                                                                        strict=True)])
    images = np.clip(images * rng.uniform(0.6, 1.0, (count, 1, 1))
                     + rng.normal(scale=0.25, size=images.shape), 0, 1)
    return images, labels


# -- training ------------------------------------------------------------------------------------
def adam(params, grads, state, rate, step, beta1=0.9, beta2=0.999, eps=1e-8):
    """One Adam step on every parameter (in place)."""
    for name, g in grads.items():
        m, v = state.setdefault(name, (np.zeros_like(g), np.zeros_like(g)))
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        state[name] = (m, v)
        params[name] -= rate * (m / (1 - beta1 ** step)) / (np.sqrt(v / (1 - beta2 ** step)) + eps)


def accuracy(params: dict[str, np.ndarray], x: np.ndarray, y: np.ndarray) -> float:
    z = logits(x, *(params[k] for k in PARAMS))
    return float(np.mean(np.argmax(z, axis=1) == np.argmax(y, axis=1)))


PARAMS = list(init())  # the order of logits' parameters after x


def progress(epoch: int, done: int, total: int, value: float, start: float) -> None:
    bar = "#" * (30 * done // total)
    print(f"\repoch {epoch:2d} [{bar:<30}] {done:4d}/{total} loss {value:.4f} "
          f"{time.perf_counter() - start:5.1f}s", end="", flush=True)


def main(argv: list[str] | None = None) -> float:
    """Train and return the final test accuracy."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--rate", type=float, default=0.01)
    parser.add_argument("--synthetic", action="store_true", help="generated digits")
    parser.add_argument("--show-source", action="store_true", help="print the gradient module")
    options = parser.parse_args(argv)
    x_train, y_train, x_test, y_test = load(options.synthetic)
    params = init()
    start = time.perf_counter()
    value_and_grad = sd.value_and_grad(loss, wrt=PARAMS, shapes=shapes(params))
    print(f"traced, derived and emitted the gradient in {time.perf_counter() - start:.1f}s")
    if options.show_source:
        print(value_and_grad.source)
    state: dict = {}
    step = 0
    rng = np.random.default_rng(1)
    start = time.perf_counter()
    for epoch in range(options.epochs):
        order = rng.permutation(len(x_train))
        batches = range(0, len(order) - options.batch + 1, options.batch)
        total = 0.0
        for i, first in enumerate(batches):
            rows = order[first:first + options.batch]
            value, grads = value_and_grad(x_train[rows], y_train[rows], **params)
            step += 1
            adam(params, dict(zip(PARAMS, grads, strict=True)), state, options.rate, step)
            total += float(value)
            progress(epoch, i + 1, len(batches), total / (i + 1), start)
        print(f"  test accuracy {accuracy(params, x_test, y_test):.3f}")
    elapsed = time.perf_counter() - start
    final = accuracy(params, x_test, y_test)
    print(f"trained {options.epochs} epochs in {elapsed:.1f}s; test accuracy {final:.3f}")
    return final


if __name__ == "__main__":
    main()
