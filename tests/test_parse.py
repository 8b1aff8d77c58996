"""Tests of ``symdiff.parsing``: the grammar, exact numbers, errors with positions, every limit."""

from __future__ import annotations

import contextlib
import importlib
import time

import numpy as np
import pytest
import sympy as sp
from hypothesis import assume, given
from hypothesis import strategies as st

from symdiff import registry
from symdiff.errors import ParseError, SymdiffError, UnsupportedError
from symdiff.functions import relu, sigmoid, softplus
from symdiff.parsing import FUNCTIONS, LIMITS, check_identifier, parse

parse_module = importlib.import_module("symdiff.parsing")  # the package exports the function
x, y, z = sp.symbols("x y z", real=True)


def real(name: str) -> sp.Symbol:
    return sp.Symbol(name, real=True)


def parse_error(text: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(text)
    return info.value


# --------------------------------------------------------------------------- valid input

VALID = [
    ("x", x),
    ("x + y", x + y),
    ("x - y - z", x - y - z),
    ("x / y / z", x / y / z),
    ("sin(x)*exp(y)/(1 + x**2)", sp.sin(x) * sp.exp(y) / (1 + x**2)),
    ("x**y", x**y),
    ("-x", -x),
    ("+x", x),
    ("--x", x),
    ("-x**2", -(x**2)),
    ("2*x + 3*y", 2 * x + 3 * y),
    ("(x + y)*(x - y)", (x + y) * (x - y)),
    # '^' is '**': same precedence, right-associative
    ("x^2+1", x**2 + 1),
    ("x^2*y", x**2 * y),
    ("2^3^2", sp.Integer(512)),
    ("x^y^z", x ** (y**z)),
    ("-x^2", -(x**2)),
    ("x^-1", 1 / x),
    ("(x^2)^3", x**6),
    ("x**2^3", x**8),
    ("2*x^2", 2 * x**2),
    # exact numbers
    ("0.1", sp.Rational(1, 10)),
    ("1e-3", sp.Rational(1, 1000)),
    ("2.5e3", sp.Integer(2500)),
    ("1_000.5", sp.Rational(2001, 2)),
    (".5", sp.Rational(1, 2)),
    ("5.", sp.Integer(5)),
    ("1E+2", sp.Integer(100)),
    ("0.1 + 0.2", sp.Rational(3, 10)),
    ("0.1*x", x / 10),
    ("0x10 + 0o10 + 0b10", sp.Integer(26)),
    ("1/3", sp.Rational(1, 3)),
    ("x**0.5", sp.sqrt(x)),
    # functions
    ("sin(x)", sp.sin(x)),
    ("cos(x)", sp.cos(x)),
    ("tan(x)", sp.tan(x)),
    ("asin(x)", sp.asin(x)),
    ("acos(x)", sp.acos(x)),
    ("atan(x)", sp.atan(x)),
    ("atan2(y, x)", sp.atan2(y, x)),
    ("sinh(x)", sp.sinh(x)),
    ("cosh(x)", sp.cosh(x)),
    ("tanh(x)", sp.tanh(x)),
    ("asinh(x)", sp.asinh(x)),
    ("acosh(x)", sp.acosh(x)),
    ("atanh(x)", sp.atanh(x)),
    ("exp(x)", sp.exp(x)),
    ("log(x)", sp.log(x)),
    ("sqrt(x)", sp.sqrt(x)),
    ("abs(x)", sp.Abs(x)),
    ("sign(x)", sp.sign(x)),
    ("erf(x)", sp.erf(x)),
    ("gamma(x)", sp.gamma(x)),
    ("loggamma(x)", sp.loggamma(x)),
    ("relu(x)", relu(x)),
    ("sigmoid(x)", sigmoid(x)),
    ("softplus(x)", softplus(x)),
    # NumPy spellings and ln
    ("arcsin(x)", sp.asin(x)),
    ("arccos(x)", sp.acos(x)),
    ("arctan(x)", sp.atan(x)),
    ("arctan2(y, x)", sp.atan2(y, x)),
    ("arcsinh(x)", sp.asinh(x)),
    ("arccosh(x)", sp.acosh(x)),
    ("arctanh(x)", sp.atanh(x)),
    ("ln(x)", sp.log(x)),
    # log bases
    ("log(x, 2)", sp.log(x, 2)),
    ("log(x, base=10)", sp.log(x, 10)),
    ("ln(x, base=y)", sp.log(x, y)),
    ("log(8, 2)", sp.Integer(3)),
    ("log(x, y)", sp.log(x) / sp.log(y)),
    # min / max, n-ary
    ("max(x, 0)", sp.Max(x, 0)),
    ("min(x, y)", sp.Min(x, y)),
    ("max(x, y, z)", sp.Max(x, y, z)),
    ("min(x, y, z, 1)", sp.Min(x, y, z, 1)),
    ("max(1, 2, 3)", sp.Integer(3)),
    # where
    ("where(x < 0, -x, x)", sp.Piecewise((-x, x < 0), (x, True))),
    ("where(x <= y, x, y)", sp.Piecewise((x, x <= y), (y, True))),
    ("where(x > 1, x**2, 0)", sp.Piecewise((x**2, x > 1), (0, True))),
    ("where(x >= 0, 1, -1)", sp.Piecewise((1, x >= 0), (-1, True))),
    ("where(1 < 2, x, y)", x),
    (
        "where(sin(x) < 0.5, where(x < 0, 1, 2), 3)",
        sp.Piecewise((sp.Piecewise((1, x < 0), (2, True)), sp.sin(x) < sp.S.Half), (3, True)),
    ),
    # constants
    ("pi", sp.pi),
    ("e", sp.E),
    ("e**x", sp.exp(x)),
    ("2*pi*e", 2 * sp.pi * sp.E),
    ("exp(-x**2/2)/sqrt(2*pi)", sp.exp(-(x**2) / 2) / sp.sqrt(2 * sp.pi)),
    # layout
    ("  x +\n  y", x + y),
    ("(x +\n y)", x + y),
    ("x +\r\n y", x + y),
    ("\tx\t*\ty", x * y),
    ("x + 1  # a comment with 'quotes' and (", x + 1),
    ("x + \\\n y", x + y),
]


@pytest.mark.parametrize(("text", "expected"), VALID, ids=[t for t, _ in VALID])
def test_valid_input(text, expected):
    assert parse(text) == expected


def test_names_are_plain_real_variables():
    names = [
        "np",
        "exec",
        "eval",
        "t0",
        "E",
        "I",
        "S",
        "N",
        "O",
        "Q",
        "oo",
        "nan",
        "inf",
        "beta",
        "lambda_",
        "match",
        "case",
        "type",
        "x_1",
        "sum",
        "abs_",
        "Symbol",
    ]
    result = parse(" + ".join(names))
    assert result == sp.Add(*[real(n) for n in names])
    assert all(s.is_real for s in result.free_symbols)
    assert parse("x").is_real is True


def test_symbols_are_real_so_abs_of_square_simplifies():
    assert parse("sqrt(x**2)") == sp.Abs(x)


#: The functions the public contract (API.md, "Supported functions (at least)") names.
CONTRACT_FUNCTIONS = set(
    [
        "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh",
        "acosh", "atanh", "exp", "log", "sqrt", "abs", "sign", "erf", "gamma", "loggamma", "min",
        "max", "relu", "sigmoid", "softplus", "where",
    ]
)


def test_functions_set():
    """The parser's names are the registry rows' names and the grammar's ``where``; they
    include every function the contract names."""
    assert registry.parse_names() | registry.GRAMMAR == FUNCTIONS
    assert CONTRACT_FUNCTIONS <= FUNCTIONS
    assert isinstance(FUNCTIONS, frozenset)


#: Every name of a function that takes one argument (more only optionally, as log's base).
UNARY_NAMES = sorted(
    name for row in registry.ROWS if registry.arity(row)[0] == 1 for name in row.names
)


@pytest.mark.parametrize("name", UNARY_NAMES)
def test_every_unary_function_parses(name):
    result = parse(f"{name}(x)")
    assert x in result.free_symbols


def test_decimals_are_exact():
    assert parse("0.1") + parse("0.2") == sp.Rational(3, 10)
    assert parse("3.14159265358979323846264338327950288") == sp.Rational(
        314159265358979323846264338327950288, 10**35
    )
    assert parse("1.5e-300") == sp.Rational(15, 10**301)


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("text", "position", "fragment"),
    [
        ("x + foo(y)", 4, "unknown function 'foo'"),
        ("x // y", 2, "'//'"),
        ("x % y", 2, "'%'"),
        ("x @ y", 2, "tensor"),
        ("a^b^c // d", 6, "'//'"),  # position in the original text, despite '^' -> '**'
        ("x^2 + y^2 % 3", 10, "'%'"),
        ("x << 2", 2, "'<<'"),
        ("x | y", 2, "'|'"),
        ("~x", 0, "'~'"),
        ("not x", 0, "'not'"),
        ("x and y", 0, "'and'"),
        ("x == y", 2, "'=='"),
        ("where(x != 1, x, y)", 8, "'!='"),
        ("where(0 < x == 1, x, y)", 12, "'=='"),
        ("where((x > 0) & y, x, y)", 16, "condition of where"),
        ("where(x > 0 & y > 0, x, y)", 12, "each in parentheses"),
        ("where(x, 1, 2)", 6, "comparison"),
        ("x < y", 0, "where"),
        ("sin + 1", 0, "is a function"),
        ("pi(x)", 0, "constant"),
        ("e(1)", 0, "constant"),
        ("1/0", 1, "division by zero"),
        ("x + 1/(2 - 2)", 5, "division by zero"),
        ("x / where(x > 0, x, 0)", 0, "infinite or undefined for some values"),
        ("x + log(0)", 4, "not a finite real number"),
        ("sqrt(-1)", 0, "not a finite real number"),
        ("asin(2)", 0, "not a finite real number"),
        ("0**-1", 0, "not a finite real number"),
        ("1 + (-8)**(1/3)", 4, "not a finite real number"),
        ("(-2)**pi", 0, "not a finite real number"),
        ("tan(pi/2)", 0, "not a finite real number"),
        ("atan2(0, 0)", 0, "not a finite real number"),
        ("log(x, 1)", 7, "base"),
        ("log(x, -2)", 7, "base"),
        ("sin(x) + \uff58", 9, "U+FF58"),
        ("x +\n foo(y)", 5, "unknown function"),
        ("(x +\n y) @ z", 9, "'@'"),
        ("(x", 0, "never closed"),
        ("x)", 1, "unmatched"),
        ("(x]", 2, "does not match"),
        ("x $ y", 2, "invalid syntax"),
        ("x y", 2, "missing operator between 'x' and 'y'"),
        ("x +", 3, "invalid syntax"),
        ("sin(x, y)", 0, "sin() takes one argument (2 given)"),
        ("atan2(x)", 0, "two arguments"),
        ("max(x)", 0, "two or more"),
        ("where(x < 1, x)", 0, "three arguments"),
        ("log()", 0, "log() takes"),
        ("log(base=2)", 0, "log() takes"),
        ("sin(x, foo=1)", 7, "keyword"),
        ("log(x, bas=2)", 7, "unexpected keyword argument 'bas'"),
        ("log(x, 2, base=3)", 10, "multiple values"),
        ("sin(*x)", 4, "starred"),
        ("sin(**x)", 6, "'**kwargs'"),
        ("x.real", 0, "attribute"),
        ("x[0]", 0, "indexing"),
        ("x.f(1)", 0, "method calls"),
        ("(x)(1)", 1, "unknown function 'x'"),
        ("(x + 1)(2)", 7, "implicit multiplication"),
        ("lambda: 1", 0, "lambda"),
        ("(lambda: 1)()", 1, "lambda"),  # what is called is refused first, not "write ...*(...)"
        ("('a')(x)", 1, "string literals"),
        ("x if y else z", 0, "where(c, a, b)"),
        ("x, y", 0, "tuples"),
        ("[x]", 0, "lists"),
        ("{x}", 0, "sets"),
        ("{x: 1}", 0, "dicts"),
        ("(y := 1)", 1, "':='"),
        ("[t for t in x]", 0, "comprehensions"),
        ("(t for t in x)", 0, "generator"),
        ("'x'", 0, "string literals"),
        ("b'x'", 1, "string literals"),
        ("f'{x}'", 1, "f-strings"),
        ("1j", 0, "complex"),
        ("True", 0, "True"),
        ("None", 0, "None"),
        ("...", 0, "'...'"),
        ("_x + 1", 0, "'_'"),
        ("x + __class__", 4, "'_'"),
        ("x\x00", 1, "control character U+0000"),
        ("", 0, "empty"),
        ("   \n\t ", 0, "empty"),
    ],
)
def test_errors_have_exact_positions(text, position, fragment):
    error = parse_error(text)
    assert error.position == position, (error.reason, error.position)
    assert fragment in error.reason
    assert error.text == text
    assert isinstance(error, SymdiffError) and isinstance(error, ValueError)


