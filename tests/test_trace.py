"""Tracing Python functions: the same gradients as the equivalent strings, and clear refusals."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import symdiff as sd
import symdiff.math as sm
from symdiff.functions import relu, sigmoid
from symdiff.trace import Condition, Traced, trace

X, Y = sp.symbols("x y", real=True)
#: Default sample ranges: every case below is defined and smooth there (kinks aside).
DOMAIN = {"x": (0.2, 0.9), "y": (1.3, 2.4)}
SIGNED = {"x": (-1.0, 1.0), "y": (-1.0, 1.0)}


def sample(names, domain, n=9, seed=0):
    rng = np.random.default_rng(seed)
    return {name: rng.uniform(*domain[name], size=n) for name in names}


def assert_same_gradient(fn, text, wrt=None, domain=DOMAIN):
    """``sd.grad(fn)`` and ``sd.grad(text)`` have the same args, wrt, expressions and values."""
    traced, ref = sd.grad(fn, wrt=wrt), sd.grad(text, wrt=wrt)
    assert traced.args == ref.args and traced.wrt == ref.wrt
    for a, b in zip(traced.exprs, ref.exprs, strict=True):
        assert sp.simplify(a - b) == 0, (a, b)
    point = sample(traced.args, domain)
    for a, b in zip(traced(**point), ref(**point), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


# -- the same gradients as strings -----------------------------------------------------------------
MATH_CASES = [
    (lambda x, y: sm.sin(x) * sm.exp(y) / (1 + x**2), "sin(x)*exp(y)/(1 + x**2)"),
    (
        lambda x, y: sm.tan(x) + sm.asin(x / 2) + sm.acos(x / 2) + sm.atan(x * y) + sm.cos(y),
        "tan(x) + asin(x/2) + acos(x/2) + atan(x*y) + cos(y)",
    ),
    (
        lambda x, y: sm.sinh(x) * sm.cosh(y) + sm.tanh(x) + sm.asinh(y) + sm.acosh(y) + sm.atanh(x),
        "sinh(x)*cosh(y) + tanh(x) + asinh(y) + acosh(y) + atanh(x)",
    ),
    (
        lambda x, y: sm.atan2(y, x) + sm.log(x) + sm.log(x, 2) + sm.log(y, base=10) + sm.sqrt(x),
        "atan2(y, x) + log(x) + log(x, 2) + log(y, 10) + sqrt(x)",
    ),
    (lambda x, y: sm.log(x, y), "log(x, y)"),
    (
        lambda x, y: sm.abs(x - 0.5) * sm.sign(y - 2) + sm.erf(x) + sm.gamma(y) + sm.loggamma(y),
        "abs(x - 0.5)*sign(y - 2) + erf(x) + gamma(y) + loggamma(y)",
    ),
    (
        lambda x, y: sm.relu(x - 0.5) + sm.sigmoid(x * y) + sm.softplus(-y),
        "relu(x - 0.5) + sigmoid(x*y) + softplus(-y)",
    ),
    (lambda x, y: sm.max(x, y - 1, 0.5) + sm.min([x, y, 1]), "max(x, y - 1, 0.5) + min(x, y, 1)"),
    (lambda x, y: sm.maximum(x, y - 1) * sm.minimum(x, 0.5), "max(x, y - 1)*min(x, 0.5)"),
    (lambda x, y: sm.where(x * 2 > y - 1, x * y, x - y), "where(x*2 > y - 1, x*y, x - y)"),
    (lambda x, y: sm.where(x <= 0.5, sm.exp(x), 1 / y), "where(x <= 0.5, exp(x), 1/y)"),
    (lambda x, y: sm.pi * x + sm.e**y, "pi*x + e**y"),
]


@pytest.mark.parametrize(("fn", "text"), MATH_CASES)
def test_math_namespace_traces_like_strings(fn, text):
    assert_same_gradient(fn, text)


NUMPY_CASES = [
    (lambda x, y: np.sin(x) * np.exp(y), "sin(x)*exp(y)"),
    (
        lambda x, y: np.cos(x) + np.tan(y) + np.arcsin(x) + np.arccos(x) + np.arctan(y),
        "cos(x) + tan(y) + asin(x) + acos(x) + atan(y)",
    ),
    (
        lambda x, y: (
            np.sinh(x) + np.cosh(y) + np.tanh(x) + np.arcsinh(y) + np.arccosh(y) + np.arctanh(x)
        ),
        "sinh(x) + cosh(y) + tanh(x) + asinh(y) + acosh(y) + atanh(x)",
    ),
    (
        lambda x, y: np.arctan2(y, x) + np.log(x) + np.log1p(y) + np.log2(x) + np.log10(y),
        "atan2(y, x) + log(x) + log1p(y) + log2(x) + log10(y)",
    ),
    (
        lambda x, y: np.expm1(x) + np.exp2(y) + np.sqrt(x) + np.square(y) + np.reciprocal(x),
        "expm1(x) + exp2(y) + sqrt(x) + y**2 + 1/x",
    ),
    (
        lambda x, y: np.abs(x - 0.5) + np.absolute(y) + np.fabs(x) + np.sign(x - 0.4),
        "abs(x - 0.5) + abs(y) + abs(x) + sign(x - 0.4)",
    ),
    (
        lambda x, y: np.maximum(x, y - 1) + np.minimum(x, 0.5) + np.fmax(x, 0.3) + np.fmin(y, 2),
        "max(x, y - 1) + min(x, 0.5) + max(x, 0.3) + min(y, 2)",
    ),
    (
        lambda x, y: (
            np.add(x, y) * np.subtract(x, y) / np.multiply(x, 2)
            - np.divide(y, x)
            + np.true_divide(1, y)
        ),
        "(x + y)*(x - y)/(x*2) - y/x + 1/y",
    ),
    (
        lambda x, y: np.power(x, y) + np.float_power(y, 2) + np.negative(x) + np.positive(y),
        "x**y + y**2 - x + y",
    ),
    (
        lambda x, y: np.logaddexp(x, y) + np.logaddexp(0, x) + np.logaddexp2(x, y),
        "logaddexp(x, y) + logaddexp(0, x) + logaddexp2(x, y)",
    ),
    (
        lambda x, y: np.hypot(x, y) + np.degrees(x) + np.radians(y) + np.deg2rad(x) + np.rad2deg(y),
        "hypot(x, y) + x*180/pi + y*pi/180 + x*pi/180 + y*180/pi",
    ),
    (lambda x, y: np.sin(np.pi * x) + np.e**y, "sin(pi*x) + e**y"),
]


@pytest.mark.parametrize(("fn", "text"), NUMPY_CASES)
def test_numpy_ufuncs_trace_like_strings(fn, text):
    assert_same_gradient(fn, text)


def test_numpy_where_and_clip_trace_like_strings():
    assert_same_gradient(lambda x: np.where(x > 0, x, 0), "where(x > 0, x, 0)", domain=SIGNED)
    assert_same_gradient(
        lambda x, y: np.where(np.greater_equal(x, y), x * y, np.sin(y)),
        "where(x >= y, x*y, sin(y))",
        domain=SIGNED,
    )
    assert_same_gradient(
        lambda x, y: np.where(np.less(x, 0), 1.0, y) + np.where(np.less_equal(y, x), x, 0),
        "where(x < 0, 1, y) + where(y <= x, x, 0)",
        domain=SIGNED,
    )
    assert_same_gradient(
        lambda x: np.clip(x, -0.5, 0.5) + np.clip(x, None, 0),
        "min(max(x, -0.5), 0.5) + min(x, 0)",
        domain=SIGNED,
    )


def test_python_and_numpy_scalars_on_either_side():
    def f(x, y):
        a = np.float64(2.0) * x + x * np.float32(0.5) + np.int64(3) - x / np.int64(4)
        b = 2.5**x + x ** np.float64(2) + np.asarray(1.5) * y + y * np.asarray(2) - 1 / y
        return a + b + (1 - x) + np.float64(1) / (x + y) - np.float32(0.25) * y

    text = "2*x + x/2 + 3 - x/4 + 2.5**x + x**2 + 1.5*y + 2*y - 1/y + (1 - x) + 1/(x + y) - y/4"
    assert_same_gradient(f, text)


def test_comparisons_on_either_side_with_numbers():
    assert_same_gradient(
        lambda x, y: sm.where(0 < x, x, -x) + np.where(np.float64(0.2) >= y, y, 0),  # noqa: SIM300
        "where(x > 0, x, -x) + where(y <= 0.2, y, 0)",
        domain=SIGNED,
    )


def test_floats_are_exact_like_strings_and_pi_stays_pi():
    expr, names = trace(lambda x: 0.1 * x + np.pi * x + sm.pi / x + x * math.e)
    assert names == ("x",)
    assert expr == X / 10 + sp.pi * X + sp.pi / X + sp.E * X


# -- the builders and calling conventions ----------------------------------------------------------
def test_decorator_gives_the_compiled_gradient():
    @sd.grad
    def f(x, y):
        return np.sin(x) * y

    assert isinstance(f, sd.CompiledFunction)
    assert f.args == ("x", "y") and f.wrt == ("x", "y")
    d_x, d_y = f(0.3, 2.0)
    assert d_x == pytest.approx(np.cos(0.3) * 2.0) and d_y == pytest.approx(np.sin(0.3))


def test_value_and_grad_in_the_order_given():
    def f(x, y):
        return x * y**2

    vg = sd.value_and_grad(f, wrt=["y", "x"])
    assert vg.wrt == ("y", "x") and vg.args == ("x", "y")
    value, (d_y, d_x) = vg(2.0, 3.0)
    assert (value, d_y, d_x) == (18.0, 12.0, 9.0)


def test_unused_parameter_has_zero_gradient_and_is_an_argument():
    def f(x, y):
        return x**2

    g = sd.grad(f)
    assert g.args == ("x", "y") and g.wrt == ("x", "y")
    d_x, d_y = g(np.array([1.0, 2.0]), np.zeros((3, 1)))
    np.testing.assert_array_equal(d_x, np.broadcast_to([2.0, 4.0], (3, 2)))
    np.testing.assert_array_equal(d_y, np.zeros((3, 2)))
    value = sd.compile(f)
    assert value.args == ("x", "y")
    np.testing.assert_array_equal(value(np.array([1.0, 2.0]), np.zeros((3, 1))), [[1, 4]] * 3)


def test_parameters_keep_the_def_order_unlike_strings():
    def f(y, x):
        return x - 2 * y

    assert trace(f) == (X - 2 * Y, ("y", "x"))
    g = sd.grad(f)
    assert g.args == ("y", "x") and g.wrt == ("y", "x")
    assert g(y=1.0, x=1.0) == (-2.0, 1.0) and g(1.0, 1.0) == (-2.0, 1.0)
    assert sd.grad("x - 2*y").args == ("x", "y")  # a string keeps the sorted order


def test_lambda_hessian_jacobian_and_derive():
    (d_x,) = sd.grad(lambda x: x**3)(2.0)
    assert d_x == 12.0
    H = sd.hessian(lambda x, y: x**2 * y)
    np.testing.assert_array_equal(H(1.0, 2.0), [[4.0, 2.0], [2.0, 0.0]])
    J = sd.jacobian([lambda x: x**2, lambda y: np.sin(y)])
    assert J.args == ("x", "y") and J.wrt == ("x", "y")
    np.testing.assert_allclose(J(1.0, 0.0), [[2.0, 0.0], [0.0, 1.0]])
    assert sd.derive(lambda x: np.sin(x) / x).result == sp.simplify(sp.diff(sp.sin(X) / X, X))


def test_constant_function():
    def f(x):
        return 3.0

    assert trace(f) == (sp.Integer(3), ("x",))
    (d_x,) = sd.grad(f)(np.zeros(4))
    np.testing.assert_array_equal(d_x, np.zeros(4))
    np.testing.assert_array_equal(sd.compile(f)(np.zeros(2)), [3.0, 3.0])


def test_numeric_defaults_are_allowed_and_still_variables():
    def f(x, scale=2.0):
        return scale * x

    g = sd.grad(f)
    assert g.args == ("x", "scale") and g.wrt == ("x", "scale")
    assert g(scale=3.0, x=5.0) == (3.0, 5.0)
    assert g(5.0) == (2.0, 5.0)  # the default fills the missing argument


def test_the_function_still_runs_normally_on_numbers():
    def f(x, y):
        return (
            sm.sin(x) * sm.exp(y)
            + sm.log(x, 2)
            + sm.max(x, y, 0.5)
            + sm.relu(x - y)
            + sm.where(x > y, x, y)
            + np.sqrt(x)
            + sm.erf(y)
            + sm.loggamma(y)
            + sm.pi
        )

    x, y = np.array([0.3, 1.5]), np.array([0.7, 0.2])
    compiled = sd.compile(f)
    np.testing.assert_allclose(f(x, y), compiled(x, y), rtol=1e-13)
    assert f(0.3, 0.7) == pytest.approx(float(compiled(0.3, 0.7)), rel=1e-13)


def test_math_namespace_on_numbers_uses_numpy():
    x = np.linspace(0.1, 0.9, 5)
    numpy_names = {
        "sin": np.sin,
        "cos": np.cos,
        "tan": np.tan,
        "asin": np.arcsin,
        "acos": np.arccos,
        "atan": np.arctan,
        "sinh": np.sinh,
        "cosh": np.cosh,
        "tanh": np.tanh,
        "asinh": np.arcsinh,
        "atanh": np.arctanh,
        "exp": np.exp,
        "log": np.log,
        "sqrt": np.sqrt,
        "abs": np.abs,
        "sign": np.sign,
    }
    for name, reference in numpy_names.items():
        np.testing.assert_allclose(getattr(sm, name)(x), reference(x), rtol=1e-15, err_msg=name)
    np.testing.assert_allclose(sm.acosh(x + 1), np.arccosh(x + 1))
    np.testing.assert_allclose(sm.atan2(x, -x), np.arctan2(x, -x))
    np.testing.assert_allclose(sm.log(8.0, 2), 3.0)
    reference = np.vectorize(math.erf)(x), np.vectorize(math.gamma)(x), np.vectorize(math.lgamma)(x)
    for ours, ref in zip((sm.erf(x), sm.gamma(x), sm.loggamma(x)), reference, strict=True):
        np.testing.assert_allclose(ours, ref, rtol=1e-13)
    np.testing.assert_allclose(sm.sigmoid(np.array([-800.0, 0.0, 800.0])), [0.0, 0.5, 1.0])
    np.testing.assert_allclose(sm.softplus(np.array([-800.0, 0.0, 800.0])), [0, np.log(2), 800])
    np.testing.assert_array_equal(sm.relu(np.array([-1.0, 2.0])), [0.0, 2.0])
    assert sm.max(1, 5, 3) == 5 and sm.min([4, 2, 3]) == 2
    assert sm.maximum(1, 2) == 2 and sm.minimum(1, 2) == 1
    np.testing.assert_array_equal(sm.where(x > 0.5, 1, 0), x > 0.5)
    assert (sm.pi, sm.e) == (math.pi, math.e)


def test_math_namespace_on_sympy_gives_sympy():
    assert sm.sin(X) * sm.max(X, Y, 0) == sp.sin(X) * sp.Max(X, Y, 0)
    assert sm.where(X > 0, X, 0) == sp.Piecewise((X, X > 0), (0, True))
    assert sm.log(X, 2) == sp.log(X, 2)
    assert sm.relu(X) == relu(X) and sm.sigmoid(X) == sigmoid(X)


def test_math_namespace_needs_at_least_two_arguments_for_max():
    with pytest.raises(TypeError, match="two or more"):
        sm.max(1)


def test_sd_math_is_the_module_and_importing_it_is_cheap():
    assert sd.math is sm
    assert "math" not in sd.__all__  # a star import must not shadow the standard library
    code = "import sys, symdiff.math as m; m.sin(1.0); m.erf(0.5); print('sympy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_traced_values_print_and_support_hasattr():
    seen = []

    def f(x):
        seen.append((str(x), repr(x), repr(x > 1), hasattr(x, "shape")))
        return x

    trace(f)
    assert seen == [("x", "Traced(x)", "Condition(x > 1)", False)]


# -- what cannot be traced ----------------------------------------------------------------------
def _if(x):
    if x > 0:
        return x
    return -x


def _while(x):
    while x < 10:
        x = x * 2
    return x


def _star_args(*args):
    return args[0]


def _var_keywords(x, **kwargs):
    return x


def _divide_by_zero(x):
    return x + 1 / 0


REFUSED = [
    (_if, "no truth value: use where"),
    (_while, "no truth value"),
    (lambda x: bool(x), "no truth value"),
    (lambda x: max(x, 0), "no truth value.*symdiff.math.max"),
    (lambda x: 0 < x < 1, "no truth value"),
    (lambda x: float(x), r"float\(\).*symdiff.math or NumPy"),
    (lambda x: int(x), r"int\(\)"),
    (lambda x: round(x), "no numeric value"),
    (lambda x: math.sin(x), r"standard library's math.*symdiff\.math or NumPy"),
    (lambda x: math.exp(x), "symdiff.math"),
    (lambda x: np.nextafter(x, 2.0),
     r"^numpy function 'nextafter' is not supported when tracing; write it with the NumPy "
     r"functions symdiff follows, or compute it outside .*\(in <lambda>, line \d+: "),
    (lambda x: np.spacing(x), "numpy function 'spacing'"),
    (lambda x: np.round(x, 2), r"np.round\(\.\.\., decimals=2\).*with shapes="),
    (lambda x: np.sum(x), "numpy function 'sum'"),
    (lambda x: np.sin(x, out=np.empty(())), "keyword arguments of numpy function 'sin'"),
    (lambda x: np.add.reduce([x, x]), "cannot be converted to a NumPy array"),
    (lambda x: np.array([1.0, 2.0]) * x, r"array of shape \(2,\)"),
    (lambda x: x[0], r"indexing a traced value \(x\[i\]\)"),
    (lambda x: len(x), r"len\(\) of a traced value"),
    (lambda x: [v for v in x], "iterating over a traced value"),
    (lambda x: x.shape, "attribute 'shape' of a traced value"),
    (lambda x: x.exp(), "attribute 'exp'"),
    (lambda x: x == 0, "'=='"),
    (lambda x: x != 0, "'!='"),
    (lambda x: x ^ 2, r"operator '\^'.*write \*\*"),
    (lambda x: x // 2, "operator '//'"),
    (lambda x: 2 % x, "operator '%'"),
    (lambda x: ~x, "operator '~'"),
    (lambda x: pow(x, 2, 3), "modulus"),
    (lambda x: (x > 0) * x, "can only be the condition of where"),
    (lambda x: (x > 0) & (x < 1), "returned a comparison"),
    (lambda x: sm.where((x > 0) & x, 1, 0), "condition of where"),
    (lambda x: sm.where((x > 0) and (x < 1), 1, 0), "& | ~ instead of and"),
    (lambda x: x > 0, "returned a comparison"),
    (lambda x: sm.where(x, 1, 0), "condition of where"),
    (lambda x: np.where(x > 0), "one argument"),
    (lambda x: sm.where(sm.where(x > 0, x, 1) > 2, x, 0), "where.. inside the condition"),
    (lambda x: x + 1j, "complex"),
    (lambda x: x + "a", "type str"),
    (lambda x: (x, x), "returned a tuple; a traced function must return one scalar"),
    (lambda x: "x", "returned a str"),
    (lambda x: None, "returned None"),
    (lambda x: np.array([x, x]), "cannot be converted to a NumPy array"),
    (_star_args, r"parameter \*args is not supported"),
    (_var_keywords, r"parameter \*\*kwargs is not supported"),
    (_divide_by_zero, "tracing _divide_by_zero failed: ZeroDivisionError: division by zero"),
    (lambda x: x / 0, "ZeroDivisionError"),
    (lambda x: np.reciprocal(x - x), "ZeroDivisionError"),
    (lambda x: (x - x) ** -1, "ZeroDivisionError"),
    (lambda x: [][1], "tracing <lambda> failed: IndexError"),
]


@pytest.mark.parametrize(("fn", "message"), REFUSED)
def test_untraceable_functions_say_what_is_wrong(fn, message):
    with pytest.raises(sd.UnsupportedError, match=message):
        sd.grad(fn)


def test_failures_inside_the_function_keep_their_cause():
    with pytest.raises(sd.UnsupportedError) as info:
        trace(_divide_by_zero)
    assert isinstance(info.value.__cause__, ZeroDivisionError)


def test_symdiff_errors_inside_the_function_propagate_unchanged():
    error = sd.ShapeError("mine")

    def f(x):
        raise error

    with pytest.raises(sd.ShapeError) as info:
        sd.grad(f)
    assert info.value is error


def test_parameter_names_are_checked_like_variables():
    with pytest.raises(sd.ParseError, match="parameter name '_x'"):
        sd.grad(lambda _x: _x)


def test_non_finite_constants_are_refused_like_strings():
    with pytest.raises(sd.ParseError, match="not a finite real number"):
        sd.grad(lambda x: x * np.inf)
    with pytest.raises(sd.ParseError, match="not a finite real number"):
        sd.grad(lambda x: x + sm.log(x - x))


def test_traced_values_build_expressions_and_conditions():
    value = Traced(X)
    assert isinstance(value > 0, Condition) and (value > 0).expr == (X > 0)
    assert isinstance(-value, Traced) and (2 - value / 4).expr == 2 - X / 4
    with pytest.raises(sd.UnsupportedError, match="no numeric value"):
        float(value)


# -- random compositions: traced NumPy == the same string --------------------------------------
UNARY = [  # bounded growth, so that nested compositions stay finite
    (np.sin, "sin({})"),
    (np.cos, "cos({})"),
    (np.tanh, "tanh({})"),
    (np.arctan, "atan({})"),
    (np.arcsinh, "asinh({})"),
    (lambda u: np.exp(np.sin(u)), "exp(sin({}))"),
    (lambda u: np.expm1(np.tanh(u)), "expm1(tanh({}))"),
    (np.negative, "(-({}))"),
    (np.abs, "abs({})"),
    (lambda u: np.sqrt(1 + np.square(u)), "sqrt(1 + ({})**2)"),
    (lambda u: np.log1p(u * u), "log1p(({0})*({0}))"),
    (lambda u: sm.sigmoid(u), "sigmoid({})"),
    (lambda u: sm.softplus(u), "softplus({})"),
]
BINARY = [
    (np.add, "({} + {})"),
    (np.subtract, "({} - {})"),
    (np.multiply, "({} * {})"),
    (np.maximum, "max({}, {})"),
    (np.minimum, "min({}, {})"),
    (np.logaddexp, "logaddexp({}, {})"),
    (lambda a, b: a / (1 + b**2), "({} / (1 + ({})**2))"),
    (lambda a, b: np.where(a > b, a, b * 0.5), "where({0} > {1}, {0}, {1}*0.5)"),
]
#: How a constant is written on the Python side (float32 is left out: NumPy would compute a
#: constant sub-expression in float32, a different number than the string's).
CONSTANTS = {"py": float, "f64": np.float64, "0d": np.asarray}


def _leaves():
    variables = st.sampled_from(["x", "y"]).map(lambda n: ("var", n))
    constants = st.tuples(
        st.just("const"), st.sampled_from([0.5, 2.0, 3.0, -1.5]), st.sampled_from(list(CONSTANTS))
    )
    return variables | constants


def _extend(children):
    unary = st.tuples(st.just("unary"), st.integers(0, len(UNARY) - 1), children)
    binary = st.tuples(st.just("binary"), st.integers(0, len(BINARY) - 1), children, children)
    return unary | binary


TREES = st.recursive(_leaves(), _extend, max_leaves=6)


def _python(tree, env):
    kind = tree[0]
    if kind == "var":
        return env[tree[1]]
    if kind == "const":
        return CONSTANTS[tree[2]](tree[1])
    if kind == "unary":
        return UNARY[tree[1]][0](_python(tree[2], env))
    return BINARY[tree[1]][0](_python(tree[2], env), _python(tree[3], env))


def _text(tree):
    kind = tree[0]
    if kind == "var":
        return tree[1]
    if kind == "const":
        return f"({tree[1]!r})"
    if kind == "unary":
        return UNARY[tree[1]][1].format(_text(tree[2]))
    return BINARY[tree[1]][1].format(_text(tree[2]), _text(tree[3]))


@settings(max_examples=30)
@given(
    tree=TREES,
    x=st.floats(-1.5, 1.5, allow_nan=False),
    y=st.floats(-1.5, 1.5, allow_nan=False),
)
def test_random_numpy_compositions_trace_like_strings(tree, x, y):
    def f(x, y):
        return _python(tree, {"x": x, "y": y})

    text = f"{_text(tree)} + 0*(x + y)"  # both names occur in the text, as in f's parameters
    try:
        ref = sd.value_and_grad(text, wrt=["x", "y"])
    except sd.SymdiffError as error:  # what a string cannot express, its traced twin cannot either
        # except a string over the parser's time budget (which depends on the machine's load):
        # where(2.0 > logaddexp(atan(2.0), 2.0), ...) makes SymPy decide a comparison of exact
        # constants, which tracing computes with NumPy
        assume("too expensive to evaluate exactly" not in str(error))
        with pytest.raises(sd.SymdiffError):
            sd.value_and_grad(f, wrt=["x", "y"])
        return
    traced = sd.value_and_grad(f, wrt=["x", "y"])
    assert traced.args == ref.args == ("x", "y")
    (value, grads), (ref_value, ref_grads) = traced(x, y), ref(x, y)
    np.testing.assert_allclose(value, ref_value, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(grads, ref_grads, rtol=1e-9, atol=1e-12, equal_nan=True)
    with np.errstate(all="ignore"):
        direct = f(np.float64(x), np.float64(y))  # the function still runs on numbers
    np.testing.assert_allclose(value, direct, rtol=1e-9, atol=1e-12)
