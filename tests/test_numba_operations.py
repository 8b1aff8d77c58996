"""How Numba's compiled code computes each operation (:mod:`symdiff.codegen.operations`): the
kind read off a SymPy node is what the Numba printer writes for it, for every function of the
registry; symbolic and fractional powers are calls of the C library, integer powers and square
roots are not; the calls of a formula are counted as often as its code writes them."""

from __future__ import annotations

import re

import pytest
import sympy as sp

import symdiff as sd
from symdiff import registry
from symdiff.codegen.loops import NumbaPrinter
from symdiff.codegen.operations import (
    INSTRUCTIONS,
    LIBRARY_CALL,
    NO_FORMULA,
    SCALAR_FUNCTION,
    instructions_only,
    library_calls,
    operation,
)
from symdiff.runtime import MODULES

x, y = sp.symbols("x y")


def _nodes():
    """A node of every function of the registry that has one, on symbols (an integer where
    the row takes one)."""
    for row in registry.ROWS:
        try:
            func = registry.head_class(row)
        except ValueError:  # (sqrt: a power)
            continue
        if func is sp.Heaviside:  # (its value at 0 a number)
            for at_zero in (0, sp.S.Half, sp.Rational(3, 10)):
                yield pytest.param(func(sp.Symbol("a0"), at_zero), id=f"heaviside-{at_zero}")
            continue
        low, _ = registry.arity(row)
        args = [sp.Integer(1) if i in row.int_args else sp.Symbol(f"a{i}")
                for i in range(max(low, 1))]
        node = func(*args, evaluate=False) if func in (sp.Max, sp.Min) else func(*args)
        if type(node) is func:
            yield pytest.param(node, id=row.names[0] if row.names else func.__name__)


def _printed_kind(node: sp.Basic) -> str:
    """What the Numba printer writes for ``node``, read from its text."""
    printer = NumbaPrinter()
    try:
        text = printer.doprint(node)
    except sd.UnsupportedError:
        return NO_FORMULA
    instructions = registry.instruction_ufuncs()
    calls = [n for n in re.findall(r"_np\.(\w+)\(", text) if n not in instructions]
    if calls or "_math." in text:
        return LIBRARY_CALL
    if printer.helpers & set(MODULES["scalar"]) - {"_at", "_select"}:
        return SCALAR_FUNCTION
    return INSTRUCTIONS


@pytest.mark.parametrize("node", list(_nodes()))
def test_the_kind_of_every_registry_function_is_what_the_printer_writes(node):
    assert operation(node) == _printed_kind(node)


def test_the_kinds_of_the_common_functions():
    assert operation(sp.sin(x)) == LIBRARY_CALL
    assert operation(sp.exp(x)) == SCALAR_FUNCTION
    assert operation(sp.Max(x, y)) == INSTRUCTIONS
    assert operation(sp.erf(x)) == LIBRARY_CALL
    assert operation(sp.polygamma(0, x)) == NO_FORMULA


@pytest.mark.parametrize(("power", "kind"), [
    (x**y, LIBRARY_CALL), (x ** (y + 1), LIBRARY_CALL), (x**sp.pi, LIBRARY_CALL),
    (2**x, LIBRARY_CALL), (x ** sp.Rational(1, 3), LIBRARY_CALL), (x**sp.Float(2.5), LIBRARY_CALL),
    (x ** sp.Rational(-3, 2), LIBRARY_CALL),
    (x**3, INSTRUCTIONS), (x**-20, INSTRUCTIONS), (sp.sqrt(x), INSTRUCTIONS),
    (1 / sp.sqrt(x), INSTRUCTIONS),
])
def test_powers_other_than_integer_and_square_roots_are_calls(power, kind):
    assert operation(power) == kind


def test_calls_are_counted_as_often_as_the_code_writes_them():
    assert library_calls([x**y + sp.sin(x) * sp.sin(y), sp.exp(x) + x**2]) == 3
    assert library_calls([sp.sin(x**y) + sp.cos(x**y)]) == 4  # (no sharing in one formula)
    assert library_calls([sp.Piecewise((sp.erf(x), x > 0), (sp.sqrt(y), True))]) == 1
    step = sp.Heaviside(x ** sp.Rational(1, 3), sp.Rational(3, 10))  # (its argument written twice)
    assert library_calls([step]) == NumbaPrinter().doprint(step).count("**(1/3)") == 2
    assert library_calls([sp.Heaviside(x**y, 0)]) == 1
    assert instructions_only(sp.Piecewise((x**2, x > y), (sp.Abs(y), True)))
    assert not instructions_only(x + sp.exp(y))
