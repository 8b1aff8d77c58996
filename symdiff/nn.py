"""Neural-network layers that work on NumPy arrays and on arrays traced with ``shapes=``.

Write a network once with these (PyTorch's names, arguments and channels-first layout) and
plain NumPy, and it both runs and differentiates::

    import numpy as np
    import symdiff as sd
    from symdiff.nn import batch_norm, conv2d, max_pool2d

    def loss(x, w, gamma, beta):
        h = np.maximum(batch_norm(conv2d(x, w, padding=1), gamma, beta), 0)
        return np.sum(max_pool2d(h, 2) ** 2)

    loss(x, w, gamma, beta)                    # a number, computed with NumPy
    shapes = {"x": (8, 1, 8, 8), "w": (4, 1, 3, 3), "gamma": (4,), "beta": (4,)}
    sd.grad(loss, shapes=shapes)(x, w, gamma, beta)   # its gradient, emitted as NumPy

On NumPy arrays each function computes with NumPy (``sliding_window_view`` and
``tensordot``); on a traced array it records the tensor operation (the same names work in
expression strings: ``"sum(conv2d(x, w, stride=2) ** 2)"``). Constant padding is ``np.pad``,
which traces too.

* ``conv1d(x, w, stride=1, padding=0, dilation=1)``: ``x`` (N, C, L), ``w`` (O, C, K);
  ``conv2d`` the same with ``x`` (N, C, H, W) and ``w`` (O, C, KH, KW). A cross-correlation
  (no kernel flip), zero padding on both sides.
* ``max_pool1d``/``max_pool2d``/``avg_pool1d``/``avg_pool2d(x, kernel_size, stride=None)``:
  over the last one or two axes; ``stride`` defaults to ``kernel_size``. The gradient of a max
  is split evenly among tied elements.
* ``batch_norm(x, gamma=None, beta=None, eps=1e-5)``: training form, each channel (axis 1)
  normalised by its mean and (biased) variance over the batch and the positions.
* ``layer_norm(x, gamma=None, beta=None, eps=1e-5, axis=-1)``: normalised over ``axis``.

Importing this module is cheap: it needs NumPy only. It is also ``sd.nn`` (loaded on first
use, like ``sd.math``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

__all__ = [
    "avg_pool1d", "avg_pool2d", "batch_norm", "conv1d", "conv2d", "layer_norm", "max_pool1d",
    "max_pool2d",
]


def _traced(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The tensor operation ``name`` recorded by the trace of an argument, or None when no
    argument is traced."""
    values = (*args, *kwargs.values())
    if any(getattr(type(a), "_symdiff_tensor", False) for a in values):
        from .tensor import families
        from .tensor.traced import TracedArray, family_call, tracer_of

        tracer = next(tracer_of(a) for a in values if isinstance(a, TracedArray))
        return family_call(tracer, families.SPELLINGS[name], args, kwargs)
    if any(getattr(type(a), "_symdiff_symbolic", False) for a in values):
        from .errors import UnsupportedError

        raise UnsupportedError(f"{name} works on arrays: trace with shapes=")
    return None


def _ints(value: Any, count: int) -> tuple[int, ...]:
    return tuple(value) if isinstance(value, tuple | list) else (int(value),) * count


def _windows(x: np.ndarray, rank: int, sizes: tuple[int, ...], strides: tuple[int, ...],
             dilations: tuple[int, ...]) -> np.ndarray:
    """The windows view of the last ``rank`` axes, the window axes appended."""
    spans = tuple(d * (k - 1) + 1 for k, d in zip(sizes, dilations, strict=True))
    axes = tuple(range(x.ndim - rank, x.ndim))
    view = sliding_window_view(x, spans, axis=axes)
    steps = (slice(None),) * (x.ndim - rank) + tuple(slice(None, None, s) for s in strides)
    return view[(*steps, *(slice(None, None, d) for d in dilations))]


def _conv(rank: int, x: Any, w: Any, stride: Any, padding: Any, dilation: Any) -> np.ndarray:
    x, w = np.asarray(x), np.asarray(w)
    if x.ndim != rank + 2 or w.ndim != rank + 2 or x.shape[1] != w.shape[1]:
        raise ValueError(f"conv{rank}d: shapes {x.shape} and {w.shape} do not fit (input "
                         f"(N, C, ...), weights (O, C, ...), {rank} spatial axes)")
    pads = _ints(padding, rank)
    if any(pads):
        x = np.pad(x, ((0, 0), (0, 0), *((p, p) for p in pads)))
    view = _windows(x, rank, w.shape[2:], _ints(stride, rank), _ints(dilation, rank))
    contracted = ((1, *range(rank + 2, 2 * rank + 2)), tuple(range(1, rank + 2)))
    return np.moveaxis(np.tensordot(view, w, contracted), -1, 1)