def test_error_message_has_a_caret_line():
    error = parse_error("x // y")
    assert str(error).splitlines() == [
        "operator '//' is not supported (use '/') (at position 2)",
        "  x // y",
        "    ^",
    ]
    error = parse_error("sin(x) + foo(x)")
    assert str(error).endswith("\n  sin(x) + foo(x)\n           ^")


def test_unknown_function_names_itself():
    assert parse_error("__import__(x)").reason == "unknown function '__import__'"
    assert parse_error("Sin(x)").reason == "unknown function 'Sin'; did you mean 'sin'?"


def test_where_in_a_condition_is_refused():
    # SymPy would turn the condition into sets and solve it: exponential time
    error = parse_error("where(where(x < 0, x, 1) < y, 1, 2)")
    assert "condition" in error.reason and error.position == 6
    assert parse("where(abs(x) < max(y, 1), 1, 2)").has(sp.Piecewise)


def test_where_accepts_constant_comparisons_and_nested_where():
    assert parse("where(2 < 1, x, y)") == y
    expr = parse("where(x < 0, 0, where(x < 1, x, 1))")
    assert expr.subs(x, sp.Rational(1, 2)) == sp.Rational(1, 2)
    assert expr.subs(x, 5) == 1


# --------------------------------------------------------------------------- limits


