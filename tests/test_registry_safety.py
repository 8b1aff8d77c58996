"""Rows are safe to write: a row lacking a field, or with inconsistent ones, fails when it is made
(at ``import symdiff``) with an error naming the row and the field; a template's arguments are
bracketed by the printer (never by the row's author), so compound operands such as
``f(2*x - y)`` and ``f(x**2 + 1)`` print the value they mean, for every template row and for a
test-only row whose template applies an operator to its argument."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import symdiff as sd
from symdiff import registry as R
from symdiff.codegen.printer import ArrayCodePrinter, CodePrinter

x, y = sp.symbols("x y", real=True)
TEMPLATE_ROWS = [pytest.param(row, id=row.names[0]) for row in R.ROWS if row.template and row.names]
#: Compound operands (text, and as NumPy on the points); a unary row gets each one.
OPERANDS = [("2*x - y", lambda a, b: 2 * a - b), ("x**2 + 1", lambda a, b: a**2 + 1),
            ("-x", lambda a, b: -a), ("x/y - 1", lambda a, b: a / b - 1)]
RNG = np.random.default_rng(20261203)
XS, YS = RNG.uniform(0.3, 2.0, 64), RNG.uniform(0.3, 2.0, 64)


def _good(**change):
    fields = dict(names=("acot_example",), head="acot", template="_np.arctan(1.0/{0})",
                  numeric=np.arctan, rule="inverse trigonometric",
                  identity="d/du acot(u) = -1/(1 + u^2)",
                  partials=R.unary(lambda u: -1 / (1 + u**2)), domain=R.on((0.5, 3)),
                  doc="Inverse cotangent (an example row).")
    fields.update(change)
    return R.Fn(fields.pop("names"), fields.pop("head"), **fields)


def test_a_complete_row_is_accepted():
    assert _good().template == "_np.arctan(1.0/{0})"


@pytest.mark.parametrize(("change", "field"), [
    ({"numeric": None}, "numeric"),
    ({"names": "acot_example"}, "names"),  # a string, not a tuple: the missing comma
    ({"head": "XY:acot"}, "head"),
    ({"partials": None}, "partials"),
    ({"rule": ""}, "rule"),
    ({"identity": "acot' = ..."}, "identity"),
    ({"template": None}, "ufunc"),
    ({"template": "_np.arctan(1.0/({0}))", "helper": "_acot"}, "helper"),
    ({"template": "_np.arctan(1.0/{x})"}, "template"),
    ({"template": "_np.arctan2(1.0, {0}, {1})"}, "template"),
    ({"domain": None}, "domain"),
    ({"domain": R.on((0.5, 3), (1, 2))}, "domain"),
    ({"doc": ""}, "doc"),
    ({"in_place": True}, "in_place"),
    ({"helper_deps": ("_sinpi",)}, "helper_deps"),
    ({"params": "x, y="}, "params"),
    ({"constant": (0,)}, "constant"),
    ({"method": "nested"}, "helper"),
])
def test_an_incomplete_row_names_itself_and_the_field(change, field):
    with pytest.raises(R.RowError) as error:
        _good(**change)
    message = str(error.value)
    assert "registry row 'acot_example'" in message or "registry row 'acot'" in message
    assert f"field {field}:" in message


def test_the_table_is_checked_when_it_is_made():
    """Every row of the table went through the check (Fn makes it in __post_init__), so the
    table holds no row the check refuses."""
    from symdiff.registry.checks import check_row
    from symdiff.registry.schema import _HEAD_MODULES

    for row in R.ROWS:
        check_row(row, frozenset(_HEAD_MODULES))


def _expected(row: R.Fn, *values):
    numeric = row.numeric or getattr(np, row.ufunc)
    return numeric(*values)


@pytest.mark.parametrize("row", TEMPLATE_ROWS)
@pytest.mark.parametrize(("text", "operand"), OPERANDS)
def test_template_rows_take_compound_operands(row, text, operand):
    """The value and the gradient of ``f(operand)``, ``f(operand)**2`` and ``3/f(operand)`` as
    generated code computes them, against the row's numbers and central differences."""
    assert R.arity(row) == (1, 1), "extend OPERANDS to rows of several arguments"
    name = row.names[0]
    u = operand(XS, YS)
    f_u = _expected(row, u)
    h = 1e-6
    cases = [(f"{name}({text})", lambda v: v), (f"{name}({text})**2", lambda v: v**2),
             (f"3/(1 + {name}({text})**2)", lambda v: 3 / (1 + v**2))]
    names = [v for v in ("x", "y") if v in text]
    far = np.abs(u) > 1e-3  # off relu's kink
    for expr, outer in cases:
        for mode in ("forward", "reverse"):
            f = sd.compile(expr, mode=mode)
            at = {"x": XS, "y": YS}
            np.testing.assert_allclose(f(**{v: at[v] for v in names}), outer(f_u), rtol=1e-13,
                                       err_msg=expr)
            grads = sd.grad(expr, wrt=names, mode=mode)(**{v: at[v] for v in names})
            for var, grad in zip(names, grads, strict=True):
                up = {v: at[v] + (h if v == var else 0.0) for v in names}
                down = {v: at[v] - (h if v == var else 0.0) for v in names}
                differences = (f(**up) - f(**down)) / (2 * h)
                np.testing.assert_allclose(grad[far], differences[far], rtol=1e-5, atol=1e-6,
                                           err_msg=f"{expr} d/d{var}")
    big = text.replace("x", "X").replace("y", "Y")
    tensor = sd.compile(f"sum({name}({big}))", shapes={v.upper(): ("n",) for v in names})
    total = tensor(**{v.upper(): at[v] for v in names})
    assert total == pytest.approx(np.sum(f_u), rel=1e-12)


