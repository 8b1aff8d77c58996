"""The helper of sparse Jacobians and Hessians (:mod:`symdiff.sparse`): the rows and columns of
one block of structural nonzeros, an affine function of a grid of indices."""

import numpy as _np


def _affine_grid(offset, steps, counts):
    """The integers ``offset + steps[0]*i0 + steps[1]*i1 + ...`` over the grid
    ``0 <= ik < counts[k]``, in C order, as a flat int64 array (a count below 0 counts as 0):
    the rows, or the columns, of one block of a sparse pattern."""
    grid = _np.full((), offset, dtype=_np.int64)
    for step, count in zip(steps, counts, strict=True):
        grid = grid[..., None] + step * _np.arange(max(count, 0), dtype=_np.int64)
    return grid.reshape(-1)
