"""Computational graphs: values, gradients, views and escaping."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import symdiff as sd
from symdiff.functions import sigmoid
from symdiff.graphs import Graph, GraphNode

SEED = "x*y**3*z*(y + z)"
SEED_AT = {"x": 5, "y": 2, "z": 3}
SVG = "{http://www.w3.org/2000/svg}"


def reference(expr: str, at: dict[str, float]) -> tuple[float, dict[str, float]]:
    """Value and gradient from ``sympy.diff`` (the independent reference)."""
    e = sd.parse(expr).replace(sigmoid, lambda u: 1 / (1 + sp.exp(-u)))
    point = {s: at[s.name] for s in e.free_symbols}
    grads = {s.name: float(sp.diff(e, s).subs(point)) for s in e.free_symbols}
    return float(e.subs(point)), grads


def num(value: float) -> str:
    """How a number is shown in the views."""
    return str(int(value)) if value == int(value) else f"{value:.6g}"


# -- the seed example -----------------------------------------------------------------------------
def test_seed_values_and_gradients_match_sympy():
    g = sd.graph(SEED, at=SEED_AT)
    value, grads = reference(SEED, SEED_AT)
    assert g.value == pytest.approx(value) == 600
    assert g.gradient == pytest.approx(grads)
    branches = {n.label for n in g.nodes if n.is_branch}
    assert branches == {"y", "z"}  # both feed y**3 / x*z and y + z
    assert g.node(g.root).grad == 1


def test_seed_svg_is_xml_with_forward_and_backward_numbers():
    g = sd.graph(SEED, at=SEED_AT)
    svg = g.to_svg()
    root = ET.fromstring(svg)
    texts = [t.text for t in root.iter(f"{SVG}text")]
    value, grads = reference(SEED, SEED_AT)
    assert f"v={num(value)}" in texts
    for name, grad in grads.items():
        assert f"adjoint={num(grad)}" in texts, name
    for name, v in SEED_AT.items():
        assert f"v={v}" in texts
        assert name in texts
    groups = [el for el in root.iter(f"{SVG}g") if "branch" in el.get("class", "")]
    assert len(groups) == 2
    assert len(list(root.iter(f"{SVG}path"))) == len(g.edges) + 1  # + the arrowhead
    assert g._repr_svg_() == svg
    # inline in a notebook (HTML before SVG, which it would put in a natural-width <img>)
    assert g._repr_html_() == svg


def test_forward_and_reverse_tables_agree_with_sympy():
    g = sd.graph(SEED, at=SEED_AT)
    _, grads = reference(SEED, SEED_AT)
    reverse = g.reverse_table()
    assert reverse.result == pytest.approx(grads)
    for name, grad in grads.items():
        forward = g.forward_table(name)
        assert forward.result[name] == pytest.approx(grad)
        assert forward.rows[-1]["tangent"] == pytest.approx(grad)
        assert f"df/d{name} = {num(grad)}" in forward.text
        assert f"df/d{name} = {num(grad)}" in reverse.text
    # the input rows of the reverse pass hold the gradient
    inputs = {r["expr"]: r["adjoint"] for r in reverse.rows if r["op"] in SEED_AT}
    assert inputs == pytest.approx(grads)
    assert str(reverse) == reverse.text
    assert "(branch)" in reverse.text


def test_forward_table_tangents_are_node_derivatives():
    g = sd.graph(SEED, at=SEED_AT)
    y = sp.Symbol("y", real=True)
    point = {sp.Symbol(k, real=True): v for k, v in SEED_AT.items()}
    for row in g.forward_table("y").rows:
        expected = sp.diff(
            sp.sympify(row["expr"], locals={"y": y, **{s.name: s for s in point}}), y
        )
        assert row["tangent"] == pytest.approx(float(expected.subs(point)))


# -- gradients for several expressions ------------------------------------------------------------
CASES = [
    ("max(x, y)", {"x": 2, "y": 2}),  # tie: split evenly
    ("max(x, 0)", {"x": 0}),
    ("sigmoid(x)*y", {"x": 0.3, "y": -1.5}),
    ("x/y + y/(1 + x**2)", {"x": 1.5, "y": 0.7}),
    ("sin(x)*exp(y)/(1 + x**2)", {"x": 0.4, "y": -0.2}),
    ("log(x)*sqrt(y) - tanh(x*y)", {"x": 2.0, "y": 3.0}),
    ("where(x > 0, x**2, 3*x)", {"x": -1.0}),
]


def checked_graph(expr, at):
    """``sd.graph(expr, at)`` after checking its value and gradients (reverse and forward tables
    too) against the SymPy reference."""
    g = sd.graph(expr, at=at)
    value, grads = reference(expr, at)
    assert g.value == pytest.approx(value)
    assert g.gradient == pytest.approx(grads)
    assert g.reverse_table().result == pytest.approx(grads)
    for name in at:
        assert g.forward_table(name).result[name] == pytest.approx(grads[name])
    return g


@pytest.mark.parametrize(("expr", "at"), CASES)
def test_input_gradients_match_sympy(expr, at):
    checked_graph(expr, at)


def test_max_tie_splits_gradient():
    assert sd.graph("max(x, y)", at={"x": 2, "y": 2}).gradient == {"x": 0.5, "y": 0.5}


@settings(max_examples=25, deadline=None)
@given(
    st.floats(0.1, 3, allow_nan=False),
    st.floats(0.1, 3, allow_nan=False),
    st.floats(-3, 3, allow_nan=False),
)
def test_seed_gradient_property(x, y, z):
    at = {"x": x, "y": y, "z": z}
    g = sd.graph(SEED, at=at)
    _, grads = reference(SEED, at)
    assert g.gradient == pytest.approx(grads, rel=1e-9, abs=1e-9)
    forward = {name: g.forward_table(name).result[name] for name in at}
    assert forward == pytest.approx(g.reverse_table().result, rel=1e-9, abs=1e-9)


def test_fan_out_accumulates():
    # x*x is x**2 in SymPy (one use of x); x*(x + 1) uses x twice: a branch with grad 2x + 1
    g = sd.graph("x*(x + 1)", at={"x": 3})
    (x,) = [n for n in g.nodes if n.label == "x"]
    assert x.is_branch
    assert x.grad == 7
    assert sorted(v for _, v in g.contributions[x.id]) == [3, 4]
    square = sd.graph("x*x", at={"x": 3})
    assert square.gradient == {"x": 6}


def test_wrt_selects_reported_inputs():
    g = sd.graph(SEED, at=SEED_AT, wrt=["y"])
    assert g.wrt == ("y",)
    assert set(g.gradient) == {"y"}
    assert sd.graph("x", at={"x": 1}, wrt=["x", "w"]).gradient == {"x": 1, "w": 0}


# -- subtraction and division as written --------------------------------------------------------
AS_WRITTEN = [
    ("x - y", {"x": 2, "y": 3}),
    ("x/y", {"x": 2, "y": 4}),
    ("a - b - c", {"a": 1.5, "b": -2, "c": 0.25}),
    ("a + b - c", {"a": 1.5, "b": -2, "c": 0.25}),
    ("-x - y", {"x": 0.5, "y": 2}),
    ("-x", {"x": 0.5}),
    ("1/x", {"x": 0.5}),
    ("-x/y", {"x": 1.5, "y": -0.5}),
    ("x*y/(z*w)", {"x": 1.5, "y": -2, "z": 0.5, "w": 3}),
    ("x/2 - 3", {"x": 1.5}),
    ("x - 2*y", {"x": 1.5, "y": 0.25}),
    ("1 - x/y", {"x": 1.5, "y": 0.25}),
    ("x*y - x*y/z", {"x": 1.5, "y": 0.25, "z": 2}),
    ("sin(x)*exp(y)/(1 + x**2)", {"x": 0.4, "y": -0.2}),
    ("log(x)*sqrt(y) - tanh(x*y)", {"x": 2.0, "y": 3.0}),
    ("exp(-x)*y/(x - y)", {"x": 2.0, "y": 3.0}),
]


def node_reference(expr: str, child: GraphNode, at: dict[str, float]) -> float:
    """d output / d ``child`` by ``sympy.diff``: the child's subexpression replaced by a symbol."""
    e = sd.parse(expr)
    point = {s: at[s.name] for s in e.free_symbols}
    if child.kind == "input":
        return float(sp.diff(e, sd.parse(child.expr)).subs(point))
    u = sp.Symbol("u_node", real=True)
    replaced = e.subs(sd.parse(child.expr), u)
    assert u in replaced.free_symbols, (expr, child.expr)  # else the reference would be 0
    return float(sp.diff(replaced, u).subs({**point, u: child.value}))


