"""Dask arrays through elementwise compiled functions: chunk by chunk, lazily.

An elementwise (scalar-layer) function of either backend takes Dask arrays chunk by chunk:
one task per chunk runs the fast NumPy module on the chunk's NumPy blocks
(``dask.array.map_blocks`` with the right ``meta``, :func:`elementwise_on_chunks`), so a
gradient over 10^8 points never materialises the arrays, and the graph has one task per chunk
instead of one per operation. The outputs of a chunk (a tuple of gradients, a Jacobian's
``(m, n)`` entries) travel as one stacked block along a new leading axis and are split again
lazily. A tensor function built with ``backend="array_api"`` works on Dask arrays as it is
(its module calls the standard's functions of ``array_api_compat``'s Dask namespace, and the
result is a lazy Dask array); one of the NumPy backend refuses them (:func:`refusing_dask`: its
module would compute every chunk into one process).

Dask is imported only when a Dask array is actually passed.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import numpy as np


def is_dask(value: object) -> bool:
    """Whether ``value`` is a Dask array (told by its type's module, without importing Dask)."""
    return type(value).__module__.startswith("dask.array")


def chunked(run: Callable[..., Any], per_chunk: Callable[[], Callable[..., Any]]
            ) -> Callable[..., Any]:
    """``run`` (an elementwise generated function), except that a call with a Dask array among
    its arguments runs ``per_chunk()`` (a function of NumPy arrays with ``run``'s parameters)
    on every chunk instead (:func:`elementwise_on_chunks`)."""
    signature = inspect.signature(run)

    @functools.wraps(run)
    def call(*args: Any, **kwargs: Any) -> Any:
        if not _any_dask(args, kwargs):
            return run(*args, **kwargs)
        bound = signature.bind(*args, **kwargs)
        values = [v for k, v in bound.arguments.items()  # not ``threads=``: per chunk, one
                  if signature.parameters[k].kind is not inspect.Parameter.KEYWORD_ONLY]
        return elementwise_on_chunks(per_chunk(), values)

    return call


def refusing_dask(run: Callable[..., Any], name: str) -> Callable[..., Any]:
    """``run`` (a tensor function of the NumPy backend), except that a call with a Dask array
    raises instead of converting it: ``np.asarray`` would compute every chunk into this one
    process, silently, where the Array API backend keeps the work on the chunks."""

    @functools.wraps(run)
    def call(*args: Any, **kwargs: Any) -> Any:
        if _any_dask(args, kwargs):
            from .errors import ArgumentError

            raise ArgumentError(
                f"{name} was given a Dask array, which its NumPy module would compute into one "
                "process; build it with backend='array_api' to keep the work on the chunks "
                "(or pass x.compute() to use NumPy)"
            )
        return run(*args, **kwargs)

    return call


def _any_dask(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether any argument is a Dask array: one look per distinct type (a point of 1,000
    Python floats is one type)."""
    kinds = {type(a) for a in args}
    kinds.update(type(v) for v in kwargs.values())
    return any(k.__module__.startswith("dask.array") for k in kinds)


def _leaves(value: Any) -> list[np.ndarray]:
    if isinstance(value, tuple):
        return [leaf for item in value for leaf in _leaves(item)]
    return [np.asarray(value)]


def _rebuild(structure: Any, parts: list[Any]) -> Any:
    """The nested tuples of ``structure`` with its leaves replaced by ``parts`` (in order)."""
    if isinstance(structure, tuple):
        return tuple(_rebuild(item, parts) for item in structure)
    return parts.pop(0)


def _stacked_block(function: Callable[..., Any], ndim: int, *blocks: np.ndarray) -> np.ndarray:
    """``function`` on one chunk, its outputs flattened over their leading axes and stacked
    along a new first axis (the block's own axes follow)."""
    shape = np.broadcast_shapes(*(b.shape for b in blocks))
    leaves = [leaf.reshape((-1, *shape)) for leaf in _leaves(function(*blocks))]
    return leaves[0] if len(leaves) == 1 else np.concatenate(leaves, axis=0)


def elementwise_on_chunks(function: Callable[..., Any], values: list[Any]) -> Any:
    """``function(*values)`` for arguments of which some are Dask arrays: lazily, one task per
    chunk of the arguments broadcast together, each calling ``function`` on NumPy blocks.
    Returns what ``function`` returns (an array or nested tuples of arrays), as Dask arrays."""
    import dask.array as da

    arrays = da.broadcast_arrays(*(da.asarray(v) for v in values))
    ndim = arrays[0].ndim
    dtype = np.result_type(*(a.dtype for a in arrays), 1.0)
    dtype = dtype if dtype.kind == "f" else np.dtype(np.float64)
    # the structure of the outputs and their leading axes, from one point of the right dtype
    probe = function(*(np.ones((1,) * ndim, dtype=a.dtype) for a in arrays))
    leads = [leaf.shape[: leaf.ndim - ndim] for leaf in _leaves(probe)]
    sizes = [int(np.prod(lead, dtype=np.int64)) for lead in leads]
    total = sum(sizes)
    stacked = da.map_blocks(
        functools.partial(_stacked_block, function, ndim), *arrays,
        new_axis=0,
        chunks=((total,), *arrays[0].chunks),
        dtype=dtype,
        meta=np.empty((0,) * (ndim + 1), dtype=dtype),
        name=f"symdiff-{getattr(function, '__name__', 'f')}",
    )
    parts: list[Any] = []
    start = 0
    for lead, size in zip(leads, sizes, strict=True):
        piece = stacked[start : start + size]
        parts.append(piece.reshape((*lead, *arrays[0].shape)) if lead else piece[0])
        start += size
    return _rebuild(probe, parts)
