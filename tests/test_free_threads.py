"""The default number of threads (``_free_threads``, which the runtime's ``_thread_count`` asks
for ``threads=None``): one per core this process may use that
other processes leave free, from ``/proc/stat`` (or the processes running at an instant, or the
load average), never more than 8 nor fewer than 1; kept for a quarter of a second."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time

import numpy as np
import pytest

import symdiff as sd
from symdiff.runtime import blocks
from symdiff.runtime.blocks import _free_threads, _thread_count

TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


class _Machine:
    """A fake machine of ``cpus`` cores: its ``/proc/stat`` (busy ticks per core, processes
    running), its cgroup quota, a clock and this process's CPU time, all set by the test."""

    def __init__(self, monkeypatch, cpus=4, quota="max 100000", stat=True):
        self.busy = [0] * cpus
        self.running = 1
        self.now = 1000.0
        self.own = 5.0
        self.opened: list[str] = []
        self.quota, self.stat = quota, stat
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cpus)), raising=False)
        monkeypatch.setattr(time, "monotonic", lambda: self.now)
        monkeypatch.setattr(time, "process_time", lambda: self.own)
        monkeypatch.setattr(blocks, "open", self.open, raising=False)

    def open(self, path, mode="r"):
        self.opened.append(path)
        if path == "/sys/fs/cgroup/cpu.max" and self.quota is not None:
            return io.StringIO(self.quota)
        if path == "/proc/stat" and self.stat:
            lines = [f"cpu  {sum(self.busy)} 0 0 {10**6} 0 0 0 0 0 0"]
            lines += [f"cpu{i} {b} 0 0 {10**6} 0 0 0 0 0 0" for i, b in enumerate(self.busy)]
            lines += ["intr 1 2 3", f"procs_running {self.running}", "procs_blocked 0"]
            return io.BytesIO("\n".join(lines).encode())
        raise OSError(f"no {path}")

    def later(self, seconds, others=(), own=0.0):
        """``seconds`` pass; other processes use ``others[i]`` of core i, this one ``own`` CPU
        seconds (on core 0)."""
        self.now += seconds
        self.own += own
        self.busy[0] += round(own * TICK)
        for i, share in enumerate(others):
            self.busy[i] += round(share * seconds * TICK)


def _fresh():
    seen: dict = {}
    return lambda: _free_threads(seen)


def test_every_core_counts_on_an_idle_machine_and_this_process_is_not_another(monkeypatch):
    machine = _Machine(monkeypatch)
    free = _fresh()
    assert free() == 4  # first look: one process running, this one
    machine.later(0.3, own=0.6)  # this process kept two cores busy: still its own
    assert free() == 4


@pytest.mark.parametrize(
    ("others", "threads"),
    [
        ((1.0, 1.0, 1.0), 1),  # every other core busy
        ((0.0, 1.0, 1.0, 0.0), 2),
        ((0.5, 0.0, 0.0, 0.0), 3),  # half a core used by others: that core is not free
        ((0.2, 0.0, 0.0, 0.0), 4),  # under a quarter: still free
        ((0.1, 0.1, 0.1, 0.1), 3),  # small shares add up
    ],
)
def test_cores_that_other_processes_use_do_not_count(monkeypatch, others, threads):
    machine = _Machine(monkeypatch)
    free = _fresh()
    free()
    machine.later(0.3, others=others, own=0.3)
    assert free() == threads


def test_the_answer_is_kept_for_a_quarter_of_a_second(monkeypatch):
    machine = _Machine(monkeypatch)
    free = _fresh()
    assert free() == 4
    looks = machine.opened.count("/proc/stat")
    machine.later(0.2, others=(1.0, 1.0, 1.0, 1.0))
    assert free() == 4 and machine.opened.count("/proc/stat") == looks
    machine.later(0.1, others=(1.0, 1.0, 1.0, 1.0))
    assert free() == 1 and machine.opened.count("/proc/stat") == looks + 1


@pytest.mark.parametrize(("gap", "window"), [(0.01, False), (0.3, True), (5.0, False)])
def test_a_look_long_ago_or_just_now_counts_the_processes_running(monkeypatch, gap, window):
    """Over a window of 0.05 to 2 s the CPU time used counts; otherwise the processes running
    at this instant (this thread is one of them)."""
    machine = _Machine(monkeypatch)
    seen: dict = {}
    _free_threads(seen)
    machine.running = 3  # two others running now, but the cores were idle over the window
    machine.later(gap)
    seen["until"] = 0.0  # look again whatever the gap
    assert _free_threads(seen) == (4 if window else 2)


