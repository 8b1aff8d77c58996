"""Progress reports of long builds (:mod:`symdiff.progress`): a build running past the threshold
is announced with the stages done and the one running, then every later stage with its time and
counts, then its end; shorter builds (unless Ctrl-C stops them) and ``SYMDIFF_PROGRESS=0``
report nothing; reports are records of ``symdiff.progress``, or lines on stderr where logging
is not configured."""

from __future__ import annotations

import logging
import re
import threading
import time
from typing import ClassVar

import pytest
import sympy as sp

import symdiff as sd
from symdiff import progress

#: Every stage of a scalar build, in the order they run.
STAGES = ["parse", "derive", "stable forms", "CSE", "print", "verify", "compile"]


def _loss(x):
    return x**2


def _reports(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == progress.LOGGER]


def _stages_named(messages: list[str]) -> list[str]:
    """The stages the reports name as done, in order (the announcement lists those done before
    it; each later line is one stage)."""
    names = "|".join(re.escape(s) for s in STAGES)
    found = []
    for message in messages:
        if message.startswith("symdiff: building"):
            done = message.split("): ", 1)[1].rsplit("running", 1)[0]
            found += re.findall(rf"(?:^|; )({names}) \d+\.\d\d s", done)
        elif (match := re.match(rf"symdiff: ({names}) \d+\.\d\d s", message)) is not None:
            found.append(match.group(1))
    return found


def test_a_long_build_reports_every_stage_in_order_with_counts(monkeypatch, caplog):
    monkeypatch.setenv("SYMDIFF_PROGRESS", "0.001")  # every build counts as long
    text = " + ".join(f"sin({k}*x + y/{k})/{k}" for k in range(1, 8))
    with caplog.at_level(logging.INFO, logger=progress.LOGGER):
        g = sd.grad(text, cache=False)
    messages = _reports(caplog)
    assert messages[0].startswith(f"symdiff: building grad of {text[:57]}...")
    assert re.match(r"symdiff: built grad of .* in \d+\.\d\d s$", messages[-1])
    assert _stages_named(messages) == STAGES
    joined = "\n".join(messages)
    assert re.search(r"derive \d+\.\d\d s \(2 outputs; mode forward; simplify \d", joined)
    assert re.search(r"CSE \d+\.\d\d s \(\d+ temporar", joined)
    assert re.search(rf"print \d+\.\d\d s \({g.source.count(chr(10)):,} lines\)", joined)
    assert re.search(r"parse \d+\.\d\d s \(2 names\)", joined)


def test_reverse_mode_and_tensor_builds_report_their_stages(monkeypatch, caplog):
    monkeypatch.setenv("SYMDIFF_PROGRESS", "0.001")
    with caplog.at_level(logging.INFO, logger=progress.LOGGER):
        sd.grad("*".join(f"x{i}" for i in range(12)), cache=False)
        reverse = _reports(caplog)
        caplog.clear()
        sd.grad("sum(log(1 + exp(-y * (X @ w))))", wrt="w", cache=False,
                shapes={"X": ("n", "d"), "y": ("n",), "w": ("d",)})
        tensor = _reports(caplog)
    assert _stages_named(reverse) == [s for s in STAGES if s != "stable forms"]
    assert "mode reverse" in "\n".join(reverse)
    assert _stages_named(tensor) == ["parse", "derive", "print", "verify", "compile"]
    assert tensor[-1].startswith("symdiff: built grad of sum(log(1 + exp(-y * (X @ w)))) wrt w")


@pytest.mark.parametrize("setting", ["0", "off", "false", "no", "-1"])
def test_symdiff_progress_0_silences_every_report(monkeypatch, caplog, setting):
    monkeypatch.setenv("SYMDIFF_PROGRESS", setting)
    started = []
    monkeypatch.setattr(threading, "Timer", lambda *a: started.append(a))  # no watcher either
    with caplog.at_level(logging.INFO, logger=progress.LOGGER):
        sd.grad("sin(x)*exp(y)", cache=False)
    assert _reports(caplog) == [] and started == []
    assert progress.threshold() is None


class _Watchers(threading.Timer):
    made: ClassVar[list[threading.Timer]] = []

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self.made.append(self)


