"""Blocks on several threads: ``_on_threads`` shares a call's blocks between the calling
thread and worker threads kept from call to call. NumPy's loops release the GIL, so the
threads compute at once."""


def _on_threads(store, blocks, last, threads, _pool=[]):  # noqa: B006
    """``store(*block)`` for every item of the iterator ``blocks``, then ``last()``, on
    ``threads`` threads: this one and ``threads - 1`` workers, each taking the next block until
    none is left (the calling thread runs ``last`` after its share). Returns when every block
    is stored; an exception in any thread is raised here, and the others stop at their next
    block.

    The workers are daemon threads kept in ``_pool`` for the next call (waking one costs a
    fraction of starting one); a worker ends after 2 s without work, and a process forked from
    this one starts its own. A call hands each worker a task and waits only for the blocks the
    workers took: a worker busy with another call's blocks leaves this call's to this thread.
    The workers run in copies of the caller's context (``numpy.errstate`` applies in them)."""
    import contextvars as _contextvars
    import os as _os
    import queue as _queue
    import threading as _threading

    pending = iter(blocks)
    lock = _threading.Lock()
    done = _threading.Condition(lock)  # notified when no block is being computed
    errors = []
    running = [0]  # blocks taken and not finished
    call = [None]  # this call's work until it is over: a late task finds None

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

    def task_in(context):  # a task for a worker: this call's work in the caller's context
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

    # the workers of this process (made again in a child after fork: none run there)
    if not _pool or _pool[0][0] != _os.getpid():
        _pool[:] = [(_os.getpid(), _queue.SimpleQueue(), [0], _threading.Lock())]
    _, tasks, workers, guard = _pool[0]
    call[0] = work
    with guard:
        for _ in range(threads - 1):
            tasks.put(task_in(_contextvars.copy_context()))
        while workers[0] < threads - 1:
            _threading.Thread(target=serve, args=(tasks, workers, guard), daemon=True).start()
            workers[0] += 1
    work()
    try:
        if not errors:
            last()
    except BaseException as error:  # the workers stop at their next block
        errors.append(error)
    with lock:
        call[0] = None
        while running[0]:
            done.wait()
    if errors:
        raise errors[0]
