"""Optional: the convolutional layers of :mod:`symdiff.nn` against PyTorch's autograd (run when
``torch`` is installed; PyTorch is not a dependency of symdiff: ``pip install torch``).

Each case is a scalar loss written twice, with :mod:`symdiff.nn` (traced by symdiff) and with
``torch.nn.functional``; the gradients must agree to 1e-9, on several shapes, strides, paddings
and dilations, and with ties in max pooling (PyTorch sends a tied window's gradient to one
element, symdiff splits it evenly, so there the totals per window are compared).
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import symdiff as sd
from symdiff import nn

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None,
    reason="optional comparison with PyTorch: torch is not installed (pip install torch)",
)

RNG = np.random.default_rng(7)


@pytest.fixture(scope="module")
def F():
    import torch

    torch.set_default_dtype(torch.float64)
    return torch.nn.functional


def _against_torch(ours, theirs, args):
    import torch

    names = [f"a{i}" for i in range(len(args))]
    namespace = {"fn": ours}
    exec(f"def f({', '.join(names)}):\n    return fn({', '.join(names)})", namespace)
    got = sd.grad(namespace["f"], shapes={n: a.shape for n, a in zip(names, args, strict=True)})(
        *args)
    tensors = [torch.tensor(a, requires_grad=True) for a in args]
    want = torch.autograd.grad(theirs(*tensors), tensors)
    for mine, other in zip(got, want, strict=True):
        np.testing.assert_allclose(mine, other.numpy(), rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("xs, ws, s, p, d", [
    ((2, 3, 6, 6), (4, 3, 3, 3), 1, 1, 1),
    ((2, 2, 7, 8), (3, 2, 3, 2), 2, 1, 1),
    ((1, 2, 9, 7), (2, 2, 2, 3), 2, 2, 2),
])
def test_conv2d(F, xs, ws, s, p, d):
    _against_torch(lambda x, w: np.sum(np.tanh(nn.conv2d(x, w, s, p, d)) ** 2),
                   lambda x, w: (F.conv2d(x, w, stride=s, padding=p, dilation=d).tanh() ** 2)
                   .sum(), [RNG.normal(size=xs), RNG.normal(size=ws)])


def test_conv1d(F):
    _against_torch(lambda x, w: np.sum(nn.conv1d(x, w, 2, 1, 2) ** 2),
                   lambda x, w: (F.conv1d(x, w, stride=2, padding=1, dilation=2) ** 2).sum(),
                   [RNG.normal(size=(2, 3, 12)), RNG.normal(size=(4, 3, 3))])


@pytest.mark.parametrize("k, s", [(2, 2), (3, 2), (2, 1)])
def test_pools(F, k, s):
    _against_torch(lambda x: np.sum(nn.max_pool2d(x, k, s) ** 2) + np.sum(
                       np.sin(nn.avg_pool2d(x, k, s))),
                   lambda x: (F.max_pool2d(x, k, s) ** 2).sum() + F.avg_pool2d(x, k, s).sin()
                   .sum(), [RNG.normal(size=(2, 3, 7, 6))])


def test_max_pool_ties_total_per_window(F):
    import torch

    x = np.zeros((1, 2, 4, 4))
    x[0, 0, :2, :2] = 1.0
    (got,) = sd.grad(lambda x: np.sum(nn.max_pool2d(x, 2) * 3.0), shapes={"x": x.shape})(x)
    t = torch.tensor(x, requires_grad=True)
    (want,) = torch.autograd.grad((F.max_pool2d(t, 2) * 3.0).sum(), [t])
    total = lambda a: a.reshape(1, 2, 2, 2, 2, 2).sum(axis=(3, 5))  # noqa: E731
    np.testing.assert_allclose(total(got), total(want.numpy()))
    assert np.count_nonzero(got) > np.count_nonzero(want.numpy())  # split, not one winner


def test_batch_norm_and_layer_norm(F):
    c = RNG.normal(size=(4, 3, 2, 3))
    _against_torch(
        lambda x, g, b: np.sum(nn.batch_norm(x, g, b) * c),
        lambda x, g, b: (F.batch_norm(x, None, None, g, b, training=True, eps=1e-5)
                         * x.new_tensor(c)).sum(),
        [RNG.normal(size=(4, 3, 2, 3)), RNG.normal(size=3), RNG.normal(size=3)])
    _against_torch(
        lambda x, g, b: np.sum(nn.layer_norm(x, g, b) ** 3),
        lambda x, g, b: (F.layer_norm(x, (5,), g, b, eps=1e-5) ** 3).sum(),
        [RNG.normal(size=(3, 4, 5)), RNG.normal(size=5), RNG.normal(size=5)])
