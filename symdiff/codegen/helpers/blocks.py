"""The block loop of a generated function (``_in_blocks``: long arrays in cache-sized blocks),
its quick path at one point given as Python floats (``_at_point``) and the shaping of its outputs
(``_as_output``). Pasted verbatim into generated modules: the
rules of :mod:`symdiff.codegen.helpers` hold for every function here."""

import numpy as _np


def _in_blocks(formulas, inputs, shape, dtype):
    """``formulas(*inputs, shape, dtype)``, computed in blocks of about 8192 elements.

    Long arrays are cut along the first axis of the broadcast ``shape``: each block's
    temporaries stay in the CPU cache and their memory is reused, which beats full-length
    temporaries that each make a pass over main memory. Every element goes through the same
    operations either way, so the results are the same. Short arrays (under 32768 elements or
    4 rows) are computed in one go. ``formulas`` returns an array or nested tuples of arrays,
    each of shape ``leading axes + block shape``; the full arrays are allocated after the first
    block, with its dtypes. At a single point (``shape == ()``) the inputs are passed as NumPy
    scalars, whose arithmetic costs a fraction of that of 0-d arrays (the scalar power function
    may round the last bit differently from the array loop's).
    """
    if not shape:  # one point: NumPy scalars are several times quicker than 0-d arrays
        return formulas(*(a[()] for a in inputs), shape, dtype)
    rows = shape[0]
    row_size = 1
    for size in shape[1:]:
        row_size *= size
    if rows < 4 or rows * row_size < 32768:
        return formulas(*inputs, shape, dtype)
    step = max(1, 8192 // max(row_size, 1))
    cut = [a.ndim == len(shape) and a.shape[0] == rows for a in inputs]

    def allocate(block):
        if isinstance(block, tuple):
            return tuple(allocate(b) for b in block)
        return _np.empty(block.shape[: block.ndim - len(shape)] + shape, dtype=block.dtype)

    def store(full, block, where):
        if isinstance(block, tuple):
            for f, b in zip(full, block, strict=True):
                store(f, b, where)
        else:
            full[(slice(None),) * (block.ndim - len(shape)) + (where,)] = block

    result = None
    for start in range(0, rows, step):
        where = slice(start, min(start + step, rows))
        part = [a[where] if c else a for a, c in zip(inputs, cut, strict=True)]
        block = formulas(*part, (where.stop - start, *shape[1:]), dtype)
        result = allocate(block) if result is None else result
        store(result, block, where)
    return result


def _at_point(formulas, inputs):
    """``formulas(*inputs, (), float64)`` at one point whose coordinates are Python floats,
    computed on the floats themselves: Python's float arithmetic is IEEE double arithmetic, as
    NumPy's float64 is, and costs a fraction of NumPy scalars' (the arguments skip their
    conversion to arrays too). Where it raises instead of giving inf or nan (a division by zero,
    an overflowing power), the point is computed again on NumPy scalars, which give NumPy's
    values. The generated code takes this path only when every ``**`` in its formulas has an
    integer exponent (a float to a fractional power can be complex in Python)."""
    dtype = _np.result_type(1.0)
    try:
        return formulas(*inputs, (), dtype)
    except ArithmeticError:
        return formulas(*(_np.float64(a) for a in inputs), (), dtype)


def _as_output(value, shape, dtype):
    """``value`` as an array of the broadcast ``shape`` and ``dtype`` (constants included)."""
    value = _np.asarray(value, dtype=dtype)
    if value.shape != shape:
        value = _np.broadcast_to(value, shape).copy()
    return value
