"""Compound conditions of ``where``: comparisons joined by ``and``/``or``/``not`` or by
``&``/``|``/``~``, chained comparisons (``0 < x < 1``) and NumPy's ``np.logical_and``/``or``/
``not``, in strings (scalar and tensor), traced functions (scalar and with ``shapes=``) and
the derivations' text.

The reference for every gradient is independent of the code under test: the condition is
evaluated by NumPy on the points, each branch is differentiated by ``sympy.diff``, and the points
stay away from every threshold (where the gradient jumps)."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import symdiff as sd
import symdiff.math as sm

X, Y = sp.symbols("x y", real=True)
YES = X * Y**2 + sp.sin(X)
NO = sp.exp(-Y) * X**2
YES_TEXT, NO_TEXT = "x*y**2 + sin(x)", "exp(-y)*x**2"

# -- random conditions: (text, numpy mask function, thresholds) ----------------------------------
_COMPARE = {"<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}


@st.composite
def conditions(draw, depth: int = 0):
    """A condition tree: ``(text, mask(x, y) -> bool array, thresholds)``."""
    kind = draw(st.sampled_from(["compare", "chain"] if depth >= 2 else
                                ["compare", "chain", "and", "or", "not", "&", "|", "~"]))
    if kind == "compare":
        name = draw(st.sampled_from(["x", "y"]))
        op = draw(st.sampled_from(list(_COMPARE)))
        c = draw(st.integers(-4, 4)) / 4
        return (f"{name} {op} {c}", lambda x, y, n=name, o=op, c=c:
                _COMPARE[o]({"x": x, "y": y}[n], c), [(name, c)])
    if kind == "chain":
        name = draw(st.sampled_from(["x", "y"]))
        lo, hi = sorted(draw(st.lists(st.integers(-4, 4), min_size=2, max_size=2, unique=True)))
        return (f"{lo / 4} < {name} <= {hi / 4}",
                lambda x, y, n=name, a=lo / 4, b=hi / 4: (a < {"x": x, "y": y}[n])
                & ({"x": x, "y": y}[n] <= b), [(name, lo / 4), (name, hi / 4)])
    if kind in ("not", "~"):
        text, mask, cuts = draw(conditions(depth + 1))
        return (f"not ({text})" if kind == "not" else f"~({text})",
                lambda x, y, m=mask: ~m(x, y), cuts)
    (a, ma, ca), (b, mb, cb) = draw(conditions(depth + 1)), draw(conditions(depth + 1))
    if kind in ("and", "&"):
        joined = f"({a}) and ({b})" if kind == "and" else f"({a}) & ({b})"
        return joined, lambda x, y, p=ma, q=mb: p(x, y) & q(x, y), ca + cb
    joined = f"({a}) or ({b})" if kind == "or" else f"({a}) | ({b})"
    return joined, lambda x, y, p=ma, q=mb: p(x, y) | q(x, y), ca + cb


def _points(cuts, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Points in [-1.5, 1.5]^2 at least 1e-3 away from every threshold."""
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(-1.5, 1.5, 400), rng.uniform(-1.5, 1.5, 400)
    keep = np.ones(x.shape, bool)
    for name, c in cuts:
        keep &= np.abs({"x": x, "y": y}[name] - c) > 1e-3
    return x[keep], y[keep]


def _reference(mask: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, ...]:
    out = []
    for v in (X, Y):
        yes = sp.lambdify((X, Y), sp.diff(YES, v), "numpy")(x, y) + 0 * x
        no = sp.lambdify((X, Y), sp.diff(NO, v), "numpy")(x, y) + 0 * x
        out.append(np.where(mask, yes, no))
    return tuple(out)


@settings(max_examples=40, deadline=None)
@given(conditions(), st.integers(0, 10**6))
def test_string_conditions_match_numpy_and_sympy(case, seed):
    text, mask, cuts = case
    x, y = _points(cuts, seed)
    got = sd.grad(f"where({text}, {YES_TEXT}, {NO_TEXT})", wrt=["x", "y"])(x, y)
    for g, r in zip(got, _reference(mask(x, y), x, y), strict=True):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(conditions(), st.integers(0, 10**6))