def test_the_cgroup_quota_caps_the_cores(monkeypatch):
    _Machine(monkeypatch, cpus=4, quota="150000 100000")  # 1.5 cores: one thread
    assert _fresh()() == 1
    monkeypatch.undo()
    _Machine(monkeypatch, cpus=16, quota="max 100000")
    assert _fresh()() == 8  # never more than 8


def test_one_core_reads_nothing(monkeypatch):
    machine = _Machine(monkeypatch, cpus=1)
    assert _fresh()() == 1
    assert "/proc/stat" not in machine.opened


def test_without_proc_stat_the_load_average_stands_for_others(monkeypatch):
    _Machine(monkeypatch, stat=False)
    monkeypatch.setattr(os, "getloadavg", lambda: (4.2, 1.0, 1.0))  # 3.2 besides this one
    assert _fresh()() == 1
    monkeypatch.setattr(os, "getloadavg", lambda: (1.1, 1.0, 1.0))
    assert _fresh()() == 4
    monkeypatch.delattr(os, "getloadavg")
    assert _fresh()() == 4  # nothing to tell: every core


def test_a_child_after_fork_looks_again(monkeypatch):
    machine = _Machine(monkeypatch)
    seen: dict = {}
    _free_threads(seen)
    seen["until"] = 0.0
    monkeypatch.setattr(os, "getpid", lambda: -1)  # another process, whose CPU time restarts
    machine.own = 0.0
    machine.later(0.3)
    assert _free_threads(seen) == 4 and seen["pid"] == -1


@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="reads Linux's /proc/stat")
@pytest.mark.skipif(len(getattr(os, "sched_getaffinity", lambda _: [0])(0)) < 2,
                    reason="needs two cores")
def test_busy_processes_on_every_other_core_leave_one_thread():
    """A real machine: with a busy loop for every core but one, the default is one thread (the
    machine's other work can only make it fewer), and the results stay those of one thread."""
    cores = min(len(os.sched_getaffinity(0)), 8)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(cores - 1)]
    try:
        free = _fresh()
        time.sleep(0.5)
        free()
        time.sleep(0.3)  # a window of 0.3 s with the loops running
        assert free() == 1
        g = sd.grad("log(1 + exp(-y*(w*x + b)))", wrt=["w", "b"])
        arrays = {k: np.linspace(0.5, 1.5, 600_000) for k in g.args}
        one = g(**arrays, threads=1)
        for ours, theirs in zip(g(**arrays), one, strict=True):
            assert np.array_equal(ours, theirs)
    finally:
        for process in busy:
            process.kill()
            process.wait()


def test_the_default_is_a_number_of_threads_the_process_may_use():
    cores = len(getattr(os, "sched_getaffinity", lambda _: range(os.cpu_count() or 1))(0))
    assert 1 <= _fresh()() <= min(cores, 8)


def test_the_default_of_a_long_call_is_the_free_cores(monkeypatch):
    """``threads=None`` asks ``_free_threads`` from 524,288 elements on; a number given, or a
    shorter call, does not ask."""
    asked = []
    monkeypatch.setattr(blocks, "_free_threads", lambda: asked.append(1) or 3)
    assert _thread_count(None, 524_288) == 3 and len(asked) == 1
    assert _thread_count(None, 524_287) == 1
    assert _thread_count(2, 10**7) == 2
    assert len(asked) == 1


def test_a_generated_function_and_its_saved_module_use_the_free_cores(monkeypatch, tmp_path):
    g = sd.grad("sin(x)*exp(y)/(1 + x**2)")
    monkeypatch.setattr(blocks, "_free_threads", lambda: 1)
    threads = []
    run = blocks._on_threads
    monkeypatch.setattr(blocks, "_on_threads", lambda *a: threads.append(a[-1]) or run(*a))
    x = np.linspace(0.0, 1.0, 600_000)
    g(x, 0.5)
    assert threads == []  # one free core: no threads
    monkeypatch.setattr(blocks, "_free_threads", lambda: 2)
    g(x, 0.5)
    assert threads == [2]
    saved = g.save(tmp_path / "grad_f.py").read_text()
    assert "def _free_threads(" in saved and "return _free_threads()" in saved
