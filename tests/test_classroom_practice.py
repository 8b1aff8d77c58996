"""Practice sets: the same exercises for the same seed in every process, by rule and
difficulty, each one an expression whose derivative symdiff gets right."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp

import symdiff as sd
from symdiff.classroom.practice import RULES, exercises

from .conftest import ROOT

SCRIPT = ("import json, sys; from symdiff.classroom.practice import exercises; "
          "print(json.dumps([e.text for e in exercises(sys.argv[1], sys.argv[2].split(','), "
          "int(sys.argv[3]), 12)]))")


def _in_a_process(seed, rules, difficulty, hash_seed):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": hash_seed}
    done = subprocess.run([sys.executable, "-c", SCRIPT, seed, ",".join(rules), str(difficulty)],
                          capture_output=True, text=True, env=env, timeout=120, check=True)
    return json.loads(done.stdout)


def test_the_same_seed_gives_the_same_set_in_other_processes():
    rules = ["chain", "quotient", "trig"]
    here = [e.text for e in exercises("class-7", rules, 2, 12)]
    assert _in_a_process("class-7", rules, 2, "1") == here
    assert _in_a_process("class-7", rules, 2, "12345") == here


def test_another_seed_gives_another_set_and_more_exercises_keep_the_first():
    first = [e.text for e in exercises("a", list(RULES), 1, 10)]
    assert first != [e.text for e in exercises("b", list(RULES), 1, 10)]
    assert [e.text for e in exercises("a", list(RULES), 1, 4)] == first[:4]
    assert len(set(first)) == len(first)


def test_the_rules_take_turns():
    found = exercises("1", ["power", "chain"], 1, 5)
    assert [e.rule for e in found] == ["power", "chain", "power", "chain", "power"]
    assert [e.number for e in found] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize(("arguments", "message"), [
    (("", ["power"], 1, 3), "a seed is 1 to 40"),
    (("a b", ["power"], 1, 3), "a seed is 1 to 40"),
    (("1", ["calculus"], 1, 3), "rules are some of"),
    (("1", [], 1, 3), "rules are some of"),
    (("1", ["power"], 4, 3), "difficulty is 1, 2 or 3"),
    (("1", ["power"], 1, 31), "a set has 1 to 30 exercises"),
])
def test_a_bad_request_says_what_is_wrong(arguments, message):
    with pytest.raises(sd.SymdiffError, match=message):
        exercises(*arguments)


@pytest.mark.slow
@pytest.mark.parametrize("difficulty", [1, 2, 3])
def test_every_exercise_derives_to_sympys_derivative(difficulty):
    x = sp.Symbol("x", real=True)
    points = np.array([0.3, 0.7, 1.3, 2.1])
    for seed in ("1", "2"):
        for exercise in exercises(seed, list(RULES), difficulty, len(RULES)):
            expr = sd.parse(exercise.text)
            assert expr.free_symbols == {x}, exercise
            result = sd.derive(exercise.text, wrt="x").result
            expected = sp.diff(expr, x)
            for point in points:
                got = complex(result.evalf(20, subs={x: point}))
                wanted = complex(expected.evalf(20, subs={x: point}))
                assert got == pytest.approx(wanted, rel=1e-10, abs=1e-12), exercise
