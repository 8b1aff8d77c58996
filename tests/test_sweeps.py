"""The steps a build records (:mod:`symdiff.engine.sweeps`): one function per plan shape, called
by the planners and by ``explain()``.

A freshly built function keeps what its engine recorded, and ``explain()`` reads it without
deriving anything again; a function loaded from the disk cache or unpickled derives it again
from its recipe with the same functions and explains identically. For every mode and kind the
recorded results are the function's outputs.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import sympy as sp

import symdiff as sd
from symdiff.codegen import naming
from symdiff.engine import forward, sweeps
from symdiff.teach.explain import recorded_steps

from .conftest import reset_memory

EXPR = "x*sin(y) + exp(x*y)"
ROWS = ["x*y", "sin(x)*y"]
TRIG = "x*sin(x)**2 + x*cos(x)**2"  # its derivative simplifies to 1

#: (builder, expression(s), options, the mode the code is written in)
CASES = [
    ("grad", EXPR, {"mode": "forward"}, "forward"),
    ("value_and_grad", EXPR, {"mode": "forward"}, "forward"),
    ("jacobian", ROWS, {"mode": "forward"}, "forward"),
    ("hessian", EXPR, {"mode": "forward"}, "forward"),
    ("grad", EXPR, {"mode": "reverse"}, "reverse"),
    ("value_and_grad", EXPR, {"mode": "reverse"}, "reverse"),
    ("jacobian", ROWS, {"mode": "reverse"}, "reverse"),
    ("hessian", EXPR, {"mode": "reverse"}, "forward over reverse"),
    ("hvp", EXPR, {}, "forward over reverse"),
]
IDS = [f"{kind}-{mode}" for kind, _, _, mode in CASES]

X, Y = sp.symbols("x y", real=True)
POINT = {"x": 0.7, "y": -0.4}
DIRECTION = np.array([0.3, -1.2])


def _build(kind, expr, options, **extra):
    return getattr(sd, kind)(expr, wrt=["x", "y"], **options, **extra)


def _recorded_outputs(f) -> list[sp.Expr]:
    """The function's outputs as its recorded steps computed them, in the variables (and
    ``_x_dir``, ``_y_dir``), flattened in the order the function returns them."""
    record, names = f.recorded, ["x", "y"]
    if f.recipe.mode == "forward":
        if f.kind == "hessian":
            d = record.derivations
            return [d[(0, *sorted((a, b), key=names.index))].result for a in names for b in names]
        rows = {i for i, *_ in record.derivations}
        return [record.derivations[(i, n)].result for i in sorted(rows) for n in names]
    if f.kind == "hessian":  # column j is tangent sweep j: entry (i, j)
        return [record.output_tangents(j)[i] for i in range(2) for j in range(2)]
    if f.kind == "hvp":
        return record.output_tangents(0)
    reverse = record.reverse
    values = [reverse.value(0)] if f.kind == "value_and_grad" else []
    return values + [reverse.gradient(k, i) for k in range(len(reverse.sweeps)) for i in range(2)]


def _numbers(f) -> np.ndarray:
    extra = {"_v": DIRECTION} if f.kind == "hvp" else {}
    out = f(**POINT, **extra)
    if f.kind == "value_and_grad":  # (value, (dx, dy))
        out = [out[0], *out[1]]
    return np.ravel(np.asarray(out, dtype=float))


@pytest.mark.parametrize(("kind", "expr", "options", "mode"), CASES, ids=IDS)
def test_the_recorded_steps_compute_the_emitted_outputs(kind, expr, options, mode):
    f = _build(kind, expr, options, cache=False)
    assert f.recipe.mode == mode and f.recorded is not None
    values = {X: POINT["x"], Y: POINT["y"],
              sp.Symbol(naming.direction("x"), real=True): DIRECTION[0],
              sp.Symbol(naming.direction("y"), real=True): DIRECTION[1]}
    recorded = [float(sp.sympify(e).xreplace(values)) for e in _recorded_outputs(f)]
    if kind == "value_and_grad" and mode == "forward":  # the value is not derived
        recorded.insert(0, float(sp.sympify(sd.parse(EXPR)).xreplace(values)))
    np.testing.assert_allclose(recorded, _numbers(f), rtol=1e-12, atol=1e-12)
    if mode == "forward" and kind != "hessian":  # the very expressions the code computes
        derived = [d.result for d in f.recorded.derivations.values()]
        assert derived == f.exprs[len(f.exprs) - len(derived):]


@pytest.mark.parametrize(("kind", "expr", "options", "mode"), CASES, ids=IDS)
def test_explain_of_a_fresh_function_derives_nothing_again(kind, expr, options, mode,
                                                           monkeypatch):
    f = _build(kind, expr, options, cache=False)

    def refuse(*args, **kwargs):
        raise AssertionError("explain() derived again")

    for name in ("differentiate", "reverse_program", "tangent_program", "recorded"):
        monkeypatch.setattr(sweeps, name, refuse)
    monkeypatch.setattr(forward.Deriver, "__call__", refuse)
    text = f.explain()
    assert text.startswith(f.signature)


@pytest.mark.parametrize(("kind", "expr", "options", "mode"), CASES, ids=IDS)
def test_a_loaded_or_unpickled_function_explains_like_a_fresh_one(kind, expr, options, mode,
                                                                  cache_dir):
    fresh = _build(kind, expr, options)
    text = fresh.explain(verbose="all")
    reset_memory()  # as a new process: the module comes from the disk cache
    loaded = _build(kind, expr, options)
    assert loaded is not fresh and loaded.key == fresh.key and loaded.recorded is None
    assert loaded.explain(verbose="all") == text
    if "no rule tree" not in text:  # a forward-mode Hessian shows none, so derives none
        assert loaded.recorded is not None  # kept for the next explain()
    recorded_steps(loaded)  # derived again from the recipe: the fresh build's steps
    assert _recorded_outputs(loaded) == _recorded_outputs(fresh)
    unpickled = pickle.loads(pickle.dumps(fresh))
    assert unpickled.recorded is None
    assert unpickled.explain(verbose="all") == text


def test_explain_with_an_expression_neither_uses_nor_replaces_the_record():
    f = sd.grad("x*y", mode="forward", cache=False)
    own = f.recorded
    assert "[trigonometric]" in f.explain(expr="sin(x)*y")
    assert f.recorded is own and "[trigonometric]" not in f.explain()


def test_derive_is_the_derivation_the_build_records():
    f = sd.grad("x*(x+1) - x**2", wrt="x", mode="forward", cache=False)
    (recorded,) = f.recorded.derivations.values()
    derived = sd.derive(sd.parse("x*(x+1) - x**2"), wrt="x")  # SymPy's form, as the code's
    assert derived.text() == recorded.text() and derived.rules == recorded.rules
    typed = sd.derive("x*(x+1) - x**2", wrt="x")  # a string: walked as typed, linked at the end
    assert typed.result == recorded.result and typed.rules[0] == "difference"


def test_a_simplify_false_function_shows_no_simplify_step_fresh_or_loaded(cache_dir):
    f = sd.grad(TRIG, wrt="x", simplify=False)
    text = f.explain(verbose="all")
    assert "[simplify]" not in text
    reset_memory()
    assert sd.grad(TRIG, wrt="x", simplify=False).explain(verbose="all") == text
    assert "[simplify]" in sd.grad(TRIG, wrt="x", cache=False).explain()


def test_the_record_is_not_in_the_disk_cache_or_the_pickle():
    f = sd.hessian(EXPR, mode="reverse", cache=False)
    state = f.__getstate__()
    assert "recorded" not in state and b"TangentStep" not in pickle.dumps(f)