class recip_example(sp.Function):
    """A test-only row's node: ``1/u``, printed by a template that applies an operator."""


RECIP = R.Fn(("recip_example",), "F:recip_example", template="1.0/{0}", numeric=lambda v: 1 / v,
             rule="reciprocal", identity="d/du (1/u) = -1/u^2",
             partials=R.unary(lambda u: -1 / u**2), domain=R.on((0.5, 2)),
             doc="``1/x`` (a test-only row).")
ACOT = _good()


class acot_example(sp.Function):
    """A test-only row's node whose template brackets an operator's operand inside a call."""


@pytest.mark.parametrize("printer", [CodePrinter, ArrayCodePrinter])
def test_a_template_that_applies_an_operator_is_bracketed(monkeypatch, printer):
    monkeypatch.setitem(R.by_class_name(), "recip_example", RECIP)
    monkeypatch.setitem(R.by_class_name(), "acot_example", ACOT)
    r, a = recip_example, acot_example
    cases = [
        (r(2 * x - y), lambda p, q: 1 / (2 * p - q)),
        (r(x**2 + 1), lambda p, q: 1 / (p**2 + 1)),
        (r(2 * x - y) ** 2, lambda p, q: 1 / (2 * p - q) ** 2),
        (x ** r(y), lambda p, q: p ** (1 / q)),
        (3 * r(x + y) / y, lambda p, q: 3 / (p + q) / q),
        (r(r(x) - y), lambda p, q: 1 / (1 / p - q)),
        (r(-x), lambda p, q: -1 / p),
        (a(2 * x - y), lambda p, q: np.arctan(1 / (2 * p - q))),
        (a(x**2 + 1) * 2, lambda p, q: 2 * np.arctan(1 / (p**2 + 1))),
        (sp.exp(a(x * y)), lambda p, q: np.exp(np.arctan(1 / (p * q)))),
    ]
    for expr, want in cases:
        code = printer().doprint(expr)
        got = eval(code, {"_np": np, "x": XS, "y": YS})  # our printer's code of our expression
        np.testing.assert_allclose(got, want(XS, YS), rtol=1e-13, err_msg=code)


def test_relu_prints_its_argument_bare_in_its_call():
    """A whole argument of a call needs no brackets: relu's code reads as written by hand."""
    assert CodePrinter().doprint(sd.parse("relu(2*x - y)")) == "_np.maximum(2*x - y, 0.0)"
