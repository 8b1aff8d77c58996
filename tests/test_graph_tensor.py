"""Computational graphs of tensor expressions: sd.graph(expr, shapes=, at=).

One node per operation or layer called, with its shape and backward rule; with at= every node's
value and adjoint as arrays, the inputs' adjoints equal to sd.grad's and to central differences.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest

import symdiff as sd
from symdiff import nn

from .numeric import central

MLP = "sum((relu(X @ W1 + b1) @ W2 + b2 - Y) ** 2)"
MLP_SHAPES = {"X": ("n", 3), "W1": (3, 4), "b1": (4,), "W2": (4, 2), "b2": (2,), "Y": ("n", 2)}
CONV = "sum(max_pool2d(relu(conv2d(x, w, stride=2, padding=1)), 2))"
CONV_SHAPES = {"x": ("n", 2, 8, 8), "w": (3, 2, 3, 3)}


def _point(shapes, sizes=None, seed=0):
    rng = np.random.default_rng(seed)
    sizes = sizes or {"n": 5}
    return {k: rng.normal(size=tuple(sizes.get(d, d) for d in s)) for k, s in shapes.items()}


def _conv_chain(x, w):  # the CONV string, written as NumPy with symdiff.nn
    return np.sum(nn.max_pool2d(np.maximum(nn.conv2d(x, w, stride=2, padding=1), 0), 2))


def _check_gradients(expr, shapes, at, graph):
    """The graph's input adjoints are sd.grad's (exactly) and agree with central differences
    of the expression's value."""
    names = sorted(shapes)
    expected = sd.grad(expr, wrt=names, shapes=shapes)(**at)
    value = sd.compile(expr, shapes=shapes)
    for name, grad in zip(names, expected, strict=True):
        np.testing.assert_array_equal(graph.gradient[name], grad, err_msg=name)
        numeric = central(lambda v, name=name: float(value(**{**at, name: v})), at[name])
        np.testing.assert_allclose(graph.gradient[name], numeric, rtol=1e-5, atol=1e-6,
                                   err_msg=name)
    assert float(graph.value) == pytest.approx(float(value(**at)))


# -- nodes -------------------------------------------------------------------------------------
def test_mlp_nodes_ops_shapes_and_children():
    g = sd.graph(MLP, shapes=MLP_SHAPES)
    assert g.tensor and g.value is None
    ops = [(n.label, n.kind, n.shape) for n in g.nodes]
    assert ops == [
        ("W1", "input", "(3, 4)"), ("W2", "input", "(4, 2)"), ("X", "input", "(n, 3)"),
        ("Y", "input", "(n, 2)"), ("b1", "input", "(4,)"), ("b2", "input", "(2,)"),
        ("matmul", "operation", "(n, 4)"), ("relu", "operation", "(n, 4)"),
        ("matmul", "operation", "(n, 2)"), ("**", "operation", "(n, 2)"),
        ("sum", "operation", "()"),
    ]
    by_id = {n.id: n for n in g.nodes}
    texts = [n.expr for n in g.nodes if n.kind == "operation"]
    assert texts == ["z1 = X @ W1", "z2 = relu(b1 + z1)", "z3 = z2 @ W2",
                     "z4 = (-Y + b2 + z3)**2", "f = sum(z4)"]
    first = next(n for n in g.nodes if n.expr == "z1 = X @ W1")
    assert [by_id[c].label for c in first.children] == ["X", "W1"]  # operand order
    assert g.node(g.root).expr == "f = sum(z4)"
    assert g.wrt == ("W1", "W2", "X", "Y", "b1", "b2")
    assert sd.graph(MLP, shapes=MLP_SHAPES, wrt=["W1"]).wrt == ("W1",)