@pytest.mark.parametrize(("expr", "at"), AS_WRITTEN)
def test_minus_and_divide_nodes_send_back_sympy_adjoints(expr, at):
    g = checked_graph(expr, at)
    index = g._index()
    written = [n for n in g.nodes if n.label in ("-", "/")]
    assert written, expr
    for n in written:
        kids = [index[c] for c in n.children]
        values = [k.value for k in kids]
        if n.label == "/":
            a, b = values
            assert n.value == pytest.approx(a / b)
            expected = [1 / b, -a / b**2]
        elif len(kids) == 2:
            assert n.value == pytest.approx(values[0] - values[1])
            expected = [1, -1]
        else:
            assert n.value == pytest.approx(-values[0])
            expected = [-1]
        for kid, partial, want in zip(kids, n.partials, expected, strict=True):
            if kid.kind == "constant":
                assert partial is None
                continue
            assert partial == pytest.approx(want), (expr, n.label, kid.expr)
            assert kid.grad == pytest.approx(node_reference(expr, kid, at)), (expr, kid.expr)
    # no hidden multiply by -1 or power -1 left where the user wrote - or /
    assert not any(n.kind == "constant" and n.value == -1 for n in g.nodes)
    assert not any(n.label == "**" and index[n.children[1]].value == -1 for n in g.nodes)


