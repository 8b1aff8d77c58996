"""Convolutions: ``conv1d`` and ``conv2d`` (one node op ``conv``, channels first) and ``pad``.

* ``conv(x, w, stride, dilation)`` with ``x`` of shape ``(N, C, *S)`` and ``w`` of shape
  ``(O, C, *K)``: ``y[n, o, m] = sum_{c, i} x[n, c, m * stride + i * dilation] * w[o, c, i]``
  (a cross-correlation, as in PyTorch; padding is a ``pad`` node before it). The node's third
  operand is the im2col matrix ``cols`` of ``x`` (the windows view of ``sliding_window_view``
  laid out as ``(C * prod(K), N * prod(outs))``, copied once), so the forward pass is one
  matrix product ``W_flat @ cols`` and no Python loop runs over pixels.
* Its input adjoint is a transposed convolution: the **full correlation of the output adjoint
  with the flipped kernel** (``G`` spread by the stride, bordered by ``dilation * (K - 1)``
  zeros). It is computed the im2col way: ``cols_bar = W_flat.T @ G_flat``, then the adjoint of
  the windows adds each column back where its window read ``x`` (col2im, one slice per kernel
  offset).
* Its weight adjoint is ``W_bar = G_flat @ cols.T`` (the correlation of ``x`` with ``G`` over
  the batch and the positions), sharing the forward pass's ``cols``.
* Being bilinear, its tangent is ``conv(dX, W) + conv(X, dW)``, the tangents' batch axis
  folded into the batch (or output-channel) axis.
* ``pad(a, pad_width, mode="constant", constant_values=0)`` is NumPy's ``np.pad`` in constant
  mode: a scatter into zeros (its adjoint the slice back).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sympy as sp

from ...errors import ShapeError
from ..codetext import dim_code
from ..ir import Node, arg_symbol
from ..oprow import OpRow, Param, Spelling, call_latex
from ..ops import Builder
from ..shapes import format_shape, same_dim, size
from .windows import FULL, counts, ints, windows

_X0, _X1 = arg_symbol(0), arg_symbol(1)


# -- constructors ------------------------------------------------------------------------------
def convolve(b: Builder, name: str, rank: int, x: Node, w: Node, stride: Any = 1,
             padding: Any = 0, dilation: Any = 1, where: str = "") -> Node:
    """A ``rank``-dimensional convolution (``name`` for messages) with PyTorch's arguments."""
    if x.ndim != rank + 2 or w.ndim != rank + 2:
        raise ShapeError(f"{name}: needs an input of {rank + 2} dimensions (batch, channels, "
                         f"{'length' if rank == 1 else 'height, width'}) and weights of "
                         f"{rank + 2} (out, in, kernel), got {format_shape(x.shape)} and "
                         f"{format_shape(w.shape)}{where}")
    if not same_dim(x.shape[1], w.shape[1]):
        raise ShapeError(f"{name}: the input has {x.shape[1]} channels but the weights "
                         f"{format_shape(w.shape)} expect {w.shape[1]}{where}")
    if not all(isinstance(k, int) for k in w.shape[2:]):
        raise ShapeError(f"{name}: the kernel size must be integers, not "
                         f"{format_shape(w.shape)}{where}")
    strides = ints(name, "stride", stride, rank, where)
    pads = ints(name, "padding", padding, rank, where, least=0)
    dilations = ints(name, "dilation", dilation, rank, where)
    if any(pads):
        x = pad(b, x, ((0, 0), (0, 0), *((p, p) for p in pads)), where=where)
    counts(name, x.shape[2:], w.shape[2:], strides, dilations, where)
    return conv_node(b, x, w, strides, dilations)


def conv_node(b: Builder, x: Node, w: Node, strides: tuple[int, ...],
              dilations: tuple[int, ...]) -> Node:
    """The ``conv`` node of (already padded) ``x`` and ``w``. Its third operand is the im2col
    matrix of ``x`` (:func:`columns`), which the forward pass multiplies by the weights and
    the weight adjoint by ``G``: one copy of the windows serves both."""
    outs = counts("conv", x.shape[2:], w.shape[2:], strides, dilations, "")
    shape = (x.shape[0], w.shape[0], *outs)
    if any(a.op == "fill" and a.attrs[0] == 0 for a in (x, w)):
        return b.fill(0, shape)
    cols = columns(b, x, w.shape[2:], strides, dilations)
    return b.node("conv", (x, w, cols), (strides, dilations), shape)


