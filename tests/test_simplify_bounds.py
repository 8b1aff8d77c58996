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
from symdiff.simplify.budget import polynomial_degree

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


def _built_in_a_child(texts: list[str]) -> list[list]:
    """``[text, gradient at the point, derivation shown]`` of each of ``texts``, built in a
    child process under :data:`MEMORY_LIMIT`, which must end normally."""
    run = subprocess.run([sys.executable, "-c", _CHILD.format(limit=MEMORY_LIMIT),
                          json.dumps(texts)], cwd=ROOT, capture_output=True, text=True,
                         timeout=600, env={"SYMDIFF_DISABLE_CACHE": "1", "PYTHONPATH": str(ROOT),
                                           "PATH": "/usr/bin:/bin"})
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)


@pytest.mark.parametrize("seed", range(3))
def test_random_frequencies_build_and_derive_within_a_memory_limit(seed):
    rng = random.Random(seed)
    ks = [16, 64, 96, 128, 192, 256, 1000] if seed == 0 else [rng.randrange(3, 1500)
                                                               for _ in range(4)]
    texts = [form.format(k=k) for k in ks for form in rng.sample(FORMS, 3)]
    for text, got, derived in _built_in_a_child(texts):
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


#: High powers of trigonometric calls (a multiple angle in disguise for the product-to-sum
#: rewrites) and rational functions of high degree (a polynomial gcd over integers of that
#: many digits, or dense in a generator such as exp(u) of exp(1000000*u)).
HIGH_POWERS = ["sin(x)**(10**9)", "tan(x)**100000/(1 + x**2)", "cos(x)**1000*sin(y)**999",
               "sinh(x)**(-5000) + cos(x)**2 + sin(x)**2*y", "(x**2 + 1)**300/(x - 3)**200",
               "x**123456789*y", "erf(1000*(log(1 + x)**(1/1000) + x/y))",
               "erf(1000000*x/cosh(y))", "loggamma(log(2 + y)**sin(y)*(x**(7/11) + x**1000000))"]


def test_high_powers_build_and_derive_within_a_memory_limit():
    for text, got, _ in _built_in_a_child(HIGH_POWERS):
        assert got == pytest.approx(_expected(text), rel=1e-9, abs=1e-300), text


def test_masked_angles_hide_high_powers_whole():
    expr = sp.sin(X) ** 1000 * sp.cos(X) + sp.sin(X) ** 2 + sp.cos(X) ** 2
    masked, back = masked_angles(expr)
    assert list(back.values()) == [sp.sin(X) ** 1000]
    assert masked.has(sp.sin(X) ** 2) and masked.xreplace(back) == expr
    assert simplify_for_people(sp.sin(X) ** 2 + sp.cos(X) ** 2 + sp.sin(X) ** 1000) == (
        1 + sp.sin(X) ** 1000)


def test_polynomial_degree_bounds_the_common_denominator_form():
    cases = [X**3 + X + 1, (X**2 + 1) ** 3 / (X - 3) ** 2, 1 / X + 1 / (Y + 1) ** 2,
             X**5 * Y**4 / (1 + X * Y), (1 + sp.sin(X)) ** 7 - 1 / (X**2 - Y)]
    for expr in cases:
        numerator, denominator = sp.fraction(sp.together(expr))
        gens = sorted(expr.free_symbols | expr.atoms(sp.Function), key=sp.default_sort_key)
        total = sp.Poly(numerator, *gens).total_degree() + sp.Poly(
            denominator, *gens).total_degree()
        assert total <= polynomial_degree(expr), expr
    assert polynomial_degree(X**3 + X + 1) == 3
    assert polynomial_degree(sp.tan(X) ** 100000 / (1 + X**2)) == 100002
    assert polynomial_degree(sp.exp(-(10**6) * X) + X ** sp.Rational(3, 2)) >= 10**6
