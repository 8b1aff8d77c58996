"""Check a student's answer: equivalent, equivalent but not in simplest form, or not equivalent
with a point where the two differ.

Two independent judges decide, and neither is trusted alone:

- **numbers**: both expressions at :data:`POINTS` random points (from ``random.Random`` with a
  fixed seed, so a verdict never changes between runs), each evaluated to 30 digits by SymPy's
  ``evalf``; a point where they differ is shown to the student;
- **symbols**: SymPy must simplify their difference to 0 (:data:`SIMPLIFICATIONS`).

The answer is *equivalent* when both agree that it is; *not equivalent* when a point shows a
difference. Two real numbers that differ there settle it; when the answer is no real number
where the derivative is one, SymPy's ``simplify`` is asked whether the difference is 0 and, if
it is, the message says so (the two are then defined differently, as at a branch cut). When
the numbers agree but simplification cannot show that the difference is 0, the verdict says
so: ``"probably equivalent"``.

*Simplest form*: an answer with arithmetic left to do (``x*1``, ``+ 0``, ``x**1``, ``2*3``, like
terms; what SymPy's automatic evaluation does) is not in simplest form, nor is one with more
operations (SymPy's ``count_ops``) than both the derivative as the rules give it and the
simplified derivative: ``6*x**5 + 12*x**3 + 6*x`` for ``6*x*(x**2 + 1)**2``. The verdict
then shows a simpler form.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sympy as sp

from ..engine.inputtext import input_text
from ..parsing import written as w
from ..parsing.teaching import parse_as_written
from . import mathml

#: How many random points the numbers are compared at.
POINTS = 12
#: Digits of each evaluation, and the relative difference that counts as unequal.
DIGITS, TOLERANCE = 30, 1e-12

VERDICTS = ("equivalent", "unsimplified", "different", "probably equivalent")


@dataclass(frozen=True)
class Verdict:
    """What the check found: ``verdict`` (one of :data:`VERDICTS`), a ``message`` for the
    student, the ``point`` where the two differ (with both values) when they do, and a
    ``simpler`` form when the answer is not in simplest form."""

    verdict: str
    message: str
    point: dict[str, float] | None = None
    values: tuple[float | None, float | None] | None = None
    simpler: sp.Expr | None = None

    def as_dict(self) -> dict[str, Any]:
        simpler = None if self.simpler is None else {
            "html": mathml.expression(self.simpler), "text": input_text(self.simpler)}
        return {"verdict": self.verdict, "message": self.message, "point": self.point,
                "values": list(self.values) if self.values else None, "simpler": simpler}


def operations(expr: sp.Basic) -> int:
    """How many operations an expression writes, as written: each ``+ - * /``, power,
    function and minus sign (a negative number or fraction counts one); in a sum or product as
    written, a term or factor that repeats an earlier one counts one more (``x*x`` is
    ``x**2``, ``x + x`` is ``2*x``)."""
    if isinstance(expr, w.Literal):
        return 0
    if isinstance(expr, w.SignedSum | w.Product):
        parts = expr.terms if isinstance(expr, w.SignedSum) else expr.args
        repeats = len(parts) - len(set(parts))
        return len(parts) - 1 + repeats + sum(operations(p) for p in parts)
    if isinstance(expr, w.Called):
        return 1 + sum(operations(a) for a in expr.operands)
    if isinstance(expr, w.Written):  # Quotient, Negation, Power, BaseLog
        own = 1
        return own + sum(operations(a) for a in expr.args)
    if expr.is_Number:
        return int(expr.is_negative) + int(not expr.is_Integer and expr.is_Rational)
    if expr.is_Atom:
        return 0
    own = len(expr.args) - 1 if isinstance(expr, sp.Add | sp.Mul) else 1
    return own + sum(operations(a) for a in expr.args)


def _same_names(expr: sp.Basic, like: sp.Basic) -> sp.Basic:
    """``expr`` with each variable replaced by the variable of the same name in ``like``."""
    by_name = {s.name: s for s in like.free_symbols if isinstance(s, sp.Symbol)}
    swap = {s: by_name[s.name] for s in expr.free_symbols
            if isinstance(s, sp.Symbol) and s.name in by_name and by_name[s.name] != s}
    return expr.xreplace(swap) if swap else expr


def _value(expr: sp.Expr, point: dict[sp.Symbol, sp.Rational]) -> complex | None:
    """``expr`` at ``point`` to :data:`DIGITS` digits; None where it is not a finite number."""
    try:
        value = complex(expr.evalf(DIGITS, subs=point))
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return None
    if value != value or abs(value) == float("inf"):  # NaN or infinite
        return None
    return value


def _real(value: complex | None) -> float | None:
    if value is None or abs(value.imag) > TOLERANCE * max(1.0, abs(value.real)):
        return None
    return value.real


def _points(symbols: Sequence[sp.Symbol]) -> list[dict[sp.Symbol, sp.Rational]]:
    """Candidate points, two decimals each (readable in a message): every other one has only
    positive coordinates, for expressions defined there only (``sqrt``, ``log``)."""
    draw = random.Random(20240601)
    points = []
    for i in range(6 * POINTS):
        point = {}
        for symbol in symbols:
            magnitude = draw.randint(15, 240)
            sign = 1 if i % 2 else draw.choice((1, -1))
            point[symbol] = sp.Rational(sign * magnitude, 100)
        points.append(point)
    return points


def compare_numbers(answer: sp.Expr, expected: sp.Expr) -> tuple[int, Any]:
    """How many points the two were compared at, and the first point where they differ
    (with the answer's and the expected value) or None."""
    symbols = sorted(answer.free_symbols | expected.free_symbols, key=lambda s: s.name)
    compared = 0
    for point in _points(symbols):
        wanted = _real(_value(expected, point))
        if wanted is None:
            continue  # the derivative is not defined here: nothing to compare
        got = _real(_value(answer, point))
        if got is None or abs(got - wanted) > TOLERANCE * max(1.0, abs(wanted), abs(got)):
            return compared + 1, (point, got, wanted)
        compared += 1
        if compared == POINTS:
            break
    return compared, None


#: The ways tried, in turn, to show that a difference is 0: SymPy's ``simplify``, after
#: expanding trigonometric functions of sums and multiples, after writing them as exponentials.
SIMPLIFICATIONS = (
    sp.simplify,
    lambda e: sp.simplify(sp.expand_trig(e)),
    lambda e: sp.simplify(e.rewrite(sp.exp)),
)


def simplifies_to_zero(difference: sp.Expr) -> bool:
    """Whether SymPy shows that ``difference`` is 0 (:data:`SIMPLIFICATIONS`)."""
    return difference == 0 or any(way(difference) == 0 for way in SIMPLIFICATIONS)


def _number(value: float | None) -> str:
    return "not a real number" if value is None else f"{value:.6g}"


def check(answer_text: str, expected: sp.Expr, references: Sequence[sp.Expr] = ()) -> Verdict:
    """The verdict on ``answer_text`` (read by the allow-list parser) against ``expected``;
    ``references`` are other forms of it (the derivative as the rules give it) that count as
    simplest too."""
    written, parsed = parse_as_written(answer_text)
    written, parsed = _same_names(written, expected), _same_names(parsed, expected)
    compared, differs = compare_numbers(parsed, expected)
    difference = parsed - expected
    if differs is not None:
        point, got, wanted = differs
        zero = got is None and (difference == 0 or sp.simplify(difference) == 0)
        at = {s.name: float(v) for s, v in point.items()}
        where = ", ".join(f"{name} = {value:g}" for name, value in at.items())
        note = "" if not zero else (" (simplification says they are equal: look at where "
                                    "each is defined)")
        return Verdict("different", f"At {where or 'every point'} your answer is "
                       f"{_number(got)} and the derivative is {_number(wanted)}{note}.",
                       at, (got, wanted))
    if not simplifies_to_zero(difference):
        return Verdict("probably equivalent", f"Your answer and the derivative are equal at "
                       f"{compared} random points to {DIGITS} digits, but simplification could "
                       "not show that they are equal everywhere.")
    if operations(written) > operations(parsed):
        return Verdict("unsimplified", "It equals the derivative, but there is arithmetic "
                       "left to do.", simpler=parsed)
    forms = [expected, *references]
    shortest = min(forms, key=sp.count_ops)
    if sp.count_ops(parsed) > max(sp.count_ops(f) for f in forms):
        return Verdict("unsimplified", "It equals the derivative, but it can be written with "
                       "fewer operations.", simpler=shortest)
    return Verdict("equivalent", "Your answer equals the derivative: simplification shows it, "
                   f"and the two agree at {compared} random points.")
