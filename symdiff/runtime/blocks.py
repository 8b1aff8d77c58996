"""The block loop of a generated elementwise function: ``_in_blocks`` computes the formulas
on long arrays block by block (the blocks after the first on several threads with
``_on_threads``), ``_thread_count`` chooses how many threads a call uses (by default
``_free_threads``, one per core that other processes leave free), and
``_as_outputs`` gives what the formulas return the broadcast shape and dtype of the call."""

import numpy as _np

from ..errors import ArgumentError as _ArgumentError
from .memory import _reused_empty
from .points import _at_scalars, _leaves
from .threads import _on_threads


def _in_blocks(formulas, inputs, shape, dtype, threads=None, leading=None):
    """``formulas`` on the arrays ``inputs`` (of ``dtype``, broadcasting to ``shape``): each
    output an array of ``shape``; with ``leading``, one array of shape ``leading + shape``
    (zeros first) that the formulas fill, passed as their last argument.

    Arrays of 32768 elements or more (and 4 rows or more) are computed in blocks of rows of
    16384 elements (65536 from 262144 elements on): every block's temporaries fit in the
    CPU's caches, and every element goes through the same operations as in one call, so the
    results are the same. The first block makes the full arrays (the outputs' number, nesting
    and dtypes); the formulas compute each later block straight into its rows of them (their
    last argument ``_out``: a tuple of those rows, one per output in depth-first order).
    Blocks after the first run on ``threads`` threads (``_thread_count``), each taking the
    next until none is left; the results are the same bit for bit whatever the number. At a
    single point (``shape == ()``) the formulas run on NumPy scalars (``_at_scalars``).
    """
    if threads is not None and (type(threads) is not int or threads < 1):
        raise _ArgumentError(f"threads must be a positive int or None, not {threads!r}")
    if not shape:
        return _at_scalars(formulas, inputs, dtype, leading)
    rows = shape[0]
    total = 1
    for size in shape:
        total *= size
    if rows < 4 or total < 32768:
        if leading is None:
            return _as_outputs(formulas(*inputs), shape, dtype, inputs)
        out = _np.zeros(leading + shape, dtype=dtype)
        formulas(*inputs, out)
        return out
    threads = _thread_count(threads, total)
    row_size = total // rows
    step = max(1, (65536 if total >= 262144 else 16384) // row_size)
    # the first block, computed before any other: a whole block on one thread; a short lead of
    # about 1024 elements before the blocks are handed out to several
    lead = min(step, max(1, 1024 // row_size)) if threads > 1 else step
    count = (rows - lead) // step  # whole blocks after the first; then the tail
    end = lead + count * step  # the tail's first row
    tail = shape[1:]
    cut = [a.ndim == len(shape) and a.shape[0] == rows for a in inputs]

    def split(array, axis):  # the whole blocks of the rows axis, along a new first axis
        view = array[(slice(None),) * axis + (slice(lead, end),)]  # views: nothing is copied
        view = view.reshape((*view.shape[:axis], count, step, *view.shape[axis + 1 :]))
        return _np.moveaxis(view, axis, 0) if axis else view

    def inputs_at(where):  # the inputs' rows ``where`` (an input that is not cut: itself)
        return tuple([a[where] if c else a for a, c in zip(inputs, cut, strict=True)])

    def rows_of(array, where):  # a full array's rows ``where`` (after its leading axes)
        return array[(slice(None),) * (array.ndim - len(shape)) + (where,)]

    first = slice(0, lead)
    if leading is None:
        block = _as_outputs(formulas(*inputs_at(first)), (lead, *tail), dtype, inputs)
        found = _leaves(block)
        size = 1
        for n in shape:
            size *= n
        full = [a.reshape(shape) for a in _reused_empty(len(found), size, dtype)]
        for f, b in zip(full, found, strict=True):
            f[first] = b
        result = _nested_like(block, full)
        flat = type(block) is tuple and tuple not in map(type, block)
        single = type(block) is not tuple

        def store(part, into):  # one block, into its rows of the outputs (copied if not)
            got = formulas(*part, into)
            if single:
                if got is not into[0]:
                    into[0][...] = got
                return
            for f, b in zip(into, got if flat else _leaves(got), strict=True):
                if b is not f:
                    f[...] = b
    else:
        result = _np.zeros(leading + shape, dtype=dtype)
        full = [result]
        formulas(*inputs_at(first), rows_of(result, first))

        def store(part, into):  # one block, into its rows of the result
            formulas(*part, into[0])

    parts = [split(a, 0) if c else (a,) * count for a, c in zip(inputs, cut, strict=True)]
    outs = [split(f, f.ndim - len(shape)) for f in full]
    # every whole block after the first: (its inputs, its rows of the outputs)
    blocks = zip(zip(*parts, strict=True), zip(*outs, strict=True), strict=True)

    def last():  # the tail after the whole blocks
        if end < rows:
            where = slice(end, rows)
            store(inputs_at(where), tuple([rows_of(f, where) for f in full]))

    threads = min(threads, count + (end < rows))  # no more than blocks left
    if threads <= 1:
        for part, into in blocks:
            store(part, into)
        last()
    else:
        _on_threads(store, blocks, last, threads)
    return result


def _thread_count(threads, elements):
    """The number of threads a call over ``elements`` elements runs on: ``threads`` when
    given, else (None) one per core that other processes leave free (``_free_threads``) from
    524288 elements on, and one below."""
    if threads is not None:
        return threads
    if elements < 524288:
        return 1
    return _free_threads()


def _free_threads(_seen={}):  # noqa: B006
    """The number of threads for a long elementwise call with the default ``threads=None``:
    one per core this process may run on (``os.sched_getaffinity``, and a cgroup's CPU quota)
    that other processes leave free, at least 1 and at most 8.

    A thread on a core that another process keeps busy shares it, and the other threads of the
    call wait at its end for the blocks it took (and, while it holds the GIL, for it to run
    again). So a core counts as free only if other processes used less than a quarter of it:
    the number is the cores less the cores others used, rounded up from three quarters. What
    others use is the CPU time of the allowed cores (``/proc/stat``) less this process's own
    (``time.process_time``) since the previous look, if that was 0.05 to 2 s ago; otherwise the
    number of processes running at this instant other than this thread (``procs_running``).
    Off Linux, the load average less this process stands for what others use; where neither
    exists, every core counts as free. The answer is kept for 0.25 s, in ``_seen`` with the
    last look."""
    import time as _time

    now = _time.monotonic()
    if now < _seen.get("until", now):
        return _seen["threads"]
    import os as _os

    if _seen.get("pid") != _os.getpid():  # first call, or a child process after fork
        _seen.clear()
        _seen["pid"] = _os.getpid()
        try:
            cpus = sorted(_os.sched_getaffinity(0))
        except (AttributeError, OSError):
            cpus = list(range(_os.cpu_count() or 1))
        cores = len(cpus)
        try:  # a cgroup (v2) quota of CPU time, "max" or "<quota> <period>" in microseconds
            with open("/sys/fs/cgroup/cpu.max") as quota_file:
                quota, period = quota_file.read().split()
            if quota != "max":
                cores = min(cores, max(1, int(quota) // int(period)))  # whole cores
        except (OSError, ValueError):
            pass
        _seen["cores"] = min(cores, 8)
        _seen["names"] = {b"cpu%d" % i for i in cpus}
        _seen["tick"] = _os.sysconf("SC_CLK_TCK") if hasattr(_os, "sysconf") else 100
    cores = _seen["cores"]
    others = 0.0
    if cores > 1:
        try:
            with open("/proc/stat", "rb") as stat:
                lines = stat.read().split(b"\n")
        except OSError:
            lines = None
        if lines is None:
            load = getattr(_os, "getloadavg", None)
            others = max(0.0, load()[0] - 1.0) if load is not None else 0.0
        else:
            busy, running = 0, 1
            names = _seen["names"]
            for line in lines:
                fields = line.split()
                if fields and fields[0] in names:  # user nice system idle iowait irq softirq steal
                    busy += sum(map(int, fields[1:4])) + sum(map(int, fields[6:9]))
                elif fields and fields[0] == b"procs_running":
                    running = int(fields[1])
            own = _time.process_time()
            last = _seen.get("look")
            if last is not None and 0.05 <= now - last[0] <= 2.0:
                used = (busy - last[1]) / _seen["tick"] - (own - last[2])
                others = max(0.0, used / (now - last[0]))
            else:
                others = max(0.0, running - 1.0)
            _seen["look"] = (now, busy, own)
    threads = max(1, min(cores, int(cores - others + 0.25)))
    _seen["threads"], _seen["until"] = threads, now + 0.25
    return threads


def _as_outputs(result, shape, dtype, inputs):
    """``result`` of the formulas (an array, or nested tuples of arrays) with every array of the
    broadcast ``shape`` and ``dtype``: one that is not, or that is one of the ``inputs`` or an
    array handed out before, is made a new array (``_as_output``), so that a caller never
    gets an argument back, nor one array twice."""
    seen = set(map(id, inputs))

    def shaped(value):
        if (value.__class__ is not _np.ndarray or value.shape != shape
                or value.dtype != dtype or id(value) in seen):
            value = _as_output(value, shape, dtype)
        seen.add(id(value))
        return value

    if result.__class__ is not tuple:
        return shaped(result)
    if tuple not in map(type, result):
        return tuple(map(shaped, result))
    return _nested_like(result, list(map(shaped, _leaves(result))))


def _as_output(value, shape, dtype):
    """``value`` (an array or a number) as a new array of ``shape`` and ``dtype``."""
    return _np.array(_np.broadcast_to(value, shape), dtype=dtype)


def _nested_like(tree, values):
    """``values`` (a list, one per leaf of ``tree`` in depth-first order) in the nesting of the
    tuples of ``tree``."""
    fresh = iter(values)

    def rebuild(item, again):  # given itself: a closure calling itself by name is a cycle
        return tuple([again(i, again) for i in item]) if type(item) is tuple else next(fresh)

    return rebuild(tree, rebuild)
