"""``symdiff serve`` in a process of its own, for tests: started on a free port, stopped with
Ctrl-C (SIGINT) as a teacher stops it."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ADDRESS = re.compile(r"the classroom page is at (http://\S+?)/? ")


@contextmanager
def serving(*options: str, env: dict[str, str] | None = None, cwd: Path | None = None,
            timeout: float = 180) -> Iterator[tuple[str, subprocess.Popen]]:
    """``(url, process)`` of a running ``symdiff serve --port 0 OPTIONS``; stopped after."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONFAULTHANDLER": "1",
                   **(env or {})}
    process = subprocess.Popen(
        [sys.executable, "-m", "symdiff", "serve", "--port", "0", *options],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment, cwd=cwd)
    try:
        deadline = time.monotonic() + timeout
        url = None
        while url is None and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                raise AssertionError(f"symdiff serve ended: {process.stderr.read()}")
            found = ADDRESS.search(line)
            url = found.group(1) if found else None
        assert url is not None, "symdiff serve did not say where it is"
        yield url, process
    finally:
        if process.poll() is None:
            stop(process)


def stop(process: subprocess.Popen, timeout: float = 60) -> int:
    """Ctrl-C ``process`` as a teacher does and return its exit status. One still running after
    ``timeout`` seconds fails the test with the stacks of its threads (its fault handler dumps
    them on SIGABRT), so that a hang says where it is."""
    process.send_signal(signal.SIGINT)
    try:
        return process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:  # how the process treats signals: ignored (SigIgn), blocked (SigBlk), pending
            with open(f"/proc/{process.pid}/status") as status:
                signals = "".join(line for line in status if line.startswith("Sig"))
        except OSError:
            signals = ""
        process.send_signal(signal.SIGABRT)
        try:
            _, stderr = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            _, stderr = process.communicate()
        raise AssertionError(f"symdiff serve did not stop within {timeout} s of Ctrl-C; "
                             f"{signals}its threads:\n{stderr[-20000:]}") from None
