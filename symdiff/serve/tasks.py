"""The tasks a worker process runs for the classroom page, by name (:func:`handle`).

Each takes a request checked by :mod:`.fields` and returns what the page shows, as JSON
data (the worksheet: a whole HTML page). Every input is read by symdiff's allow-list parser,
under its limits, inside the worker; the server process never parses one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..classroom import lesson, practice
from ..classroom.answers import check
from ..classroom.figures import check_point, code, default_point, graph_figure, plot_svg
from ..classroom.mathml import expression
from ..classroom.page import worksheet_page
from ..errors import SymdiffError
from ..parsing.teaching import parse_as_written

_PRIMES = {1: "\u2032", 2: "\u2033", 3: "\u2034"}
_SUPERSCRIPTS = str.maketrans("0123456789", "\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076"
                                            "\u2077\u2078\u2079")


def derivative_label(sequence: Sequence[str], partial: bool) -> str:
    """The derivative's name in plain text: f with primes (``f`` and U+2032), f with the order
    as a superscript in brackets from the 4th, or the partial derivative's fraction."""
    n = len(sequence)
    if not partial:
        if n in _PRIMES:
            return "f" + _PRIMES[n]
        return f"f\u207d{str(n).translate(_SUPERSCRIPTS)}\u207e"
    power = "" if n == 1 else str(n).translate(_SUPERSCRIPTS)
    below = ""
    for name in reversed(sequence):
        below += f"\u2202{name}"
    return f"\u2202{power}f/{below}"


def preview(expr: str) -> dict[str, Any]:
    """What was understood, and a point where the expression is defined."""
    understood = lesson.preview(expr)
    _, parsed = parse_as_written(expr)
    understood["point"] = default_point([parsed], understood["variables"])
    return understood


def derive(expr: str, wrt: list[str]) -> dict[str, Any]:
    return lesson.lesson(expr, wrt)


def check_answer(expr: str, wrt: list[str], answer: str, order: int | None = None,
                 line: int | None = None) -> dict[str, Any]:
    """The verdict on a whole answer, or on one line of the derivation of order ``order``."""
    if order is None or line is None:
        found = lesson.derivations(expr, tuple(wrt))
        verdict = check(answer, found[-1].result, [found[-1].raw])
    else:
        shown = lesson.line_of(expr, wrt, order, line)
        if shown.rhs is None:
            raise SymdiffError("this line has nothing to check")
        verdict = check(answer, shown.rhs)
    return verdict.as_dict()


def plot(expr: str, wrt: list[str], point: dict[str, float], interval: list[float]
         ) -> dict[str, Any]:
    """The plot of f and its derivative against the first variable of ``wrt``."""
    found = lesson.derivations(expr, tuple(wrt))
    _, parsed = parse_as_written(expr)
    names = lesson.variables_of(parsed)
    fixed = check_point({**dict.fromkeys(names, 1.0), **point}, names)
    partial = len(names) > 1
    label = derivative_label(wrt, partial)
    svg = plot_svg(parsed, found[-1].result, label, wrt[0], fixed, (interval[0], interval[1]),
                   "classroom-plot")
    return {"svg": svg, "label": label}


def graph(expr: str, point: dict[str, float]) -> dict[str, Any]:
    _, parsed = parse_as_written(expr)
    return graph_figure(expr, check_point(point, lesson.variables_of(parsed)))


def source(expr: str, wrt: list[str]) -> dict[str, Any]:
    return {"source": code(expr, wrt)}


def exercises(seed: str, rules: list[str], difficulty: int, count: int) -> dict[str, Any]:
    """A practice set: each exercise's text, rule and MathML."""
    found = practice.exercises(seed, rules, difficulty, count)
    return {"exercises": [
        {"number": e.number, "rule": practice.RULES[e.rule], "text": e.text,
         "html": expression(parse_as_written(e.text)[0])} for e in found]}


def worksheet(seed: str, rules: list[str], difficulty: int, count: int, answers: bool
              ) -> str:
    return worksheet_page(seed, rules, difficulty, count, answers)


TASKS: dict[str, Callable[..., Any]] = {
    "preview": preview,
    "derive": derive,
    "check": check_answer,
    "plot": plot,
    "graph": graph,
    "code": source,
    "practice": exercises,
    "worksheet": worksheet,
}


def handle(task: str, request: dict[str, Any]) -> Any:
    """Run ``task`` with its checked ``request`` (the workers' handler)."""
    return TASKS[task](**request)


#: One request of every task, run by :func:`warm`.
WARM_UP: tuple[tuple[str, dict[str, Any]], ...] = (
    ("preview", {"expr": "x**2*sin(x)"}),
    ("derive", {"expr": "x**2*sin(x)", "wrt": ["x"]}),
    ("check", {"expr": "x**2*sin(x)", "wrt": ["x"], "answer": "2*x*sin(x) + x**2*cos(x)"}),
    ("check", {"expr": "x**2*sin(x)", "wrt": ["x"], "answer": "2*x"}),
    ("plot", {"expr": "x**2*sin(x)", "wrt": ["x"], "point": {"x": 1.0}, "interval": [-2, 2]}),
    ("graph", {"expr": "x**2*sin(x)", "point": {"x": 1.0}}),
    ("code", {"expr": "x**2*sin(x)", "wrt": ["x"]}),
    ("practice", {"seed": "1", "rules": list(practice.RULES), "difficulty": 1, "count": 7}),
)


def warm() -> None:
    """Import and run once what the tasks use (every task, :data:`WARM_UP`), so that workers
    started after this (from the preloaded server process) answer their first request at full
    speed."""
    for task, request in WARM_UP:
        handle(task, request)
