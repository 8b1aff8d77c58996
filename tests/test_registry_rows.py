"""Every row of the function registry, through the whole pipeline.

One test per row: the string parses to the row's node under every name, the derivative (rule
table) agrees with ``sympy.diff`` of the row's ``reference``, the generated module prints the row
its own way and passes the verifier, its value and gradient agree with mpmath and with central
differences on the row's domain, tracing ``symdiff.math``/NumPy gives the string's expressions,
and tensor code (a string ``sum(f(X))`` and a traced ``np.sum(np.f(X))``) gives the scalar
gradient elementwise. A new row is tested here by being a row.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import sympy as sp

import symdiff as sd
import symdiff.math as sm
from symdiff import registry as R
from symdiff import verify
from symdiff.engine.forward import differentiate
from symdiff.functions import tie_share

from .conftest import X, Y, reference_value, to_reference

ROWS = [pytest.param(row, id=row.names[0] if row.names else row.head) for row in R.ROWS]
SEED = 20261202
#: The inner argument i is ``mid + half*SHAPES[i]`` (values in (-1, 1) on the square (-1, 1)^2):
#: polynomials, on which forward mode's simplification stays quick. Text, and the same in Python.
SHAPES = ("(x + y**2)/2", "y*(x - 1)/2", "x*y")
PY_SHAPES = (lambda x, y: (x + y**2) / 2, lambda x, y: y * (x - 1) / 2, lambda x, y: x * y)
VECTOR = {"X": ("n",), "Y": ("n",)}


def _bounds(lo: float, hi: float) -> tuple[float, float]:
    """mid and half of an interval, as floats with short reprs (parsed and traced exactly)."""
    return float(repr((lo + hi) / 2)), float(repr((hi - lo) / 2))


def _inner_text(row: R.Fn, names: tuple[str, str] = ("x", "y")) -> list[str]:
    texts = []
    for i, (lo, hi) in enumerate(row.domain.args):
        if lo == hi:
            texts.append(repr(lo) if i not in row.int_args else str(int(lo)))
            continue
        mid, half = _bounds(lo, hi)
        shape = SHAPES[i].replace("x", names[0]).replace("y", names[1])
        texts.append(f"({mid!r} + {half!r}*({shape}))")
    return texts


def _inner_python(row: R.Fn, x, y) -> list:
    values = []
    for i, (lo, hi) in enumerate(row.domain.args):
        if lo == hi:
            values.append(int(lo) if i in row.int_args else lo)
            continue
        mid, half = _bounds(lo, hi)
        values.append(mid + half * PY_SHAPES[i](x, y))
    return values


def _expr(row: R.Fn) -> sp.Expr:
    """The row's node over the inner arguments (parsed, for a row with names)."""
    inner = [sp.sympify(t.replace("x", "X_").replace("y", "Y_"), rational=True).subs(
        {"X_": X, "Y_": Y}) for t in _inner_text(row)]
    return R.build_fn(row)(*inner)


