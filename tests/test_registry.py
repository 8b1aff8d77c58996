"""The function registry (symdiff/registry/) and its consumers: each consumer
reads the rows and keeps no list of its own (the printer, verify, runtime, parsing, tracing,
symdiff.math, the tensor emitter, the rule table). What differs on purpose is named below
(``MATH_ONLY``, ``MATH_EXTRAS``, ``OPERATOR_UFUNCS``), with the reason."""

from __future__ import annotations

import ast
import inspect
import re
import subprocess
import sys

import numpy as np
import pytest
import sympy as sp
from sympy.codegen.cfunctions import expm1, log1p
from sympy.codegen.numpy_nodes import logaddexp

import symdiff as sd
import symdiff.math as sm
from symdiff import registry as R
from symdiff import runtime as runtime
from symdiff import trace, verify
from symdiff.codegen.printer import ArrayCodePrinter, CodePrinter
from symdiff.codegen.standalone import runtime_closure
from symdiff.engine.rules import RULES
from symdiff.functions import sigmoid, softplus
from symdiff.parsing import functions as parsing_functions
from symdiff.tensor import finish
from symdiff.tensor import traced as tensor_traced
from symdiff.tensor.parse import TENSOR_FUNCTIONS

from .conftest import ROOT, to_reference
from .test_print_snapshot import SCALAR_CASES
from .test_registry_rows import printed_prefix

ROWS = [pytest.param(row, id=row.names[0] if row.names else row.head) for row in R.ROWS]
PUBLIC = [p for p in ROWS if p.values[0].names]
HEADS = [p for p in ROWS if p.values[0].head]

#: In symdiff.math and trace.FUNCTIONS (binary), not in strings (step 10: aliases of max/min).
MATH_ONLY = {"maximum", "minimum"}
#: The rest of symdiff.math (not elementwise functions).
MATH_EXTRAS = {"where", "logsumexp", "softmax", "pi", "e"}
#: Ufuncs tracing treats as arithmetic: they stay in symdiff/trace/tables.py.
OPERATOR_UFUNCS = {
    "add", "subtract", "multiply", "divide", "power", "float_power", "negative", "positive",
    "reciprocal", "square", "deg2rad", "radians", "rad2deg", "degrees", "conjugate",
    "greater", "greater_equal", "less", "less_equal",
}


def _args(row: R.Fn, count: int | None = None) -> list[sp.Expr]:
    """SymPy arguments for a call: real symbols, or the number where the domain fixes one."""
    intervals = row.domain.args[:count]
    return [
        sp.nsimplify(lo) if lo == hi else sp.Symbol(f"a{i}", real=True)
        for i, (lo, hi) in enumerate(intervals)
    ]


def _node(row: R.Fn) -> sp.Expr:
    """A node of the row's head (``log(x, b)`` builds a quotient: then ``log(x)``)."""
    node = R.build_fn(row)(*_args(row))
    if type(node) is not R.head_class(row):
        node = R.head_class(row)(*_args(row, R.arity(row)[0]))
    assert type(node) is R.head_class(row)
    return node


def _counts(row: R.Fn) -> set[int]:
    """Argument counts worth calling the row with: the fewest it takes and the domain's."""
    return {max(R.arity(row)[0], 1), len(row.domain.args)}


def _values(row: R.Fn) -> list[np.ndarray | float]:
    return [lo if lo == hi else np.linspace(lo, hi, 9)[1:-1] for lo, hi in row.domain.args]


# -- the table itself ------------------------------------------------------------------------------
def test_the_package_imports_the_standard_library_only():
    """Every module of the registry package imports the standard library and its siblings only."""
    paths = sorted((ROOT / "symdiff" / "registry").glob("*.py"))
    assert {p.stem for p in paths} >= {"__init__", "schema", "rows", "queries"}
    imported = set()
    for path in paths:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level:
                # a sibling in the package; nothing else of symdiff's (the registry is a sink)
                assert node.level == 1 and node.module, ast.unparse(node)
            elif isinstance(node, ast.ImportFrom):
                imported.add(node.module.split(".")[0])
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}


