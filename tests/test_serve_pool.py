"""The worker pool of ``symdiff serve``: a task out of time ends its worker, which is replaced;
errors come back as data; a full pool says it is busy; and the store of answers keeps each
answer once, within its bounds."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from symdiff.serve.pool import Busy, OutOfTime, WorkerLost, WorkerPool
from symdiff.serve.results import Answer, Results

from .conftest import ROOT
from .serve_handlers import handle


@pytest.fixture
def pool():
    workers = WorkerPool(2, handle)
    yield workers
    workers.close()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:  # a zombie is not alive
        return stat.read().split()[2] != "Z"


def test_a_task_runs_in_another_process(pool):
    assert pool.run("echo", {"a": 1}, budget=30, wait=30) == ("ok", {"a": 1})
    status, pid = pool.run("pid", {}, budget=30, wait=30)
    assert status == "ok" and pid != os.getpid() and pid in pool.pids()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_task_out_of_time_ends_its_worker_and_a_new_one_takes_its_place(pool):
    before = set(pool.pids())
    with pytest.raises(OutOfTime):
        pool.run("spin", {}, budget=0.5, wait=30)
    assert pool.replaced == 1
    stopped = before - set(pool.pids())
    assert len(stopped) == 1 and not _alive(stopped.pop())
    for _ in range(4):  # both workers answer, the new one too
        assert pool.run("echo", {"b": 2}, budget=30, wait=30) == ("ok", {"b": 2})
    deadline = time.monotonic() + 30
    while len(pool.pids()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(pool.pids()) == 2


def _priority(pid: int) -> int:
    return os.getpriority(os.PRIO_PROCESS, pid)


def _run_in_thread(workers, *args, **kwargs):
    answers = []
    thread = threading.Thread(target=lambda: answers.append(_outcome(workers, *args, **kwargs)))
    thread.start()
    return thread, answers


def _outcome(workers, *args, **kwargs):
    try:
        return workers.run(*args, **kwargs)
    except (OutOfTime, WorkerLost, Busy) as error:
        return type(error).__name__


def _wait_for(condition, seconds=60.0):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    return condition()


@pytest.mark.skipif(not hasattr(os, "getpriority"), reason="no process priorities here")
def test_a_task_that_spends_cpu_time_goes_to_the_background_and_a_substitute_takes_its_place():
    workers = WorkerPool(1, handle, foreground=0.2)
    try:
        (only,) = workers.pids()
        spinner, answers = _run_in_thread(workers, "spin", {}, 600, 30, client="breaker")
        assert _wait_for(lambda: workers.backgrounded == 1)
        assert _priority(only) == 19
        # the pool of one still answers at full priority while the long task runs
        status, pid = workers.run("pid", {}, budget=30, wait=60, client="student")
        assert status == "ok" and pid != only and _priority(pid) == _priority(os.getpid())
        assert spinner.is_alive() and answers == []
        assert set(workers.pids()) == {only, pid}
    finally:
        workers.close()
    spinner.join(30)
    assert answers == ["WorkerLost"]  # closing the pool ended it


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_task_in_the_background_answers_and_its_process_ends_after():
    workers = WorkerPool(1, handle, foreground=0.2)
    try:
        (only,) = workers.pids()
        # 0.1 s of CPU time at the lowest priority: generous budget for a busy machine
        assert workers.run("burn", {"seconds": 0.3}, budget=300, wait=30) == ("ok", "burnt")
        assert workers.backgrounded == 1 and workers.replaced == 0
        assert _wait_for(lambda: not _alive(only))
        assert _wait_for(lambda: len(workers.pids()) == 1)
        assert workers.run("echo", {"d": 4}, budget=30, wait=60) == ("ok", {"d": 4})
    finally:
        workers.close()


def test_at_most_as_many_tasks_in_the_background_as_the_pool_has_workers():
    workers = WorkerPool(1, handle, foreground=0.2)
    try:
        first, _ = _run_in_thread(workers, "spin", {}, 600, 30, client="one")
        assert _wait_for(lambda: workers.backgrounded == 1)
        second, _ = _run_in_thread(workers, "spin", {}, 600, 60, client="two")
        assert _wait_for(lambda: workers.backgrounded == 2)
        # the second keeps its worker: no third process, and nothing is free
        assert len(workers.pids()) == 2
        with pytest.raises(Busy):
            workers.run("echo", {}, budget=30, wait=0.3, client="three")
    finally:
        workers.close()
    first.join(30)
    second.join(30)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="CPU time from /proc")
def test_a_task_that_waits_stays_in_the_pool():
    workers = WorkerPool(1, handle, foreground=0.2)
    try:
        assert workers.run("sleep", {"seconds": 1}, budget=60, wait=30) == ("ok", "slept")
        assert workers.backgrounded == 0 and workers.replaced == 0
    finally:
        workers.close()


def test_a_client_with_a_task_in_the_background_waits_for_it():
    workers = WorkerPool(2, handle, foreground=0.2)
    try:
        spinner, _answers = _run_in_thread(workers, "spin", {}, 600, 30, client="breaker")
        assert _wait_for(lambda: workers.backgrounded == 1)
        with pytest.raises(Busy):  # two workers free, but not for this client
            workers.run("echo", {}, budget=30, wait=0.3, client="breaker")
        assert workers.run("echo", {"f": 6}, budget=30, wait=60) == ("ok", {"f": 6})
    finally:
        workers.close()
    spinner.join(30)


def test_a_background_task_out_of_time_ends_its_process():
    workers = WorkerPool(1, handle, foreground=0.2)
    try:
        (only,) = workers.pids()
        with pytest.raises(OutOfTime):
            workers.run("spin", {}, budget=5, wait=30)
        assert workers.backgrounded == 1 and workers.replaced == 1
        assert only not in workers.pids()
        assert workers.run("echo", {"e": 5}, budget=30, wait=60) == ("ok", {"e": 5})
        assert _wait_for(lambda: len(workers.pids()) == 1)
    finally:
        workers.close()


def test_tasks_of_one_text_go_to_the_worker_that_ran_it_before(pool):
    _, first = pool.run("pid", {}, budget=30, wait=30, near="x**2*sin(x)")
    _, other = pool.run("pid", {}, budget=30, wait=30, near="exp(x)")
    for near in ("x**2*sin(x)", "exp(x)", "x**2*sin(x)"):
        _, pid = pool.run("pid", {}, budget=30, wait=30, near=near)
        assert pid == (first if near == "x**2*sin(x)" else other)
    assert pool.home("x**2*sin(x)") is not None and pool.home("tan(x)") is None


def test_errors_come_back_as_data(pool):
    status, details = pool.run("refuse", {}, budget=30, wait=30)
    assert status == "input" and details["position"] == 3
    assert details["message"].startswith("not an expression (at position 3)")
    status, details = pool.run("nothing", {}, budget=30, wait=30)
    assert status == "internal" and details["message"] == "RuntimeError: no task nothing"
    assert pool.replaced == 0


def test_a_full_pool_is_busy_when_the_wait_is_over():
    workers = WorkerPool(1, handle)
    try:
        sleeper = threading.Thread(target=workers.run, args=("sleep", {"seconds": 3}, 30, 30))
        sleeper.start()
        time.sleep(0.5)
        with pytest.raises(Busy):
            workers.run("echo", {}, budget=30, wait=0.2)
        sleeper.join()
        assert workers.run("echo", {}, budget=30, wait=30) == ("ok", {})
    finally:
        workers.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the memory cap is Linux's")
def test_a_task_out_of_memory_ends_its_worker():
    workers = WorkerPool(1, handle, memory_mb=300)
    try:
        status, details = workers.run("hog", {}, budget=60, wait=30)
        assert status == "memory" and "more memory" in details["message"]
        assert workers.replaced == 1
        assert workers.run("echo", {"c": 3}, budget=30, wait=30) == ("ok", {"c": 3})
    finally:
        workers.close()


def test_closing_stops_every_worker():
    workers = WorkerPool(2, handle)
    pids = workers.pids()
    workers.close()
    time.sleep(0.2)
    assert not any(_alive(pid) for pid in pids)


# -- the store of answers --------------------------------------------------------------------
def _answer(text: str) -> Answer:
    return Answer(200, "text/plain", text.encode())


def test_an_answer_is_computed_once_and_the_least_recently_used_goes_first():
    store = Results(entries=2, size=1000)
    calls = []

    def compute(text):
        def run():
            calls.append(text)
            return _answer(text), True
        return run

    assert store.answer("a", compute("a")).body == b"a"
    assert store.answer("a", compute("other")).body == b"a"
    store.answer("b", compute("b"))
    store.answer("a", compute("a"))  # a is now the most recent
    store.answer("c", compute("c"))  # b goes
    assert calls == ["a", "b", "c"] and len(store) == 2
    store.answer("b", compute("b"))
    assert calls == ["a", "b", "c", "b"]


def test_the_store_keeps_at_most_its_size_in_bytes():
    store = Results(entries=100, size=10)
    store.answer("a", lambda: (_answer("123456"), True))
    store.answer("b", lambda: (_answer("123456"), True))
    assert len(store) == 1
    store.answer("c", lambda: (_answer("x" * 11), True))  # larger than the store: not kept
    assert len(store) == 1


def test_an_identical_request_in_progress_waits_for_the_same_answer():
    store = Results()
    started, release = threading.Event(), threading.Event()
    calls = []

    def slow():
        calls.append(1)
        started.set()
        release.wait(10)
        return _answer("done"), True

    results = []
    first = threading.Thread(target=lambda: results.append(store.answer("k", slow)))
    first.start()
    started.wait(10)
    second = threading.Thread(target=lambda: results.append(store.answer("k", slow)))
    second.start()
    time.sleep(0.2)
    release.set()
    first.join()
    second.join()
    assert calls == [1] and [r.body for r in results] == [b"done", b"done"]


def test_an_answer_not_to_keep_and_an_error_are_not_kept():
    store = Results()
    store.answer("k", lambda: (_answer("busy"), False))
    assert len(store) == 0

    def fail():
        raise Busy

    with pytest.raises(Busy):
        store.answer("k", fail)
    assert store.answer("k", lambda: (_answer("ok"), True)).body == b"ok"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forkserver's socket path")
def test_a_pool_starts_by_spawn_where_the_forkserver_cannot(tmp_path):
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    code = ("from symdiff.serve.pool import WorkerPool; from tests.serve_handlers import handle; "
            "p = WorkerPool(1, handle); print(p.method, p.run('echo', {'a': 1}, 60, 60)); "
            "p.close()")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env={**os.environ, "TMPDIR": str(deep),
                                                      "PYTHONPATH": str(ROOT)})
    assert done.stdout.strip() == "spawn ('ok', {'a': 1})", done.stderr


# -- fair shares -----------------------------------------------------------------------------
def test_a_free_worker_goes_first_to_the_clients_that_are_not_heavy():
    from symdiff.serve.fair import FairQueue, Timeout

    queue = FairQueue()
    queue.charge("heavy", 30.0)
    queue.charge("light", 1.0)  # not heavy: first come, first served with "new"
    order = []

    def take(client):
        order.append((client, queue.get(client, wait=10)))

    takers = [threading.Thread(target=take, args=(c,)) for c in ("heavy", "light", "new")]
    for taker in takers:
        taker.start()
        time.sleep(0.1)  # heavy asks first
    for item in ("w1", "w2", "w3"):
        queue.put(item)
        time.sleep(0.2)
    for taker in takers:
        taker.join()
    assert [client for client, _ in order] == ["light", "new", "heavy"]
    assert 25 < queue.usage("heavy") < 30  # decaying
    with pytest.raises(Timeout):
        queue.get("anyone", wait=0.1)


def test_a_heavy_client_runs_one_task_at_a_time():
    from symdiff.serve.fair import FairQueue, Timeout

    queue = FairQueue()
    for item in ("w1", "w2", "w3"):
        queue.put(item)
    assert queue.get("light", wait=1) == "w1"
    assert queue.get("light", wait=1) == "w2"  # a light client may run several
    queue.charge("heavy", 30.0)
    assert queue.get("heavy", wait=1) == "w3"
    queue.put("w4")
    with pytest.raises(Timeout):  # a worker is free, but the heavy client has one running
        queue.get("heavy", wait=0.2)
    queue.release("heavy", 1.0)
    assert queue.get("heavy", wait=1) == "w4"


def _take_in_turn(queue, waiters, puts):
    """Waiters ``(client, place)`` line up in turn, then items ``(item, place)`` are put
    one by one; who got what, in the order they got it."""
    order = []

    def take(client, place):
        order.append((client, queue.get(client, wait=10, place=place)))

    takers = [threading.Thread(target=take, args=waiter) for waiter in waiters]
    for taker in takers:
        taker.start()
        time.sleep(0.1)
    for item, place in puts:
        got = len(order)
        queue.put(item, place=place)
        deadline = time.monotonic() + 10
        while len(order) == got and time.monotonic() < deadline:
            time.sleep(0.01)
    for taker in takers:
        taker.join()
    return order


def test_a_client_with_a_task_in_the_background_waits_until_it_ends():
    from symdiff.serve.fair import FairQueue, Timeout

    queue = FairQueue()
    for item in ("w1", "w2", "w3"):
        queue.put(item)
    assert queue.get("student", wait=1) == "w1"
    queue.background("student")
    with pytest.raises(Timeout):  # workers are free, but not for this client
        queue.get("student", wait=0.2)
    assert queue.get("other", wait=1) == "w2"
    queue.release("student", 3.0, background=True)
    assert queue.get("student", wait=1) == "w3"


def test_a_free_worker_goes_first_to_a_request_that_prefers_its_place():
    from symdiff.serve.fair import FairQueue

    queue = FairQueue(lookahead=3)
    queue.put("at0", place=0)
    queue.put("at1", place=1)
    assert queue.get("a", wait=1, place=1) == "at1"
    assert queue.get("a", wait=1, place=1) == "at0"  # its place is busy: another will do
    # the first waits for its own place while the others take theirs, or any (no preference)
    order = _take_in_turn(queue, [("first", 0), ("second", 1), ("third", None)],
                          [("at1", 1), ("at2", 2), ("at0", 0)])
    assert order == [("second", "at1"), ("third", "at2"), ("first", "at0")]


def test_a_request_is_passed_over_at_most_lookahead_times():
    from symdiff.serve.fair import FairQueue

    queue = FairQueue(lookahead=2)
    order = _take_in_turn(queue, [("first", 0), ("second", 1), ("third", 1), ("fourth", 1)],
                          [("a", 1), ("b", 1), ("c", 1), ("d", 1)])
    assert order == [("second", "a"), ("third", "b"), ("first", "c"), ("fourth", "d")]


def test_without_lookahead_the_first_in_line_is_served_first():
    from symdiff.serve.fair import FairQueue

    queue = FairQueue()
    order = _take_in_turn(queue, [("first", 0), ("second", 1)], [("a", 1), ("b", 0)])
    assert order == [("first", "a"), ("second", "b")]
