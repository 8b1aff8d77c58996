"""Very deep expressions build, or stop with a clear error that says how deep they are; the
process never crashes. Builds run on a thread with a large stack (:mod:`symdiff.stacks`), so
the recursion limit of a build, not the C stack, is what a too-deep expression meets; and no
line of generated code nests so deep that Python's parser refuses it
(:mod:`symdiff.simplify.shallow`). The crashing cases run in a child process, so a crash
shows as its exit status instead of ending the test run."""

from __future__ import annotations

import contextvars
import os
import re
import subprocess
import sys
import textwrap
import threading

import mpmath
import numpy as np
import pytest
import sympy as sp

import symdiff as sd
from symdiff.simplify.shallow import MAX_LINE_DEPTH, shallow_lines
from symdiff.stacks import on_large_stack

from .conftest import ROOT

CHAIN = """
import sys
import sympy as sp
import symdiff as sd
x = sp.Symbol("x", real=True)
expr = x
for _ in range(3000):
    expr = sp.sin(expr, evaluate=False)  # (SymPy's node; its own checks take long this deep)
"""

TRACED = """
import symdiff as sd

def expr(x):
    y = x
    for _ in range(3000):
        y = x/(1 + y**2)
    return y
"""


def _outcome(setup: str, call: str) -> str:
    """What a child process printed after ``setup`` and ``call``: built, or the error."""
    code = setup + textwrap.dedent(f"""
        try:
            {call}
            print("built")
        except sd.UnsupportedError as error:
            print("refused:", error)
        """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=900, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT),
                                                      "SYMDIFF_DISABLE_CACHE": "1",
                                                      "SYMDIFF_PROGRESS": "0"})
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("call", ["sd.grad(expr)", "sd.hessian(expr)"])
def test_a_3000_deep_chain_is_refused_with_its_depth(call):
    said = _outcome(CHAIN, call)
    assert said == "built" or re.search(r"nested 3,000 levels deep, too deep to build", said), said


@pytest.mark.parametrize("call", ["sd.grad(expr)", "sd.derive(expr)"])
def test_a_3000_deep_traced_nest_is_built_or_refused_never_a_crash(call):
    said = _outcome(TRACED, call)
    assert said == "built" or ("too deep" in said and "recursion limit" in said), said


SMALL_STACK = """
import threading
import symdiff as sd

def expr(x):
    y = x
    for _ in range(300):
        y = x/(1 + y**2)
    return y

said = []

def build():
    try:
        sd.grad(expr)
        said.append("built")
    except sd.UnsupportedError as error:
        said.append(f"refused: {error}")

threading.stack_size(2**20)  # 1 MB, a thread's default on Windows (512 kB on macOS)
thread = threading.Thread(target=build)
thread.start()
thread.join()
"""


def test_a_build_from_a_thread_with_a_small_stack_does_not_crash():
    """The recursion limit of a build allows more frames than a small stack holds: run where
    it was called, this build overflowed a 1 MB thread stack (a segmentation fault)."""
    assert _outcome(SMALL_STACK, "assert said == ['built'], said") == "built"


def _paren_depth(line: str) -> int:
    deepest = level = 0
    for char in line:
        level += (char == "(") - (char == ")")
        deepest = max(deepest, level)
    return deepest


def test_a_300_deep_traced_nest_builds_right_with_shallow_lines():
    """Nothing shares the chain (each level reads the one below once): CSE leaves it one
    expression 300 levels deep, which is cut into lines of at most ``MAX_LINE_DEPTH`` levels
    (Python's parser reads 200 nested brackets at most)."""
    depth = 300

    def f(x):
        y = x
        for _ in range(depth):
            y = x / (1 + y**2)
        return y

    g = sd.grad(f, cache=False)
    assert max(_paren_depth(line) for line in g.source.splitlines()) <= 2 * MAX_LINE_DEPTH
    for x0 in (0.3, 1.7):
        with mpmath.workdps(40):
            want = mpmath.diff(f, mpmath.mpf(x0))
        np.testing.assert_allclose(float(g(np.float64(x0))[0]), float(want), rtol=1e-12)


def test_shallow_lines_keep_the_values():
    x, y = sp.symbols("x y", real=True)
    expr = x
    for k in range(60):
        expr = sp.sin(expr + k * y)
    names = sp.numbered_symbols("_t", real=True)
    lines, (out,) = shallow_lines([], [expr], names, limit=10)
    assert len(lines) >= 5
    env = {x: sp.Rational(1, 3), y: sp.Rational(1, 7)}
    for symbol, value in lines:
        env[symbol] = value.xreplace(env)
    assert abs(sp.N(out.xreplace(env) - expr.xreplace(env), 30)) < 1e-25


# -- the building thread -------------------------------------------------------------------------
_WHO = contextvars.ContextVar("who", default="nobody")


def test_on_large_stack_runs_elsewhere_with_the_callers_context():
    token = _WHO.set("caller")
    try:
        with sp.evaluate(False):
            seen = on_large_stack(lambda: (threading.current_thread().name, _WHO.get(),
                                           sp.Add(1, 1)))
    finally:
        _WHO.reset(token)
    name, who, two = seen
    assert name == "symdiff-build" and who == "caller"
    assert two.is_Add  # the caller's sympy.evaluate(False) held there


def test_on_large_stack_returns_raises_and_nests():
    assert on_large_stack(lambda a, b: a + b, 2, 3) == 5
    with pytest.raises(ZeroDivisionError):
        on_large_stack(lambda: 1 / 0)
    inner = on_large_stack(lambda: on_large_stack(lambda: threading.current_thread().name))
    assert inner == "symdiff-build"  # (a build inside a build runs where it is)
