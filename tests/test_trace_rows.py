"""Random compositions of the registry's functions, traced (plan T-g/T-h/T-j).

Hypothesis draws two or three public rows and chains them: each function's first free argument
is the previous function's value, its others are simple leaves in ``x`` and ``y``, and every
argument is mapped into the row's test domain (``mid + half*tanh(u)``, the number itself where
the domain fixes one), so the composition is finite and smooth away from the rows' kinks. The
same composition is written twice, as a Python function calling the row through one of its
NumPy names (``np.arcsin``, ``np.fmax``, ``np.sinc``, ...) or :mod:`symdiff.math`, and as a
string using one of the row's names (``asin``, ``max``, ``remainder``, ...). The traced
expression must be the string's, and the traced gradient must equal the string's gradient and
``sympy.diff`` (mpmath, 30 digits) at points away from the kinks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mpmath
import numpy as np
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import symdiff as sd
import symdiff.math as sm
from symdiff import registry
from symdiff.parsing import parse
from symdiff.trace import trace

from .conftest import X, Y, drop_step_derivatives, mpmath_met_complex, to_reference

PUBLIC = [row for row in registry.ROWS if row.names]
#: The leaves of the arguments that are not the previous function's value, as (Python, text).
LEAVES: list[tuple[Callable[[Any, Any], Any], str]] = [
    (lambda x, y: x, "x"),
    (lambda x, y: y, "y"),
    (lambda x, y: x - y / 2, "x - y/2"),
    (lambda x, y: (x + y) / 3, "(x + y)/3"),
]
#: Points besides the drawn one (the domain maps make every point of the plane valid).
POINTS = [(0.3, -0.7), (-1.1, 0.4), (1.7, 1.2)]


@dataclass(frozen=True)
class Spelling:
    """One way to call a row from Python: ``np.<name>`` or ``symdiff.math.<name>``, with how
    many of the row's domain arguments it takes (``np.log`` takes no base)."""

    label: str
    call: Callable[..., Any]
    count: int


def spellings(row: registry.Fn) -> list[Spelling]:
    found = []
    for name, traced_row in registry.traced_numpy().items():
        if traced_row is row:
            function = getattr(np, name)
            count = function.nin if isinstance(function, np.ufunc) else len(row.domain.args)
            found.append(Spelling(f"np.{name}", function, count))
    found.append(Spelling(f"sm.{row.names[0]}", getattr(sm, row.names[0]), len(row.domain.args)))
    return found


@dataclass(frozen=True)
class Link:
    """One function of the chain: its row, how Python and the string spell it, and the leaves
    of its arguments that are not the previous value."""

    row: registry.Fn
    spelling: Spelling
    name: str
    leaves: tuple[int, ...]


@st.composite
def links(draw) -> Link:
    row = draw(st.sampled_from(PUBLIC))
    spelling = draw(st.sampled_from(spellings(row)))
    name = draw(st.sampled_from(row.names))
    leaves = draw(st.tuples(*[st.integers(0, len(LEAVES) - 1)] * spelling.count))
    return Link(row, spelling, name, leaves)


CHAINS = st.lists(links(), min_size=2, max_size=3)


def _arguments(link: Link, previous: Any, leaf: Callable[[int], Any], number: Callable, tanh):
    """The link's arguments: the previous value first (a leaf for the innermost function), then
    leaves, each mapped into the row's domain with ``tanh``; a fixed number as itself."""
    args = []
    for i, (lo, hi) in enumerate(link.row.domain.args[: link.spelling.count]):
        if lo == hi:
            args.append(number(lo))
            continue
        inner = previous if previous is not None else leaf(link.leaves[i])
        previous = None
        mid, half = (lo + hi) / 2, (hi - lo) / 2
        args.append(tanh(inner, mid, half))
    return args


def python_function(chain: list[Link]) -> Callable[[Any, Any], Any]:
    def f(x, y):
        value = None
        for link in chain:
            args = _arguments(
                link, value, lambda i: LEAVES[i][0](x, y), float,
                lambda u, mid, half: mid + half * np.tanh(u),
            )
            value = link.spelling.call(*args)
        return value

    return f


def text(chain: list[Link]) -> str:
    value = None
    for link in chain:
        args = _arguments(
            link, value, lambda i: LEAVES[i][1], repr,
            lambda u, mid, half: f"({mid!r} + {half!r}*tanh({u}))",
        )
        value = f"{link.name}({', '.join(args)})"
    return f"{value} + 0*(x + y)"  # both names occur, as both are f's parameters


def _heaviside(value, at_zero=0.5):
    return 0 if value < 0 else (at_zero if value == 0 else 1)


def _mpmath(exprs: list[sp.Expr]) -> Callable[..., list[Any]]:
    return sp.lambdify((X, Y), exprs, modules=[{"Heaviside": _heaviside}, "mpmath"])


def _kink_gaps(expr: sp.Expr) -> list[sp.Expr]:
    """Expressions that vanish at a kink or jump of ``expr``: each row's ``domain.kinks``."""
    kinked = {row.head.rpartition(":")[2]: row for row in registry.ROWS
              if row.head and row.domain.kinks}
    gaps = []
    for node in sp.preorder_traversal(expr):
        row = kinked.get(type(node).__name__)
        if row is not None:
            gaps.extend(to_reference(gap) for gap in row.domain.kinks(*node.args))
    return gaps


@settings(max_examples=15)  # ~0.4 s each; 300 examples passed once
@given(
    chain=CHAINS,
    mode=st.sampled_from(["forward", "reverse"]),
    point=st.tuples(st.floats(-2, 2, allow_nan=False), st.floats(-2, 2, allow_nan=False)),
)
def test_random_row_compositions_trace_like_strings_and_sympy_diff(chain, mode, point):
    f, written = python_function(chain), text(chain)
    note = f"{[link.spelling.label for link in chain]} ~ {written}"
    expr = parse(written)
    assert trace(f) == (expr, ("x", "y")), note
    options = {"wrt": ["x", "y"], "mode": mode, "simplify": False}
    traced, string = sd.grad(f, **options), sd.grad(written, **options)
    assert traced.exprs == string.exprs, note
    primitive = to_reference(expr)
    reference = [
        drop_step_derivatives(sp.diff(primitive, v).replace(sp.DiracDelta, lambda *a: sp.S.Zero))
        for v in (X, Y)
    ]
    references, gaps = _mpmath(reference), _mpmath(_kink_gaps(expr))
    for x, y in [point, *POINTS]:
        with np.errstate(all="ignore"):  # inf/nan on a kink (cbrt'(0)), where both must agree
            ours, theirs = np.array(traced(x, y)), np.array(string(x, y))
        np.testing.assert_array_equal(ours, theirs, err_msg=note)
        with mpmath.workdps(30):
            if any(abs(complex(g)) < 1e-7 for g in gaps(mpmath.mpf(x), mpmath.mpf(y))):
                continue  # on a kink: the conventions apply (tested per row), not sympy.diff
            try:
                values = references(mpmath.mpf(x), mpmath.mpf(y))
            except ZeroDivisionError:  # SymPy's form of the reference is 0/0 here
                continue
            except (TypeError, AttributeError) as error:
                if mpmath_met_complex(error):  # ... or complex inside max/min
                    continue
                raise
            expected = [float(complex(v).real) for v in values]
        np.testing.assert_allclose(ours, expected, rtol=1e-9, atol=1e-9, err_msg=note)