@pytest.mark.parametrize(
    ("expr", "tree"),
    [
        ("x - y", ["- x - y", "  x", "  y"]),
        ("x/y", ["/ x/y", "  x", "  y"]),
        ("a - b - c", ["- a - b - c", "  - a - b", "    a", "    b", "  c"]),
        ("a + b - c", ["- a + b - c", "  + a + b", "    a", "    b", "  c"]),
        ("-x - y", ["- -x - y", "  - -x", "    x", "  y"]),
        ("-x", ["- -x", "  x"]),
        ("1/x", ["/ 1/x", "  1", "  x"]),
        ("x*y/(z*w)", ["/ x*y/(z*w)", "  * x*y", "    x", "    y", "  * z*w", "    z", "    w"]),
        ("-2*x", ["* -2*x", "  -2", "  x"]),
        ("x**-2", ["** x**-2", "  x", "  -2"]),
        # as typed: the order of terms, and a power of a quotient (SymPy: sigma**12/r**12)
        ("(s/r)**12 - x", ["- (s/r)**12 - x", "  ** (s/r)**12", "    / s/r", "      s", "      r",
                           "    12", "  x"]),
    ],
)
def test_as_written_structure(expr, tree):
    # each tree line without its id: label and expression, indented by depth (a leaf: its name)
    lines = [
        re.sub(r"\[n\d+\] (\S+)  (.*)", r"\1 \2", ln) for ln in sd.graph(expr).tree().split("\n")
    ]
    lines = [re.sub(r"^(\s*)(\S+) \2$", r"\1\2", ln) for ln in lines if ln]
    assert lines == tree


