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

from symdiff.serve.pool import Busy, OutOfTime, WorkerPool
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