def test_a_layer_called_is_one_node():
    """conv2d (a pad, the windows, a transpose, a reshape and the conv node) and max_pool2d (a
    reshape, a transpose and a max) are drawn as the calls the user wrote."""
    g = sd.graph(CONV, shapes=CONV_SHAPES)
    rows = [(n.label, n.shape, n.expr) for n in g.nodes]
    assert rows == [
        ("w", "(3, 2, 3, 3)", "w"),
        ("x", "(n, 2, 8, 8)", "x"),
        ("conv2d", "(n, 3, 4, 4)", "z1 = conv2d(x, w, stride=2, padding=1)"),
        ("relu", "(n, 3, 4, 4)", "z2 = relu(z1)"),
        ("max_pool2d", "(n, 3, 2, 2)", "z3 = max_pool2d(z2, kernel_size=2)"),
        ("sum", "()", "f = sum(z3)"),
    ]
    assert g.node("n2").children == ("n1", "n0")  # conv2d(x, w)
    traced = sd.graph(_conv_chain, shapes=CONV_SHAPES)  # np.maximum(h, 0) for relu
    assert [n.expr for n in traced.nodes] == [
        "w", "x", "z1 = conv2d(x, w, stride=2, padding=1)", "z2 = max(0, z1)",
        "z3 = max_pool2d(z2, kernel_size=2)", "f = sum(z3)"]


def test_a_layer_whose_parts_are_used_elsewhere_is_not_collapsed():
    """x reshaped as the pool's tiles is also used on its own: the pool is drawn as its parts
    (hiding them would hide a branch)."""
    expr = "sum(max_pool2d(x, 2)) + sum(reshape(x, (1, 1, 2, 2, 2, 2)))"
    g = sd.graph(expr, shapes={"x": (1, 1, 4, 4)})
    labels = [n.label for n in g.nodes]
    assert "max_pool2d" not in labels and "reshape" in labels and "max" in labels


# -- rules ---------------------------------------------------------------------------------------
def test_each_node_says_its_backward_rule():
    rules = {n.label: n.rule for n in sd.graph(CONV, shapes=CONV_SHAPES).nodes}
    assert "full correlation of G" in rules["conv2d"] and "flipped kernel" in rules["conv2d"]
    assert ("the adjoint goes to the maximum of each window, split evenly among ties"
            in rules["max_pool2d"])
    assert rules["relu"].startswith("elementwise chain: z1_bar = G * ")
    assert rules["sum"].startswith("sum (broadcast back)")
    assert rules["x"] == rules["w"] == ""
    mlp = {n.expr: n.rule for n in sd.graph(MLP, shapes=MLP_SHAPES).nodes}
    assert "A_bar = G @ B.T, B_bar = A.T @ G" in mlp["z1 = X @ W1"]
    norm = sd.graph("sum(batch_norm(x, g, b) * y)",
                    shapes={"x": (4, 3), "g": (3,), "b": (3,), "y": (4, 3)})
    (bn,) = [n for n in norm.nodes if n.label == "batch_norm"]
    assert "G - mean(G) - xhat * mean(G * xhat)" in bn.rule
    pool = sd.graph("sum(avg_pool2d(x, 2, stride=1))", shapes={"x": (1, 1, 3, 3)})
    assert "spread evenly over its k elements" in pool.node("n1").rule
    # a layer without words of its own: its one node's row, else its parts' rules in turn
    outer = sd.graph("sum(outer(x, x))", shapes={"x": (3,)}).node("n1")
    assert outer.expr == "z1 = outer(x, x)" and outer.children == ("n0", "n0")
    assert outer.rule.startswith("outer: ") or outer.rule.startswith("einsum")
    diff = sd.graph("sum(diff(x) ** 2)", shapes={"x": (5,)}).node("n1")
    assert diff.rule == "diff: the rules of its parts in turn: slice (scatter), elementwise chain"