def columns(b: Builder, x: Node, kernel: Sequence[int], strides: tuple[int, ...],
            dilations: tuple[int, ...]) -> Node:
    """im2col: the windows of ``x`` (N, C, *S) as a matrix ``(C * prod(K), N * prod(outs))``,
    one column per output position (rows in the order of the flattened weights)."""
    r = len(strides)
    spread = windows(b, x, tuple(range(2, 2 + r)), tuple(kernel), strides, dilations, "conv")
    n, c, outs = x.shape[0], x.shape[1], spread.shape[2:2 + r]
    order = b.transpose(spread, (1, *range(2 + r, 2 + 2 * r), 0, *range(2, 2 + r)))
    return b.reshape(order, (c * size(kernel), n * size(outs)))


def conv1d(b: Builder, x: Node, w: Node, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
           *, where: str = "") -> Node:
    """``conv1d(x, w, stride, padding, dilation)``: ``x`` (N, C, L), ``w`` (O, C, K)."""
    return convolve(b, "conv1d", 1, x, w, stride, padding, dilation, where)


def conv2d(b: Builder, x: Node, w: Node, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
           *, where: str = "") -> Node:
    """``conv2d(x, w, stride, padding, dilation)``: ``x`` (N, C, H, W), ``w`` (O, C, KH, KW)."""
    return convolve(b, "conv2d", 2, x, w, stride, padding, dilation, where)


def _pad_widths(a: Node, pad_width: Any, where: str) -> list[tuple[int, int]]:
    """NumPy's ``pad_width`` forms: ``n``, ``(before, after)``, ``((b0, a0), (b1, a1), ..)``."""
    def pair(item: Any) -> tuple[int, int] | None:
        if isinstance(item, int) and not isinstance(item, bool):
            return (item, item)
        if isinstance(item, tuple | list) and len(item) in (1, 2) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in item
        ):
            return (item[0], item[-1])
        return None

    one = pair(pad_width)
    if one is not None:
        widths = [one] * a.ndim
    elif isinstance(pad_width, tuple | list) and len(pad_width) == a.ndim:
        widths = [pair(item) for item in pad_width]  # type: ignore[misc]
    else:
        widths = [None]
    if any(w is None or min(w) < 0 for w in widths):
        raise ShapeError(f"pad: pad_width must be an int, a pair (before, after) or one pair "
                         f"per axis ({a.ndim}) of non-negative ints, not {pad_width!r}{where}")
    return widths  # type: ignore[return-value]


def pad(b: Builder, a: Node, pad_width: Any, mode: str = "constant", constant_values: Any = 0,
        *, where: str = "") -> Node:
    """``np.pad(a, pad_width, mode="constant", constant_values=c)``: ``a`` inside a border of
    ``c`` (zeros: a scatter; ``c``: the scatter of ``a - c``, plus ``c``)."""
    if mode != "constant":
        raise ShapeError(f"pad: only mode='constant' is supported, not {mode!r}{where}")
    if isinstance(constant_values, bool) or not isinstance(constant_values, int | float):
        raise ShapeError(f"pad: constant_values must be one number, not "
                         f"{constant_values!r}{where}")
    widths = _pad_widths(a, pad_width, where)
    index, shape = [], []
    for dim, (before, after) in zip(a.shape, widths, strict=True):
        if not before and not after:
            index.append(FULL)
            shape.append(dim)
            continue
        if not isinstance(dim, int):
            raise ShapeError(f"pad: a padded axis needs an integer length, not "
                             f"{format_shape(a.shape)}{where}")
        index.append((before, before + dim, None))
        shape.append(before + dim + after)
    c = sp.nsimplify(constant_values)
    if c == 0:
        return b.scatter(a, tuple(index), tuple(shape))
    inner = b.scatter(b.map(_X0 - c, [a]), tuple(index), tuple(shape))
    return b.map(_X0 + c, [inner])


