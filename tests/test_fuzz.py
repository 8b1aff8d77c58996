"""Hypothesis fuzzing of the front door: arbitrary text, mutated valid expressions and random
unicode into parse, derive, grad and the CLI. Only SymdiffError may come out. (The long run,
100,000 inputs, is ``benchmarks/fuzz.py``.)"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import symdiff as sd
from symdiff.cli import main as cli_main

SEEDS = [
    "sin(x)*exp(y)/(1 + x**2)",
    "log(x, 2)",
    "max(x, 0)",
    "x**y",
    "where(x > 0, x, -x)",
    "atan2(y, x) + erf(z)",
    "relu(x) + sigmoid(y) - softplus(z)",
    "x^2^3",
    "sqrt(abs(x))",
]
PIECES = st.sampled_from([*"xyz019+-*/^()., <>=_[]:'\"\\", "sin", "**", "__", "e", "\n"])


@st.composite
def mutated(draw):
    text = list(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        action = draw(st.sampled_from(["insert", "delete", "replace"]))
        if action == "insert":
            text.insert(at, draw(PIECES))
        elif text:
            index = min(at, len(text) - 1)
            if action == "delete":
                del text[index]
            else:
                text[index] = draw(PIECES)
    return "".join(text)


inputs = st.one_of(st.text(max_size=60), mutated(), st.text(st.characters(), max_size=20))


def _exercise(text: str) -> None:
    try:
        expr = sd.parse(text)
    except sd.SymdiffError:
        return
    names = sorted(s.name for s in expr.free_symbols)
    try:
        if names:
            sd.derive(expr, wrt=names[0])
        with np.errstate(all="ignore"):
            sd.grad(expr, wrt=names or ["x"], cache=False)(*[0.5] * max(len(names), 1))
    except sd.SymdiffError:
        pass


@settings(max_examples=300)
@given(text=inputs)
@example(text="0**y")  # its derivative holds log(0) = zoo, which the printer did not know
def test_only_symdiff_errors_come_out(text):
    _exercise(text)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=inputs)
def test_cli_exits_0_or_2(text, capsys):  # capsys is read (and so emptied) in every example
    assert cli_main(["grad", "--", text]) in (0, 2)
    err = capsys.readouterr().err
    assert "Traceback" not in err
