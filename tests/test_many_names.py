"""Many scalar names: the n-name problems of ``benchmarks/bench_many_names.py``
against ``sympy.diff``, the work of each build phase linear in n (operation counts, never
times), the product's gradient by prefix and suffix products, the point path on Python floats
(and when it is not taken), and the verifier's one ``if`` of a scalar function."""

from __future__ import annotations

import ast
import re

import numpy as np
import pytest
import sympy as sp
from sympy.core import random as sympy_random
from sympy.core.cache import clear_cache

import symdiff as sd
from symdiff.codegen import forms
from symdiff.engine.sweeps import gradient_program
from symdiff.simplify import operation_nodes
from symdiff.verify import VerificationError, check_module

TEXTS = {
    "rosenbrock": lambda n: " + ".join(
        f"100*(x{i + 1} - x{i}**2)**2 + (1 - x{i})**2" for i in range(n - 1)
    ),
    "product": lambda n: "*".join(f"x{i}" for i in range(n)),
    "logsumexp": lambda n: "log(" + " + ".join(f"exp(x{i})" for i in range(n)) + ")",
    "quadratic": lambda n: " + ".join(
        f"{(i + 2 * j) % 7 - 3}*x{i}*x{j}" for i in range(n) for j in range(i, n)
    ),
}


def _names(n: int) -> list[str]:
    return [f"x{i}" for i in range(n)]


@pytest.mark.parametrize("problem", sorted(TEXTS))
def test_gradients_of_the_n_name_problems_match_sympy_diff(problem):
    """At a point of Python floats (the point path), of 0-d arrays and over arrays."""
    n = 7
    names = _names(n)
    g = sd.grad(TEXTS[problem](n), wrt=names, cache=False)
    symbols = sp.symbols(names, real=True)
    expr = sp.sympify(TEXTS[problem](n), locals=dict(zip(names, symbols, strict=True)))
    reference = sp.lambdify(symbols, [sp.diff(expr, s) for s in symbols], "numpy")
    rng = np.random.default_rng(3)
    point = rng.uniform(0.5, 1.5, size=n)
    rows = rng.uniform(0.5, 1.5, size=(n, 5))
    args = {name: float(v) for name, v in zip(names, point, strict=True)}
    want = np.array(reference(*point))
    for got in (g(**args), g(**{k: np.asarray(v) for k, v in args.items()})):
        assert all(type(a) is np.ndarray and a.shape == () for a in got)
        np.testing.assert_allclose(np.stack(got), want, rtol=1e-13)
    got = g(**dict(zip(names, rows, strict=True)))
    np.testing.assert_allclose(np.stack(got), np.array(reference(*rows)), rtol=1e-13)


def _program_size(problem: str, n: int) -> tuple[int, int]:
    """(assignments, operation nodes) of the reverse-mode program of a problem at size n."""
    assignments, _, (grads,), _ = gradient_program([sd.parse(TEXTS[problem](n))], _names(n))
    nodes = sum(operation_nodes(v) for _, v in assignments) + sum(map(operation_nodes, grads))
    return len(assignments), nodes


@pytest.mark.parametrize("problem", ["rosenbrock", "product", "logsumexp"])
def test_the_gradient_program_grows_linearly_with_the_number_of_names(problem):
    """Four times the names, at most about four times the lines and operations (quadratic
    growth would be sixteen times): nothing in the reverse sweep is quadratic (the product rule
    gives n products of n - 1 factors if it is)."""
    small_lines, small_nodes = _program_size(problem, 30)
    large_lines, large_nodes = _program_size(problem, 120)
    assert large_lines <= 4.5 * small_lines + 10
    assert large_nodes <= 4.5 * small_nodes + 10


def _multiplications(source: str) -> int:
    tree = ast.parse(source)
    formulas = next(f for f in tree.body if isinstance(f, ast.FunctionDef)
                    and f.name == "_formulas")
    return sum(isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)
               for node in ast.walk(formulas))


def test_the_gradient_of_a_product_of_n_names_takes_prefix_and_suffix_products():
    """3n multiplications at most (n - 2 prefix products, n - 2 suffix products, one product
    per partial), not n products of n - 1 factors; and exact where a factor is 0."""
    n = 40
    names = _names(n)
    g = sd.grad(TEXTS["product"](n), wrt=names, cache=False)
    assert _multiplications(g.source) <= 3 * n
    point = {name: 1.0 + i / 100 for i, name in enumerate(names)}
    point["x3"] = 0.0
    got = g(**point)
    others = np.prod([v for k, v in point.items() if k != "x3"])
    assert got[3] == pytest.approx(others, rel=1e-13)
    assert all(got[i] == 0.0 for i in range(n) if i != 3)