def fast_error(text: str) -> ParseError:
    start = time.thread_time()  # CPU time: wall-clock time also counts a loaded machine's others
    error = parse_error(text)
    assert time.thread_time() - start < 1.0  # well under a second of work
    return error


def test_limits_are_documented():
    doc = parse_module.__doc__
    for key, value in LIMITS.items():
        assert f"``{key}`` ({value:,})" in doc
    assert LIMITS["max_length"] == 100_000


def test_limit_max_length():
    assert parse("x" + " " * (LIMITS["max_length"] - 1)) == x
    error = fast_error("x" + " " * LIMITS["max_length"])
    assert error.position == LIMITS["max_length"]
    assert "max_length" in error.reason


def test_limit_max_depth():
    n = LIMITS["max_depth"]
    assert parse("(" * n + "x" + ")" * n) == x
    error = fast_error("(" * (n + 1) + "x" + ")" * (n + 1))
    assert error.position == n and "max_depth" in error.reason
    assert "max_depth" in fast_error("sin(" * (n + 1) + "x" + ")" * (n + 1)).reason


def test_limit_max_ast_depth():
    n = LIMITS["max_ast_depth"]
    assert parse("-" * (n - 1) + "x") == (x if (n - 1) % 2 == 0 else -x)
    error = fast_error("-" * n + "x")
    assert "max_ast_depth" in error.reason and error.position == n
    assert "max_ast_depth" in fast_error("x**" * n + "x").reason
    # a long flat sum is one level, not n
    assert parse("+".join(["x"] * (n + 50))) == (n + 50) * x


