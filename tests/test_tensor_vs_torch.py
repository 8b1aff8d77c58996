"""Optional: tensor gradients against PyTorch's autograd (run when ``torch`` is installed).

The seed ``004`` checks its framework on ``sum(sigmoid(a) @ b)`` against PyTorch; these tests do
the same for that example, logistic regression (gradient and Hessian), a 2-layer MLP with a
softmax cross-entropy loss, and attention ``softmax(Q @ K.T) @ V``. PyTorch is not a dependency
of symdiff: ``pip install torch`` to run them.

Tie convention: symdiff splits the gradient of ``max``/``min`` evenly among tied elements, like
``torch.amax`` and ``jnp.max``; ``torch.max(x, dim)`` instead gives it all to one index.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import symdiff as sd

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None,
    reason="optional comparison with PyTorch: torch is not installed (pip install torch)",
)


@pytest.fixture(scope="module")
def torch():
    import torch

    torch.set_default_dtype(torch.float64)
    return torch


def torch_grads(torch, fn, values, wrt):
    tensors = {k: torch.tensor(v, requires_grad=k in wrt) for k, v in values.items()}
    fn(**tensors).backward()
    return [tensors[k].grad.numpy() for k in wrt]


def compare(torch, expr, shapes, values, wrt, fn):
    ours = sd.grad(expr, wrt=wrt, shapes=shapes)(**{k: values[k] for k in shapes})
    for mine, theirs in zip(ours, torch_grads(torch, fn, values, wrt), strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def test_seed_004_sum_sigmoid_matmul(torch):
    rng = np.random.default_rng(0)
    values = {"a": rng.normal(size=(3, 4)), "b": rng.normal(size=(4, 2))}
    compare(torch, "sum(sigmoid(a) @ b)", {"a": (3, 4), "b": (4, 2)}, values, ["a", "b"],
            lambda a, b: torch.sum(1 / (1 + torch.exp(-a)) @ b))


def test_logistic_regression_gradient_and_hessian(torch):
    rng = np.random.default_rng(1)
    X, y, w = rng.normal(size=(50, 6)), rng.choice([-1.0, 1.0], 50), rng.normal(size=6)
    expr, shapes = "sum(log(1 + exp(-y * (X @ w))))", {"X": ("n", "d"), "y": ("n",),
                                                       "w": ("d",)}
    compare(torch, expr, shapes, {"X": X, "y": y, "w": w}, ["w", "X"],
            lambda X, y, w: torch.sum(torch.nn.functional.softplus(-y * (X @ w))))
    Xt, yt = torch.tensor(X), torch.tensor(y)
    theirs = torch.autograd.functional.hessian(
        lambda v: torch.sum(torch.nn.functional.softplus(-yt * (Xt @ v))), torch.tensor(w)
    )
    ours = sd.hessian(expr, wrt="w", shapes=shapes)(X=X, y=y, w=w)
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-10, atol=1e-12)


def test_mlp_softmax_cross_entropy(torch):
    rng = np.random.default_rng(2)
    values = {"X": rng.normal(size=(16, 5)), "Y": np.eye(3)[rng.integers(0, 3, 16)],
              "W1": rng.normal(size=(5, 8)), "b1": rng.normal(size=8),
              "W2": rng.normal(size=(8, 3)), "b2": rng.normal(size=3)}
    shapes = {"X": ("n", "d"), "Y": ("n", "k"), "W1": ("d", "h"), "b1": ("h",),
              "W2": ("h", "k"), "b2": ("k",)}
    expr = "-mean(sum(Y * log(softmax(tanh(X @ W1 + b1) @ W2 + b2, axis=1)), axis=1))"

    def loss(X, Y, W1, b1, W2, b2):
        logits = torch.tanh(X @ W1 + b1) @ W2 + b2
        return torch.nn.functional.cross_entropy(logits, Y.argmax(dim=1))

    compare(torch, expr, shapes, values, ["W1", "b1", "W2", "b2"], loss)


def test_attention(torch):
    rng = np.random.default_rng(3)
    values = {"Q": rng.normal(size=(4, 3)), "K": rng.normal(size=(5, 3)),
              "V": rng.normal(size=(5, 2)), "C": rng.normal(size=(4, 2))}
    shapes = {"Q": ("n", "e"), "K": ("m", "e"), "V": ("m", "v"), "C": ("n", "v")}
    compare(torch, "sum(C * (softmax(Q @ K.T, axis=1) @ V))", shapes, values, ["Q", "K", "V"],
            lambda Q, K, V, C: torch.sum(C * (torch.softmax(Q @ K.T, dim=1) @ V)))


def test_max_ties_split_evenly_like_torch_amax_not_like_torch_max_along_a_dim(torch):
    X = np.array([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    ours = sd.grad("sum(max(X, axis=1))", wrt="X", shapes={"X": (2, 3)})(X)
    (amax,) = torch_grads(torch, lambda X: torch.amax(X, dim=1).sum(), {"X": X}, ["X"])
    np.testing.assert_allclose(ours, amax)
    (one,) = torch_grads(torch, lambda X: torch.max(X, dim=1).values.sum(), {"X": X}, ["X"])
    assert one.sum(axis=1).tolist() == [1.0, 1.0] and not np.allclose(ours, one)


def test_prod_with_zeros_like_torch(torch):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(4, 5))
    X[1, 2] = 0.0  # one zero in a row: it gets the product of the rest
    X[2, [0, 3]] = 0.0  # two zeros: the row's gradient is 0
    values = {"X": X, "c": rng.normal(size=4)}
    compare(torch, "sum(prod(X, axis=1) * c)", {"X": ("n", "d"), "c": ("n",)}, values, ["X"],
            lambda X, c: torch.sum(torch.prod(X, dim=1) * c))
    theirs = torch.autograd.functional.hessian(lambda v: torch.prod(v), torch.tensor(X[1]))
    ours = sd.hessian("prod(x)", wrt="x", shapes={"x": ("n",)})(X[1])
    np.testing.assert_allclose(ours, theirs.numpy(), rtol=1e-10, atol=1e-12)