def test_builds_shorter_than_the_threshold_report_nothing(monkeypatch, caplog):
    monkeypatch.setenv("SYMDIFF_PROGRESS", "30")
    monkeypatch.setattr(threading, "Timer", _Watchers)
    _Watchers.made = []
    with caplog.at_level(logging.INFO, logger=progress.LOGGER):
        sd.grad("x*y", cache=False)
    assert _reports(caplog) == []
    (watcher,) = _Watchers.made  # stopped with the build: it can never announce it late
    assert watcher.finished.is_set() and watcher.daemon
    for setting, seconds in (("", 1.0), ("1", 1.0), ("on", 1.0), ("2.5", 2.5)):
        monkeypatch.setenv("SYMDIFF_PROGRESS", setting)
        assert progress.threshold() == seconds


def test_a_build_that_fails_says_where(monkeypatch, caplog):
    monkeypatch.setenv("SYMDIFF_PROGRESS", "0.001")

    def slow_and_broken(*args, **kwargs):
        time.sleep(0.05)  # past the threshold: announced
        raise RuntimeError("broken")

    monkeypatch.setattr("symdiff.codegen.emit.cheapest_program", slow_and_broken)
    with caplog.at_level(logging.INFO, logger=progress.LOGGER), \
            pytest.raises(RuntimeError, match="broken"):
        sd.grad("sin(x)*y", cache=False)
    last = _reports(caplog)[-1]
    assert re.match(r"symdiff: RuntimeError in CSE after \d+\.\d\d s: grad of sin\(x\)\*y not "
                    r"built$", last)


def test_ctrl_c_in_a_short_build_still_says_where(monkeypatch, caplog):
    monkeypatch.setenv("SYMDIFF_PROGRESS", "30")  # far from announced

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("symdiff.codegen.emit.cheapest_program", interrupted)
    with caplog.at_level(logging.INFO, logger=progress.LOGGER), \
            pytest.raises(KeyboardInterrupt):
        sd.grad("cos(x)*y", cache=False)
    assert len(_reports(caplog)) == 1
    assert re.match(r"symdiff: KeyboardInterrupt in CSE after \d+\.\d\d s: grad of cos\(x\)\*y "
                    r"not built$", _reports(caplog)[0])


def test_without_logging_configured_reports_go_to_stderr(monkeypatch, capsys):
    monkeypatch.setattr(logging.Logger, "hasHandlers", lambda self: False)
    progress.emit("symdiff: parse 0.10 s")
    assert capsys.readouterr().err == "symdiff: parse 0.10 s\n"


def test_stages_outside_a_build_do_nothing_and_nested_stages_add_up(monkeypatch, caplog):
    with progress.stage("verify") as counts:  # loading a cached module: no build
        counts["lines"] = 3
    monkeypatch.setenv("SYMDIFF_PROGRESS", "0.001")
    with caplog.at_level(logging.INFO, logger=progress.LOGGER), \
            progress.build(lambda: "test build"):
        time.sleep(0.05)  # announced
        for _ in range(3):
            with progress.stage("derive") as counts:
                counts["outputs"] = 1
                with progress.stage("derive"), progress.stage("simplify"):
                    pass
        # a build inside another: one report
        with progress.build(lambda: "inner"), progress.stage("print") as counts:
            counts["mode"] = "forward"
    messages = _reports(caplog)
    assert messages[0].startswith("symdiff: building test build (")
    assert messages[0].endswith("s so far): running between stages")
    assert re.match(r"symdiff: derive \d+\.\d\d s \(3 outputs; simplify \d+\.\d\d s in 3 calls\)$",
                    messages[1])
    assert re.match(r"symdiff: print \d+\.\d\d s \(mode forward\)$", messages[2])
    assert re.match(r"symdiff: built test build in \d+\.\d\d s$", messages[3])
    assert len(messages) == 4


@pytest.mark.parametrize(("exprs", "wrt", "title"), [
    ("sin(x)*y", ["x", "y"], "grad of sin(x)*y wrt x, y"),
    (["x*y", "x + y"], None, "grad of x*y (and 1 more)"),
    ("x " * 40, "x", "grad of " + ("x " * 40)[:57].strip() + "... wrt x"),
    (sp.sin(sp.Symbol("x")), None, "grad of a SymPy sin"),
    (_loss, None, "grad of _loss()"),
    ("x0", [f"x{i}" for i in range(7)], "grad of x0 wrt x0, x1, x2, x3, x4, ... (7 names)"),
])
def test_titles_say_what_is_built_without_printing_sympy(exprs, wrt, title):
    assert progress.describe("grad", exprs, wrt)() == title
