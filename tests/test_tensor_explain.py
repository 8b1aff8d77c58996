"""``CompiledFunction.explain()`` for tensor functions (built with ``shapes=``): each gradient
output line paired with the matrix-calculus steps of the backward walk that produced it."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import symdiff as sd
from symdiff.compiled import CompiledFunction
from symdiff.teach.explain import declared_shapes

from .conftest import reset_memory

LOGISTIC = "sum(log(1 + exp(-y * (X @ w))))"
SHAPES = {"X": ("n", "d"), "y": ("n",), "w": ("d",)}


def _source_line(source: str, prefix: str) -> str:
    (line,) = [ln.strip() for ln in source.splitlines() if ln.strip().startswith(prefix)]
    return line


def test_logistic_loss_pairs_the_output_line_with_the_matmul_and_sum_rules():
    g = sd.grad(LOGISTIC, wrt="w", shapes=SHAPES, cache=False)
    text = g.explain(width=None)
    lines = text.splitlines()
    assert lines[0] == "grad_f(X, w, y): grad with respect to w; shapes X (n, d), w (d,), y (n,)"
    output = _source_line(g.source, "_w_bar = ")
    assert output.startswith("_w_bar = X.T @ ")
    assert f"{output}    <- rule tree:" in lines
    start = lines.index(f"{output}    <- rule tree:")
    body = lines[start + 1 :]
    # the temporaries the output line uses, as in the source, then the derivation
    assert body[0].startswith("  where _t0 = X @ w")
    derivation = sd.derive(LOGISTIC, wrt="w", shapes=SHAPES)
    assert "\n".join(body).endswith(
        "\n".join("  " + ln for ln in derivation.text("key").splitlines())
    )
    assert "[sum (broadcast back)] f = sum(z2)" in text
    assert "[matmul] z1 = X @ w: w_bar = X.T @ z1_bar" in text
    assert "[elementwise chain]" in text and "[softplus]" in text
    assert "d/dw [sum(softplus(-(X @ w)*y))] = X.T @ (-y*sigmoid(-(X @ w)*y))" in text


def test_verbose_all_shows_the_leaf_steps():
    g = sd.grad(LOGISTIC, wrt="w", shapes=SHAPES, cache=False)
    assert "[variable]" not in g.explain()
    assert "[variable] d/dz1 [z1] = 1" in g.explain(verbose="all")


def test_two_wrt_names_each_get_their_line_and_steps():
    vg = sd.value_and_grad(LOGISTIC, wrt=["w", "y"], shapes=SHAPES, cache=False)
    text = vg.explain()
    assert text.splitlines()[0].startswith(
        "value_and_grad_f(X, w, y): value_and_grad with respect to (w, y); shapes "
    )
    w_line = _source_line(vg.source, "_w_bar = ")
    y_line = _source_line(vg.source, "_y_bar = ")
    w_at = text.index(f"{w_line}    <- rule tree:")
    y_at = text.index(f"{y_line}    <- rule tree:")
    assert w_at < text.index("d/dw [") < y_at < text.index("d/dy [")
    assert "[matmul] z1 = X @ w: w_bar = X.T @ z1_bar" in text[w_at:y_at]
    # y enters only through the elementwise product: no matmul rule in its steps
    assert "[matmul]" not in text[y_at:]
    assert "y_bar = -z1*sigmoid(-y*z1)" in text[y_at:]
    assert "_value = " not in text  # the value has no rule tree, as in the scalar path


def test_grad_with_a_list_of_names_and_forward_mode():
    g = sd.grad(LOGISTIC, wrt=["w"], shapes=SHAPES, mode="forward", cache=False)
    text = g.explain()
    assert "with respect to (w)" in text.splitlines()[0]
    assert "emitted in forward mode" in text
    assert f"{_source_line(g.source, '_w_bar = ')}    <- rule tree:" in text
    assert "[matmul]" in text


def test_int_and_scalar_shapes_are_read_back():
    shapes = {"s": (), "w": (3,), "X": ("n", 3)}
    # (not sum(s * (X @ w)), which is built as s * sum(X @ w): nothing to sum back)
    g = sd.grad("sum(sin(s * (X @ w)))", wrt="s", shapes=shapes, cache=False)
    text = g.explain()
    assert text.splitlines()[0].endswith("shapes X (n, 3), s (), w (3,)")
    assert "_s_bar = " in text and "d/ds [" in text
    assert "[unbroadcast]" in text


@pytest.mark.parametrize(
    "builder, expr, kind",
    [
        (sd.hessian, LOGISTIC, "hessian"),
        (sd.jacobian, "X @ w", "jacobian"),
        (sd.compile, LOGISTIC, "value"),
    ],
)
def test_other_kinds_have_no_rule_tree_and_list_what_they_compute(builder, expr, kind):
    kwargs = {} if builder is sd.compile else {"wrt": "w"}
    f = builder(expr, shapes=SHAPES, cache=False, **kwargs)
    lines = f.explain(width=None).splitlines()
    assert lines[0].startswith(f"{f.signature}: {kind}")
    assert f"no rule tree for kind {kind!r}" in lines[1]
    shapes = [tuple(e.shape) for e in f.exprs]
    assert lines[2:] == [
        f"  {e}   (shape {'(' + ', '.join(map(str, s)) + (',)' if len(s) == 1 else ')')})"
        for e, s in zip(f.exprs, shapes, strict=True)
    ]


def test_scalar_functions_explain_as_before():
    text = sd.grad("sin(x)*y", wrt=["x", "y"], cache=False).explain()
    assert "shapes" not in text
    assert "_x_bar = " in text and "[trigonometric]" in text


def test_a_traced_function_explains_from_its_header():
    def loss(X, y, w):
        return np.sum(np.log(1 + np.exp(-y * (X @ w))))

    text = sd.grad(loss, wrt="w", shapes=SHAPES, cache=False).explain()
    assert "[matmul] z1 = X @ w" in text and "_w_bar = " in text


def _qr_loss(A):
    q, r = np.linalg.qr(A)
    return np.sum(r**2) + np.sum(q[:, 0])


@pytest.mark.parametrize("cache", [False, True])
def test_a_traced_decomposition_explains_by_tracing_the_function_again(cache):
    """The text of a traced QR (``qr_Q(A)``) does not parse; the function it was traced from
    is traced again instead, while it is alive. Neither kept alive nor pickled."""
    import gc
    import weakref

    g = sd.grad(_qr_loss, wrt="A", shapes={"A": (4, 3)}, cache=cache)
    text = g.explain()
    assert "[QR orthonormal factor]" in text and "[QR triangular factor]" in text
    assert "_A_bar = " in text
    again = pickle.loads(pickle.dumps(g))
    assert again.traced_from() is None
    with pytest.raises(sd.SymdiffError, match="pass expr="):
        again.explain()
    assert again.explain(expr=_qr_loss).splitlines()[1:] == text.splitlines()[1:]

    def local(A):
        return np.sum(np.linalg.qr(A)[1] ** 2)

    h = sd.grad(local, wrt="A", shapes={"A": (4, 3)}, cache=False)
    assert "[QR triangular factor]" in h.explain()
    alive = weakref.ref(local)
    del local
    gc.collect()
    assert alive() is None and h.traced_from() is None  # not kept alive by the function
    with pytest.raises(sd.SymdiffError, match="pass expr="):
        h.explain()


def test_a_function_without_a_recipe_takes_shapes_and_expr():
    """A function made by hand from a source (no recipe) is not read back from its docstring
    or header: ``shapes=`` and ``expr=`` say what it is."""
    g = sd.grad(LOGISTIC, wrt="w", shapes=SHAPES, cache=False)
    bare = CompiledFunction(
        source=g.source,
        name=g.name,
        args=g.args,
        wrt=g.wrt,
        exprs=[],
        kind=g.kind,
    )
    assert declared_shapes(bare) is None
    assert declared_shapes(g) == SHAPES
    with pytest.raises(sd.SymdiffError, match="pass expr="):
        bare.explain(shapes=SHAPES)
    assert bare.explain(expr=LOGISTIC, shapes=SHAPES).splitlines()[1:] == (
        g.explain().splitlines()[1:]
    )


def test_a_long_expression_explains_from_its_recipe():
    """The header shortens a long expression; the recipe keeps all of it."""
    long_expr = LOGISTIC + "".join(f" + {k}*sum(w*w)" for k in range(2, 30))
    g = sd.grad(long_expr, wrt="w", shapes=SHAPES, cache=False)
    assert g.recipe.exprs == (long_expr,)
    text = g.explain()
    assert "[matmul]" in text and "_w_bar = " in text
    assert text == g.explain(expr=long_expr)


def test_a_cached_reload_explains_identically(cache_dir, monkeypatch):
    g = sd.grad(LOGISTIC, wrt=["w", "y"], shapes=SHAPES)
    assert g.key is not None
    expected = g.explain()
    reset_memory()

    from symdiff.tensor import build

    def refuse(*args, **kwargs):
        raise AssertionError("derived again")

    monkeypatch.setattr(build, "_build", refuse)
    again = sd.grad(LOGISTIC, wrt=["w", "y"], shapes=SHAPES)
    assert again is not g and again.source == g.source
    assert again.explain() == expected
    assert pickle.loads(pickle.dumps(again)).explain() == expected
    # a function built from the cached source and recipe alone (as the disk cache loads it)
    loaded = CompiledFunction.of(again.source, again.recipe, [])
    assert loaded.explain() == expected


def test_a_temporary_computed_in_place_shows_both_of_its_lines():
    """``_t1 = x - _t0`` then ``_t1 = _np.exp(_t1, out=_t1)``: the where-list must not stop at
    the first line, which alone would read as if ``_t1`` were ``x - _t0``."""
    g = sd.grad("logsumexp(x)", wrt="x", shapes={"x": ("n",)}, cache=False)
    text = g.explain()
    assert "_t1 = x - _t0\n        _t1 = _np.exp(_t1, out=_t1)\n" in text
    output = sd.grad("sum(cosh(x + y))", wrt="x", shapes={"x": ("n",), "y": ("n",)}, cache=False)
    text = output.explain()
    head = "_x_bar = _np.sinh(_x_bar, out=_x_bar)    <- rule tree:\n"
    assert head + "  where _x_bar = x + y\n" in text


def test_an_element_assignment_completing_a_temporary_is_shown():
    """``_t0 = _np.zeros((4, 3))`` then ``_t0[:, 0] = 1.0`` (the gradient of ``sum(Q[:, 0])``):
    without the second line the where-list reads as if the seed were all zeros."""

    def loss(A):
        Q, R = np.linalg.qr(A)
        return np.sum(R**2) + np.sum(Q[:, 0])

    shapes = {"A": (4, 3)}
    g = sd.grad(loss, wrt="A", shapes=shapes, cache=False)
    seeded = [line.strip() for line in g.source.splitlines() if "[:, 0] = 1.0" in line]
    assert len(seeded) == 1
    text = g.explain(expr=loss, shapes=shapes)
    zeros = next(line for line in text.splitlines() if "_np.zeros((4, 3)" in line)
    after = text.splitlines()[text.splitlines().index(zeros) + 1]
    assert after.strip() == seeded[0]
