"""From the values a sparse module returns to a ``scipy.sparse`` array.

A generated sparse module returns one vector of values and its ``_pattern`` says where they go
(:mod:`symdiff.sparse.pattern`), entries possibly repeated. A :class:`Layout` is made once per
pattern (per set of sizes): the entries sorted into the format's order (rows then columns for
CSR and COO, columns then rows for CSC), repeated entries found, and the index arrays the
format needs; each call then only gathers its values into that order (and adds repeated
entries). SciPy is imported only here, when a matrix is made: the generated modules and the
rest of symdiff need only NumPy.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import SymdiffError

#: The formats a sparse function returns.
FORMATS = ("csr", "csc", "coo")


class SparseDependencyError(SymdiffError, ImportError):
    """SciPy, which sparse results are made of, is not installed."""


def scipy_sparse() -> Any:
    """``scipy.sparse``, or a :class:`SparseDependencyError` saying how to install it."""
    try:
        import scipy.sparse
    except ImportError:
        raise SparseDependencyError(
            "sparse=True returns scipy.sparse arrays, and SciPy is not installed: "
            "pip install 'symdiff[sparse]' (or pip install scipy)"
        ) from None
    return scipy.sparse


def check_format(format: str) -> str:
    """``format`` if it is one of :data:`FORMATS`, else a :class:`SymdiffError`."""
    if format not in FORMATS:
        raise SymdiffError(f"sparse format must be one of {', '.join(FORMATS)}, not {format!r}")
    return format


@dataclass(frozen=True)
class Layout:
    """Where each value of a call goes in one format: ``take`` (positions of the values in the
    format's order; None: as they come), ``starts`` (where each run of one repeated entry
    starts, to add them; None: no entry repeats), the entries' ``rows`` and ``cols`` in that
    order, and for CSR/CSC the compressed ``indptr`` and ``indices``."""

    format: str
    shape: tuple[int, int]
    rows: np.ndarray
    cols: np.ndarray
    take: np.ndarray | None
    starts: np.ndarray | None
    indptr: np.ndarray | None
    indices: np.ndarray | None
    #: ``(first value, end, first place, step)`` of runs of values that go to evenly spaced
    #: places (a band's diagonals in CSR order), when few: copied by slices, not gathered.
    runs: tuple[tuple[int, int, int, int], ...] | None = None

    @property
    def nnz(self) -> int:
        """The number of entries of the matrix."""
        return len(self.rows)


def layout(rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int], format: str,
           lower: bool = False) -> Layout:
    """The layout of values at ``rows``, ``cols`` (as a module's ``_pattern`` returns them) in
    ``format``; ``lower``: only the entries with ``row >= col`` (a Hessian's lower triangle)."""
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    positions = np.arange(len(rows), dtype=np.int64)
    if lower:
        kept = rows >= cols
        rows, cols, positions = rows[kept], cols[kept], positions[kept]
    major, minor = (cols, rows) if format == "csc" else (rows, cols)
    width = max(shape[0] if format == "csc" else shape[1], 1)
    order = np.argsort(major * width + minor, kind="stable")  # by major, then minor
    major, minor, positions = major[order], minor[order], positions[order]
    repeated = (major[1:] == major[:-1]) & (minor[1:] == minor[:-1])
    starts = None
    if repeated.any():
        starts = np.flatnonzero(np.concatenate(([True], ~repeated)))
        major, minor = major[starts], minor[starts]
    in_order = starts is None and np.array_equal(positions, np.arange(len(rows)))
    take = None if in_order and not lower else positions
    index = np.int32 if max(len(major), *shape) < 2**31 - 1 else np.int64  # as SciPy chooses
    indptr = indices = None
    if format != "coo":
        counts = np.bincount(major, minlength=shape[1] if format == "csc" else shape[0])
        indptr = np.concatenate(([0], np.cumsum(counts))).astype(index)
        indices = minor.astype(index)
    rows_out, cols_out = (minor, major) if format == "csc" else (major, minor)
    for array in (rows_out, cols_out, take, starts, indptr, indices):
        if array is not None:
            array.setflags(write=False)
    runs = _runs(take) if take is not None and starts is None and not lower else None
    return Layout(format, shape, rows_out, cols_out, take, starts, indptr, indices, runs)


#: At most this many runs of evenly spaced places are copied by slices (else gathered).
MAX_RUNS = 32


def _runs(take: np.ndarray) -> tuple[tuple[int, int, int, int], ...] | None:
    """The values (all of them, each placed once) as runs of consecutive values that go to
    evenly spaced places, when there are at most :data:`MAX_RUNS` of them (one pass over the
    places, then a step per run)."""
    count = len(take)
    places = np.empty_like(take)
    places[take] = np.arange(count)
    steps = np.diff(places)
    changes = (np.flatnonzero(steps[1:] != steps[:-1]) + 1).tolist()  # where a step differs
    runs = []
    first = 0
    while first < count:
        if len(runs) == MAX_RUNS:
            return None
        if first == count - 1:
            runs.append((first, count, int(places[first]), 1))
            break
        # this run's step is steps[first]; it holds values up to the first change after it
        later = bisect.bisect_right(changes, first)
        last = changes[later] if later < len(changes) else count - 1
        runs.append((first, last + 1, int(places[first]), int(steps[first])))
        first = last + 1
    return tuple(runs)


def _placed(place: int, count: int, step: int) -> slice:
    """The slice of ``count`` places from ``place`` in steps of ``step`` (either sign)."""
    stop = place + step * count
    return slice(place, stop if stop >= 0 else None, step)


def data(layout: Layout, values: np.ndarray) -> np.ndarray:
    """The values of one call in ``layout``'s order (repeated entries added)."""
    if values.ndim != 1:
        raise SymdiffError(
            f"a sparse Jacobian or Hessian is one matrix: call it at one point (numbers for "
            f"scalar names, arrays of the declared shapes), not with arrays that broadcast "
            f"to the shape {values.shape[1:]}"
        )
    if layout.runs is not None:
        placed = np.empty(len(values), dtype=values.dtype)
        for first, end, place, step in layout.runs:
            placed[_placed(place, end - first, step)] = values[first:end]
        return placed
    gathered = values if layout.take is None else values[layout.take]  # (values: a new array)
    return gathered if layout.starts is None else np.add.reduceat(gathered, layout.starts)


def matrix(layout: Layout, values: np.ndarray) -> Any:
    """The ``scipy.sparse`` array of one call's values. Its index arrays are the layout's own,
    shared by every call and read-only (the pattern is the same at every call): operations
    that read them work, one that would change them in place (``eliminate_zeros``) raises;
    ``.copy()`` gives a matrix of one's own. Its entries are sorted and unique (canonical)."""
    sps = scipy_sparse()
    entries = data(layout, values)
    if layout.format == "coo":
        made = sps.coo_array((entries, (layout.rows, layout.cols)), shape=layout.shape,
                             copy=False)
        made.has_canonical_format = True
        return made
    kind = sps.csr_array if layout.format == "csr" else sps.csc_array
    made = kind((entries, layout.indices, layout.indptr), shape=layout.shape, copy=False)
    made.has_sorted_indices = True
    made.has_canonical_format = True
    return made