def _groups(k: int) -> str:
    """k parenthesised sums of 500 x's joined by +: 1000 k - 1 nodes (Python's own parser
    refuses flat chains of a few thousand operators, so the groups keep each chain short)."""
    return "+".join("(" + "+".join(["x"] * 500) + ")" for _ in range(k))


def test_limit_max_nodes():
    k = (LIMITS["max_nodes"] + 1) // 1000
    assert parse(_groups(k)) == 500 * k * x
    error = fast_error(_groups(k + 1))
    assert "max_nodes" in error.reason


def test_limit_max_name_length():
    name = "v" * LIMITS["max_name_length"]
    assert parse(name) == real(name)
    error = fast_error(name + "v")
    assert "max_name_length" in error.reason


def test_limit_max_names():
    n = LIMITS["max_names"]
    assert len(parse("+".join(f"v{i}" for i in range(n))).free_symbols) == n
    text = "+".join(f"v{i}" for i in range(n + 1))
    error = fast_error(text)
    assert "max_names" in error.reason
    assert error.position == text.index(f"v{n}")
    assert len(parse("+".join(f"v{i % n}" for i in range(3 * n))).free_symbols) == n


def test_limit_max_int_digits():
    n = LIMITS["max_int_digits"]
    assert parse("9" * n) == sp.Integer(int("9" * n))
    error = fast_error("x + " + "9" * (n + 1))
    assert "max_int_digits" in error.reason and error.position == 4
    assert "max_int_digits" in fast_error("0." + "1" * n).reason
    assert "max_int_digits" in fast_error("1" * 5000).reason  # beyond Python's own limit
    with pytest.raises(ParseError):
        parse(10 ** (n + 1))


