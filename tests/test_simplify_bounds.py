"""Simplification bounded by what it produces: frequencies such as ``sin(128*x)`` never make
the trigonometric phases expand multiple angles (:mod:`symdiff.simplify.angles`).

The builds run in a child process under an address-space limit (``RLIMIT_AS``), so a phase
that runs away again fails the test with a ``MemoryError`` instead of taking the machine down;
the derivatives are checked against ``sympy.diff`` at a point.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import sympy as sp

from symdiff.simplify import simplify_for_people
from symdiff.simplify.angles import masked_angles

from .conftest import X, Y

ROOT = Path(__file__).resolve().parent.parent
#: The child's address-space limit: far above what these builds need (a few hundred MB),
#: far below what the multiple-angle expansion of sin(128*x) took.
MEMORY_LIMIT = 3 * 2**30

FORMS = ["sin({k}*x)", "sin({k}*x)*y + cos({k}*y)", "sin({k}*x) + x**5*y", "sinh({k}*x)*y",
         "sin({k}*x)*cos({k}*x)", "cos({k}*x)**2 + sin({k}*x)**2*y", "tan({k}*x + y/{k})",
         "exp(-x/{k})*sin({k}*y)"]

_CHILD = textwrap.dedent("""
    import json, resource, sys
    resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
    import sympy as sp
    import symdiff as sd
    out = []
    for text in json.loads(sys.argv[1]):
        g = sd.grad(text, cache=False)
        d = sd.derive(text, wrt="x")
        point = {{"x": 0.37, "y": -0.81}}
        got = [float(v) for v in g(*[point[a] for a in g.args])]
        out.append([text, got, str(d.result)])
    print(json.dumps(out))
""")


def _expected(text: str) -> list[float]:
    expr = sp.sympify(text, locals={"x": X, "y": Y})
    point = {X: 0.37, Y: -0.81}
    names = sorted(expr.free_symbols, key=str)
    return [float(sp.diff(expr, s).subs(point)) for s in names]


@pytest.mark.parametrize("seed", range(3))
def test_random_frequencies_build_and_derive_within_a_memory_limit(seed):
    rng = random.Random(seed)
    ks = [16, 64, 96, 128, 192, 256, 1000] if seed == 0 else [rng.randrange(3, 1500)
                                                               for _ in range(4)]
    texts = [form.format(k=k) for k in ks for form in rng.sample(FORMS, 3)]
    child = _CHILD.format(limit=MEMORY_LIMIT)
    run = subprocess.run([sys.executable, "-c", child, json.dumps(texts)], cwd=ROOT,
                         capture_output=True, text=True, timeout=600,
                         env={"SYMDIFF_DISABLE_CACHE": "1", "PYTHONPATH": str(ROOT),
                              "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr[-2000:]
    for text, got, derived in json.loads(run.stdout):
        expected = _expected(text)
        assert got == pytest.approx(expected, rel=1e-9, abs=1e-9), text
        # the derivative shown keeps the frequency: no expansion into powers of sin(x)
        assert not re.search(r"(sin|cos|sinh|cosh)\(x\)\*\*\d", derived), derived


def test_masked_angles_hide_multiples_and_sums_and_keep_identities():
    expr = sp.sin(128 * X) ** 2 + sp.cos(128 * X) ** 2 + sp.sin(2 * X) + sp.cos(X + Y + 1)
    masked, back = masked_angles(expr)
    assert len(back) == 2  # 128*x and x + y + 1; 2*x stays visible
    assert masked.has(sp.sin(2 * X))
    assert masked.xreplace(back) == expr
    assert simplify_for_people(sp.sin(128 * X) ** 2 + sp.cos(128 * X) ** 2 + Y) == 1 + Y
    assert simplify_for_people(2 * sp.sin(X) * sp.cos(X)) == sp.sin(2 * X)
