"""Practice exercises by rule and difficulty, the same for everyone who uses the same seed.

Exercise ``i`` of a set is drawn by its own ``random.Random`` seeded with the text
``"<seed>|<rules>|<difficulty>|<i>"`` (a string seed is hashed with SHA-512 by ``random``, never
with Python's ``hash()``), so a set is the same in every process and on every machine, and
asking for more exercises keeps the first ones. The rules take turns in the order given.
Every exercise is an expression in ``x`` that the parser reads.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..errors import SymdiffError

#: The rules a set can practise, and what the page calls them.
RULES = {
    "power": "power rule",
    "product": "product rule",
    "quotient": "quotient rule",
    "chain": "chain rule",
    "exp-log": "exponentials and logarithms",
    "trig": "trigonometric and inverse trigonometric functions",
    "combination": "several rules together",
}
DIFFICULTIES = (1, 2, 3)
MAX_COUNT = 30
#: A seed is a short word: letters, digits, ``-`` and ``_``.
MAX_SEED_LENGTH = 40


@dataclass(frozen=True)
class Exercise:
    """``text`` to differentiate with respect to ``x``, practising ``rule``."""

    number: int
    rule: str
    text: str


def _c(draw: random.Random, low: int = 2, high: int = 9) -> int:
    return draw.randint(low, high)


def _times(coefficient: int, body: str) -> str:
    """``3*x**2``; a coefficient of 1 is left out."""
    return body if coefficient == 1 else f"{coefficient}*{body}"


#: The functions exercises are made of: a first calculus course's, not every function symdiff
#: knows (a new function of the registry is no new exercise).
SYLLABUS = ("sin", "cos", "tan", "exp", "log")
WAVES = ("sin", "cos")


def _function(draw: random.Random, but: Sequence[str] = ("tan", "log")) -> str:
    """A function of the syllabus, but not one of ``but``."""
    return draw.choice([name for name in SYLLABUS if name not in but])


def _two(draw: random.Random, low: int, high: int) -> tuple[int, int]:
    """Two different numbers from ``low`` to ``high``."""
    first = draw.randint(low, high)
    second = draw.choice([k for k in range(low, high + 1) if k != first])
    return first, second


def _fraction(draw: random.Random) -> tuple[int, int]:
    """p/q in lowest terms, not a whole number."""
    q = draw.randint(2, 5)
    p = draw.choice([k for k in range(1, 8) if math.gcd(k, q) == 1])
    return p, q


def _power(draw: random.Random, level: int) -> str:
    n, m = _two(draw, 2, 6)
    if level == 1:
        return draw.choice([_times(_c(draw, 1, 9), f"x**{n}"), f"x**{n} + {_c(draw)}*x"])
    if level == 2:
        return draw.choice([f"{_c(draw)}*x**{n} - {_c(draw)}*x**{m} + {_c(draw)}",
                            f"{_c(draw)}/x**{m}", f"{_c(draw)}*sqrt(x) + x**{n}"])
    p, q = _fraction(draw)
    return draw.choice([f"{_c(draw)}*x**({p}/{q}) - {_c(draw)}/x**{m}",
                        f"x**{n}/{_c(draw)} + {_c(draw)}*x**(-{p}/{q})",
                        f"sqrt(x)*(x**{m} + {_c(draw)})"])


def _product(draw: random.Random, level: int) -> str:
    n, k = _c(draw, 2, 5), _c(draw, 2, 5)
    f, g = _function(draw), _function(draw, but=("tan",))
    trig = "cos" if f == "sin" else "sin"
    if level == 1:
        return draw.choice([f"x**{n}*{g}(x)", f"x*{f}(x)", f"{_c(draw)}*x*{g}(x)"])
    if level == 2:
        return draw.choice([f"({_c(draw)}*x**{n} + {_c(draw)})*{f}({k}*x)",
                            f"exp({k}*x)*{draw.choice(WAVES)}(x)",
                            f"x**{n}*log(x)"])
    return draw.choice([f"x**{n}*{f}(x)*{trig}(x)",
                        f"x*exp(-{k}*x)*{trig}({n}*x)",
                        f"(x**2 + {_c(draw)})*sqrt(x)*{f}(x)"])


def _quotient(draw: random.Random, level: int) -> str:
    n, a, b = _c(draw, 2, 4), _c(draw), _c(draw)
    f = _function(draw)
    if level == 1:
        return draw.choice([f"{f}(x)/x**{n}", f"x/(x + {a})", f"(x + {a})/(x - {b})"])
    if level == 2:
        return draw.choice([f"({a}*x + {b})/({_c(draw)}*x**2 + {_c(draw)})",
                            f"{f}(x)/(x**2 + {a})", f"x**{n}/exp(x)"])
    return draw.choice([f"{f}({n}*x)/(x**2 + {a}*x + {a * a})",
                        f"(x**2 - {a})/({draw.choice(WAVES)}(x) + {b})",
                        f"log(x)/(x**{n} + {a})"])


def _chain(draw: random.Random, level: int) -> str:
    n, a, b, k = _c(draw, 2, 7), _c(draw), _c(draw), _c(draw, 2, 6)
    f = _function(draw)
    if level == 1:
        return draw.choice([f"({a}*x + {b})**{n}", f"{f}({k}*x)", f"sqrt({a}*x + {b})"])
    if level == 2:
        return draw.choice([f"{f}({a}*x**2 + {b})", f"sqrt({a}*x**2 + {b})",
                            f"({a}*x**2 - {b})**{n}", f"log({a}*x**2 + {b})"])
    g = draw.choice(WAVES)
    return draw.choice([f"{g}(x**{n})**{_c(draw, 2, 4)}", f"exp({g}({k}*x))",
                        f"sqrt(1 + {g}(x)**2)", f"log(1 + exp({k}*x))**{_c(draw, 2, 3)}"])


def _exp_log(draw: random.Random, level: int) -> str:
    a, k = _c(draw), _c(draw, 2, 6)
    if level == 1:
        return draw.choice([f"exp({k}*x)", f"log({a}*x)", f"{a}*exp(x) - log(x)",
                            f"exp(x**{k})"])
    if level == 2:
        return draw.choice([f"x*exp(-{k}*x)", f"log(x**2 + {a})", "exp(x)/x",
                            f"log(x, {k})"])
    return draw.choice([f"log(sqrt(x**2 + {a}))", f"exp(-x**2/{k})*log(x)", "x**x",
                        f"log(log(x + {a}))"])


def _trig(draw: random.Random, level: int) -> str:
    k = _c(draw, 2, 6)
    if level == 1:
        return draw.choice([f"{_function(draw, but=('exp', 'log'))}({k}*x)", "asin(x)",
                            f"atan({k}*x)", "tan(x)"])
    if level == 2:
        return draw.choice(["x*atan(x)", f"tan(x)**{k}", f"acos(x/{k})",
                            f"sin(x)*cos({k}*x)"])
    return draw.choice(["atan(1/x)", "asin(sqrt(x))", "sin(x)*tan(x)", "atan(exp(x))",
                        f"acos(1/(1 + x**{k}))"])


def _combination(draw: random.Random, level: int) -> str:
    n, k = _two(draw, 2, 5)
    f, g = _two_functions(draw)
    if level == 1:
        return draw.choice([f"x**{n}*{f}({k}*x)", f"{f}({k}*x)/x", "sqrt(x)*log(x)",
                            f"exp(-{k}*x)*x**{n}"])
    if level == 2:
        return draw.choice([f"x**{n}*exp(-x**2)", f"{f}(x)**{n}*{g}({k}*x)",
                            "log(x)/sqrt(x)", f"exp({k}*x)/(1 + x**2)"])
    return draw.choice([f"exp(-x)*{f}(x)**{n}/x", "atan(x)*log(1 + x**2)",
                        f"sqrt(1 + x**2)*exp(-{k}*x)", f"{f}(x)**{n}*{g}({k}*x)**{k}",
                        "x*asin(x) + sqrt(1 - x**2)"])


def _two_functions(draw: random.Random) -> tuple[str, str]:
    """Two different ones of sin, cos and tan."""
    names = [name for name in SYLLABUS if name not in ("exp", "log")]
    first = draw.choice(names)
    return first, draw.choice([name for name in names if name != first])


MAKERS: dict[str, Callable[[random.Random, int], str]] = {
    "power": _power,
    "product": _product,
    "quotient": _quotient,
    "chain": _chain,
    "exp-log": _exp_log,
    "trig": _trig,
    "combination": _combination,
}


def check_request(seed: str, rules: Sequence[str], difficulty: int, count: int) -> None:
    """An error naming what is wrong with a request for a set (seed, rules, difficulty, count)."""
    if not seed or len(seed) > MAX_SEED_LENGTH or not all(
            c.isascii() and (c.isalnum() or c in "-_") for c in seed):
        raise SymdiffError(f"a seed is 1 to {MAX_SEED_LENGTH} letters, digits, - or _; "
                           f"got {seed!r}")
    unknown = [r for r in rules if r not in RULES]
    if not rules or unknown:
        raise SymdiffError(f"rules are some of {', '.join(RULES)}; "
                           f"got {', '.join(rules) or 'none'}")
    if difficulty not in DIFFICULTIES:
        raise SymdiffError(f"difficulty is 1, 2 or 3; got {difficulty!r}")
    if not 1 <= count <= MAX_COUNT:
        raise SymdiffError(f"a set has 1 to {MAX_COUNT} exercises; got {count!r}")


def exercises(seed: str, rules: Sequence[str] = tuple(RULES), difficulty: int = 1,
              count: int = 8) -> list[Exercise]:
    """``count`` exercises practising ``rules`` in turn at ``difficulty`` (1 to 3), the same
    for the same arguments everywhere; no two in a set alike."""
    check_request(seed, rules, difficulty, count)
    ordered = list(dict.fromkeys(rules))
    found: list[Exercise] = []
    seen: set[str] = set()
    for i in range(count):
        rule = ordered[i % len(ordered)]
        for attempt in range(20):
            draw = random.Random(f"{seed}|{','.join(ordered)}|{difficulty}|{i}|{attempt}")
            text = MAKERS[rule](draw, difficulty)
            if text not in seen:
                break
        seen.add(text)
        found.append(Exercise(i + 1, rule, text))
    return found