def test_minus_and_divide_in_every_view():
    for expr, op, partials in [("x - y", "-", ("1", "-1")), ("x / y", "/", ("0.25", "-0.125"))]:
        g = sd.graph(expr, at={"x": 2, "y": 4})
        assert g.node(g.root).label == op
        assert [n.label for n in g.nodes] == ["x", "y", op]
        dot = g.to_dot()
        assert f'n2 [label="{op}\\n' in dot
        edges = [ln for ln in dot.splitlines() if " -> " in ln]
        assert [re.search(r'label="([^"]*)"', ln).group(1) for ln in edges] == list(partials)
        assert g.tree().startswith(f"[n2] {op}  ")
        assert g.reverse_table().rows[0]["op"] == op
        assert g.forward_table("x").rows[-1]["op"] == op
        assert op in [t.text for t in ET.fromstring(g.to_svg()).iter(f"{SVG}text")]


# -- views ---------------------------------------------------------------------------------------
def test_to_dot_one_line_per_node_and_edge():
    g = sd.graph(SEED, at=SEED_AT)
    dot = g.to_dot()
    lines = dot.splitlines()
    assert lines[0].startswith("digraph") and lines[-1] == "}"
    assert len([ln for ln in lines if re.match(r"\s+n\d+ \[", ln)]) == len(g.nodes)
    assert len([ln for ln in lines if " -> " in ln]) == len(g.edges) == 10
    assert dot.count("fillcolor") == 2


def test_dot_escapes_labels():
    g = Graph([GraphNode("n0", 'a"b\\c', "input", expr="a")], "n0")
    assert 'label="a\\"b\\\\c"' in g.to_dot()


def test_tree_lists_every_node_once():
    g = sd.graph(SEED, at=SEED_AT)
    lines = g.tree().splitlines()
    full = [ln for ln in lines if ln.lstrip().startswith("[")]
    refs = [ln for ln in lines if ln.lstrip().startswith("^")]
    ids = [re.search(r"\[(n\d+)\]", ln).group(1) for ln in full]
    assert sorted(ids) == sorted(n.id for n in g.nodes)
    assert len(refs) == 2  # y and z, second parents
    assert lines[0].startswith(f"[{g.root}] *") and "v=600" in lines[0]


def test_svg_escapes_hostile_label():
    hostile = 'a<b & "c" <script>alert(1)</script>'
    g = Graph(
        [
            GraphNode("n0", hostile, "input", expr=hostile, value=1.0, grad=2.0),
            GraphNode("n1", "sin", "operation", ("n0",), "sin(x)", 0.5, 1.0, False, (0.3,)),
            GraphNode("n2", hostile, "operation", ("n1", "n0"), hostile, 1, 1, False, (1.0, -1.0)),
        ],
        "n2",
    )
    svg = g.to_svg()
    assert "<script" not in svg and '&"' not in svg and "& " not in svg
    assert "&lt;script&gt;" in svg
    root = ET.fromstring(svg)
    assert hostile in [t.text for t in root.iter(f"{SVG}text")]
    nodes = [el for el in root.iter(f"{SVG}g") if el.get("class", "").startswith("node")]
    assert nodes[0].find(f"{SVG}title").text == f"n0: {hostile}"
    edges = [el for el in root.iter(f"{SVG}g") if el.get("class") == "edge"]
    titles = [el.find(f"{SVG}title").text for el in edges]
    assert titles == [
        f"d(sin(x)) / d({hostile}) = 0.3",
        f"d({hostile}) / d(sin(x)) = 1",
        f"d({hostile}) / d({hostile}) = -1",
    ]
    # only our own elements: nothing the labels could have injected
    assert {el.tag.removeprefix(SVG) for el in root.iter()} == ALLOWED_TAGS


#: The SVG elements the graph template writes; anything else was injected.
ALLOWED_TAGS = {"svg", "defs", "marker", "path", "style", "g", "title", "ellipse", "rect", "text"}