def test_derive_steps_head_a_layer_with_its_rule():
    """derive(shapes=) heads the rules of a pool's and a norm's parts with the layer's rule;
    conv2d's own row says it, so its steps are unchanged (notebook 06 counts them)."""
    cases = {
        "max_pool2d": ("sum(max_pool2d(x, 2) ** 2)", {"x": (1, 1, 4, 4)},
                       "maximum of each window, split evenly among ties"),
        "avg_pool2d": ("sum(avg_pool2d(x, 2, stride=1) ** 2)", {"x": (1, 1, 4, 4)},
                       "spread evenly"),
        "batch_norm": ("sum(batch_norm(x) ** 3)", {"x": (4, 3)}, "mean(G * xhat)"),
        "layer_norm": ("sum(layer_norm(x) * y)", {"x": (4, 3), "y": (4, 3)}, "over axis"),
    }
    for name, (expr, shapes, words) in cases.items():
        d = sd.derive(expr, wrt="x", shapes=shapes)
        (head,) = [s for s in d.steps if s.rule == name]
        assert words in head.note and head.expr.startswith("z") and f"= {name}(x" in head.expr
        assert head.lines == () and head.text() == head.expr
        assert d.rules.index(name) < len(d.rules) - 1  # its parts follow
        assert f"[{name}] " in str(d) and r"\operatorname{" in d.latex()
        assert d.header().startswith(f"d/dx [{expr.replace(' ** ', '**')[:14]}")  # as called
    conv = sd.derive("sum(conv2d(x, w) * G)", wrt="x",
                     shapes={"x": (2, 2, 6, 6), "w": (3, 2, 3, 3), "G": (2, 3, 4, 4)})
    assert conv.rules[:3] == ["sum (broadcast back)", "elementwise chain", "constant multiple"]
    assert "conv2d" not in conv.rules
    padded = sd.derive("sum(conv2d(x, w, stride=2, padding=1))", wrt="x",
                       shapes={"x": (2, 1, 5, 5), "w": (3, 1, 3, 3)})
    assert padded.header().startswith("d/dx [sum(conv2d(x, w, stride=2, padding=1))] = ")
    assert "conv2d" in padded.expr.latex and "scatter" not in padded.expr
    assert "border cut off" in padded.steps[-1].note  # the padding's adjoint


# -- values and adjoints ----------------------------------------------------------------------
def test_mlp_adjoints_equal_grad_and_central_differences():
    at = _point(MLP_SHAPES)
    g = sd.graph(MLP, shapes=MLP_SHAPES, at=at)
    _check_gradients(MLP, MLP_SHAPES, at, g)
    for n in g.nodes:  # every node: a value and an adjoint of its own shape
        assert n.value.shape == n.grad.shape, n.expr
    assert g.node(g.root).grad == 1
    hidden = next(n for n in g.nodes if n.label == "relu")
    np.testing.assert_array_equal(hidden.value, np.maximum(at["X"] @ at["W1"] + at["b1"], 0))
    # the nodes' adjoints are those of the backward walk: the matmul rule, node by node
    first, second = (n for n in g.nodes if n.label == "matmul")
    np.testing.assert_allclose(at["X"].T @ first.grad, g.gradient["W1"], rtol=1e-12)
    np.testing.assert_allclose(second.grad @ at["W2"].T, hidden.grad, rtol=1e-12)
    np.testing.assert_allclose(hidden.grad * (hidden.value > 0), first.grad, rtol=1e-12)
    assert hidden.shape == "(n=5, 4)" and hidden.value.shape == (5, 4)


def test_conv_chain_adjoints_equal_grad_and_central_differences():
    at = _point(CONV_SHAPES, {"n": 2})
    g = sd.graph(CONV, shapes=CONV_SHAPES, at=at)
    _check_gradients(CONV, CONV_SHAPES, at, g)
    traced = sd.graph(_conv_chain, shapes=CONV_SHAPES, at=at)
    for name in ("x", "w"):
        np.testing.assert_array_equal(traced.gradient[name], g.gradient[name])
    pool = next(n for n in g.nodes if n.label == "max_pool2d")
    np.testing.assert_array_equal(pool.grad, np.ones((2, 3, 2, 2)))  # d sum / d its operand
    relu = next(n for n in g.nodes if n.label == "relu")
    assert relu.grad.shape == (2, 3, 4, 4)  # each of the 24 windows sends back 1 in all
    np.testing.assert_allclose(relu.grad.reshape(2, 3, 2, 2, 2, 2).sum(axis=(3, 5)), 1.0)


