"""symdiff.graphs.layout and .text: the geometry of the SVG picture and the numbers it shows."""

from __future__ import annotations

import itertools

import pytest

from symdiff.graphs.layout import centred_box, order_rows, place_label, point_at, smooth_curve
from symdiff.graphs.nodes import GraphNode
from symdiff.graphs.text import EXPR_CHARS, format_number, make_table, node_lines, picture_lines


def crossings(rows: list[list[str]], below: dict[str, list[str]]) -> int:
    """Pairs of edges between neighbouring rows that cross, counted by brute force."""
    count = 0
    for lower, upper in itertools.pairwise(rows):
        rank = {item: i for row in (lower, upper) for i, item in enumerate(row)}
        edges = [(rank[low], rank[high]) for high in upper for low in below[high]]
        for (a, b), (c, d) in itertools.combinations(edges, 2):
            count += (a - c) * (b - d) < 0
    return count


def test_rows_are_reordered_until_no_edge_crosses():
    # two parents whose operands were listed crosswise: p over (b, a), q over (a, c) in row 0
    rows = [["c", "a", "b"], ["q", "p"], ["r"]]
    below = {"a": [], "b": [], "c": [], "p": ["b", "a"], "q": ["c", "b"], "r": ["p", "q"]}
    widths = dict.fromkeys(below, 30.0)
    x_of = order_rows(rows, "r", widths, below, gap=10)
    assert crossings(rows, below) == 0
    for row in rows:  # placed left to right in the new order, without overlap
        xs = [x_of[item] for item in row]
        assert all(b - a >= 30 + 10 for a, b in itertools.pairwise(xs))


def test_the_operands_of_a_tree_keep_their_order():
    rows = [["y", "x"], ["minus"]]
    below = {"x": [], "y": [], "minus": ["x", "y"]}  # x - y: x on the left
    x_of = order_rows(rows, "minus", dict.fromkeys(below, 20.0), below, gap=5)
    assert rows[0] == ["x", "y"] and x_of["x"] < x_of["y"]


def test_a_curve_runs_from_its_first_point_to_its_last():
    curve = smooth_curve([(0.0, 100.0), (50.0, 50.0), (20.0, 0.0)])
    assert len(curve) == 2
    assert point_at(curve, 0.0) == pytest.approx((0.0, 100.0))
    assert point_at(curve, 0.5) == pytest.approx((50.0, 50.0))
    assert point_at(curve, 1.0) == pytest.approx((20.0, 0.0))


def test_a_label_avoids_a_taken_box_when_there_is_room():
    curve = smooth_curve([(0.0, 200.0), (0.0, 0.0)])  # a straight vertical edge
    first_choice = centred_box(*point_at(curve, 0.6), 20, 10)
    label = place_label(curve, 20, 10, [first_choice], {})
    assert label != first_choice
    overlap = not (label[2] <= first_choice[0] or first_choice[2] <= label[0]
                   or label[3] <= first_choice[1] or first_choice[3] <= label[1])
    assert not overlap
    assert place_label(curve, 20, 10, [], {}) == first_choice


@pytest.mark.parametrize(
    "value, text",
    [(None, ""), (3.0, "3"), (-0.0, "0"), (2.5, "2.5"), (1 / 3, "0.333333"), (1e20, "1e+20"),
     (float("inf"), "inf"), (float("nan"), "nan"), ("x", "x")],
)
def test_numbers_are_compact(value, text):
    assert format_number(value) == text


def test_a_node_shows_its_value_and_gradient_once_known():
    node = GraphNode("n0", "*", "operation")
    assert node_lines(node) == ["*"]
    node.value, node.grad = 6.0, 0.5
    assert node_lines(node) == ["*", "v=6", "adjoint=0.5"]


def test_a_table_aligns_its_columns_and_escapes_its_html():
    table = make_table([{}], {"x": 1.0}, ("node", "expression"), [("n0", "x < y")], "done")
    assert table.text == "node  expression\n----  ----------\nn0    x < y\ndone\n"
    assert "<td>x &lt; y</td>" in table._repr_html_()


def test_a_picture_names_the_operation_and_its_subexpression():
    node = GraphNode("n3", "*", "operation", ("n0", "n1"), "x*y**3", value=40.0, grad=15.0)
    assert picture_lines(node) == [("*", "op"), ("x*y**3", "expr"), ("v=40", "data"),
                                   ("adjoint=15", "data")]
    long = GraphNode("n4", "+", "operation", (), "x" * 80)
    (_, (text, kind)) = picture_lines(long)
    assert kind == "expr" and len(text) == EXPR_CHARS and text.endswith("\u2026")
    assert picture_lines(GraphNode("n0", "x", "input", (), "x")) == [("x", "op")]