def test_the_cost_model_search_skips_programs_over_its_node_budget(monkeypatch):
    """The sign and factor search prints and factors whole lines per trial: a dense quadratic
    form's 100-term outputs skip it (as programs with many temporaries do)."""

    def refuse(*args, **kwargs):
        raise AssertionError("the search ran on a program over SEARCH_MAX_NODES")

    monkeypatch.setattr(forms, "_factor_lines", refuse)
    monkeypatch.setattr(forms, "_fold_signs", refuse)
    x = sp.symbols("x0:60", real=True)
    outputs = [sp.Add(*(((i * j) % 5 + 2) * x[j] for j in range(60))) for i in range(60)]
    assert sum(map(operation_nodes, outputs)) > forms.SEARCH_MAX_NODES
    lines, outs = forms.cheaper_program([], outputs)
    assert outs == outputs and lines == []


def test_the_point_path_gives_the_numbers_of_numpy_scalars_and_falls_back_at_poles():
    g = sd.value_and_grad("x**3*y - exp(x)/y + log(y)", wrt=["x", "y"], cache=False)
    assert "_elementwise(_formulas, (x, y), threads=threads)" in g.source
    value, grads = g(0.7, 1.3)
    v0, g0 = g(np.asarray(0.7), np.asarray(1.3))  # 0-d arrays: the array path
    np.testing.assert_allclose([value, *grads], [v0, *g0], rtol=1e-15)
    assert type(value) is np.ndarray and value.dtype == np.float64
    with np.errstate(divide="ignore", invalid="ignore"):
        value, grads = g(0.7, 0.0)  # Python raises at 1/0.0: NumPy scalars give inf and nan
    assert not np.isfinite(value)


def test_numpy_float64_scalars_take_the_point_path_and_outputs_stay_0d_arrays(monkeypatch):
    """``g(*x)`` of a float64 array passes NumPy scalars: they are computed as Python floats
    (the formulas see floats), and every output is a 0-d float64 array, nested as before."""
    g = sd.value_and_grad("x**3*y - exp(x)/y + log(y)", wrt=["x", "y"], cache=False)
    seen = []
    formulas = g._fn.__globals__["_formulas"]

    def spy(*args):
        seen.append(tuple(type(a) for a in args[:2]))
        return formulas(*args)

    monkeypatch.setitem(g._fn.__globals__, "_formulas", spy)
    x = np.array([0.7, 1.3])
    value, (dx, dy) = g(*x)
    assert seen == [(float, float)]
    want_value, (want_dx, want_dy) = g(np.asarray(0.7), np.asarray(1.3))
    for got, want in ((value, want_value), (dx, want_dx), (dy, want_dy)):
        assert type(got) is np.ndarray and got.shape == () and got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-15)


def test_no_point_path_where_a_power_of_a_float_could_be_complex():
    g = sd.grad("x**2.5 + y", wrt=["x", "y"], cache=False)  # 5/2*x**(3/2)
    assert "floats=False" in g.source
    with np.errstate(invalid="ignore"):
        assert np.isnan(g(-1.0, 1.0)[0])  # nan, as NumPy gives, not a complex number


def _point_module(body: str) -> str:
    return (
        "import numpy as _np\nfrom symdiff.runtime import _at_point, _elementwise\n\n\n"
        f"def f(x, y, *, threads=None):\n    {body}\n\n\n"
        "def _formulas(x, y, _out=(None,)):\n    return x*y\n"
    )


