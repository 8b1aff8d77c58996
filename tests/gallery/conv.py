"""Gallery entries: convolutional layers written with :mod:`symdiff.nn` and plain NumPy
(convolutions, pooling, padding, normalisation, a residual block)."""

from __future__ import annotations

import numpy as np

from symdiff import nn

from .entry import Entry


def conv_relu_loss(x, w):
    return np.sum(np.maximum(nn.conv2d(x, w, padding=1), 0) ** 2)


def strided_dilated_conv(x, w):
    return np.sum(np.tanh(nn.conv2d(x, w, stride=2, dilation=2)))


def conv1d_sequence(x, w):
    return np.sum(nn.conv1d(x, w, stride=2, padding=1) ** 2)


def pooled_features(x):
    return np.sum(nn.max_pool2d(x, 2) ** 2) + np.sum(nn.avg_pool2d(x, 3, 1) ** 2)


def padded_border(x):
    return np.sum(np.exp(-np.pad(x, ((0, 0), (1, 2)), constant_values=0.5) ** 2))


def normalised_channels(x, gamma, beta):
    return np.sum(nn.batch_norm(x, gamma, beta) ** 3)


def normalised_rows(x, gamma):
    return np.sum(np.sin(nn.layer_norm(x, gamma)))


def residual_block(x, w1, w2):
    h = np.maximum(nn.batch_norm(nn.conv2d(x, w1, padding=1)), 0)
    return np.sum((x + nn.conv2d(h, w2, padding=1)) ** 2)


GALLERY = [
    Entry("conv2d relu", conv_relu_loss, {"x": (2, 2, 5, 5), "w": (3, 2, 3, 3)}),
    Entry("conv2d stride dilation", strided_dilated_conv, {"x": (1, 2, 7, 7), "w": (2, 2, 2, 2)}),
    Entry("conv1d", conv1d_sequence, {"x": (2, 3, 8), "w": (2, 3, 3)}),
    Entry("max and avg pool", pooled_features, {"x": (2, 2, 4, 4)}),
    Entry("np.pad", padded_border, {"x": (3, 4)}),
    Entry("batch_norm", normalised_channels, {"x": (4, 2, 3, 3), "gamma": (2,), "beta": (2,)}),
    Entry("layer_norm", normalised_rows, {"x": (3, 5), "gamma": (5,)}),
    Entry("residual block", residual_block,
          {"x": (2, 2, 4, 4), "w1": (2, 2, 3, 3), "w2": (2, 2, 3, 3)}),
]
