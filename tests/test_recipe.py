"""Every compiled function carries its :class:`~symdiff.recipe.Recipe` (what it is, as data), the
disk cache stores it with the module, and a function loaded by another process (without
SymPy) knows it and explains exactly like the one built cold. Entries of the older format
(no recipe) are misses that get rebuilt, never errors."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import sympy as sp

import symdiff as sd
from symdiff import cache
from symdiff import request_index as warm
from symdiff.compiled import CompiledFunction
from symdiff.engine.inputtext import input_text
from symdiff.options import Options
from symdiff.parsing import parse
from symdiff.recipe import Recipe
from symdiff.simplify import stable_forms

from .conftest import ROOT, reset_memory

LOGISTIC = "sum(log(1 + exp(-y * (X @ w))))"
SHAPES = {"X": ("n", "d"), "y": ("n",), "w": ("d",)}

#: (builder, expression, keyword arguments): both layers, every mode the scalar layer picks.
CASES = [
    ("grad", "sin(x)*exp(y)/(1 + x**2)", {"wrt": ["x", "y"]}),
    ("grad", "a*b + sin(c)*d + max(a, 0)", {}),  # four variables: reverse mode
    ("value_and_grad", "x*(x+1) - x**2", {"wrt": "x"}),
    ("jacobian", ["x*y", "where(x > 0, x, y**2)"], {"wrt": ["x", "y"]}),
    ("hessian", "log(1 + exp(x*y))", {"wrt": ["x", "y"], "mode": "reverse"}),
    ("hvp", "x**3*y", {"wrt": ["x", "y"]}),
    ("compile", "sqrt(x**2 + y**2)", {}),
    ("grad", LOGISTIC, {"wrt": "w", "shapes": SHAPES}),
    ("value_and_grad", LOGISTIC, {"wrt": ["w", "y"], "shapes": SHAPES}),
    ("hvp", LOGISTIC, {"wrt": "w", "shapes": SHAPES}),
]


def _build(kind, expr, kwargs):
    return getattr(sd, kind)(expr, **kwargs)


def _python(code: str, cache_dir, **env: str) -> str:
    environment = {**os.environ, "SYMDIFF_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(ROOT),
                   **env}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
        env=environment, cwd=ROOT, check=True,
    ).stdout


# -- the recipe itself -----------------------------------------------------------------------------
@pytest.mark.parametrize(("kind", "expr", "kwargs"), CASES)
def test_every_builder_gives_its_recipe(kind, expr, kwargs):
    f = _build(kind, expr, {**kwargs, "cache": False})
    recipe = f.recipe
    assert recipe.kind == f.kind and recipe.name == f.name
    assert recipe.args == f.args and recipe.wrt_value == f.wrt
    assert recipe.tensor == ("shapes" in kwargs)
    assert f"# Mode: {recipe.mode}" in f.source
    for output in recipe.outputs:
        assert f"{output} = " in f.source
    assert Recipe.from_json(json.loads(json.dumps(recipe.to_json()))) == recipe


def test_the_recipe_records_options_and_the_mode_used():
    four = "a*b + c*d"
    assert sd.grad(four, cache=False).recipe.mode == "reverse"  # auto picked it
    assert sd.grad(four, mode="forward", cache=False).recipe.mode == "forward"
    g = sd.grad("x*y", simplify=False, cse=False, cache=False)
    assert g.recipe.options == Options(simplify=False, cse=False)  # cache changes no code
    assert g.recipe.exprs == ("x*y",) and g.recipe.outputs == ("_x_bar", "_y_bar")
    h = sd.hvp(LOGISTIC, wrt="w", shapes=SHAPES, cache=False)
    assert h.recipe.shape_map == {**SHAPES, "_v": ("d",)} and h.recipe.args[-1] == "_v"
    assert h.recipe.mode == "reverse over reverse"


def test_a_traced_function_records_its_formula():
    def loss(X, y, w):
        return np.sum(np.log(1 + np.exp(-y * (X @ w))))

    g = sd.grad(loss, wrt="w", shapes=SHAPES, cache=False)
    assert g.recipe.args == ("X", "y", "w")  # the def's order
    (text,) = g.recipe.exprs
    assert "X @ w" in text
    assert sd.grad(text, wrt="w", shapes=SHAPES, cache=False)(
        np.eye(2), np.ones(2), np.ones(2)
    ) == pytest.approx(g(np.eye(2), np.ones(2), np.ones(2)))


@pytest.mark.parametrize("text", [
    "max(x, 0) + min(x, y)", "where(x > 0, x, y**2)", "where(x <= y, where(y < 1, x, y), 3)",
    "log(1 + exp(x))", "1/(1 + exp(-x))", "relu(x)*sigmoid(y)*softplus(x)", "abs(x)*sign(y)",
    "erf(x) + gamma(x) + loggamma(y)", "log(x, 2)", "atan2(y, x)", "x^2/3 + pi*e", "exp(1)*x",
    "asinh(x) + acosh(y) + atanh(x) + tan(x)", "x**y + 2**x", "max(x, y, 3)", "0.1*x + 1e-20",
])
def test_recipe_texts_read_back_exactly(text):
    """The scalar recipe holds the parsed expression as text that ``parse`` reads back equal."""
    expr = stable_forms(parse(text))
    assert parse(input_text(expr)) == expr


@pytest.mark.parametrize("record", [
    None, [], {}, {"format": 99}, {"format": 1, "kind": "grad"},
    {**Recipe("grad", ("x",), ("x",)).to_json(), "kind": "laplacian"},
    {**Recipe("grad", ("x",), ("x",)).to_json(), "args": "x"},
    {**Recipe("grad", ("x",), ("x",)).to_json(), "single": 1},
    {**Recipe("grad", ("x",), ("x",)).to_json(), "options": {"simplify": True}},
    {**Recipe("grad", ("x",), ("x",)).to_json(), "shapes": [["x", [1.5]]]},
])
def test_a_malformed_recipe_is_a_value_error(record):
    with pytest.raises(ValueError):
        Recipe.from_json(record)


# -- across processes ------------------------------------------------------------------------------
_REPORT = """
    import json, sys
    import symdiff as sd
    LOGISTIC, SHAPES = {logistic!r}, {shapes!r}
    out = []
    for kind, expr, kwargs in {cases!r}:
        f = getattr(sd, kind)(expr, **kwargs)
        out.append({{"recipe": f.recipe.to_json(), "source": f.source}})
    out.append({{"sympy": "sympy" in sys.modules}})
    print(json.dumps(out))