def test_limit_max_exponent():
    n = LIMITS["max_exponent"]
    assert parse(f"2**{n}") == sp.Integer(2) ** n
    assert "max_exponent" in fast_error(f"2**{n + 1}").reason
    assert "max_exponent" in fast_error("9**9**9**9").reason
    assert "max_exponent" in fast_error("10**10**10").reason
    assert fast_error("x + 10**10**10").position == 6
    assert parse(f"exp({n})") == sp.exp(n)
    for func in ("exp", "sinh", "cosh", "gamma", "loggamma"):
        assert "max_exponent" in fast_error(f"{func}({n + 1})").reason
    assert "max_exponent" in fast_error("exp(10**6*log(10**99))").reason
    assert "max_exponent" in fast_error("exp(exp(exp(exp(1))))").reason
    assert parse(f"x**{10**50}") == x ** (10**50)  # symbolic base: nothing to fold


def test_limit_max_constant_digits():
    n = LIMITS["max_constant_digits"]
    assert parse(f"10**{n - 1}") == sp.Integer(10) ** (n - 1)
    assert "max_constant_digits" in fast_error(f"10**{n}").reason
    assert parse(f"1e{n - 1}") == sp.Integer(10) ** (n - 1)
    assert "max_constant_digits" in fast_error(f"1e{n}").reason
    assert "max_constant_digits" in fast_error("1e-999999999").reason
    assert "max_constant_digits" in fast_error("10**300 * 10**300").reason
    assert "max_constant_digits" in fast_error("gamma(1000)").reason
    assert "max_constant_digits" in fast_error("sinh(1000)*cosh(1000)").reason
    assert "max_constant_digits" in fast_error("x*exp(1000)*exp(1000)/x").reason
    roots = "*".join(f"sqrt({p})" for p in sp.primerange(10**60, 10**60 + 2000))
    assert "max_constant_digits" in fast_error(roots).reason


