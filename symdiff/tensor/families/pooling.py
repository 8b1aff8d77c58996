"""Pooling: ``max_pool1d``, ``max_pool2d``, ``avg_pool1d``, ``avg_pool2d`` (PyTorch's names and
arguments: ``kernel_size``, ``stride`` defaulting to the kernel size), over the last one or two
axes.

No new node op: a pool is a reduction (``max`` or ``mean``) over the window axes of
:func:`~symdiff.tensor.families.windows.windows`, so its adjoint comes out of the existing
rules: the reduction's (``max`` splits ``G`` evenly among tied elements of a window, ``mean``
spreads ``G / k``), then the windows' overlap-add. Windows that tile the input (stride = kernel
size, the usual case) are a reshape, and their adjoint a reshape back.
"""

from __future__ import annotations

from typing import Any

from ...errors import ShapeError
from ..ir import Node
from ..oprow import Param, Spelling
from ..ops import Builder
from ..shapes import format_shape
from .windows import ints, windows


def pool(b: Builder, kind: str, rank: int, x: Node, kernel_size: Any, stride: Any = None,
         where: str = "") -> Node:
    """``kind`` (``max`` or ``mean``) over each window of the last ``rank`` axes of ``x``."""
    name = f"{'max' if kind == 'max' else 'avg'}_pool{rank}d"
    if x.ndim < rank:
        raise ShapeError(f"{name}: needs at least {rank} dimensions, got "
                         f"{format_shape(x.shape)}{where}")
    sizes = ints(name, "kernel_size", kernel_size, rank, where)
    strides = sizes if stride is None else ints(name, "stride", stride, rank, where)
    axes = tuple(range(x.ndim - rank, x.ndim))
    spread = windows(b, x, axes, sizes, strides, (1,) * rank, name, where)
    return b.reduce_axes(kind, spread, tuple(range(x.ndim, x.ndim + rank)), False)


def max_pool1d(b: Builder, x: Node, kernel_size: Any, stride: Any = None, *,
               where: str = "") -> Node:
    """The largest element of each window of the last axis."""
    return pool(b, "max", 1, x, kernel_size, stride, where)


def max_pool2d(b: Builder, x: Node, kernel_size: Any, stride: Any = None, *,
               where: str = "") -> Node:
    """The largest element of each window of the last two axes."""
    return pool(b, "max", 2, x, kernel_size, stride, where)


def avg_pool1d(b: Builder, x: Node, kernel_size: Any, stride: Any = None, *,
               where: str = "") -> Node:
    """The mean of each window of the last axis."""
    return pool(b, "mean", 1, x, kernel_size, stride, where)


def avg_pool2d(b: Builder, x: Node, kernel_size: Any, stride: Any = None, *,
               where: str = "") -> Node:
    """The mean of each window of the last two axes."""
    return pool(b, "mean", 2, x, kernel_size, stride, where)


OPS = ()
_X = {"x": Param.ARRAY}
#: The backward rule of each kind of pool, in words (shown by derive and graph).
_IDENTITY = {
    "max": "the adjoint goes to the maximum of each window, split evenly among ties "
           "(windows that overlap add up)",
    "avg": "each window's adjoint is spread evenly over its k elements, G / k to each "
           "(windows that overlap add up)",
}
SPELLINGS = tuple(
    Spelling(fn.__name__, fn, f"{fn.__name__}(x, kernel_size, stride=None)", _X,
             identity=_IDENTITY[fn.__name__.split("_")[0]])
    for fn in (max_pool1d, max_pool2d, avg_pool1d, avg_pool2d)
)

__all__ = ["OPS", "SPELLINGS", "avg_pool1d", "avg_pool2d", "max_pool1d", "max_pool2d", "pool"]
