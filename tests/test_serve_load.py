"""A class at ``symdiff serve`` (as a teacher starts it): 30 students sending 20 textbook
requests each and one student sending pathological inputs throughout. No student request
fails, the pathological ones are answered (in time, or refused when out of time or memory)
without stalling the others, and the server answers after them. The latencies are reported
(``-s`` shows them); how fast is the business of ``benchmarks/bench_serve.py``, not of a
test."""

from __future__ import annotations

import pytest

from . import serve_load
from .serve_process import serving


@pytest.mark.slow
def test_a_class_and_one_student_who_tries_to_break_it(record_property):
    with serving() as (url, _):
        report = serve_load.run(url, students=30, requests=20)
    print(report.summary())
    record_property("p95_seconds", round(report.percentile(95), 3))
    assert len(report.latencies) == 600
    assert report.failures == []
    # each pathological request is answered: in time, or refused (out of time or memory, or
    # input refused), never by a server error or a busy pool (which machine decides which)
    assert sum(report.pathological.values()) >= 1
    assert set(report.pathological) <= {"ok", "time", "memory", "input"}, report.pathological
    assert report.answered_after
