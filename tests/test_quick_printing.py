"""The printers' quick paths (:mod:`symdiff.codegen.quickprint`: a product of an integer and
names or their powers, the sign and precedence of a product, the terms of a sum joined) print
exactly what SymPy's own methods print, for every printer of generated code and of input text,
on random sums and products that include what they must leave to SymPy (rationals, floats,
functions, dummies, noncommutative names, repeated names, negative exponents, unevaluated
products)."""

from __future__ import annotations

from unittest import mock

import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy.printing.str import StrPrinter

from symdiff.codegen import printer as printing
from symdiff.codegen.printer import ArrayCodePrinter, CodePrinter
from symdiff.codegen.standard import StandardPrinter
from symdiff.engine.inputtext import InputPrinter

NAMES = [*sp.symbols("x y z0 z10 z2", real=True), sp.Symbol("w"), sp.Dummy("d"),
         sp.Symbol("n", commutative=False)]
COEFFICIENTS = [sp.Integer(k) for k in (1, -1, 2, -3, 400, -(2**60))] + [
    sp.Rational(1, 2), sp.Rational(-3, 4), sp.Float(1.5), sp.pi]
EXPONENTS = [2, 3, 5, 17, -1, -2, sp.S.Half, sp.Symbol("k")]


@st.composite
def factors(draw) -> sp.Expr:
    name = draw(st.sampled_from(NAMES))
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return name
    if kind == 1:
        return name ** draw(st.sampled_from(EXPONENTS))
    if kind == 2:
        return sp.sin(name)
    return name + draw(st.sampled_from(NAMES[:3]))


@st.composite
def terms(draw) -> sp.Expr:
    coefficient = draw(st.sampled_from(COEFFICIENTS))
    parts = draw(st.lists(factors(), min_size=1, max_size=4))
    if draw(st.integers(0, 9)) == 0:  # unevaluated, as the printer's chunks and forms make them
        return sp.Mul(coefficient, *parts, evaluate=False)
    return sp.Mul(coefficient, *parts)


def _code_reference(printer, terms):
    """The code printers' sum before :func:`joined_terms`: SymPy's ``_print_Add`` of the
    reordered terms."""
    return StrPrinter._print_Add(printer, sp.Add(*terms, evaluate=False), order="none")


class _InputReference(InputPrinter):
    """The input-language printer with SymPy's own ``_print_Add`` and ``_print_Mul``."""

    _print_Add = StrPrinter._print_Add
    _print_Mul = StrPrinter._print_Mul


PRINTERS = [CodePrinter, ArrayCodePrinter, StandardPrinter, lambda: InputPrinter("none"),
            InputPrinter]


def _slow_print(make, expr: sp.Expr) -> str:
    if make is InputPrinter or not isinstance(make, type):
        printer = make()
        return _InputReference(printer.order).doprint(expr)
    with (mock.patch.object(printing, "names_product_text", lambda printer, expr: None),
          mock.patch.object(printing, "minus_sign", lambda term: None),
          mock.patch.object(printing, "joined_terms", _code_reference)):
        return make().doprint(expr)


@settings(max_examples=400, deadline=None, derandomize=True)
@given(st.lists(terms(), min_size=1, max_size=6), st.sampled_from([0, 1, -2]))
def test_quick_printing_is_sympys(parts: list, constant: int) -> None:
    expr = sp.Add(*parts, constant)
    for cls in PRINTERS:
        assert cls().doprint(expr) == _slow_print(cls, expr), (cls, expr)
        for part in parts:
            assert cls().doprint(part) == _slow_print(cls, part), (cls, part)


def test_quick_paths_are_taken() -> None:
    """The products the sweeps make take the quick path (no ``CodePrinter._print_Mul`` of
    SymPy's), and print as SymPy prints them."""
    x, y, z0 = NAMES[:3]
    cases = {-2 * x * y: "-2*x*y", 14 * z0: "14*z0", -x: "-x", 3 * y * x**3: "3*(x**2*x)*y",
             x * y**2: "x*y**2"}
    for expr, text in cases.items():
        with mock.patch("sympy.printing.codeprinter.CodePrinter._print_Mul",
                        side_effect=AssertionError("slow path")):
            assert CodePrinter().doprint(expr) == text
        assert _slow_print(CodePrinter, expr) == text
    assert printing._negative(-2 * x) and not printing._negative(2 * x * y)
    with mock.patch("sympy.printing.str.StrPrinter._print_Mul",
                    side_effect=AssertionError("slow path")):
        assert InputPrinter("none").doprint(-2 * x * y + y**2) == "y**2 - 2*x*y"
        assert InputPrinter().doprint(-2 * x * y + y**2) == "-2*x*y + y**2"