def test_reading_the_table_imports_neither_sympy_nor_numpy():
    code = (
        "import sys, symdiff.registry as R\n"
        "R.by_name(); R.by_class_name(); R.parse_names(); R.numpy_names(); R.traced_numpy()\n"
        "R.helper_dependencies()\n"
        "[(R.arity(r), R.usage(r), R.signature(r)) for r in R.ROWS]\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sympy', 'numpy')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("row", ROWS)
def test_every_row_is_complete(row):
    least, most = R.arity(row)
    assert row.domain is not None
    count = len(row.domain.args)
    assert least <= count and (most is None or count == most)
    assert all(lo <= hi for lo, hi in row.domain.args)
    fixed = {i for i, (lo, hi) in enumerate(row.domain.args) if lo == hi}
    assert fixed == set(row.constant), "a fixed interval (c, c) exactly where a number is needed"
    assert set(row.int_args) <= set(row.constant)
    assert (row.partials is None) == (row.head == ""), "every node has a rule; sugar has none"
    if row.head:
        assert row.rule and row.identity.startswith("d")
        node = _node(row)
        assert len(row.partials(*node.args)) == len(node.args)
    assert sum(map(bool, (row.helper, row.template, row.method))) <= 1
    assert row.ufunc or row.helper or row.template or not row.head, "some way to print it"
    assert not row.helper_deps or row.helper
    if row.in_place:
        assert row.ufunc and not (row.helper or row.template or row.method)
        assert len(_node(row).args) == 1 and isinstance(getattr(np, row.ufunc), np.ufunc)
    assert bool(row.doc) == bool(row.names), "every public function is documented"
    assert row.nesting in (1, 2)
    assert list(R.signature(row).parameters) == [
        p.partition("=")[0].lstrip("*") for p in row.params.split(", ")
    ]


def test_names_are_unique_and_safe():
    names = [name for row in R.ROWS for name in row.names]
    assert len(names) == len(set(names))
    assert not set(names) & ({"pi", "e"} | R.GRAMMAR)
    assert set(names) & TENSOR_FUNCTIONS <= {"max", "min"}
    assert all(name.isidentifier() and not name.startswith("_") for name in names)
    heads = [row.head.rpartition(":")[2] for row in R.ROWS if row.head]
    assert len(heads) == len(set(heads)) == len(R.by_class_name())
    for row in R.ROWS:
        if row.head:
            assert R.head_class(row).__name__ == row.head.rpartition(":")[2]


def test_the_snapshot_prints_every_head():
    assert set(R.by_class_name()) <= set(SCALAR_CASES)


# -- rules -----------------------------------------------------------------------------------------
def test_rule_table_holds_the_rows_in_order():
    rows = [row for row in R.ROWS if row.partials]
    assert list(RULES) == [R.head_class(row) for row in rows]  # notebook 01 shows this order
    for row in rows:
        rule = RULES[R.head_class(row)]
        assert (rule.name, rule.identity) == (row.rule, row.identity)
        args = _node(row).args
        assert rule.partials(*args) == row.partials(*args)


def test_the_heads_stable_rewrites_produce_have_rules():
    assert {softplus, logaddexp, sigmoid, log1p, expm1} <= set(RULES)


@pytest.mark.parametrize("row", [p for p in ROWS if p.values[0].reference])
def test_references_are_the_test_suites(row):
    args = _args(row)
    assert to_reference(R.head_class(row)(*args)) == row.reference(*args)


# -- parsing ---------------------------------------------------------------------------------------
def test_parser_knows_exactly_the_rows_names():
    table = parsing_functions.FUNCTION_SPECS
    assert set(table) == R.parse_names() | R.GRAMMAR
    assert R.parse_names() | R.GRAMMAR == parsing_functions.FUNCTIONS
    for row in R.ROWS:
        assert all(table[name] is table[row.names[0]] for name in row.names)


@pytest.mark.parametrize("row", PUBLIC)
def test_parser_reads_the_row(row):
    spec = parsing_functions.FUNCTION_SPECS[row.names[0]]
    assert (spec.min_args, spec.max_args) == R.arity(row)
    assert spec.usage == R.usage(row)
    assert (spec.keywords, spec.check, spec.grows, spec.nesting) == (
        R.keywords(row), row.check, row.grows, row.nesting
    )
    for count in _counts(row):
        assert spec.build(*_args(row, count)) == R.build_fn(row)(*_args(row, count))


def test_parser_numeric_care_is_where_it_was():
    """Which rows parsing bounds (max_exponent, max_constant_depth): as before the registry."""
    assert {row.head for row in R.ROWS if row.grows} == {
        "exp", "sinh", "cosh", "gamma", "loggamma", "CF:expm1", "CF:exp2"
    }
    assert {row.names[0] for row in R.ROWS if row.nesting == 2} == {"sigmoid", "softplus"}


@pytest.mark.parametrize("base", ["-2", "0", "1"])
def test_the_log_check_says_what_parsing_says(base):
    row = R.by_name()["log"]
    index, message = row.check(sp.Symbol("x"), sp.sympify(base))
    assert index == 1
    with pytest.raises(sd.ParseError, match=message):
        sd.parse(f"log(x, {base})")
    assert row.check(sp.Symbol("x"), sp.Integer(2)) is None
    assert row.check(sp.Symbol("x"), sp.Symbol("b")) is None


def test_parse_keywords_are_the_rows_optional_params():
    for row in R.ROWS:
        if row.names:  # only log takes a keyword today (builder.keyword_base)
            assert R.keywords(row) == (("base",) if row.names[0] == "log" else ())
    assert parsing_functions.FUNCTION_SPECS["where"].keywords == ()


# -- printing, the verifier's allow-list, runtime helpers ------------------------------------------
@pytest.mark.parametrize("row", HEADS)
@pytest.mark.parametrize("printer", [CodePrinter, ArrayCodePrinter], ids=["scalar", "tensor"])
def test_the_printers_print_the_rows_way(row, printer):
    p = printer()
    node = _node(row)
    code = p.doprint(node)
    if row.template:  # its first call, wherever the template puts it (1.0/_np.cos(u))
        assert printed_prefix(row) in code, code
    else:
        assert code.lstrip("(").startswith(printed_prefix(row)), code
    assert p.helpers == ({row.helper} if row.helper else set())
    for i in row.int_args:
        assert code.startswith(f"{printed_prefix(row)}{int(node.args[i])}, ")
    names = set(re.findall(r"_np\.(\w+)", code))
    assert names <= R.numpy_names()


@pytest.mark.parametrize("printer", [CodePrinter, ArrayCodePrinter], ids=["scalar", "tensor"])
@pytest.mark.parametrize("at_zero", ["0", "1/2", "3/10", "1"])
def test_heaviside_prints_as_fast_forms_equal_to_np_heaviside_bit_for_bit(printer, at_zero):
    """relu's H(u, 0) and max's ties H(u, 1/2) print with ``sign`` (np.heaviside is a slow
    ufunc); every form gives np.heaviside's bits, signed zeros, infinities and nan included."""
    u = sp.Symbol("u", real=True)
    code = printer().doprint(sp.Heaviside(u, sp.Rational(at_zero)))
    assert ("heaviside" in code) == (at_zero not in ("0", "1/2")), code
    z = np.array([-2.0, -0.0, 0.0, 1e-300, -1e-300, 3.0, np.nan, -np.inf, np.inf])
    for values in (z, z.astype(np.float32)):
        got = eval(code, {"_np": np, "u": values})  # our own printed code, no user input
        want = np.heaviside(values, values.dtype.type(float(sp.Rational(at_zero))))
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_the_printer_has_no_method_of_its_own_for_a_row():
    """The printer reads the rows (one ``_print`` dispatch): no ``_print_<head>`` shadows one."""
    ours = {name for cls in ArrayCodePrinter.__mro__ if cls.__module__ == "symdiff.codegen.printer"
            for name in vars(cls)}
    assert ours & {f"_print_{name}" for name in R.by_class_name()} == set()


def test_verify_allows_the_rows_names():
    """verify's allow-list is its structural names, the tensor families' and the rows': ``sqrt``
    is both structural and a row's, since any ``x**(1/2)`` prints ``_np.sqrt``."""
    allowed = verify.NUMPY_NAMES
    family = verify.allowed.FAMILY_NUMPY_NAMES
    assert allowed == verify.STRUCTURAL_NUMPY_NAMES | family | R.numpy_names()
    assert verify.STRUCTURAL_NUMPY_NAMES & R.numpy_names() == {"sqrt"}


def test_runtime_knows_the_rows_helpers():
    """Every helper a row prints is a runtime helper that generated code may import, and the
    helpers a row says it calls are among those a standalone module copies with it."""
    deps = R.helper_dependencies()
    for helper, calls in deps.items():
        assert callable(getattr(runtime, helper)) and helper in runtime.__all__
        assert set(calls) <= set(runtime_closure([helper]))
    assert {row.helper for row in R.ROWS if row.helper} <= verify.RUNTIME_IMPORTS


# -- tracing and symdiff.math ----------------------------------------------------------------------
def test_trace_functions_are_the_rows_canonical_names():
    canonical = {row.names[0] for row in R.ROWS if row.names}
    assert set(trace.FUNCTIONS) == canonical | MATH_ONLY
    for name in canonical:
        row = R.by_name()[name]
        for count in _counts(row):
            args = _args(row, count)
            assert trace.FUNCTIONS[name](*args) == R.build_fn(row)(*args)


def test_traced_ufuncs_are_the_rows():
    functions = {u for u in trace.UFUNCS if u.__name__ not in OPERATOR_UFUNCS}
    traced = R.traced_numpy()
    rows = {name: row for name, row in traced.items() if isinstance(getattr(np, name), np.ufunc)}
    assert functions == {getattr(np, name) for name in rows}
    others = {getattr(np, name) for name in traced.keys() - rows.keys()}
    # not ufuncs (they dispatch through __array_function__)
    assert others == {np.sinc, np.round, np.around, np.fix}
    assert others <= set(trace.ARRAY_FUNCTIONS) and others <= set(tensor_traced.ARRAY_FUNCTIONS)
    for name, row in rows.items():
        ufunc = getattr(np, name)
        args = _args(row, ufunc.nin)
        assert trace.UFUNCS[ufunc](*args) == R.build_fn(row)(*args), name
    assert not rows.keys() & OPERATOR_UFUNCS


def test_trace_lists_no_row_of_its_own():
    """The tracer's literal tables (symdiff/trace/tables.py) hold arithmetic and comparisons
    only: the functions come from the rows."""
    tree = ast.parse((ROOT / "symdiff" / "trace" / "tables.py").read_text(encoding="utf-8"))
    tables = {
        ast.unparse(node.target): node.value for node in tree.body
        if isinstance(node, ast.AnnAssign) and isinstance(node.value, ast.Dict)
    }
    ufuncs = {ast.unparse(k) for k in tables["UFUNCS"].keys if k is not None}
    assert ufuncs == {f"np.{name}" for name in OPERATOR_UFUNCS}
    assert {k.value for k in tables["FUNCTIONS"].keys if k is not None} == MATH_ONLY


def test_math_exports_the_rows_canonical_names():
    canonical = {row.names[0] for row in R.ROWS if row.names}
    assert sm.__all__ == sorted(canonical | MATH_ONLY | MATH_EXTRAS)


def test_math_builds_its_functions_from_the_rows():
    """symdiff.math defines no function of a row itself: each is ``_function(<name>)`` (a
    generated function named as the row, with its docstring) of a known parameter shape."""
    tree = ast.parse((ROOT / "symdiff" / "math.py").read_text(encoding="utf-8"))
    defined = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    canonical = {row.names[0] for row in R.ROWS if row.names}
    assert not defined & canonical
    assert {row.params for row in R.ROWS if row.names} <= set(sm._SHAPES)
    for name in canonical:
        assert getattr(sm, name).__name__ == getattr(sm, name).__qualname__ == name
        assert getattr(sm, name).__module__ == "symdiff.math"


@pytest.mark.parametrize("row", PUBLIC)
def test_math_agrees_with_the_row(row):
    function = getattr(sm, row.names[0])
    assert function.__doc__ == row.doc
    def described(sig: inspect.Signature) -> list[tuple]:
        return [(p.name, p.kind, p.default) for p in sig.parameters.values()]

    if R.arity(row)[1] is None:  # math takes *args: one list or tuple of the values counts too
        assert described(inspect.signature(function)) == [
            ("args", inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.empty)
        ]
    else:
        assert described(inspect.signature(function)) == described(R.signature(row))
    numeric = row.numeric or (getattr(np, row.ufunc) if row.ufunc else None)
    numeric = numeric or getattr(runtime, row.helper)
    values = _values(row)
    np.testing.assert_array_equal(function(*values), numeric(*values))


# -- tensor code -----------------------------------------------------------------------------------
def test_tensor_in_place_ufuncs_are_the_rows():
    assert R.in_place_ufuncs() == finish.IN_PLACE_UFUNCS
    # exactly today's nine (more is a measured perf change, plan P6)
    in_place = {row.head for row in R.ROWS if row.in_place}
    assert in_place == {"exp", "log", "sin", "cos", "tan", "sinh", "cosh", "tanh", "Abs"}


def test_tensor_sigmoid_is_the_rows_tensor_form():
    assert finish.SIGMOID_CLIP == R.SIGMOID_CLIP
    rows = [row for row in R.ROWS if row.tensor_form]
    assert rows == [R.by_name()["heaviside"], R.by_name()["sigmoid"], R.by_name()["softplus"]]
    u = sp.Symbol("u", real=True)
    assert finish.tensor_forms(sigmoid(u)) == rows[1].tensor_form(u)
    assert finish.tensor_forms(sigmoid(u)) == 1 / (1 + sp.exp(sp.Min(-u, 88)))  # as before
    # softplus as np.logaddexp(0, u) computes it, in vectorised calls (a tenth of its time)
    assert finish.tensor_forms(softplus(u)) == sp.Max(u, 0) + log1p(sp.exp(-sp.Abs(u)))
    # the step at 1/2 (max(x, 0)'s and relu's gradient) as (sign + 1)/2: np.heaviside is slow
    assert finish.tensor_forms(sp.Heaviside(u, sp.S.Half)) == (sp.sign(u) + 1) / 2
    assert finish.tensor_forms(sp.Heaviside(u, 1)) == sp.Heaviside(u, 1)
    x = np.array([-np.inf, -2.0, -0.0, 0.0, 3.0, np.inf, np.nan])
    np.testing.assert_array_equal((np.sign(x) + 1) / 2, np.heaviside(x, 0.5))


# -- documentation ---------------------------------------------------------------------------------
def test_the_docs_function_table_is_the_registrys(tmp_path):
    """docs/functions.md's table between the functions markers is ``python -m symdiff.registry
    markdown``, every public row is in it, and ``markdown --write`` puts it there (regenerate
    the block when a row changes)."""
    from symdiff.registry.__main__ import END, START, write

    page = (ROOT / "docs" / "functions.md").read_text(encoding="utf-8")
    block = page[page.index(START) + len(START) : page.index(END)]
    assert block == R.markdown()
    out = subprocess.run([sys.executable, "-m", "symdiff.registry", "markdown"],
                         capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout == block
    for row in R.ROWS:
        for name in row.names:
            assert f"`{name}" in block, name
    stale = tmp_path / "functions.md"
    stale.write_text(f"# Functions\n\n{START}| old |\n{END}\n\nafter\n", encoding="utf-8")
    assert write(stale) is True
    assert stale.read_text(encoding="utf-8") == f"# Functions\n\n{START}{block}{END}\n\nafter\n"
    assert write(stale) is False
