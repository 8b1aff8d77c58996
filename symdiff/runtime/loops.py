"""How a ``backend="numba"`` module runs: ``_numba_elementwise`` takes the arguments as a NumPy
ufunc does, flattens them to the broadcast shape, allocates the outputs and runs one of the
module's compiled loops over the elements (``_serial``, or ``_threaded`` on Numba's threads)."""

import numpy as _np

from ..errors import ArgumentError as _ArgumentError
from .arguments import _as_arrays, _as_vector, _common_shape, _float_dtype
from .blocks import _nested_like, _thread_count


def _numba_elementwise(formulas, inputs, threads=None, loops=None, leading=(1,),
                       structure=None, direction=None, _lock=[]):  # noqa: B006
    """The compiled ``loops`` (``(serial, threaded)``, Numba functions of the flat arguments
    and ``_out``) on the arguments ``inputs``, computed as a NumPy ufunc computes: the
    arguments broadcast together in one float dtype (float32 stays float32, integers and bools
    give float64; ``_as_arrays``, ``_float_dtype`` and ``_common_shape`` name an argument that
    is wrong) and every output has their broadcast shape.

    With ``structure`` (the nesting of the outputs, each a position in ``_out``) ``_out`` is a
    tuple of ``leading[0]`` flat arrays, one per output, returned in that nesting, each of the
    broadcast shape; without, ``_out`` is one array of the ``leading`` axes and one axis over
    the elements, returned of shape ``leading + shape`` (a Jacobian's ``(m, n)``, a Hessian's
    ``(n, n)`` entries, zeros where the loops write nothing). ``direction``: a Hessian-vector
    product's ``_v``, whose components are the loops' last inputs. ``threads``: as for the
    NumPy backend (None: ``_thread_count``); more than one runs the threaded loop on that many
    of Numba's threads. At a point (shape ``()``) the outputs are 0-d arrays, as the NumPy
    backend's are. ``formulas`` (the module's ``_formulas``) names the arguments in messages.

    One threaded loop runs at a time in a process (a lock kept in ``_lock``): Numba's own
    thread pool, when it is its ``workqueue`` layer, aborts the process on two launches from
    two Python threads at once; each launch uses every thread it is given anyway.
    """
    if threads is not None and (type(threads) is not int or threads < 1):
        raise _ArgumentError(f"threads must be a positive int or None, not {threads!r}")
    names = formulas.py_func.__code__.co_varnames[: len(inputs)]
    inputs = _as_arrays(names, *inputs)
    if direction is None:
        dtype = _float_dtype(names, *inputs)
    else:  # the direction's dtype counts whole; its components are the last inputs
        single = structure is not None
        vector = (_as_arrays(("_v",), direction)[0] if single
                  else _as_vector(direction, leading[0]))
        dtype = _float_dtype((*names, "_v"), *inputs, vector)
        parts = [vector] if single else list(vector)
        inputs = [*inputs, *parts]
        names = (*names, *("_v",) * len(parts))
    inputs = [a.astype(dtype, copy=False) for a in inputs]
    shape = _common_shape(names, *inputs) if inputs else ()
    total = 1
    for size in shape:
        total *= size
    flat = []
    for a in inputs:
        if a.shape == shape and a.flags.c_contiguous:
            flat.append(a.reshape(-1))  # a view
        elif a.size == 1:  # one number for every element: a view that does not move
            flat.append(_np.broadcast_to(a.reshape(1), (total,)))
        else:
            flat.append(_np.ascontiguousarray(_np.broadcast_to(a, shape)).reshape(-1))
    if structure is None:
        out = _np.zeros((*leading, total), dtype=dtype)
    else:  # one array per output: each the size NumPy's own outputs are (reused by malloc)
        out = tuple([_np.empty(total, dtype=dtype) for _ in range(leading[0])])
    count = _thread_count(threads, total)
    if count > 1 and total > 1:
        import numba as _numba

        if not _lock:
            import threading as _threading

            _lock.append(_threading.Lock())
        with _lock[0]:
            before = _numba.get_num_threads()
            _numba.set_num_threads(min(count, _numba.config.NUMBA_NUM_THREADS))
            try:
                loops[1](*flat, out)
            finally:
                _numba.set_num_threads(before)
    else:
        loops[0](*flat, out)
    if structure is None:
        return out.reshape((*leading, *shape))
    if structure.__class__ is int:
        return out[structure].reshape(shape)
    return _nested_like(structure, [row.reshape(shape) for row in out])
