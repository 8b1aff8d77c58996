"""Normalisations: ``batch_norm`` (training form: the batch's statistics) and ``layer_norm``.

No new node op: each is ``(x - mean(x)) / sqrt(var(x) + eps)``, then times ``gamma`` plus
``beta``, built from ``mean``, ``var`` (:mod:`.stats`) and broadcasting, so the backward pass is
the existing rules' (the chain through the mean, the centred variance and the quotient), which
is the textbook three-term form ``(G - mean(G) - xhat * mean(G * xhat)) / sqrt(var + eps)``.

* ``batch_norm(x, gamma=None, beta=None, eps=1e-5)``: ``x`` of shape ``(N, C, *S)``; the mean
  and variance of each channel over the batch and the positions (axes ``0, 2, 3, ..``);
  ``gamma`` and ``beta`` of shape ``(C,)``.
* ``layer_norm(x, gamma=None, beta=None, eps=1e-5, axis=-1)``: the statistics over ``axis``
  (an int or a tuple); ``gamma`` and ``beta`` broadcast against ``x`` (shape ``(D,)`` for the
  last axis of length ``D``).
"""

from __future__ import annotations

from typing import Any

import sympy as sp

from ...errors import ShapeError
from ..ir import Node, arg_symbol
from ..oprow import Param, Spelling
from ..ops import Builder
from ..shapes import format_shape, normalize_axes, same_shape
from .stats import var

_X0, _X1, _X2 = arg_symbol(0), arg_symbol(1), arg_symbol(2)


def normalize(b: Builder, x: Node, axes: tuple[int, ...], eps: Any, name: str,
              where: str = "") -> Node:
    """``(x - mean) / sqrt(var + eps)`` with the statistics over ``axes``."""
    if isinstance(eps, bool) or not isinstance(eps, int | float) or eps < 0:
        raise ShapeError(f"{name}: eps must be a non-negative number, not {eps!r}{where}")
    mean = b.reduce_axes("mean", x, axes, True)
    spread = var(b, x, axes, keepdims=True, where=where)
    # 1/sqrt(var + eps) of the statistics' (small) shape, so that its derivative is taken there
    inverse = b.map(1 / sp.sqrt(_X0 + sp.nsimplify(eps)), [spread], name, where)
    # x - mean as its own node: the variance's adjoint reads the same centred values
    centred = b.map(_X0 - _X1, [x, mean], name, where)
    return b.map(_X0 * _X1, [centred, inverse], name, where)


def _affine(b: Builder, y: Node, gamma: Node | None, beta: Node | None, name: str, where: str
            ) -> Node:
    if gamma is not None:
        y = b.map(_X0 * _X1, [y, gamma], name, where)
    if beta is not None:
        y = b.map(_X0 + _X1, [y, beta], name, where)
    return y


def batch_norm(b: Builder, x: Node, gamma: Node | None = None, beta: Node | None = None,
               eps: Any = 1e-5, *, where: str = "") -> Node:
    """Batch normalisation in training form over every axis but the channels (axis 1)."""
    if x.ndim < 2:
        raise ShapeError(f"batch_norm: needs (batch, channels, ...), got "
                         f"{format_shape(x.shape)}{where}")
    channels = (x.shape[1],)
    scales = []
    for label, p in (("gamma", gamma), ("beta", beta)):
        if p is None:
            scales.append(None)
            continue
        if not same_shape(p.shape, channels):
            raise ShapeError(f"batch_norm: {label} must have shape {format_shape(channels)} "
                             f"(one per channel), not {format_shape(p.shape)}{where}")
        scales.append(b.reshape(p, (*channels, *(1,) * (x.ndim - 2))))
    axes = (0, *range(2, x.ndim))
    y = normalize(b, x, axes, eps, "batch_norm", where)
    return _affine(b, y, scales[0], scales[1], "batch_norm", where)


def layer_norm(b: Builder, x: Node, gamma: Node | None = None, beta: Node | None = None,
               eps: Any = 1e-5, axis: Any = -1, *, where: str = "") -> Node:
    """Layer normalisation over ``axis`` (default the last)."""
    axes = normalize_axes("layer_norm", axis, x.ndim, where)
    y = normalize(b, x, axes, eps, "layer_norm", where)
    return _affine(b, y, gamma, beta, "layer_norm", where)


OPS = ()
_ARRAYS = {"x": Param.ARRAY, "gamma": Param.ARRAY, "beta": Param.ARRAY}
#: The textbook three-term backward pass (xhat the normalised input), over ``{where}``.
_IDENTITY = ("X_bar = gamma / sqrt(var + eps) * (G - mean(G) - xhat * mean(G * xhat)), the "
             "means over {where} (xhat the normalised input); gamma_bar = sum(G * xhat), "
             "beta_bar = sum(G)")
SPELLINGS = (
    Spelling("batch_norm", batch_norm, "batch_norm(x, gamma=None, beta=None, eps=1e-05)",
             _ARRAYS, identity=_IDENTITY.format(where="the batch and the positions of each "
                                                      "channel")),
    Spelling("layer_norm", layer_norm,
             "layer_norm(x, gamma=None, beta=None, eps=1e-05, axis=-1)", _ARRAYS,
             identity=_IDENTITY.format(where="axis")),
)

__all__ = ["OPS", "SPELLINGS", "batch_norm", "layer_norm", "normalize"]