"""


def test_the_recipe_survives_the_disk_in_a_fresh_process(cache_dir):
    code = _REPORT.format(logistic=LOGISTIC, shapes=SHAPES, cases=CASES)
    cold = json.loads(_python(code, cache_dir))
    warm_run = json.loads(_python(code, cache_dir))
    assert cold[-1] == {"sympy": True}
    assert warm_run[-1] == {"sympy": False}  # every function came from the request index
    assert warm_run[:-1] == cold[:-1]
    for (kind, expr, kwargs), entry in zip(CASES, cold, strict=False):
        here = _build(kind, expr, {**kwargs, "cache": False})
        assert Recipe.from_json(entry["recipe"]) == here.recipe


def test_another_spelling_in_another_process_loads_the_module_by_its_recipe(cache_dir):
    """The index misses (other text), the module entry hits: the recipes of the two requests
    must agree though each process prints its own (under another hash seed)."""
    first = "sd.grad('x*y + sin(z)*w + max(x, y)*where(z > 0, a, b)')"
    second = """
        import symdiff as sd
        from symdiff import build

        def refuse(*args, **kwargs):
            raise AssertionError("derived again")

        build._build = refuse
        g = sd.grad('where(z > 0, a, b)*max(y, x) + w*sin(z) + y*x')
        print(g.recipe.exprs[0])
    """
    _python(f"import symdiff as sd\n{first}", cache_dir, PYTHONHASHSEED="1")
    loaded = _python(second, cache_dir, PYTHONHASHSEED="2").strip()
    assert parse(loaded) == parse("x*y + sin(z)*w + max(x, y)*where(z > 0, a, b)")


def test_explain_of_a_warm_loaded_function_matches_a_cold_one(cache_dir):
    code = f"""
        import json
        import symdiff as sd
        LOGISTIC, SHAPES = {LOGISTIC!r}, {SHAPES!r}
        cases = {CASES!r}
        print(json.dumps([getattr(sd, k)(e, **kw).explain() for k, e, kw in cases]))
    """
    _python(code, cache_dir)  # fills the cache
    warm_texts = json.loads(_python(code, cache_dir))
    reset_memory()
    for (kind, expr, kwargs), text in zip(CASES, warm_texts, strict=True):
        cold = _build(kind, expr, {**kwargs, "cache": False}).explain()
        assert text == cold, (kind, expr)


def test_value_and_grad_explains_the_expression_given():
    """The recipe holds the expression, not the simplified value the function computes."""
    text = sd.value_and_grad("x*(x+1) - x**2", wrt="x", cache=False).explain()
    assert "[product]" in text and "[sum]" in text
    assert sd.grad("x*(x+1) - x**2", wrt="x", cache=False).origin() == [
        sd.parse("x*(x+1) - x**2")
    ]


def test_symbols_that_are_not_identifiers_come_back_under_their_names():
    x1, alpha = sp.Symbol("x_{1}", real=True), sp.Symbol("\\alpha", real=True)
    g = sd.grad(sp.sin(x1) * alpha, cache=False)
    assert g.recipe.args == ("\\alpha", "x_{1}")
    assert g.origin() == [sp.sin(x1) * alpha]
    assert "[trigonometric]" in g.explain()


# -- older entries ---------------------------------------------------------------------------------
def _old_index_record(compiled: CompiledFunction) -> str:
    """The index record as symdiff wrote it before recipes."""
    wrt = compiled.wrt if isinstance(compiled.wrt, str | None) else list(compiled.wrt)
    return json.dumps({"module": compiled.key, "name": compiled.name,
                       "args": list(compiled.args), "wrt": wrt}, sort_keys=True)


@pytest.mark.parametrize(("kind", "expr", "kwargs"), [CASES[0], CASES[7]])
def test_older_entries_are_rebuilt_not_loaded(cache_dir, kind, expr, kwargs):
    f = _build(kind, expr, kwargs)
    store = cache.open_store()
    raw = warm.raw_key(f.kind, expr, kwargs.get("wrt"), Options(), kwargs.get("shapes"))
    assert raw is not None and store.get("index", raw) is not None
    store.put("module", f.key, f.source)  # the module entry of an older symdiff: no recipe
    store.put("index", raw, _old_index_record(f))
    reset_memory()
    again = _build(kind, expr, kwargs)
    assert again is not f and again.source == f.source and again.recipe == f.recipe
    assert again.explain() == f.explain()
    # both entries were rewritten in the new format
    assert cache.unpack_module(store.get("module", f.key)) is not None
    assert json.loads(store.get("index", raw))["format"] == warm.INDEX_FORMAT


def test_an_entry_whose_recipe_does_not_match_is_rebuilt(cache_dir):
    f = sd.grad("x**2*y", wrt="x")
    other = sd.grad("x**2*y", wrt="y")
    store = cache.open_store()
    store.put("module", f.key, store.get("module", other.key))  # y's module under x's key
    reset_memory()
    again = sd.grad("x**2*y", wrt="x")
    assert again.wrt == "x" and again(3.0, 2.0) == 12.0
    assert again.source == f.source


@pytest.mark.parametrize("damage", [
    lambda text: text.replace('"kind": "grad"', '"kind": "unknown"'),
    lambda text: text.replace("# symdiff-module {", "# symdiff-module [", 1),
    lambda text: text.split("\n", 1)[0],  # the record without the source
    lambda text: text.replace(  # another signature
        "def grad_f(x, y, *, threads=None):", "def grad_f(y, x, *, threads=None):"),
])
def test_a_damaged_entry_is_a_miss(cache_dir, damage):
    f = sd.grad("x**2*y", wrt="x")
    store = cache.open_store()
    text = store.get("module", f.key)
    store.put("module", f.key, damage(text))
    assert warm.load_module(f.key, f.recipe, list) is None
    reset_memory()
    assert sd.grad("x**2*y", wrt="x")(3.0, 2.0) == 12.0


def test_a_function_pickled_without_a_recipe_still_loads():
    g = sd.grad("sin(x)", wrt="x", cache=False)
    state = g.__getstate__()
    del state["recipe"]  # as an older symdiff pickled it
    old = object.__new__(CompiledFunction)
    old.__setstate__(state)
    assert old.recipe is None and old(0.0) == 1.0
    with pytest.raises(sd.SymdiffError, match="expr="):
        old.explain()
    assert "[trigonometric]" in old.explain(expr="sin(x)")
    assert pickle.loads(pickle.dumps(g)).recipe == g.recipe


def test_both_layers_plan_every_kind():
    from symdiff import build
    from symdiff.recipe import KINDS, KindTable
    from symdiff.tensor import build as tensor_build

    assert list(build.PLANNERS) == list(KINDS) and list(tensor_build.PLANNERS) == list(KINDS)
    table = KindTable()
    table.kind("grad")(len)
    with pytest.raises(ValueError, match="value"):
        table.complete()
    with pytest.raises(ValueError):
        table.kind("grad")  # twice
    with pytest.raises(ValueError):
        table.kind("laplacian")


def test_a_traced_tensor_function_with_max_abs_and_e_explains():
    """Its recipe holds max/abs/e, which the tensor parser reads back (not Max/Abs/E)."""

    def f(x, y):
        return np.sum(np.maximum(x, 0) * np.abs(y) * np.e)

    g = sd.grad(f, wrt="x", shapes={"x": ("n",), "y": ("n",)}, cache=False)
    assert g.recipe.exprs == ("sum(e*abs(y)*max(0, x))",)
    assert "[maximum]" in g.explain()


def test_the_source_does_not_depend_on_how_an_equal_symbol_was_spelt_before(cache_dir):
    """``Symbol('w', real=True, finite=True)`` equals ``Symbol('w', real=True)`` (``finite``
    follows from ``real``), and SymPy's cache hands back whichever was made first: the request
    key (in the module's header, and the cache entry) must not print the spelling (it did,
    through ``srepr``, and a golden file failed one run in three)."""
    code = """
        import sympy as sp
        import symdiff as sd
        {before}
        g = sd.value_and_grad("softplus(-y*w) + w**2/2", wrt=["w"], cache=False)
        print(g.source)
    """
    before = ("w, y = sp.Symbol('w', real=True, finite=True), "
              "sp.Symbol('y', real=True, commutative=True); (-y*w, w**2/2)")
    plain = _python(code.format(before="pass"), cache_dir)
    spelt = _python(code.format(before=before), cache_dir)
    assert "key: " in plain and spelt == plain
