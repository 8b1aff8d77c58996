"""What a request to the classroom server may contain, checked before any worker sees it.

Each task takes a JSON object with known fields only, each of a known type and size: texts of
at most :data:`MAX_TEXT` characters (the parser's own limits apply inside the worker too),
one to five variable names, points and intervals of finite numbers of at most :data:`LIMIT` in
size. A request that breaks a rule is answered ``400`` with what is wrong, and never computed.
The checked request, with its fields in a fixed order, is also the key under which its answer
is kept (:mod:`.results`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from typing import Any

from ..classroom.lesson import MAX_ORDER
from ..classroom.practice import DIFFICULTIES, MAX_COUNT, MAX_SEED_LENGTH, RULES

#: The largest request body, in bytes.
MAX_BODY = 16 * 1024
#: The longest expression or answer, in characters.
MAX_TEXT = 2000
#: The largest number in a point or an interval.
LIMIT = 1e6
#: The most variables a point may name.
MAX_NAMES = 20

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,99}")


class BadRequest(ValueError):
    """A request that breaks a rule (the message says which)."""


def _text(value: Any, field: str) -> str:
    if not isinstance(value, str):
        raise BadRequest(f"{field} must be text")
    if not value.strip():
        raise BadRequest(f"{field} is empty")
    if len(value) > MAX_TEXT:
        raise BadRequest(f"{field} is longer than {MAX_TEXT} characters")
    return value


def _names(value: Any, field: str = "wrt") -> list[str]:
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_ORDER:
        raise BadRequest(f"{field} must be a list of 1 to {MAX_ORDER} variable names")
    for name in value:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise BadRequest(f"{field}: {str(name)[:40]!r} is not a variable name")
    return list(value)


def _number(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadRequest(f"{field} must be a number")
    number = float(value)
    if not math.isfinite(number) or abs(number) > LIMIT:
        raise BadRequest(f"{field} must be a finite number of at most {LIMIT:g} in size")
    return number


def _point(value: Any) -> dict[str, float]:
    if not isinstance(value, dict) or len(value) > MAX_NAMES:
        raise BadRequest(f"point must map at most {MAX_NAMES} variable names to numbers")
    point = {}
    for name, number in value.items():
        if not _NAME.fullmatch(name):
            raise BadRequest(f"point: {name[:40]!r} is not a variable name")
        point[name] = _number(number, f"point[{name}]")
    return dict(sorted(point.items()))


def _interval(value: Any) -> list[float]:
    if not isinstance(value, list) or len(value) != 2:
        raise BadRequest("interval must be [from, to]")
    low, high = (_number(v, "interval") for v in value)
    if not high - low > 1e-9 * max(1.0, abs(low)):
        raise BadRequest("the interval must go from a smaller to a larger number")
    return [low, high]


def _integer(value: Any, field: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise BadRequest(f"{field} must be a whole number from {low} to {high}")
    return value


def _seed(value: Any) -> str:
    if not isinstance(value, str) or not re.fullmatch(rf"[A-Za-z0-9_-]{{1,{MAX_SEED_LENGTH}}}",
                                                      value):
        raise BadRequest(f"seed must be 1 to {MAX_SEED_LENGTH} letters, digits, - or _")
    return value


def _rules(value: Any) -> list[str]:
    if not isinstance(value, list) or not value or any(r not in RULES for r in value):
        raise BadRequest(f"rules must be a list of some of: {', '.join(RULES)}")
    return list(dict.fromkeys(value))


#: The fields of each task: a function checking each, and whether it may be left out.
FIELDS: dict[str, dict[str, tuple[Callable[[Any], Any], bool]]] = {
    "preview": {"expr": (lambda v: _text(v, "expr"), True)},
    "derive": {"expr": (lambda v: _text(v, "expr"), True), "wrt": (_names, True)},
    "check": {
        "expr": (lambda v: _text(v, "expr"), True), "wrt": (_names, True),
        "answer": (lambda v: _text(v, "answer"), True),
        "order": (lambda v: _integer(v, "order", 0, MAX_ORDER - 1), False),
        "line": (lambda v: _integer(v, "line", 0, 100_000), False),
    },
    "plot": {"expr": (lambda v: _text(v, "expr"), True), "wrt": (_names, True),
             "point": (_point, True), "interval": (_interval, True)},
    "graph": {"expr": (lambda v: _text(v, "expr"), True), "point": (_point, True)},
    "code": {"expr": (lambda v: _text(v, "expr"), True), "wrt": (_names, True)},
    "practice": {
        "seed": (_seed, True), "rules": (_rules, True),
        "difficulty": (lambda v: _integer(v, "difficulty", 1, max(DIFFICULTIES)), True),
        "count": (lambda v: _integer(v, "count", 1, MAX_COUNT), True),
    },
}
FIELDS["worksheet"] = {**FIELDS["practice"], "answers": (lambda v: bool(v), True)}


def checked(task: str, body: Mapping[str, Any]) -> dict[str, Any]:
    """The request for ``task`` with every field checked, in a fixed order."""
    fields = FIELDS[task]
    unknown = sorted(set(body) - set(fields))
    if unknown:
        raise BadRequest(f"unknown field {unknown[0][:40]!r} for {task}")
    out = {}
    for name, (check, required) in fields.items():
        if name in body:
            out[name] = check(body[name])
        elif required:
            raise BadRequest(f"{task} needs {name}")
    if ("order" in out) != ("line" in out):
        raise BadRequest("order and line go together")
    return out


def parse_body(raw: bytes) -> dict[str, Any]:
    """The JSON object of a request body."""
    try:
        body = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise BadRequest("the body is not JSON") from error
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    return body


def key(task: str, request: Mapping[str, Any]) -> str:
    """The key an answer is kept under: the task and its checked request."""
    return task + ":" + json.dumps(request, sort_keys=True, separators=(",", ":"))
