"""Dask arrays through elementwise compiled functions: chunk by chunk, lazily.

A function built with ``backend="array_api"`` works on Dask arrays as it is (its module calls
the standard's functions of ``array_api_compat``'s Dask namespace, and the result is a lazy
Dask array). For elementwise (scalar-layer) functions there is a quicker way, which
:func:`elementwise_on_chunks` takes: one task per chunk that runs the fast NumPy module on the
chunk's NumPy blocks (``dask.array.map_blocks`` with the right ``meta``), so a gradient over
10^8 points never materialises the arrays, and the graph has one task per chunk instead of one
per operation. The outputs of a chunk (a tuple of gradients, a Jacobian's ``(m, n)`` entries)
travel as one stacked block along a new leading axis and are split again lazily.

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
    plain = _PLAIN

    @functools.wraps(run)
    def call(*args: Any, **kwargs: Any) -> Any:
        for value in args:  # the usual call: ndarrays and floats, by one set lookup each
            if value.__class__ not in plain:
                break
        else:
            if not kwargs or all(v.__class__ in plain for v in kwargs.values()):
                return run(*args, **kwargs)
        if not any(map(is_dask, args)) and not any(map(is_dask, kwargs.values())):
            return run(*args, **kwargs)
        bound = signature.bind(*args, **kwargs)
        return elementwise_on_chunks(per_chunk(), list(bound.arguments.values()))

    return call


#: The types of the usual arguments, which are not Dask arrays (looked up without a call).
_PLAIN = frozenset({np.ndarray, float, int, np.float64, np.float32, type(None)})


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
