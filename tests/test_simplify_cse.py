"""symdiff.simplify.cse: common subexpressions across every output, with deterministic names."""

from __future__ import annotations

import sympy as sp

from symdiff.simplify import TEMP_PREFIX, shared_subexpressions

x, y = sp.symbols("x y", real=True)


def substituted(assignments, reduced):
    """The reduced outputs with every temporary replaced by its definition."""
    out = list(reduced)
    for symbol, value in reversed(assignments):
        out = [e.xreplace({symbol: value}) for e in out]
    return out


def test_a_subexpression_of_two_outputs_is_computed_once():
    outputs = [sp.sin(x * y) + sp.exp(x * y), sp.cos(x * y) * sp.exp(x * y)]
    assignments, reduced = shared_subexpressions(outputs)
    names = [s.name for s, _ in assignments]
    assert names == [f"{TEMP_PREFIX}{i}" for i in range(len(names))] and names
    assert all(s.is_real for s, _ in assignments)
    assert [sp.simplify(a - b) for a, b in zip(substituted(assignments, reduced), outputs,
                                               strict=True)] == [0, 0]
    assert sum(sp.count_ops(e) for e in reduced) < sum(sp.count_ops(e) for e in outputs)


def test_the_same_input_gives_the_same_names_and_order():
    outputs = [sp.log(1 + x**2) / (1 + x**2), y * (1 + x**2)]
    assert shared_subexpressions(outputs) == shared_subexpressions(list(outputs))


def test_nothing_shared_means_no_temporaries():
    assert shared_subexpressions([x + y, sp.sin(x)]) == ([], [x + y, sp.sin(x)])