def _points(row: R.Fn, expr: sp.Expr, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Points of the square (-1, 1)^2 at least 1e-4 from the row's kinks."""
    rng = np.random.default_rng(SEED)
    xs, ys = rng.uniform(-1, 1, 6 * n), rng.uniform(-1, 1, 6 * n)
    if row.domain.kinks is not None:
        node = next(iter(expr.atoms(R.head_class(row)))) if row.head else expr
        gaps = sp.lambdify((X, Y), row.domain.kinks(*node.args), modules="numpy")
        away = np.all(np.abs(np.broadcast_arrays(*gaps(xs, ys), xs)[:-1]) > 1e-4, axis=0)
        xs, ys = xs[away], ys[away]
    return xs[:n], ys[:n]


def _reference_derivative(expr: sp.Expr, var: sp.Symbol) -> sp.Expr:
    """sympy.diff of the reference; tie_share is piecewise constant (derivative 0 off ties)."""
    if expr.has(tie_share):
        placeholder = sp.Symbol("share_placeholder", real=True)
        share = next(iter(expr.atoms(tie_share)))
        stripped = expr.replace(tie_share, lambda *a: placeholder)
        return sp.diff(stripped, var).subs(placeholder, share)
    return sp.diff(to_reference(expr), var)  # reference_value drops floor' and the like


def printed_prefix(row: R.Fn) -> str:
    """How printed code of the row's head begins (also used by test_registry)."""
    if row.method == "heaviside":  # H(u, 1/2), the domain's, is written with sign (bit for bit)
        return "_np.sign("
    if row.helper:
        return f"{row.helper}("
    if row.template:  # its first call (the module may compute the call's argument first, and
        call = re.search(r"_np\.\w+\(", row.template)  # divide by the call in place)
        return call.group() if call else row.template.partition("{")[0]
    return f"_np.{row.ufunc}("


def _traced(row: R.Fn) -> list[tuple[object, int]]:
    """What tracing maps to the row, with the number of arguments to call it with:
    symdiff.math's function (all of the domain's) and each NumPy function (its ``nin``)."""
    if not row.names:
        return []
    count = len(row.domain.args)
    found: list[tuple[object, int]] = [(getattr(sm, row.names[0]), count)]
    for name, r in R.traced_numpy().items():
        if r is row:
            function = getattr(np, name)
            found.append((function, getattr(function, "nin", count)))
    return found


def _calling(row: R.Fn, function, count: int, outer=None):
    """A Python function of two values that calls ``function`` on the row's inner arguments
    (its first ``count``), for tracing; ``outer`` around it (``np.sum`` for arrays)."""
    if outer is None:
        return lambda x, y: function(*_inner_python(row, x, y)[:count])
    return lambda X, Y: outer(function(*_inner_python(row, X, Y)[:count]))


@pytest.mark.parametrize("row", ROWS)
def test_row_through_the_pipeline(row):
    expr = _expr(row)
    # -- parse: every name builds the row's node
    if row.names:
        for name in row.names:
            text = f"{name}({', '.join(_inner_text(row))})"
            assert sd.parse(text) == expr, name
        source_expr: object = f"{row.names[0]}({', '.join(_inner_text(row))})"
    else:
        source_expr = expr
    # -- derive: the rule table against sympy.diff of the reference, at 30 digits
    references = [_reference_derivative(expr, var) for var in (X, Y)]
    if row.head:
        xs, ys = _points(row, expr, 4)
        for var, reference in zip((X, Y), references, strict=True):
            ours = differentiate(expr, var).result
            for xv, yv in zip(xs, ys, strict=True):
                point = {X: sp.Float(xv, 30), Y: sp.Float(yv, 30)}
                assert reference_value(ours, point) == pytest.approx(
                    reference_value(reference, point), rel=1e-12, abs=1e-12), (var, xv, yv)
    # -- print -> verify -> run, both modes: the value against mpmath, the gradient against
    # sympy.diff and central differences
    xs, ys = _points(row, expr, 40)
    f = sd.compile(source_expr)
    h = 1e-6
    numeric = [(f(x=xs + dx, y=ys + dy) - f(x=xs - dx, y=ys - dy)) / (2 * h)
               for dx, dy in ((h, 0.0), (0.0, h))]
    reference_values = to_reference(expr)
    for mode in ("forward", "reverse"):
        g = sd.value_and_grad(source_expr, wrt=["x", "y"], mode=mode)
        verify.check_module(g.source)
        if row.head:
            assert printed_prefix(row) in g.source, (mode, g.source)
        value, (gx, gy) = g(x=xs, y=ys)
        for analytic, differences in zip((gx, gy), numeric, strict=True):
            np.testing.assert_allclose(analytic, differences, rtol=1e-6, atol=1e-6, err_msg=mode)
        for i in range(0, len(xs), 8):
            point = {X: sp.Float(xs[i], 30), Y: sp.Float(ys[i], 30)}
            want = reference_value(reference_values, point)
            assert value[i] == pytest.approx(want, rel=1e-13, abs=1e-15), mode
            for analytic, reference in zip((gx, gy), references, strict=True):
                assert analytic[i] == pytest.approx(
                    reference_value(reference, point), rel=1e-11, abs=1e-13), mode
    if not row.names:
        return
    # -- trace (scalar): symdiff.math and NumPy give the string's expressions
    for function, count in _traced(row):
        inner = _inner_text(row)[:count]
        string = sd.value_and_grad(f"{row.names[0]}({', '.join(inner)})", wrt=["x", "y"])
        traced = sd.value_and_grad(_calling(row, function, count), wrt=["x", "y"])
        assert traced.exprs == string.exprs, function
        np.testing.assert_array_equal(traced(x=xs, y=ys)[0], string(x=xs, y=ys)[0])
    # -- numbers: symdiff.math computes what the generated code computes
    np.testing.assert_allclose(sm.__dict__[row.names[0]](*_inner_python(row, xs, ys)), value,
                               rtol=1e-13, atol=1e-300)
    # -- tensor: sum(f(X)) as a string and traced, gradient = the scalar one elementwise
    text = f"sum({row.names[0]}({', '.join(_inner_text(row, ('X', 'Y')))}))"
    tensor = sd.value_and_grad(text, wrt=["X", "Y"], shapes=VECTOR)
    verify.check_module(tensor.source)
    total, (tx, ty) = tensor(X=xs, Y=ys)
    assert total == pytest.approx(np.sum(value), rel=1e-12)
    np.testing.assert_allclose(tx, gx, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(ty, gy, rtol=1e-12, atol=1e-14)
    for function, count in _traced(row):
        inner = _inner_text(row, ("X", "Y"))[:count]
        string = sd.value_and_grad(f"sum({row.names[0]}({', '.join(inner)}))", wrt=["X", "Y"],
                                   shapes=VECTOR)
        traced = sd.value_and_grad(_calling(row, function, count, np.sum), wrt=["X", "Y"],
                                   shapes=VECTOR)
        want, (want_x, want_y) = string(X=xs, Y=ys)
        got, (got_x, got_y) = traced(X=xs, Y=ys)
        assert got == want, function
        np.testing.assert_array_equal(got_x, want_x)
        np.testing.assert_array_equal(got_y, want_y)