# -- rules ---------------------------------------------------------------------------------------
def _vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    """``W_bar = G_flat @ cols.T``; ``cols_bar = W_flat.T @ G_flat``, whose overlap-add (the
    adjoint of the windows, col2im) is the input adjoint: the transposed convolution."""
    _, w, cols = node.args
    o = w.shape[0]
    flat_g = b.reshape(b.transpose(g, (1, 0, *range(2, g.ndim))), (o, cols.shape[1]))
    flat_w = b.reshape(w, (o, cols.shape[0]))
    w_bar = b.reshape(b.matmul(flat_g, b.transpose(cols)), w.shape)
    cols_bar = b.matmul(b.transpose(flat_w), flat_g)
    return None, w_bar, cols_bar


def _fold(b: Builder, t: Node) -> Node:
    """A tangent ``(A, B, *rest, D)`` as ``(A * D, B, *rest)``: the batch axis folded into the
    first."""
    n = t.ndim - 1
    front = b.transpose(t, (0, n, *range(1, n)))
    return b.reshape(front, (t.shape[0] * t.shape[-1], *t.shape[1:n]))


def _jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
         ) -> Node | None:
    x, w, _ = node.args
    tx, tw, _ = tangents  # the columns' tangent is the input's, counted through tx
    strides, dilations = node.attrs
    n, o, outs = node.shape[0], node.shape[1], node.shape[2:]
    terms = []
    if tx is not None:  # (N*D, O, *outs) -> (N, O, *outs, D)
        y = conv_node(b, _fold(b, tx), w, strides, dilations)
        y = b.reshape(y, (n, tx.shape[-1], o, *outs))
        terms.append(b.transpose(y, (0, *range(2, y.ndim), 1)))
    if tw is not None:  # (N, O*D, *outs) -> (N, O, *outs, D)
        y = conv_node(b, x, _fold(b, tw), strides, dilations)
        y = b.reshape(y, (n, o, tw.shape[-1], *outs))
        terms.append(b.transpose(y, (0, 1, *range(3, y.ndim), 2)))
    if not terms:
        return None
    return terms[0] if len(terms) == 1 else b.map(_X0 + _X1, terms)


def _emit(node: Node, c: list[str], target: str) -> list[tuple[str, str]]:
    """``W_flat @ cols``, its columns back to ``(N, O, *outs)``."""
    o, r = dim_code(node.shape[1]), node.ndim - 2
    outs = ", ".join(str(m) for m in node.shape[2:])
    return [
        (target, f"_np.reshape({c[1]}, ({o}, -1)) @ {c[2]}"),
        (target, f"_np.transpose(_np.reshape({target}, ({o}, -1, {outs})), "
                 f"{(1, 0, *range(2, 2 + r))})"),
    ]


def _arguments(node: Node) -> list[str]:
    strides, dilations = node.attrs
    shown = [f"stride={strides[0] if len(set(strides)) == 1 else strides}"]
    if set(dilations) != {1}:
        shown.append(f"dilation={dilations[0] if len(set(dilations)) == 1 else dilations}")
    return shown


def _name(node: Node) -> str:
    return f"conv{len(node.attrs[0])}d"


OPS = (
    OpRow(
        op="conv",
        rule="convolution (transposed convolution)",
        identity="X_bar = the transposed convolution of G: the full correlation of G (spread "
                 "by the stride) with the flipped kernel, computed as col2im(W_flat.T @ G_flat); "
                 "W_bar = G_flat @ cols(X).T",
        vjp=_vjp,
        jvp=_jvp,
        emit=_emit,
        text=lambda n, a, r: f"{_name(n)}({r[0]}, {r[1]}, {', '.join(_arguments(n))})",
        latex=lambda n, a, r: call_latex(_name(n), r[0], r[1], *(
            rf"\text{{{part.split('=')[0]}}}={part.split('=')[1]}" for part in _arguments(n))),
        numpy_names=frozenset({"reshape", "transpose"}),
    ),
)

_CONV = {"x": Param.ARRAY, "w": Param.ARRAY}
SPELLINGS = (
    Spelling("conv1d", conv1d, "conv1d(x, w, stride=1, padding=0, dilation=1)", _CONV),
    Spelling("conv2d", conv2d, "conv2d(x, w, stride=1, padding=0, dilation=1)", _CONV),
    Spelling("pad", pad, "pad(a, pad_width, mode='constant', constant_values=0)",
             {"a": Param.ARRAY}, numpy=(np.pad,),
             identity="A_bar = G with the border cut off (the slice where A was placed)"),
)

__all__ = ["OPS", "SPELLINGS", "conv1d", "conv2d", "conv_node", "convolve", "pad"]