def test_sympy_names_that_are_not_identifiers_are_shown_escaped():
    # SymPy symbols may carry any name (x_{1}, \\alpha); the graph shows it as text, never markup
    for name in ["a<b", 'x"y', "</text>", "a&b", "x_{1}"]:
        g = sd.graph(sp.Symbol(name) - sp.Symbol("y"), at={name: 1, "y": 2})
        root = ET.fromstring(g.to_svg())  # well-formed: nothing was injected
        assert name in [t.text for t in root.iter(f"{SVG}text")]
        assert {el.tag.removeprefix(SVG) for el in root.iter()} <= ALLOWED_TAGS
        label = name.replace('"', '\\"')
        assert f'label="{label}\\nv=1' in g.to_dot()


def edge_labels(svg: str) -> list[tuple[str, str, tuple[float, float, float, float]]]:
    """Each edge label of an SVG picture: its text, its title and its box."""
    root = ET.fromstring(svg)
    out = []
    for el in root.iter(f"{SVG}g"):
        if el.get("class") == "edge-label":
            r = el.find(f"{SVG}rect")
            x, y, w, h = (float(r.get(k)) for k in ("x", "y", "width", "height"))
            out.append(
                (el.find(f"{SVG}text").text, el.find(f"{SVG}title").text, (x, y, x + w, y + h))
            )
    return out


def node_boxes(svg: str) -> list[tuple[float, float, float, float]]:
    root = ET.fromstring(svg)
    boxes = []
    for el in root.iter(f"{SVG}g"):
        if el.get("class", "").startswith("node"):
            if (r := el.find(f"{SVG}rect")) is not None:
                x, y, w, h = (float(r.get(k)) for k in ("x", "y", "width", "height"))
                boxes.append((x, y, x + w, y + h))
            else:
                e = el.find(f"{SVG}ellipse")
                cx, cy, rx, ry = (float(e.get(k)) for k in ("cx", "cy", "rx", "ry"))
                boxes.append((cx - rx, cy - ry, cx + rx, cy + ry))
    return boxes


