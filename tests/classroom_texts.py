"""Random expression texts for the classroom's tests: every rule of a first course, nested
(as a student types them: ``^``, ``ln``, typed decimals, subtraction and division)."""

from __future__ import annotations

from hypothesis import strategies as st

UNARY = ["sin", "cos", "tan", "exp", "ln", "log", "sqrt", "asin", "atan", "sinh", "abs"]

leaves = st.sampled_from(["x", "y", "2", "3", "0.5", "pi", "e", "x", "x"])


@st.composite
def _node(draw, children):
    kind = draw(st.sampled_from(["+", "-", "*", "/", "^", "**", "neg", "call", "call"]))
    a = draw(children)
    if kind == "neg":
        return f"-({a})"
    if kind == "call":
        return f"{draw(st.sampled_from(UNARY))}({a})"
    if kind in ("^", "**"):
        return f"({a}){kind}{draw(st.sampled_from(['2', '3', '-1', '(1/2)']))}"
    return f"({a}) {kind} ({draw(children)})"


texts = st.recursive(leaves, _node, max_leaves=6)