def test_max_pool_ties_share_the_adjoint_evenly():
    x = np.array([[[[1.0, 1.0, 0.0, 2.0], [1.0, 1.0, 2.0, -1.0],
                    [0.0, 3.0, 5.0, 5.0], [-1.0, 3.0, 5.0, 4.0]]]])
    g = sd.graph("sum(max_pool2d(x, 2))", shapes={"x": (1, 1, 4, 4)}, at={"x": x})
    expected = np.array([[[[0.25, 0.25, 0.0, 0.5], [0.25, 0.25, 0.5, 0.0],
                           [0.0, 0.5, 1 / 3, 1 / 3], [0.0, 0.5, 1 / 3, 0.0]]]])
    np.testing.assert_allclose(g.gradient["x"], expected)


def test_a_value_that_is_not_scalar_has_values_but_no_adjoints():
    at = {"X": np.ones((2, 3)), "W": np.ones((3, 4))}
    g = sd.graph("X @ W", shapes={"X": ("n", 3), "W": (3, 4)}, at=at)
    np.testing.assert_array_equal(g.value, np.full((2, 4), 3.0))
    assert g.gradient == {"W": None, "X": None}
    assert all(n.grad is None for n in g.nodes)


# -- views -------------------------------------------------------------------------------------
def test_views_summarise_arrays_and_render_deterministically():
    at = _point(CONV_SHAPES, {"n": 2})
    g = sd.graph(CONV, shapes=CONV_SHAPES, at=at)
    svg = g.to_svg()
    assert svg == sd.graph(CONV, shapes=CONV_SHAPES, at=at).to_svg()  # byte-identical
    root = ET.fromstring(svg)
    texts = [t.text or "" for t in root.iter("{http://www.w3.org/2000/svg}text")]
    assert "z1 = conv2d(x, w, stride=2, padding=1)" in texts
    assert "(n=2, 3, 4, 4)" in texts and "(n=2, 2, 8, 8)" in texts
    assert all(len(t) < 60 for t in texts)  # a summary, never a whole array
    values = [t for t in texts if t.startswith("v=")]
    assert len(values) == len(g.nodes) and any(".." in t for t in values)
    titles = [t.text for t in root.iter("{http://www.w3.org/2000/svg}title")]
    assert any("backward: max_pool2d: the adjoint goes to the maximum" in t for t in titles)
    table = g.reverse_table()
    assert table.header == ("node", "op", "expression", "shape", "value", "adjoint",
                            "backward rule")
    assert "flipped kernel" in table.text and "df/dx = " in table.text
    ET.fromstring(f"<div>{table._repr_html_()}</div>")  # well-formed, escaped
    assert table._repr_html_() == sd.graph(CONV, shapes=CONV_SHAPES, at=at).reverse_table(
    )._repr_html_()
    assert "conv2d" in g.tree() and "->" in g.to_dot()
    with pytest.raises(sd.SymdiffError, match="forward_table is for scalar graphs"):
        g.forward_table("x")
    empty = sd.graph(CONV, shapes=CONV_SHAPES)  # no point: shapes only
    ET.fromstring(empty.to_svg())
    with pytest.raises(sd.SymdiffError, match="no values"):
        empty.reverse_table()


def test_scalar_graphs_are_unchanged():
    g = sd.graph("x*y + sin(x)", at={"x": 1.0, "y": 2.0})
    assert not g.tensor and all(n.shape is None and n.rule == "" for n in g.nodes)
    assert g.reverse_table().header[-1] == "= sum from parents"


