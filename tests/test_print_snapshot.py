"""The printed NumPy code of every function head, pinned: the printer, the rule table and the
tensor emitter all read the function registry, and a change to one of its rows shows here.

For each head: the code of ``f(args)`` and of each of its partials (straight from the rule
table, before simplification) through both printers, with the runtime helpers each print needs;
and the body of a tensor module per public function name (in-place ufuncs, sigmoid's clipped
form). Any change to these strings is a change to generated code, which a refactoring step
must not make. The pinned text is ``tests/golden/print_snapshot.json``; regenerate it after an
intended change with ``SYMDIFF_UPDATE_GOLDEN=1 python -m pytest tests/test_print_snapshot.py``
and review the diff like any other code change.
"""

from __future__ import annotations

import json
import os
import pathlib

import pytest
import sympy as sp
from sympy.codegen.cfunctions import expm1, log1p
from sympy.codegen.numpy_nodes import logaddexp

import symdiff as sd
from symdiff import registry
from symdiff.codegen.printer import ArrayCodePrinter, CodePrinter
from symdiff.engine.rules import RULES, rule_for
from symdiff.functions import relu, sigmoid, softplus, tie_share

SNAPSHOT = pathlib.Path(__file__).resolve().parent / "golden" / "print_snapshot.json"
X, Y, Z = sp.symbols("x y z", real=True)
U, V = 2 * X - Y, X * Y + 1  # inner arguments: sums and products print differently per printer

#: Key: the head's class name, with a suffix for a second form of the same head.
SCALAR_CASES = {
    **{
        f.__name__: f(U)
        for f in (
            sp.sin, sp.cos, sp.tan, sp.asin, sp.acos, sp.atan, sp.sinh, sp.cosh, sp.tanh,
            sp.asinh, sp.acosh, sp.atanh, sp.exp, sp.log, log1p, expm1, sp.Abs, sp.sign,
            sp.erf, sp.gamma, sp.loggamma, relu, sigmoid, softplus,
        )
    },
    "atan2": sp.atan2(Y, X - Z),
    "logaddexp": logaddexp(X, 2 * Y),
    "Heaviside": sp.Heaviside(X - Y),
    "Heaviside_h0": sp.Heaviside(X - Y, 0),
    "polygamma": sp.polygamma(2, V),
    "Max": sp.Max(X, U),
    "Max_3": sp.Max(X, Y, 1),
    "Min": sp.Min(X, U),
    "Min_3": sp.Min(X, Y, 1),
    "tie_share": tie_share(X, X, Y, 1),
    "log_base": sp.log(V, 2),  # a quotient of logs, no head of its own
    "sqrt": sp.sqrt(V),  # a power, no head of its own
}
_INNER = (U, V, X - Z)
#: Every further row of the registry (those added since the snapshot was first taken): its
#: node over the inner arguments, numbers where the row needs them.
SCALAR_CASES.update({
    row.head.rpartition(":")[2]: registry.head_class(row)(*(
        sp.nsimplify(lo) if lo == hi else _INNER[i]
        for i, (lo, hi) in enumerate(row.domain.args)
    ))
    for row in registry.ROWS
    if row.head and row.head.rpartition(":")[2] not in SCALAR_CASES
})

#: Tensor modules: one per public function name, applied to a fresh array (where the emitter
#: works in place) and summed; plus sigmoid after a matmul and logsumexp.
_TENSOR_ARGS = {"atan2": "x*y + 1, x", "max": "x*y + 1, x", "min": "x*y + 1, x",
                "log": "x*y + 2"}
_TENSOR_NAMES = (
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh",
    "acosh", "atanh", "exp", "log", "sqrt", "abs", "sign", "erf", "gamma", "loggamma", "min",
    "max", "relu", "sigmoid", "softplus",
)
#: The further public functions of the registry (made public or added since the snapshot was
#: first taken): arguments x*y + 1, then x, then y; numbers where the row needs them.
def _arguments(row: registry.Fn) -> str:
    variables = iter(("x*y + 1", "x", "y"))
    return ", ".join(repr(lo) if lo == hi else next(variables) for lo, hi in row.domain.args)


_TENSOR_ARGS.update({
    row.names[0]: _arguments(row)
    for row in registry.ROWS
    if row.names and row.names[0] not in _TENSOR_NAMES
})
_TENSOR_NAMES += tuple(sorted(set(_TENSOR_ARGS) - set(_TENSOR_NAMES)))
TENSOR_CASES = {
    **{
        name: (f"sum({name}({_TENSOR_ARGS.get(name, 'x*y + 1')}))", ["x", "y"],
               {"x": ("n",), "y": ("n",)})
        for name in _TENSOR_NAMES
    },
    "log_base": ("sum(log(x*y + 2, 2))", ["x", "y"], {"x": ("n",), "y": ("n",)}),
    "max_3": ("sum(max(x, y, 1))", ["x", "y"], {"x": ("n",), "y": ("n",)}),
    "sigmoid_matmul": ("sum(sigmoid(X @ w))", ["w"], {"X": ("n", "d"), "w": ("d",)}),
    "logsumexp": ("logsumexp(x)", ["x"], {"x": ("n",)}),
}


def _print(expr: sp.Expr) -> dict[str, object]:
    out: dict[str, object] = {}
    for printer_class in (CodePrinter, ArrayCodePrinter):
        printer = printer_class()
        out[printer_class.__name__] = printer.doprint(expr)
        out[f"{printer_class.__name__} helpers"] = sorted(printer.helpers)
    return out


def _scalar(expr: sp.Expr) -> dict[str, object]:
    entry: dict[str, object] = {"expr": sp.srepr(expr), **_print(expr)}
    rule = rule_for(expr.func)
    if rule is not None:
        entry["partials"] = [
            None if p is None else _print(p) for p in rule.partials(*expr.args)
        ]
    return entry


def _tensor(text: str, wrt: list[str], shapes: dict) -> str:
    """The generated function of the module."""
    source = sd.value_and_grad(text, wrt=wrt, shapes=shapes).source
    return source[source.index("\ndef value_and_grad_f(") + 1 :]


def _current() -> dict[str, object]:
    return {
        "scalar": {name: _scalar(expr) for name, expr in SCALAR_CASES.items()},
        "tensor": {name: _tensor(*case) for name, case in TENSOR_CASES.items()},
    }


@pytest.fixture(scope="module")
def pinned() -> dict:
    if os.environ.get("SYMDIFF_UPDATE_GOLDEN"):
        SNAPSHOT.write_text(json.dumps(_current(), indent=1, sort_keys=True) + "\n")
    assert SNAPSHOT.exists(), f"missing {SNAPSHOT}; run with SYMDIFF_UPDATE_GOLDEN=1"
    return json.loads(SNAPSHOT.read_text())


def test_every_head_of_the_rule_table_is_printed():
    assert {cls.__name__ for cls in RULES} <= set(SCALAR_CASES)


@pytest.mark.parametrize("name", sorted(SCALAR_CASES))
def test_scalar_print_is_unchanged(pinned, name):
    assert _scalar(SCALAR_CASES[name]) == pinned["scalar"][name]


@pytest.mark.parametrize("name", sorted(TENSOR_CASES))
def test_tensor_module_is_unchanged(pinned, name):
    assert _tensor(*TENSOR_CASES[name]) == pinned["tensor"][name]


def test_no_stale_entries(pinned):
    assert set(pinned["scalar"]) == set(SCALAR_CASES)
    assert set(pinned["tensor"]) == set(TENSOR_CASES)