def test_limit_max_constant_depth():
    n = LIMITS["max_constant_depth"]
    assert parse("cos(2*" * n + "1" + ")" * n).is_number
    error = fast_error("cos(2*" * (n + 1) + "1" + ")" * (n + 1))
    assert "max_constant_depth" in error.reason
    assert "max_constant_depth" in fast_error("sigmoid(" * n + "1" + ")" * n).reason
    assert "max_constant_depth" in fast_error("exp(-" * 30 + "1" + ")" * 30).reason
    # with a variable inside, nesting is only bounded by max_ast_depth
    assert parse("cos(2*" * 50 + "x" + ")" * 50).free_symbols == {x}
    # a constant that appears when variables cancel is measured too
    text = "1"
    for _ in range(12):
        text = f"exp(-((x + {text})*1 - x))"
    assert "max_constant_depth" in fast_error(text).reason


def test_limit_max_args():
    n = LIMITS["max_args"]
    assert parse("max(" + ", ".join(f"x + {i}" for i in range(n)) + ")") == x + n - 1
    assert len(parse("min(" + ", ".join(f"v{i}" for i in range(n)) + ")").args) == n
    assert "max_args" in fast_error("max(" + ", ".join(["x"] * (n + 1)) + ")").reason
    half = ", ".join(f"v{i}" for i in range(n // 2 + 1))
    assert "max_args" in fast_error(f"max(max({half}), max({half.replace('v', 'w')}))").reason


def test_limit_max_milliseconds(monkeypatch):
    monkeypatch.setitem(LIMITS, "max_milliseconds", 0)
    monkeypatch.setitem(LIMITS, "max_microseconds_per_char", 0)
    assert "max_milliseconds" in fast_error("x + y").reason


def test_limits_can_be_changed(monkeypatch):
    monkeypatch.setitem(LIMITS, "max_names", 2)
    assert parse("x + y") == x + y
    assert "max_names" in parse_error("x + y + z").reason


def test_no_recursion_error_from_pythons_parser():
    for text in ("+".join(["x"] * 30_000), "-" * 9999 + "x", "x**" * 3333 + "x", "not " * 2000):
        error = fast_error(text)
        assert error.position is not None


# --------------------------------------------------------------------------- SymPy input


def test_sympy_input_gets_real_symbols():
    plain = sp.Symbol("x")
    result = parse(sp.sin(plain) * sp.Symbol("y", positive=True))
    assert result == sp.sin(x) * y
    assert all(s.is_real for s in result.free_symbols)


def test_sympy_input_validates_names():
    for bad in ("_x", "__class__", "", "x" * 101):
        with pytest.raises(ParseError, match="symbol name"):
            parse(sp.Symbol(bad) + 1)
    for other in ("x y", "for", "1x", "\uff58", "x_{1}"):  # code names stand in for them
        assert parse(sp.Symbol(other) + 1) == sp.Symbol(other, real=True) + 1
    with pytest.raises(ParseError, match="Dummy"):
        parse(sp.Dummy("x") + 1)


def test_sympy_input_rejects_unsupported_values():
    with pytest.raises(UnsupportedError, match="undefined function f"):
        parse(sp.Function("f")(x))
    for bad in (sp.zoo, sp.oo * x, sp.nan, sp.I * x, sp.sqrt(-2) + x, sp.Integer(-2) ** sp.pi):
        with pytest.raises(ParseError, match="finite real"):
            parse(bad)
    with pytest.raises(ParseError, match="Equality"):
        parse(sp.Eq(x, 1))


def test_python_numbers():
    assert parse(3) == sp.Integer(3)
    assert parse(0.1) == sp.Rational(1, 10)
    assert parse(1e300) == sp.Integer(10) ** 300
    assert parse(np.float64(0.5)) == sp.Rational(1, 2)
    assert parse(np.int64(7)) == sp.Integer(7)
    for bad in (float("nan"), float("inf"), -float("inf")):
        with pytest.raises(ParseError, match="finite"):
            parse(bad)


@pytest.mark.parametrize(
    ("value", "name"),
    [
        ([1], "list"),
        (b"x", "bytes"),
        (None, "NoneType"),
        (True, "bool"),
        ({"x": 1}, "dict"),
        (1j, "complex"),
    ],
)
def test_other_types_are_refused_by_name(value, name):
    with pytest.raises(SymdiffError, match=name):
        parse(value)


# --------------------------------------------------------------------------- identifiers


@pytest.mark.parametrize(
    "name",
    ["x", "X1", "lambda_", "match", "type", "np", "exec", "E", "e", "sin", "a_b_c", "x" * 100],
)
def test_check_identifier_accepts(name):
    assert check_identifier(name) == name


@pytest.mark.parametrize(
    ("name", "position", "fragment"),
    [
        ("", 0, "empty"),
        ("1x", 0, "ASCII letter"),
        ("_x", 0, "'_'"),
        ("__class__", 0, "'_'"),
        ("x y", 1, "' '"),
        ("x-y", 1, "'-'"),
        ("x.y", 1, "'.'"),
        ("for", 0, "keyword"),
        ("lambda", 0, "keyword"),
        ("None", 0, "keyword"),
        ("\uff58", 0, "ASCII letter"),
        ("x\uff58", 1, "U+FF58"),
        ("x\x00", 1, "U+0000"),
    ],
)
def test_check_identifier_refuses(name, position, fragment):
    with pytest.raises(ParseError) as info:
        check_identifier(name, "wrt name")
    assert info.value.reason.startswith("wrt name")
    assert fragment in info.value.reason
    assert info.value.position == position


@pytest.mark.parametrize("value", [3, None, sp.Symbol("x"), ["x"]])
def test_check_identifier_refuses_non_strings(value):
    with pytest.raises(ParseError, match="must be a string"):
        check_identifier(value)


# --------------------------------------------------------------------------- properties

SYMBOLS = {"x": x, "y": y, "z": z}
NUMBERS = [
    ("0", 0),
    ("1", 1),
    ("2", 2),
    ("7", 7),
    ("0.5", sp.Rational(1, 2)),
    ("2.25", sp.Rational(9, 4)),
    ("1e-2", sp.Rational(1, 100)),
]
UNARY = {
    "sin": sp.sin,
    "cos": sp.cos,
    "exp": sp.exp,
    "tanh": sp.tanh,
    "atan": sp.atan,
    "abs": sp.Abs,
    "erf": sp.erf,
    "sigmoid": sigmoid,
    "relu": relu,
    "softplus": softplus,
    "asinh": sp.asinh,
    "arctan": sp.atan,
}

leaves = st.one_of(
    st.sampled_from([(name, sym) for name, sym in SYMBOLS.items()]),
    st.sampled_from([(text, sp.sympify(value)) for text, value in NUMBERS]),
)


@st.composite
def _node(draw, children):
    kind = draw(st.sampled_from(["add", "sub", "mul", "div", "pow", "neg", "func", "max", "where"]))
    a_text, a = draw(children)
    if kind == "neg":
        return f"(-{a_text})", -a
    if kind == "pow":
        k = draw(st.integers(-3, 3))
        if a == 0 and k < 0:
            return a_text, a
        op = draw(st.sampled_from(["**", "^"]))
        return f"({a_text}){op}({k})", a**k
    if kind == "func":
        if not a.free_symbols:  # functions of variables only: constants stay rational
            return a_text, a
        name = draw(st.sampled_from(sorted(UNARY)))
        return f"{name}({a_text})", UNARY[name](a)
    b_text, b = draw(children)
    if kind == "add":
        return f"({a_text} + {b_text})", a + b
    if kind == "sub":
        return f"({a_text} - {b_text})", a - b
    if kind == "mul":
        return f"({a_text} * {b_text})", a * b
    if kind == "div":
        if b == 0:
            return a_text, a
        return f"({a_text} / {b_text})", a / b
    if kind == "max":
        return f"max({a_text}, {b_text})", sp.Max(a, b)
    c_text, c = draw(children)
    if (a - b).has(sp.Piecewise):  # refused: see test_where_in_a_condition_is_refused
        return c_text, c
    return f"where({a_text} < {b_text}, {c_text}, {a_text})", sp.Piecewise((c, a < b), (a, True))


expressions = st.recursive(leaves, lambda children: _node(children), max_leaves=8)


@given(expressions)
def test_printed_expressions_parse_back_equal(pair):
    text, expected = pair
    if expected.has(sp.zoo, sp.nan, sp.oo, -sp.oo):  # e.g. x / where(x > 0, x, 0)
        with pytest.raises(ParseError, match=r"infinite or undefined|not a finite"):
            parse(text)
    else:
        assert parse(text) == expected


@given(expressions)
def test_caret_is_the_same_as_double_star(pair):
    text, expected = pair
    assume(not expected.has(sp.zoo, sp.nan, sp.oo, -sp.oo))
    assert parse(text.replace("**", "^")) == parse(text.replace("^", "**")) == expected


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["+", "-"]), st.integers(0, 9), st.sampled_from(["x", "y", "z", "1"])
        ),
        min_size=1,
        max_size=40,
    )
)
def test_flat_sums_parse_like_python(terms):
    text = " ".join(f"{sign} {k}*{name}" for sign, k, name in terms)
    expected = sum(
        (
            sp.Integer(k) * (SYMBOLS.get(name, 1)) * (1 if sign == "+" else -1)
            for sign, k, name in terms
        ),
        sp.Integer(0),
    )
    assert parse(text) == expected