# -- errors ------------------------------------------------------------------------------------
def test_clear_errors():
    at = {"X": np.ones((5, 3)), "W1": np.ones((3, 4))}
    shapes = {"X": ("n", 3), "W1": (3, 4)}
    with pytest.raises(sd.ShapeError, match=r"'W1' has shape \(4, 4\), expected \(3, 4\)"):
        sd.graph("sum(X @ W1)", shapes=shapes, at={**at, "W1": np.ones((4, 4))})
    with pytest.raises(sd.SymdiffError, match="at= has no value for W1"):
        sd.graph("sum(X @ W1)", shapes=shapes, at={"X": at["X"]})
    with pytest.raises(sd.SymdiffError, match="at= gives q, which the expression does not use"):
        sd.graph("sum(X @ W1)", shapes=shapes, at={**at, "q": 1.0})
    with pytest.raises(sd.SymdiffError, match="'q' are not variables of the expression"):
        sd.graph("sum(X @ W1)", shapes=shapes, wrt="q")
    with pytest.raises(sd.ShapeError, match="'W1' has no shape"):
        sd.graph("sum(X @ W1)", shapes={"X": ("n", 3)})
    with pytest.raises(sd.ShapeError, match="conv2d"):
        sd.graph("sum(conv2d(x, w))", shapes={"x": (1, 2, 5, 5), "w": (3, 1, 3, 3)})
    with pytest.raises(sd.ParseError, match="unknown function 'foo'"):
        sd.graph("sum(foo(x))", shapes={"x": (2,)})
    with pytest.raises(sd.SymdiffError, match="has none, being constant"):
        sd.graph("sum(x * 0 + 3)", shapes={"x": (2,)}, at={"x": np.ones(2)})


def test_an_output_that_is_a_variable_has_adjoint_one():
    g = sd.graph("x", shapes={"x": ()}, at={"x": 2.0})
    assert [n.label for n in g.nodes] == ["x"] and g.gradient == {"x": 1.0}


def test_pictures_fit_their_viewbox_and_scale_to_the_page():
    """No node or label outside the viewBox (the top node was clipped at y = -7), at most 100%
    of the page's width, so a notebook cell scales it down."""
    at = _point(CONV_SHAPES, {"n": 2})
    for g in (sd.graph(CONV, shapes=CONV_SHAPES, at=at), sd.graph("x*y**3*z*(y + z)",
                                                                   at={"x": 5, "y": 2, "z": 3})):
        root = ET.fromstring(g.to_svg())
        left, top, width, height = map(float, root.get("viewBox").split())
        assert float(root.get("width")) == width and "max-width: 100%" in root.get("style")
        ns = "{http://www.w3.org/2000/svg}"
        for rect in root.iter(f"{ns}rect"):
            x, y = float(rect.get("x")), float(rect.get("y"))
            assert left <= x and x + float(rect.get("width")) <= left + width
            assert top <= y and y + float(rect.get("height")) <= top + height
        for ellipse in root.iter(f"{ns}ellipse"):
            cy, ry = float(ellipse.get("cy")), float(ellipse.get("ry"))
            assert top <= cy - ry and cy + ry <= top + height


def test_tensor_pictures_label_subtraction_negation_division_and_their_edges():
    shapes = {"a": (3,), "b": (3,)}
    g = sd.graph("sum(softmax(a) - a*b) + sum(-a) + sum(a/b)", shapes=shapes,
                 at={"a": np.arange(3.0), "b": np.ones(3)})
    labels = {n.expr.split(" = ")[1]: n.label for n in g.nodes if n.kind == "operation"}
    assert labels["-a*b + z1"] == "-" and labels["-z4"] == "-" and labels["a/b"] == "/"
    texts = [e.text for e in g.edges]
    assert all(t.startswith("(3,) [") or t.startswith("() ") for t in texts), texts
    svg = g.to_svg()
    assert svg.count('class="edge-label"') == len(g.edges)
    assert "(3,) [0, 1, 2]" in svg and 'class="op"' in svg and 'class="expr"' in svg
