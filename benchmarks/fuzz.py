"""Fuzz the front door: random text, mutated valid expressions and random unicode into
``parse``, ``derive``, ``grad`` and the CLI's error path. The only exceptions allowed out are
``SymdiffError`` subclasses. Outside CI (it runs for minutes):
``python benchmarks/fuzz.py -n 100000``.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import random
import time
import traceback

import symdiff as sd
from symdiff.cli import main as cli_main

SEEDS = [
    "sin(x)*exp(y)/(1 + x**2)",
    "log(x, 2)",
    "max(x, 0)",
    "x**y",
    "where(x > 0, x, -x)",
    "where((x > 0) & (y < 1), x*y, x + y)",
    "where(0 < x <= 1 or not y > 2, x**2, y)",
    "atan2(y, x) + erf(z)",
    "relu(x) + sigmoid(y) - softplus(z)",
    "gamma(x) + loggamma(y)",
    "x^2^3",
    "min(x, y, z)",
    "sqrt(abs(x))",
    "asinh(x)*acosh(2 + y**2)",
    "1e-3*x + 0.5",
]
TOKENS = [
    *"xyz0123456789+-*/^()., <>=_[]{}:;'\"!@#$%&|\\~`",
    "sin",
    "exp",
    "log",
    "**",
    "lambda",
    "__import__",
    "os",
    "where",
    "max",
    "e",
    "pi",
    " ",
    "\n",
    "\t",
    "1e308",
    "9**9**9",
    "__class__",
    "def",
    "for",
    "in",
    "if",
    "else",
    "j",
    "\x00",
]


def random_text(rng: random.Random) -> str:
    kind = rng.randrange(4)
    if kind == 0:
        return "".join(rng.choice(TOKENS) for _ in range(rng.randrange(1, 40)))
    if kind == 1:
        text = list(rng.choice(SEEDS))
        for _ in range(rng.randrange(1, 6)):
            op, at = rng.randrange(3), rng.randrange(len(text) + 1)
            if op == 0 and text:
                del text[min(at, len(text) - 1)]
            elif op == 1:
                text.insert(at, rng.choice(TOKENS))
            elif text:
                text[min(at, len(text) - 1)] = rng.choice(TOKENS)
        return "".join(text)
    if kind == 2:
        return "".join(chr(rng.randrange(0x20, 0x3000)) for _ in range(rng.randrange(1, 20)))
    left, right = rng.choice(SEEDS), rng.choice(SEEDS)
    return f"{left} {rng.choice('+-*/^')} ({right})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("-n", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()
    rng = random.Random(options.seed)
    outcomes: collections.Counter[str] = collections.Counter()
    failures = []
    start = time.perf_counter()
    for i in range(options.n):
        text = random_text(rng)
        try:
            expr = sd.parse(text)
            outcomes["parsed"] += 1
            if expr.free_symbols and i % 20 == 0:
                name = sorted(s.name for s in expr.free_symbols)[0]
                sd.derive(expr, wrt=name)
                sd.grad(expr, cache=False)(*[0.5] * len(expr.free_symbols))
                outcomes["derived and compiled"] += 1
            if i % 500 == 0:
                with contextlib.redirect_stdout(io.StringIO()):
                    cli_main(["grad", "--", text])
        except sd.SymdiffError:
            outcomes["SymdiffError"] += 1
        except Exception as error:  # the finding this script exists for
            outcomes[type(error).__name__] += 1
            failures.append((text, traceback.format_exc(limit=3)))
    seconds = time.perf_counter() - start
    print(f"{options.n} inputs in {seconds:.0f} s: {dict(outcomes)}")
    for text, trace in failures[:10]:
        print(repr(text), trace, sep="\n")
    raise SystemExit(1 if failures else 0)


if __name__ == "__main__":
    main()