def test_tensor_string_conditions_match_numpy_and_sympy(case, seed):
    text, mask, cuts = case
    x, y = _points(cuts, seed)
    shapes = {"x": ("n",), "y": ("n",)}
    total = f"sum(where({text}, {YES_TEXT}, {NO_TEXT}))"
    gx = sd.grad(total, wrt="x", shapes=shapes)(x=x, y=y)
    np.testing.assert_allclose(gx, _reference(mask(x, y), x, y)[0], rtol=1e-12, atol=1e-12)


# -- one condition in every spelling -------------------------------------------------------------
SPELLINGS = [
    "(x > 0) & (y <= 1)",
    "x > 0 and y <= 1",
    "(x > 0) and not (y > 1)",
    "~((x <= 0) | (y > 1))",
    "not (x <= 0 or y > 1)",
    "0 < x and y <= 1",
]


@pytest.mark.parametrize("text", SPELLINGS)
def test_spellings_parse_to_one_condition(text):
    """Every spelling is (x > 0) & (y <= 1): the same branches, and the same condition on a
    grid through both thresholds (SymPy keeps ~(a | b) as written, which is equal)."""
    parsed = sd.parse(f"where({text}, {YES_TEXT}, {NO_TEXT})")
    (yes, cond), (no, otherwise) = parsed.args
    assert (yes, no, otherwise) == (YES, NO, sp.true)
    x, y = np.meshgrid(np.linspace(-2, 2, 41), np.linspace(-2, 2, 41))
    got = sp.lambdify((X, Y), cond, "numpy")(x, y)
    np.testing.assert_array_equal(got, (x > 0) & (y <= 1))


def test_chained_comparison_is_the_and_of_its_links():
    assert sd.parse("where(-1 < x <= y < 2, x, y)") == sp.Piecewise(
        (X, sp.And(X > -1, X <= Y, Y < 2)), (Y, True))


def _scalar_traced(x, y):
    inside = np.logical_and(x > 0, ~(y > 1))
    return sm.where(inside | (x < -1), x * y**2 + np.sin(x), np.exp(-y) * x**2)


def _tensor_traced(x, y):
    inside = np.logical_and(x > 0, np.logical_not(y > 1))
    return np.sum(np.where(inside | (x < -1), x * y**2 + np.sin(x), np.exp(-y) * x**2))


def test_traced_joins_match_numpy_and_sympy(backend):
    x, y = _points([("x", 0.0), ("y", 1.0), ("x", -1.0)], 3)
    mask = ((x > 0) & ~(y > 1)) | (x < -1)
    reference = _reference(mask, x, y)
    got = sd.grad(_scalar_traced)(x, y)
    for g, r in zip(got, reference, strict=True):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12)
    shapes = {"x": ("n",), "y": ("n",)}
    got = sd.grad(_tensor_traced, shapes=shapes)(x=x, y=y)
    for g, r in zip(got, reference, strict=True):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-12)


def test_a_constant_mask_joins_a_traced_comparison():
    mask = np.array([True, False, True, True])

    def loss(x):
        return np.sum(np.where(mask & (x > 0), x**2, 0.0))

    x = np.array([0.5, 0.5, -2.0, 0.2])
    got = sd.grad(loss, wrt="x", shapes={"x": (4,)})(x=x)
    np.testing.assert_allclose(got, np.where(mask & (x > 0), 2 * x, 0.0), rtol=0, atol=0)


def test_hessian_and_hvp_with_a_joined_condition(backend):
    text = f"where((x > 0) & (y < 1), {YES_TEXT}, {NO_TEXT})"
    h = sd.hessian(text)(0.5, 0.25)  # inside: the Hessian of YES
    reference = sp.lambdify((X, Y), sp.hessian(YES, (X, Y)))(0.5, 0.25)
    np.testing.assert_allclose(h, reference, rtol=1e-12)
    hv = sd.hvp(text)(-0.5, 0.25, np.array([1.0, 2.0]))  # outside: NO's
    reference = sp.lambdify((X, Y), sp.hessian(NO, (X, Y)))(-0.5, 0.25) @ [1.0, 2.0]
    np.testing.assert_allclose(hv, reference, rtol=1e-12)


@pytest.mark.parametrize("text", [*SPELLINGS, "-1 < x < 1"])
def test_derivation_text_parses_back(text):
    """A derivation prints the condition with & | ~ (what NumPy would write); the printed
    input reads back as the same expression."""
    steps = sd.derive(f"where({text}, {YES_TEXT}, {NO_TEXT})", wrt="x")
    printed = str(steps).splitlines()[0]
    shown = printed[len("d/dx ["):printed.index("] = ")]
    assert sd.parse(shown) == sd.parse(f"where({text}, {YES_TEXT}, {NO_TEXT})")