@pytest.mark.parametrize(
    "body, ok",
    [
        ("return _elementwise(_formulas, (x, y), threads=threads)", True),
        ("return _elementwise(_formulas, (x, y), threads=threads, floats=False)", True),
        ("return _elementwise(_formulas, (x, y), threads=threads, leading=(2, 2))", True),
        ("return _at_point(_formulas, (x, y))", True),
        ("return _elementwise(print, (x, y), threads=threads)", False),
        ("return _elementwise(_formulas, (x, _np), threads=threads)", False),
        ("return _elementwise(_formulas, (x, y), threads=open)", False),
        ("return _elementwise(_formulas, (x, y), out=x)", False),
        ("return _elementwise(_formulas, (x, y), threads=threads, dtype=float)", False),
        ("return _in_blocks(_formulas, (x, y), (), 0)", False),
        ("if x.__class__ is float and y.__class__ is float:\n"
         "        return _at_point(_formulas, (x, y))\n"
         "    return _elementwise(_formulas, (x, y))", False),
    ],
)
def test_the_verifier_accepts_exactly_the_point_path(body, ok):
    source = _point_module(body)
    if ok:
        check_module(source)
    else:
        with pytest.raises(VerificationError):
            check_module(source)


# -- 1,000 names: the gradients against sympy.diff and central differences ------------------------
#: Each problem built in SymPy directly (the reference does not parse the text) and in NumPy.
REFERENCES = {
    "rosenbrock": (
        lambda s: sp.Add(*(100 * (s[i + 1] - s[i] ** 2) ** 2 + (1 - s[i]) ** 2
                           for i in range(len(s) - 1))),
        lambda x: float(np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)),
    ),
    "product": (lambda s: sp.Mul(*s), lambda x: float(np.prod(x))),
    "logsumexp": (lambda s: sp.log(sp.Add(*map(sp.exp, s))),
                  lambda x: float(np.log(np.sum(np.exp(x))))),
}


@pytest.mark.slow
@pytest.mark.parametrize("problem", sorted(REFERENCES))
def test_the_1000_name_gradients_match_sympy_diff_and_central_differences(problem):
    """At n = 1,000 (the parser's limit of names): a sample of partials against ``sympy.diff``
    of the problem built in SymPy, evaluated exactly at the point, and against central
    differences of the value; the point path (Python floats) and the array path agree."""
    n = 1000
    names = _names(n)
    g = sd.grad(TEXTS[problem](n), wrt=names, cache=False)
    rng = np.random.default_rng(7)
    point = rng.uniform(0.97, 1.03, n) if problem == "product" else rng.uniform(0.5, 1.5, n)
    got = np.stack(g(**{name: float(v) for name, v in zip(names, point, strict=True)}))
    rows = {name: np.array([v, v + 1e-3]) for name, v in zip(names, point, strict=True)}
    np.testing.assert_allclose(np.stack(g(**rows))[:, 0], got, rtol=1e-13, atol=1e-13)
    build, value = REFERENCES[problem]
    symbols = sp.symbols(names, real=True)
    expr = build(symbols)
    values = dict(zip(symbols, (sp.Float(v, 30) for v in point), strict=True))
    for i in (0, 1, 499, 998, 999):
        if expr.is_Add:  # a sum: the terms of other names differentiate to 0
            exact = float(sp.diff(expr, symbols[i]).xreplace(values))
        else:  # the other names set first (SymPy's derivative of a product of 1,000 takes 20 s)
            others = {s: v for s, v in values.items() if s != symbols[i]}
            exact = float(sp.diff(expr.xreplace(others), symbols[i]).xreplace(values))
        assert got[i] == pytest.approx(exact, rel=1e-11, abs=1e-11), (problem, i)
        h = 1e-6
        up, down = point.copy(), point.copy()
        up[i] += h
        down[i] -= h
        central = (value(up) - value(down)) / (2 * h)
        assert got[i] == pytest.approx(central, rel=1e-5, abs=1e-5), (problem, i)


# -- the work of each build phase grows linearly (Python calls counted, never times) --------------
#: The phases of a build and where each is called from (module, name): each is wrapped to count
#: the Python and C calls made while it runs.
PHASES = {
    "parse": ("symdiff.parsing.entry", "read_text"),
    "derivation": ("symdiff.build", "gradient_program"),
    "emission": ("symdiff.build", "emit_source"),
    "verification": ("symdiff.codegen.load", "check_module"),
}


