"""A class at the classroom server: students asking for textbook derivatives (and previews,
answer checks, plots, graphs, code and practice sets, as the page does), and one student
sending pathological inputs all the while. Used by ``tests/test_serve_load.py`` (what must
hold) and ``benchmarks/bench_serve.py`` (how long the answers take)."""

from __future__ import annotations

import random
import statistics
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .serve_client import post

TEXTBOOK = [
    "x**2*sin(x)", "sin(x)**2*cos(3*x)", "exp(-x**2)", "log(x)/x", "(x**2 + 1)**3",
    "atan(x)/(1 + x**2)", "sqrt(1 - x**2)", "x**x", "tan(x)", "x*exp(x)", "sin(x)/x",
    "cos(x)**3", "log(x**2 + 1)", "asin(2*x)", "(3*x + 2)**5", "exp(2*x)*cos(x)",
    "x**3 - 4*x**2 + 7", "1/(1 + exp(-x))", "sqrt(x)*log(x)", "sin(x**2)", "x/(x**2 + 1)",
    "exp(sin(x))", "cosh(x)*sinh(x)", "log(cos(x))", "x**2*exp(-x)", "atan(x**2)",
    "(x - 1)/(x + 1)", "sin(3*x)*cos(2*x)", "x**4*log(x)", "sqrt(x**2 + 4)",
]

#: What the page asks for, and how often (a student types, derives, checks, draws).
TASKS = {"preview": 4, "derive": 5, "check": 3, "plot": 3, "graph": 2, "code": 1,
         "practice": 1}


def student_request(draw: random.Random) -> tuple[str, dict[str, Any]]:
    """One request of a student, drawn as the page makes them."""
    expr = draw.choice(TEXTBOOK)
    task = draw.choices(list(TASKS), weights=list(TASKS.values()))[0]
    if task == "preview":
        return task, {"expr": expr}
    if task == "check":
        return task, {"expr": expr, "wrt": ["x"], "answer": draw.choice(["0", "2*x", "cos(x)"])}
    if task == "plot":
        return task, {"expr": expr, "wrt": ["x"], "point": {"x": 1.0},
                      "interval": draw.choice([[-5, 5], [-2, 2], [0.5, 3]])}
    if task == "graph":
        return task, {"expr": expr, "point": {"x": draw.choice([0.5, 1.0])}}
    if task == "practice":
        return task, {"seed": str(draw.randint(1, 5)), "rules": ["chain", "product"],
                      "difficulty": draw.randint(1, 3), "count": 8}
    return task, {"expr": expr, "wrt": ["x"] * draw.choice([1, 1, 1, 2])}


def pathological_request(k: int) -> tuple[str, dict[str, Any]]:
    """The k-th input of the student who tries to break the server, never twice the same."""
    n = 60 + k
    kinds = [
        ("derive", {"expr": f"(a+b+c+d+u+v)**{n}*exp(a*b*c*d)", "wrt": ["a", "b", "c", "d", "u"]}),
        ("code", {"expr": f"sin((4*sqrt(x) + x**{n})*(5*x**6 - 7*x**3 + 5))", "wrt": ["x"]}),
        ("check", {"expr": f"(a+b+c+d+u+v)**{n}", "wrt": ["a"],
                   "answer": f"(a+b+c+d+u+v)**{n - 1}*(a+b+c+d+u+v)*{n}/(a+b+c+d+u+v)"}),
        ("derive", {"expr": f"tan(tan(tan(tan(x + {k}))))", "wrt": ["x"] * 5}),
        ("code", {"expr": f"(a+b+c+d+u+v)**{n}", "wrt": ["a", "b", "c", "d", "u"]}),
    ]
    return kinds[k % len(kinds)]


@dataclass
class Report:
    """What the class saw: every student request's latency and outcome, what the pathological
    student's requests came back as, and whether a request after them was answered."""

    latencies: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    pathological: Counter = field(default_factory=Counter)
    pathological_seconds: list[float] = field(default_factory=list)
    answered_after: bool = False
    seconds: float = 0.0

    def percentile(self, p: int) -> float:
        """The ``p``-th percentile of the latencies (interpolated, as ``statistics`` does)."""
        return statistics.quantiles(self.latencies, n=100, method="inclusive")[p - 1]

    def summary(self) -> str:
        took = ", ".join(f"{seconds:.1f}" for seconds in self.pathological_seconds)
        return (f"{len(self.latencies)} student requests in {self.seconds:.0f} s: "
                f"p50 {statistics.median(self.latencies):.3f} s, p95 {self.percentile(95):.3f}"
                f" s, max {max(self.latencies):.3f} s; failures {len(self.failures)}; "
                f"pathological {dict(self.pathological)} (seconds each: {took}); "
                f"answered after: {self.answered_after}")


def run(url: str, students: int = 30, requests: int = 20) -> Report:
    """The class at ``url``: ``students`` threads of ``requests`` each, and the pathological
    student until they are done."""
    report = Report()
    lock = threading.Lock()
    done = threading.Event()

    def student(number: int) -> None:
        draw = random.Random(number)
        for _ in range(requests):
            task, body = student_request(draw)
            start = time.perf_counter()
            try:
                status, answer = post(url, task, body, timeout=600, client=f"student{number:04d}")
            except OSError as error:
                status, answer = 0, {"ok": False, "error": str(error)}
            latency = time.perf_counter() - start
            with lock:
                report.latencies.append(latency)
                if status != 200 or not answer.get("ok"):
                    report.failures.append(f"{task} {body}: {status} {answer.get('error')}")

    def pathological() -> None:
        k = 0
        while not done.is_set():
            task, body = pathological_request(k)
            start = time.perf_counter()
            status, answer = post(url, task, body, timeout=600, client="breaker0001")
            kind = "ok" if status == 200 and answer.get("ok") else answer.get("kind", status)
            with lock:
                report.pathological[kind] += 1
                report.pathological_seconds.append(time.perf_counter() - start)
            k += 1

    began = time.perf_counter()
    breaker = threading.Thread(target=pathological)
    breaker.start()
    threads = [threading.Thread(target=student, args=(i,)) for i in range(students)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    report.seconds = time.perf_counter() - began
    done.set()
    breaker.join()
    status, answer = post(url, "derive", {"expr": "x**3*cos(x)", "wrt": ["x"]}, timeout=600)
    report.answered_after = status == 200 and bool(answer.get("ok"))
    return report