def test_array_api_module_joins_conditions_with_the_standard():
    """backend="array_api" prints the joins with the standard's logical_and / logical_or /
    logical_not; array-api-strict refuses anything outside the standard."""
    strict = pytest.importorskip("array_api_strict", reason="array-api-strict is in the dev extra")
    text = f"where(((x > 0) & ~(y > 1)) | (x < -1), {YES_TEXT}, {NO_TEXT})"
    x, y = _points([("x", 0.0), ("y", 1.0), ("x", -1.0)], 5)
    got = sd.grad(text, backend="array_api")(strict.asarray(x), strict.asarray(y))
    mask = ((x > 0) & ~(y > 1)) | (x < -1)
    for g, r in zip(got, _reference(mask, x, y), strict=True):
        np.testing.assert_allclose(np.asarray(g), r, rtol=1e-12, atol=1e-12)


def test_the_module_header_shows_the_joins():
    """A generated module's header comment keeps & | ~ (harmless in a comment), not '?'."""
    source = sd.grad("where((x > 0) & ~(y > 1) | (x < -1), x*y, x)").source
    header = source.splitlines()[0]
    assert "&" in header and "|" in header and "?" not in header


# -- conditions on functions of a variable: kept as written, never solved -------------------------
_THRESHOLDS = {"sigmoid(0.5)": 1 / (1 + np.exp(-0.5)), "exp(-1)": np.exp(-1.0),
               "sqrt(2)/3": np.sqrt(2) / 3, "0.6": 0.6, "atan(1)/2": np.arctan(1.0) / 2}
_CURVES = {"sin(x)": np.sin, "cos(x)": np.cos, "tan(x)": np.tan, "x**2": np.square,
           "sin(x)**2": lambda x: np.sin(x) ** 2, "exp(x) - 2": lambda x: np.exp(x) - 2}


@settings(max_examples=30)
@given(curve=st.sampled_from(sorted(_CURVES)), threshold=st.sampled_from(sorted(_THRESHOLDS)),
       op=st.sampled_from(list(_COMPARE)))
def test_a_condition_on_a_function_is_evaluated_as_written(curve, threshold, op):
    """``where(c > sin(x), ...)`` picks its branch by the comparison at every point: SymPy's
    piecewise simplification solves a periodic comparison over one period only (``sin(x) <
    sigmoid(1/2)`` became ``0 <= x <= 2*pi``), so the value at x = 1 was the wrong branch."""
    text = f"where({curve} {op} {threshold}, x**2, 3*x)"
    x = np.linspace(-9.0, 9.0, 181) + 0.013
    mask = _COMPARE[op](_CURVES[curve](x), _THRESHOLDS[threshold])
    value, (slope,) = sd.value_and_grad(text, wrt=["x"])(x)
    np.testing.assert_allclose(value, np.where(mask, x**2, 3 * x), rtol=1e-12)
    np.testing.assert_allclose(slope, np.where(mask, 2 * x, 3.0), rtol=1e-12)


def test_a_condition_of_many_comparisons_is_kept_as_written_and_right(backend):
    """A condition joining many comparisons with & and | is not handed to SymPy's
    piecewise_simplify (its normal forms grow exponentially with the terms); the branches
    still follow the condition at every point."""
    text = ("where(((x > 0) & (y < 1)) | ((x < -1) & (y > 2)) | ((x > 2) & (y < -3))"
            " | ((x < -4) & (y > 5)), x*y**2, x + sin(y))")
    g = sd.grad(text, wrt=["x", "y"], cache=False)
    rng = np.random.default_rng(4)
    x, y = rng.uniform(-6, 6, 400), rng.uniform(-6, 6, 400)
    inside = ((x > 0) & (y < 1)) | ((x < -1) & (y > 2)) | ((x > 2) & (y < -3)) | (
        (x < -4) & (y > 5))
    dx, dy = g(x, y)
    np.testing.assert_allclose(dx, np.where(inside, y**2, 1.0), rtol=1e-14)
    np.testing.assert_allclose(dy, np.where(inside, 2 * x * y, np.cos(y)), rtol=1e-14)
