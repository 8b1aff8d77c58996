"""``symdiff serve`` as a teacher runs it: on 127.0.0.1 by default, a clear warning for another
address, one line for a port in use, stopped by Ctrl-C, and nothing written to disk but
symdiff's cache."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from symdiff.cache import FORMAT_VERSION
from symdiff.cli import main

from .serve_client import post
from .serve_process import ROOT, serving, stop


def _files(directory):
    return sorted(str(p.relative_to(directory)) for p in directory.rglob("*"))


def test_it_writes_nothing_but_the_cache_and_stops_on_ctrl_c(tmp_path):
    work, home, temporary, cache = (tmp_path / name for name in ("work", "home", "tmp", "cache"))
    for folder in (work, home, temporary):
        folder.mkdir()
    env = {"HOME": str(home), "TMPDIR": str(temporary), "SYMDIFF_CACHE_DIR": str(cache),
           "SYMDIFF_SOURCE_DIR": "", "XDG_CACHE_HOME": str(home / ".cache")}
    with serving(env=env, cwd=work) as (url, process):
        assert url.startswith("http://127.0.0.1:")
        for task, body in [("derive", {"expr": "x**2*sin(x)", "wrt": ["x"]}),
                           ("plot", {"expr": "x**2*sin(x)", "wrt": ["x"], "point": {"x": 1},
                                     "interval": [-2, 2]}),
                           ("graph", {"expr": "x**2*sin(x)", "point": {"x": 1}}),
                           ("code", {"expr": "x**2*sin(x)", "wrt": ["x"]}),
                           ("check", {"expr": "x**2*sin(x)", "wrt": ["x"], "answer": "0"})]:
            status, answer = post(url, task, body)
            assert status == 200 and answer["ok"], answer
        assert stop(process) == 0
    assert _files(work) == [] and _files(home) == [] and _files(temporary) == []
    written = _files(cache)
    assert written and all(p.split(os.sep)[0] in (f"v{FORMAT_VERSION}", "sources", "secret")
                       for p in written), written


def test_another_address_is_served_with_a_warning():
    with serving("--host", "0.0.0.0") as (url, process):
        assert url.startswith("http://127.0.0.1:")
        status, answer = post(url, "preview", {"expr": "x"})
        assert status == 200 and answer["ok"]
        stop(process)
        err = process.stderr.read()
    assert "warning: listening on 0.0.0.0" in err and "no login" in err


IGNORING_CTRL_C = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
os.execv(sys.executable, [sys.executable, "-m", "symdiff", "serve", "--port", "0"])
"""


def test_ctrl_c_stops_it_when_its_parent_ignored_and_blocked_ctrl_c():
    """A process inherits an ignored or blocked SIGINT from whatever started it (a script's
    background job, some launchers): the server still stops on Ctrl-C, as it says."""
    process = subprocess.Popen([sys.executable, "-c", IGNORING_CTRL_C], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        line = process.stdout.readline()
        if "the classroom page is at http://127.0.0.1:" not in line:
            process.kill()
            raise AssertionError(f"no address but {line!r}: {process.communicate()[1][-3000:]}")
        assert stop(process) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_port_in_use_is_one_line():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "symdiff", "serve", "--port", str(port)],
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"symdiff: error: cannot listen on 127.0.0.1 port {port}: Address already in use; "
        "choose another with --port"]


@pytest.mark.parametrize("options", [["--port", "70000"], ["--budget", "0.1"],
                                     ["--workers", "0"], ["--port", "x"]])
def test_bad_options_are_usage_errors(options, capsys):
    assert main(["serve", *options]) == 2
    assert "error: argument" in capsys.readouterr().err