def _phase_calls(problem: str, n: int, monkeypatch) -> dict[str, int]:
    """Calls made in each phase of ``sd.grad`` of a problem at size n (under a profile hook that
    counts calls: the parser then keeps its own CPU deadline between nodes only)."""
    import importlib
    import sys

    counts = dict.fromkeys(PHASES, 0)
    current: list[str] = []

    def hook(frame, event, arg):
        if current and event in ("call", "c_call"):
            counts[current[-1]] += 1

    def counted(phase, function):
        def run(*args, **kwargs):
            current.append(phase)
            try:
                return function(*args, **kwargs)
            finally:
                current.pop()
        return run

    prefix = f"v{n}_"  # names of this size only: no symbol's assumptions known from before
    text = re.sub(r"\bx(\d+)", prefix + r"\1", TEXTS[problem](n))
    clear_cache()
    sympy_random.seed(0)  # SymPy checks facts in a random order: the work differs run to run
    with monkeypatch.context() as patch:
        for phase, (module, name) in PHASES.items():
            owner = importlib.import_module(module)
            patch.setattr(owner, name, counted(phase, getattr(owner, name)))
        sys.setprofile(hook)
        try:
            sd.grad(text, wrt=[f"{prefix}{i}" for i in range(n)], cache=False)
        finally:
            sys.setprofile(None)
    return counts


@pytest.mark.parametrize("problem", ["rosenbrock", "product", "logsumexp"])
def test_the_work_of_every_build_phase_grows_linearly_with_the_names(problem, monkeypatch):
    """Twice the names, at most about twice the calls in every phase (parse, reverse sweep,
    emission with the cost model and printing, verification): a phase that goes quadratic
    (n products of n - 1 factors, a walk of the whole tree per node, a search per line over
    all lines) makes four times as many at twice the size."""
    small = _phase_calls(problem, 40, monkeypatch)
    large = _phase_calls(problem, 80, monkeypatch)
    for phase in PHASES:
        assert small[phase] > 0, phase
        assert large[phase] <= 2.3 * small[phase], (phase, small[phase], large[phase])


def test_linearisation_and_the_requests_names_visit_each_node_of_a_dag_once(monkeypatch):
    """``sin(e)*cos(e) + 3`` nested 20 deep is a DAG of 80 nodes and a tree of 2**20: the
    reverse sweep's linearisation and a request's variable names take DAG-sized work (SymPy's
    ``free_symbols``, asked of every node, walks the tree)."""
    from symdiff.engine.reverse import Linearizer
    from symdiff.request import Request

    x = sp.Symbol("x", real=True)
    e = x
    for _ in range(20):
        e = sp.sin(e) * sp.cos(e) + 3
    linear = Linearizer(["x"])
    found: dict[str, tuple[str, ...]] = {}

    def run() -> None:
        linear(e)
        found["params"] = Request("grad", (e,), ("x",), True).params

    calls = _profiled_calls(run)
    assert len(linear.nodes) == 20 * 4 and found["params"] == ("x",)
    assert calls < 100_000


def _profiled_calls(run) -> int:
    import sys

    calls = 0

    def hook(frame, event, arg):
        nonlocal calls
        calls += 1

    sys.setprofile(hook)
    try:
        run()
    finally:
        sys.setprofile(None)
    return calls


def test_the_parsers_checks_of_a_deep_expression_grow_linearly():
    """Each value built is checked for infinities once per distinct subexpression over the
    whole build (``has`` below every value of a chain ``((x0 + 1)*x1 + 1)*x2 ...`` walks the
    chain again at every level: depth squared)."""

    def chain(depth: int) -> str:
        text = "y0"
        for i in range(1, depth):
            text = f"({text} + 1)*y{i}"
        return text

    clear_cache()
    small = _profiled_calls(lambda: sd.parse(chain(30)))
    clear_cache()
    large = _profiled_calls(lambda: sd.parse(chain(60)))
    assert large <= 2.3 * small, (small, large)


def test_the_inlining_substitution_visits_each_node_of_a_dag_once(monkeypatch):
    """``quick.substitute`` (the inlining's ``xreplace``) rebuilds each node of a DAG once: 40
    nodes whose tree has 2**10 leaves (``xreplace`` rebuilds the tree)."""
    from symdiff.simplify import quick

    x, y = sp.symbols("x y", real=True)
    e = x
    for _ in range(10):
        e = sp.sin(e) * sp.cos(e) + 3
    rebuilt = []
    original = quick.rebuilt

    def counted(func, args):
        rebuilt.append(func)
        return original(func, args)

    monkeypatch.setattr(quick, "rebuilt", counted)
    made = quick.substitute(e, {x: y})
    assert made == e.xreplace({x: y})
    assert len(rebuilt) == 10 * 4