def overlaps(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


SVG_CASES = [
    ("sin(x)*exp(y)/(1 + x**2)", {"x": 0.4, "y": -0.2}),
    ("x - y", {"x": 2, "y": 3}),
    ("x/y", {"x": 2, "y": 4}),
    ("(x*y + sin(x))**2", {"x": 0.7, "y": 1.3}),
    (SEED, SEED_AT),
    ("(x + y)*(x - y)", {"x": 2, "y": 3}),
    ("log(x)*sqrt(y) - tanh(x*y)", {"x": 2.0, "y": 3.0}),
    ("x*y/(z*w) - 1/x", {"x": 1, "y": 2, "z": 3, "w": 4}),
    ("x/y + y/(1 + x**2)", {"x": 1.5, "y": 0.7}),
    ("max(x, y, z)", {"x": 1, "y": 1, "z": 1}),
    ("where(x > 0, x**2, 3*x)", {"x": -1.0}),
]


@pytest.mark.parametrize(("expr", "at"), SVG_CASES)
def test_svg_edges_carry_their_local_partials(expr, at):
    g = sd.graph(expr, at=at)
    svg = g.to_svg()
    labels = edge_labels(svg)
    index = g._index()
    carried = [e for e in g.edges if e.partial is not None]
    assert len(labels) == len(carried)  # every edge but those from constants
    assert len(carried) == len([e for e in g.edges if index[e.source].kind != "constant"])
    assert [text for text, _, _ in labels] == [num(e.partial) for e in carried]
    for (text, title, _), e in zip(labels, carried, strict=True):
        assert title == f"d({index[e.target].expr}) / d({index[e.source].expr}) = {text}"
    assert f'label="{labels[0][0]}"' in g.to_dot()
    # legible: no label on another label or on a node, and all inside the picture
    boxes = [box for _, _, box in labels]
    for i, box in enumerate(boxes):
        assert not any(overlaps(box, other) for other in boxes[i + 1 :]), (expr, labels[i])
        assert not any(overlaps(box, node) for node in node_boxes(svg)), (expr, labels[i])
    root = ET.fromstring(svg)
    left, top, width, height = map(float, root.get("viewBox").split())
    everything = boxes + node_boxes(svg)
    assert all(b[0] >= left and b[2] <= left + width and b[3] <= top + height for b in everything)


def test_svg_without_point_has_no_edge_labels():
    svg = sd.graph("x - y/z").to_svg()
    assert edge_labels(svg) == []
    root = ET.fromstring(svg)
    titles = [
        el.find(f"{SVG}title").text for el in root.iter(f"{SVG}g") if el.get("class") == "edge"
    ]
    assert sorted(titles) == [
        "d(x - y/z) / d(x)",
        "d(x - y/z) / d(y/z)",
        "d(y/z) / d(y)",
        "d(y/z) / d(z)",
    ]


# -- inputs --------------------------------------------------------------------------------------
def test_graph_without_values():
    g = sd.graph("sin(x)*y + x")
    assert all(n.value is None and n.grad is None for n in g.nodes)
    assert g.gradient == {"x": None, "y": None}
    assert "v=" not in g.to_svg() and "g=" not in g.to_dot()
    ET.fromstring(g.to_svg())
    with pytest.raises(sd.SymdiffError):
        g.reverse_table()
    assert g.node(g.root).label == "+"


def test_traced_function():
    g = sd.graph(lambda a, b: a * np.exp(b) + np.sin(a), at={"a": 1.0, "b": 0.5})
    a, b = 1.0, 0.5
    assert g.value == pytest.approx(a * math.exp(b) + math.sin(a))
    assert g.gradient == pytest.approx({"a": math.exp(b) + math.cos(a), "b": a * math.exp(b)})
    assert {n.label for n in g.nodes} >= {"a", "b", "exp", "sin", "*", "+"}
    assert [n.label for n in g.nodes if n.is_branch] == ["a"]


def test_missing_point_value_and_constant_graph():
    with pytest.raises(sd.SymdiffError, match="y"):
        sd.graph("x*y", at={"x": 1})
    g = sd.graph("3", at={})
    assert g.value == 3 and g.gradient == {}
    ET.fromstring(g.to_svg())


def test_graph_is_what_reverse_mode_computes():
    from symdiff.engine.reverse import Linearizer

    linear = Linearizer()
    linear(sd.parse(SEED))
    g = sd.graph(SEED)
    assert len([n for n in g.nodes if n.kind == "operation"]) == len(linear.nodes)


_TERMS = st.lists(st.sampled_from([
    "x*y", "sin(x)", "x**2*y", "exp(y)*x", "3*x", "y**3", "cos(x*y)", "x*sin(y)*exp(x)",
]), min_size=2, max_size=5, unique=True)


@given(_TERMS)
@settings(max_examples=40, deadline=None)
def test_a_sympy_expression_is_drawn_with_children_in_the_order_its_node_prints_them(terms):
    expr = sp.sympify(" + ".join(terms))
    graph = sd.graph(expr, at={"x": 0.7, "y": 1.3})
    by_id = {node.id: node for node in graph.nodes}
    for node in graph.nodes:
        if node.label not in ("+", "*") or node.kind != "operation":
            continue
        places = [node.expr.find(by_id[child].expr) for child in node.children]
        assert -1 not in places and places == sorted(places), (node.expr, [
            by_id[child].expr for child in node.children])
    point = {s: {"x": 0.7, "y": 1.3}[s.name] for s in expr.free_symbols}
    for symbol in expr.free_symbols:
        want = float(sp.diff(expr, symbol).subs(point))
        assert math.isclose(graph.gradient[symbol.name], want, rel_tol=1e-12)