def conv1d(x: Any, w: Any, stride: Any = 1, padding: Any = 0, dilation: Any = 1) -> Any:
    """1-D convolution (cross-correlation) of ``x`` (N, C, L) with ``w`` (O, C, K)."""
    found = _traced("conv1d", (x, w), {"stride": stride, "padding": padding,
                                       "dilation": dilation})
    return found if found is not None else _conv(1, x, w, stride, padding, dilation)


def conv2d(x: Any, w: Any, stride: Any = 1, padding: Any = 0, dilation: Any = 1) -> Any:
    """2-D convolution (cross-correlation) of ``x`` (N, C, H, W) with ``w`` (O, C, KH, KW)."""
    found = _traced("conv2d", (x, w), {"stride": stride, "padding": padding,
                                       "dilation": dilation})
    return found if found is not None else _conv(2, x, w, stride, padding, dilation)


def _pool(name: str, rank: int, reduce: Any, x: Any, kernel_size: Any, stride: Any) -> Any:
    found = _traced(name, (x,), {"kernel_size": kernel_size, "stride": stride})
    if found is not None:
        return found
    sizes = _ints(kernel_size, rank)
    strides = sizes if stride is None else _ints(stride, rank)
    view = _windows(np.asarray(x), rank, sizes, strides, (1,) * rank)
    return reduce(view, axis=tuple(range(-rank, 0)))


def max_pool1d(x: Any, kernel_size: Any, stride: Any = None) -> Any:
    """The largest element of each window of the last axis."""
    return _pool("max_pool1d", 1, np.max, x, kernel_size, stride)


def max_pool2d(x: Any, kernel_size: Any, stride: Any = None) -> Any:
    """The largest element of each window of the last two axes."""
    return _pool("max_pool2d", 2, np.max, x, kernel_size, stride)


def avg_pool1d(x: Any, kernel_size: Any, stride: Any = None) -> Any:
    """The mean of each window of the last axis."""
    return _pool("avg_pool1d", 1, np.mean, x, kernel_size, stride)


def avg_pool2d(x: Any, kernel_size: Any, stride: Any = None) -> Any:
    """The mean of each window of the last two axes."""
    return _pool("avg_pool2d", 2, np.mean, x, kernel_size, stride)


def _affine(y: np.ndarray, gamma: Any, beta: Any) -> np.ndarray:
    if gamma is not None:
        y = y * gamma
    if beta is not None:
        y = y + beta
    return y


def _given(gamma: Any, beta: Any) -> dict[str, Any]:
    return {k: v for k, v in (("gamma", gamma), ("beta", beta)) if v is not None}


def batch_norm(x: Any, gamma: Any = None, beta: Any = None, eps: float = 1e-5) -> Any:
    """Batch normalisation (training form) of ``x`` (N, C, ...) per channel; ``gamma`` and
    ``beta`` of shape (C,)."""
    found = _traced("batch_norm", (x,), {**_given(gamma, beta), "eps": eps})
    if found is not None:
        return found
    x = np.asarray(x)
    axes = (0, *range(2, x.ndim))
    y = (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)
    per_channel = (-1, *(1,) * (x.ndim - 2))
    return _affine(y, None if gamma is None else np.reshape(gamma, per_channel),
                   None if beta is None else np.reshape(beta, per_channel))


def layer_norm(x: Any, gamma: Any = None, beta: Any = None, eps: float = 1e-5,
               axis: Any = -1) -> Any:
    """Layer normalisation of ``x`` over ``axis``; ``gamma`` and ``beta`` broadcast."""
    found = _traced("layer_norm", (x,), {**_given(gamma, beta), "eps": eps, "axis": axis})
    if found is not None:
        return found
    x = np.asarray(x)
    y = (x - x.mean(axis=axis, keepdims=True)) / np.sqrt(x.var(axis=axis, keepdims=True) + eps)
    return _affine(y, gamma, beta)
