"""Memory for the outputs of compiled loops: ``_reused_empty`` gives new arrays, as
``numpy.empty`` does, in memory that earlier outputs no longer use where there is some."""

import numpy as _np

#: Arrays of fewer bytes come from ``numpy.empty`` (the C library reuses small blocks itself).
_REUSED_FROM = 1 << 20
#: The most memory (bytes) that no array uses which ``_reused_empty`` keeps for later calls.
_REUSED_AT_MOST = 1 << 26


def _reused_empty(count, total, dtype, _kept={}):  # noqa: B006
    """``count`` new flat arrays of ``total`` elements of ``dtype``, their values not set, as
    ``numpy.empty`` gives them.

    An array of ``_REUSED_FROM`` bytes or more is a view of memory that, once neither it nor
    a view of it is left, goes to ``_kept`` for the next call of the same size, which takes
    the most recently kept; at most ``_REUSED_AT_MOST`` bytes are kept (the oldest are freed
    first). A function called in a loop then writes its outputs into memory it has already
    used: the C library hands blocks of several megabytes back to the system when they are
    freed, and the system gives the next ones as fresh pages it zeroes on first write, which
    costs about as much as a simple loop over them. The arrays are writeable, aligned and
    C-contiguous; only ``ndarray.resize`` refuses them, as it refuses any view. A process
    forked from this one keeps its own memory."""
    dtype = _np.dtype(dtype)
    size = total * dtype.itemsize
    if size < _REUSED_FROM:
        return [_np.empty(total, dtype) for _ in range(count)]
    import os as _os

    if _kept.get("pid") != _os.getpid():  # (a forked child starts its own: the lock may be held)
        import threading as _threading

        lock, free = _threading.Lock(), []

        class Owner:  # the base of an array: returns its memory when the last view is gone
            __slots__ = ("__array_interface__", "memory")

            def __del__(self):
                if not lock.acquire(blocking=False):  # (taken by this very thread: let go)
                    return
                try:
                    free.append(self.memory)
                    held = sum(block.nbytes for block in free)
                    while held > _REUSED_AT_MOST:
                        held -= free.pop(0).nbytes
                finally:
                    lock.release()

        _kept.update(pid=_os.getpid(), owner=Owner, lock=lock, free=free)
    lock, free, arrays = _kept["lock"], _kept["free"], []
    for _ in range(count):
        memory = None
        with lock:
            for k in range(len(free) - 1, -1, -1):
                if free[k].nbytes == size:
                    memory = free.pop(k)
                    break
        if memory is None:
            memory = _np.empty(size, _np.uint8)
        owner = _kept["owner"]()
        owner.memory = memory
        owner.__array_interface__ = {"data": (memory.__array_interface__["data"][0], False),
                                     "shape": (total,), "typestr": dtype.str, "version": 3}
        arrays.append(_np.asarray(owner))
    return arrays
