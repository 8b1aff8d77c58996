"""The block loop of a generated function (``_in_blocks``: long arrays in cache-sized blocks),
its quick paths at one point given as Python floats (``_at_point``, and ``_at_packed`` for
many alike lines) and the shaping of its outputs
(``_as_output``). Pasted verbatim into generated modules: the
rules of :mod:`symdiff.codegen.helpers` hold for every function here."""

import numpy as _np

from ...errors import ArgumentError as _ArgumentError


def _in_blocks(formulas, inputs, shape, dtype, threads=None, _pool=[]):  # noqa: B006
    """``formulas(*inputs, shape, dtype, into)``, computed in blocks of about 16384 elements
    (65536 from 262144 elements on), on up to ``threads`` threads.

    Long arrays are cut along the first axis of the broadcast ``shape``: each block's
    temporaries stay in the CPU's caches (128 or 512 kB per float64 array) and their memory is
    reused, and the Python work per block stays small next to the block's; this beats full-length
    temporaries that each make a pass over main memory. Every element goes through the same
    operations either way, so the results are the same. Short arrays (under 32768 elements or
    4 rows) are computed in one go. The larger blocks of long arrays make a quarter of the
    Python calls and, on threads, of the GIL handovers (one per NumPy call of a block): with
    blocks of 16384, cheap gradients over 1e6 points ran no quicker on two threads than on one
    (``benchmarks/bench_threads.py``: geometric mean 0.68x hand-written NumPy on two threads
    and 0.91x on one, against 0.59x and 0.88x with 65536, and 0.66x and 0.87x with 131072).
    ``formulas`` returns an array or nested tuples of arrays, each of shape ``leading axes +
    block shape``; the full arrays are allocated after the first block, with its dtypes.
    ``into`` is None for the first block (and an unblocked call); for the others it is the tuple
    of the full arrays' slices for the block, one per returned array in depth-first order, which
    ``formulas`` may compute its results into (NumPy's ``out=``): a returned array that is its
    slice is not copied again. The blocks' views of the inputs and of the full arrays are made
    up front, as rows of views cut along a new first axis (a reshape of the blocked axis: no
    copy), and the loop iterates over them: per block, the Python work is the call of
    ``formulas`` and a test per output (slicing every argument per block cost more than the
    formulas of the cheapest gradients). At a single point (``shape == ()``) the inputs are
    passed as NumPy scalars, whose arithmetic costs a fraction of that of 0-d arrays (the
    scalar power function may round the last bit differently from the array loop's).

    Threads: NumPy's loops release the GIL, so blocks after the first run on ``threads``
    threads (this one included), each taking the next block until none is left. The first
    block, which this thread computes alone (its arrays give the full arrays' dtypes), is then
    a short lead of about 1024 elements: a whole first block kept the other threads waiting
    for a sixteenth of the work over 1e6 points. ``None`` means
    ``_free_threads()`` for arrays of 524288 elements or more (8 blocks; on 2 idle
    cores two threads were 14% quicker than one at 262144, 25% at 524288) and one thread
    below. The blocks and each one's operations are the same whatever the number of threads,
    so the results are the same bit for bit. The other threads are worker threads kept from call to
    call (``_pool``: starting and joining a thread cost 0.1-0.2 ms, waking a waiting worker
    0.03 ms; a cheap gradient's 1e6 points take 2-3 ms): daemon threads, which end after 2 s
    without work and never keep the interpreter from exiting; a process forked from this one
    starts its own. A call hands each worker a task and waits only for the blocks the workers
    took: a worker busy with another call's blocks leaves this call's to this thread. The
    workers run in copies of the caller's context (``numpy.errstate`` applies in them too); an
    exception in one is raised here.
    """
    if not shape:  # one point: NumPy scalars are several times quicker than 0-d arrays
        return formulas(*(a[()] for a in inputs), shape, dtype, None)
    if threads is not None and (type(threads) is not int or threads < 1):
        raise _ArgumentError(f"threads must be a positive int or None, not {threads!r}")
    rows = shape[0]
    row_size = 1
    for size in shape[1:]:
        row_size *= size
    total = rows * row_size
    if rows < 4 or total < 32768:
        return formulas(*inputs, shape, dtype, None)
    step = max(1, (65536 if total >= 262144 else 16384) // max(row_size, 1))
    if threads is None:
        threads = _free_threads() if total >= 524288 else 1
    # The first block is computed alone (its arrays give the full arrays' dtypes): a whole
    # block on one thread, a short lead of about 1024 elements before the others are handed out.
    lead = min(step, max(1, 1024 // max(row_size, 1))) if threads > 1 else step
    count = (rows - lead) // step  # whole blocks after the first; then the tail
    end = lead + count * step  # the tail's first row
    tail = shape[1:]

    def split(array, axis):  # the whole blocks of array's rows axis, along a new first axis
        head = (slice(None),) * axis
        view = array[(*head, slice(lead, end))]  # a view: splitting an axis never copies
        view = view.reshape((*view.shape[:axis], count, step, *view.shape[axis + 1 :]))
        return _np.moveaxis(view, axis, 0) if axis else view

    cut = [a.ndim == len(shape) and a.shape[0] == rows for a in inputs]
    parts = [split(a, 0) if c else (a,) * count for a, c in zip(inputs, cut, strict=True)]

    def inputs_at(where):  # the inputs' rows ``where`` (views; an input not cut: itself)
        return tuple([a[where] if c else a for a, c in zip(inputs, cut, strict=True)])

    def rows_of(array, where):  # a full array's rows ``where`` (after its leading axes)
        return array[(slice(None),) * (array.ndim - len(shape)) + (where,)]

    def leaves(tree):  # the arrays of nested tuples, depth first (a loop: see rebuild)
        found, stack = [], [tree]
        while stack:
            item = stack.pop()
            if isinstance(item, tuple):
                stack.extend(reversed(item))
            else:
                found.append(item)
        return found

    block = formulas(*inputs_at(slice(0, lead)), (lead, *tail), dtype, None)
    found = leaves(block)
    # (an array with leading axes, a Jacobian's or a Hessian's, starts as zeros: its formulas
    # write only its entries that are not 0)
    full = [(_np.zeros if b.ndim > len(shape) else _np.empty)(
        b.shape[: b.ndim - len(shape)] + shape, dtype=b.dtype) for b in found]
    fresh = iter(full)

    # The full arrays in the nesting of the formulas' tuples. The recursive helpers here get
    # themselves as an argument (``again``): a closure that calls itself by its enclosing name is
    # a reference cycle (function -> closure cell -> function), and this one's cells hold the
    # full arrays, which would then stay allocated after the caller dropped them, until the
    # cycle collector ran (30 calls over 1e7 points held 2.4 GB, each call in fresh pages).
    def rebuild(tree, again):
        return tuple([again(t, again) for t in tree]) if isinstance(tree, tuple) else next(fresh)

    result = rebuild(block, rebuild)
    for f, b in zip(full, found, strict=True):
        rows_of(f, slice(0, lead))[...] = b
    outs = [split(f, f.ndim - len(shape)) for f in full]
    flat = type(block) is tuple and tuple not in map(type, block)
    single = type(block) is not tuple
    # every whole block after the first: (its inputs, its slices of the full arrays)
    blocks = zip(zip(*parts, strict=True), zip(*outs, strict=True), strict=True)

    def store(part, into, size=(step, *tail)):  # one block, into its slices (copied if not)
        got = formulas(*part, size, dtype, into)
        if single:
            if got is not into[0]:
                into[0][...] = got
            return
        for f, b in zip(into, got if flat else leaves(got), strict=True):
            if b is not f:
                f[...] = b

    def last():  # the tail after the whole blocks, with slices of the inputs and full arrays
        if end < rows:
            where = slice(end, rows)
            store(inputs_at(where), tuple([rows_of(f, where) for f in full]), (rows - end, *tail))

    threads = min(threads, count + (end < rows))  # no more than blocks left
    if threads <= 1:
        for part, into in blocks:
            store(part, into)
        last()
        return result
    import contextvars as _contextvars
    import os as _os
    import queue as _queue
    import threading as _threading

    pending = iter(blocks)
    lock = _threading.Lock()
    done = _threading.Condition(lock)  # notified when no block is being computed
    errors = []
    running = [0]  # blocks taken and not finished
    call = [None]  # this call's work until it is over: a late helper finds None

    def work():
        while True:
            with lock:
                item = None if errors else next(pending, None)
                if item is None:
                    return
                running[0] += 1
            try:
                store(*item)
            except BaseException as error:  # raised again by the calling thread
                errors.append(error)
            finally:
                with lock:
                    running[0] -= 1
                    if not running[0]:
                        done.notify()

    def helper(context):  # a task for a worker thread: work in a copy of the caller's context
        def task():
            with lock:
                job = call[0]
            if job is not None:
                context.run(job)

        return task

    def serve(tasks, workers, guard):  # a worker: runs tasks; ends after 2 s without one
        while True:
            try:
                task = tasks.get(timeout=2.0)
            except _queue.Empty:
                with guard:
                    if tasks.empty():
                        workers[0] -= 1
                        return
                continue
            task()

    # the worker threads of this process (made again in a child after fork: none run there)
    if not _pool or _pool[0][0] != _os.getpid():
        _pool[:] = [(_os.getpid(), _queue.SimpleQueue(), [0], _threading.Lock())]
    _, tasks, workers, guard = _pool[0]
    call[0] = work
    with guard:
        for _ in range(threads - 1):
            tasks.put(helper(_contextvars.copy_context()))
        while workers[0] < threads - 1:
            _threading.Thread(target=serve, args=(tasks, workers, guard), daemon=True).start()
            workers[0] += 1
    work()
    try:
        if not errors:
            last()
    except BaseException as error:  # the helpers stop at their next block
        errors.append(error)
    with lock:
        call[0] = None
        while running[0]:
            done.wait()
    if errors:
        raise errors[0]
    return result


def _free_threads(_seen={}):  # noqa: B006
    """The number of threads for a long elementwise call with the default ``threads=None``:
    one per core this process may run on (``os.sched_getaffinity``, and a cgroup's CPU quota)
    that other processes leave free, at least 1 and at most 8.

    A thread on a core that another process keeps busy shares it, and the other threads of the
    call wait at its end for the blocks it took (and, while it holds the GIL, for it to run
    again): with the other core of two busy, two threads were up to 3x slower than one. So a
    core counts as free only if other processes used less than a quarter of it: the number is
    the cores less the cores others used, rounded up from three quarters. What others use is
    the CPU time of the allowed cores (``/proc/stat``) less this process's own
    (``time.process_time``) since the previous look, if that was 0.05 to 2 s ago; otherwise the
    number of processes running at this instant other than this thread (``procs_running``).
    Off Linux, the load average less this process stands for what others use; where neither
    exists, every core counts as free. The answer is kept for 0.25 s (a look costs about
    30 us; a call it decides for, 1 ms or more), in ``_seen`` with the last look."""
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


def _at_point(formulas, inputs):
    """``formulas(*inputs, (), None, None)`` at one point whose coordinates are floats, computed
    on Python floats: Python's float arithmetic is IEEE double arithmetic, as NumPy's float64
    is, and costs a fraction of NumPy scalars' (the arguments skip their conversion to arrays
    too). NumPy float64 scalars (the elements of a float64 array, ``g(*x)``) are converted to
    Python floats first. Where Python raises instead of giving inf or nan (a division by zero, an
    overflowing power), the point is computed again on NumPy scalars, which give NumPy's values.
    The generated code takes this path only when every ``**`` in its formulas has an integer
    exponent (a float to a fractional power can be complex in Python).

    The dtype ``None`` tells the formulas' ``_as_output`` to hand each output back as it is;
    they are made 0-d float64 arrays here, all in one conversion: one array of every output,
    and each output a 0-d view of its own element (an ``asarray`` per output cost more than
    the formulas with 1,000 names). The result keeps the formulas' nesting of tuples; the
    nesting of ``value_and_grad``, ``(value, (partials...))``, is rebuilt directly (the general
    walk cost as much as the formulas of a two-variable gradient)."""
    if _np.float64 in map(type, inputs):
        inputs = [float(a) for a in inputs]
    try:
        result = formulas(*inputs, (), None, None)
    except ArithmeticError:
        result = formulas(*[_np.float64(a) for a in inputs], (), None, None)
    if type(result) is not tuple:
        return _np.asarray(result, dtype=_np.float64)
    value, partials = result[0], result[-1]
    pair = (len(result) == 2 and type(partials) is tuple and type(value) is not tuple
            and tuple not in map(type, partials))  # value_and_grad's (value, partials)
    flat = (value, *partials) if pair else result
    if not pair and tuple in map(type, result):
        flat, stack = [], [result]  # the leaves, depth first (a loop: no reference cycle)
        while stack:
            item = stack.pop()
            if type(item) is tuple:
                stack.extend(reversed(item))
            else:
                flat.append(item)
    values = _np.array(flat, dtype=_np.float64)
    views = iter(_zero_d(values))
    if flat is result:
        return tuple(views)
    if pair:
        return next(views), tuple(views)

    def rebuild(tree, again):  # (given itself: no reference cycle, see _in_blocks)
        return tuple([again(t, again) if type(t) is tuple else next(views) for t in tree])

    return rebuild(result, rebuild)


def _at_packed(packed, inputs, size, nest):
    """``packed(r)`` at one point whose coordinates are floats (Python floats or NumPy float64
    scalars), ``r`` a float64 vector of ``size`` whose first elements are ``inputs`` (their
    vector grown in place): the packed function computes every value of the formulas into
    ``r`` with a few vector operations and returns the vector of the outputs (in depth-first
    order). Each output comes
    back as a 0-d float64 array (a view of that vector, made by one ``nditer``), nested as
    ``nest`` says: ``0`` one output, a positive int k a tuple of the next k outputs, a tuple of
    those a tuple of them; ``None``: the vector itself (a Hessian-vector product's array)."""
    register = _np.fromiter(inputs, _np.float64, len(inputs))
    register.resize(size, refcheck=False)  # in place: nothing else refers to it yet
    if nest is None:
        return packed(register)
    views = iter(_zero_d(packed(register)))
    if nest == 0:
        return next(views)
    if type(nest) is int:
        return tuple(views)

    def rebuild(tree, again):  # (given itself: no reference cycle, see _in_blocks)
        if tree == 0:
            return next(views)
        if type(tree) is int:
            return tuple([next(views) for _ in range(tree)])
        return tuple([again(item, again) for item in tree])

    return rebuild(nest, rebuild)


def _zero_d(values, _takers={}):  # noqa: B006
    """Each element of the float64 vector ``values`` as a 0-d array (a view of it), in a tuple:
    the outputs of a point. Up to 100 elements, one ``operator.itemgetter`` of the keys
    ``(i, ...)`` makes them in one C call (kept per length in ``_takers``; 0.2 us for 2 outputs
    against 1.6 us for an ``nditer``, the same at 100); beyond, one ``nditer`` (quicker for
    1,000: 54 us against 67)."""
    count = len(values)
    if count == 1:  # (an itemgetter of one key returns the item, not a tuple)
        return (values[0, ...],)
    if count > 100 or not count:
        return tuple(_np.nditer(values, flags=["zerosize_ok"], order="C", op_flags=["readwrite"]))
    take = _takers.get(count)
    if take is None:
        import operator as _operator

        take = _takers[count] = _operator.itemgetter(*[(i, ...) for i in range(count)])
    return take(values)


def _as_output(value, shape, dtype):
    """``value`` as an array of the broadcast ``shape`` and ``dtype`` (constants included);
    ``value`` itself for the dtype ``None`` (the point path, which converts every output at
    once)."""
    if dtype is None:
        return value
    value = _np.asarray(value, dtype=dtype)
    if value.shape != shape:
        value = _np.broadcast_to(value, shape).copy()
    return value