FACTORS = [
    ("2", sp.Integer(2)),
    ("0.5", sp.Rational(1, 2)),
    ("x", x),
    ("y", y),
    ("(x + y)", x + y),
    ("(2*x - 1)", 2 * x - 1),
    ("sqrt(2)", sp.sqrt(2)),
    ("sqrt(3)", sp.sqrt(3)),
    ("pi", sp.pi),
    ("exp(x)", sp.exp(x)),
]


@given(
    st.sampled_from(FACTORS),
    st.lists(st.tuples(st.sampled_from(["*", "/"]), st.sampled_from(FACTORS)), max_size=12),
)
def test_products_are_built_left_to_right_like_python(first, rest):
    text, expected = first
    for op, (factor_text, factor) in rest:
        text += f" {op} {factor_text}"
        expected = expected * factor if op == "*" else expected / factor
    assert parse(text) == expected


def test_sympy_canonical_form_follows_evaluation_order():
    assert parse("2*(x + y)*x") == 2 * (x + y) * x == x * (2 * x + 2 * y)
    assert parse("x*2*(x + y)") == x * 2 * (x + y)
    assert parse("2*(x + y) - 2*x") == 2 * y
    # very long runs are combined in one call: equal value, SymPy's flat canonical form
    long_product = "*".join(["2", "(x + y)"] + ["x"] * 40)
    assert parse(long_product) == sp.Mul(2, x + y, x**40)
    assert sp.expand(parse(long_product) - 2 * (x + y) * x**40) == 0


@given(st.text(alphabet="xy01.+-*/^()e, ", max_size=30))
def test_random_text_parses_or_raises_parse_error(text):
    try:
        result = parse(text)
    except ParseError as error:
        assert error.text == text
        assert 0 <= error.position <= len(text)
    else:
        assert isinstance(result, sp.Expr)


def test_pythons_syntax_warnings_do_not_leak(recwarn):
    for text in ("1x", "0x1for", "1if 2 else 3"):
        with contextlib.suppress(ParseError):
            parse(text)
    assert not [w for w in recwarn if issubclass(w.category, SyntaxWarning)]
