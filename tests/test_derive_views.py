"""The views of a derivation a student reads: every step states its identity
with the parts named, names render as names, and the nesting is a tree (collapsible
``<details>`` in HTML, indentation in text) with no hierarchical numbers below the top level.

The HTML is checked structurally with :mod:`html.parser` (no browser here): the tree of
``<details>`` is rebuilt and compared with the depths of :meth:`Derivation.lines`.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import numpy as np
import pytest
import sympy as sp

import symdiff as sd
from symdiff.engine.identities import identity_of
from symdiff.engine.texnames import latex_name
from symdiff.parsing.written import canonical

from .test_display import assert_katex_safe


# -- HTML: a <details> tree ------------------------------------------------------------------------
class _Tree(HTMLParser):
    """Rebuilds the nesting: each node is a ``<details>`` (its ``<summary>`` text and children)
    or a leaf ``<div>`` (its text)."""

    def __init__(self) -> None:
        super().__init__()
        self.root: dict = {"kind": "root", "children": [], "text": ""}
        self.stack = [self.root]
        self.capture: list[dict] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        attrs = dict(attrs)
        node = None
        if tag == "details":
            node = {"kind": "details", "children": [], "text": "", "open": "open" in attrs}
        elif tag == "div" and attrs.get("class") in ("symdiff-step", "symdiff-definition"):
            node = {"kind": attrs["class"], "children": [], "text": ""}
        if node is not None:
            self.stack[-1]["children"].append(node)
            self.stack.append(node)
            if tag == "div":
                self.capture.append(node)
        elif tag == "summary":
            assert self.stack[-1]["kind"] == "details" and not self.stack[-1]["children"]
            self.capture.append(self.stack[-1])

    def handle_endtag(self, tag):
        assert self.tags.pop() == tag  # well nested
        if tag == "summary" or (tag == "div" and self.capture and self.capture[-1] is
                                 self.stack[-1] and self.stack[-1]["kind"] != "details"):
            self.capture.pop()
        if tag == "details" or (tag == "div" and self.stack[-1]["kind"] != "details"
                                and self.stack[-1] is not self.root
                                and not self.stack[-1]["children"]):
            self.stack.pop()

    def handle_data(self, data):
        if self.capture:
            self.capture[-1]["text"] += data


def _tree(page: str) -> dict:
    parser = _Tree()
    parser.feed(page)
    parser.close()
    assert parser.tags == [] and parser.stack == [parser.root]
    return parser.root


def _flatten(node: dict, depth: int = 0):
    for child in node["children"]:
        yield depth, child
        yield from _flatten(child, depth + 1)


def test_html_is_a_tree_of_details_that_follows_the_steps():
    d = sd.derive("sin(cos(x**2))/x", wrt="x")
    page = d.html()
    assert page.startswith('<div class="symdiff-steps">') and page.endswith("</div>")
    nodes = list(_flatten(_tree(page)))
    lines = d.lines()
    assert len(nodes) == len(lines)
    for (depth, node), line in zip(nodes, lines, strict=True):
        assert depth == line.depth, (node, line)
        text = re.sub(r"\s+", " ", node["text"])
        assert line.text() in text
        if line.kind == "definition":
            assert node["kind"] == "symdiff-definition" and "(inner function)" in text
            continue
        has_children = any(other.depth > line.depth for other in lines[lines.index(line) + 1:
                                                                         lines.index(line) + 2])
        assert node["kind"] == ("details" if has_children else "symdiff-step"), text
        if line.kind == "assembly":  # f'(u) u' = (parts) = result
            assert text.startswith(f"{line.role} = ") and "[assembly]" not in text
            continue
        assert f"[{line.rule}]" in text
        if node["kind"] == "details":
            assert node["open"] and node["children"]
        if line.role:
            assert text.startswith(f"{line.role}: ")
    # the identities, parts named, in the summaries
    top = nodes[0][1]
    assert top["kind"] == "details"
    assert "(f/g)' = (f' g - f g')/g^2 with f = sin(cos(x**2)), g = x" in top["text"]
    summaries = [n["text"] for _, n in nodes if n["kind"] == "details"]
    assert any("(f(u))' = f'(u) u'" in s for s in summaries)
    assert any("(f(v))' = f'(v) v'" in s for s in summaries)  # the nested chain names v
    leaves = [n["text"] for _, n in nodes if n["kind"] == "symdiff-step"]
    assert any("d/dx x^2 = 2 x" in s for s in leaves)  # the power rule, right-hand side too
    # numbered only at the top: labels "1.", "2.", never "1.2."
    labels = re.findall(r'class="symdiff-label">([^<]*)<', page)
    assert labels == ["1.", "2."]


def test_html_escapes_every_value():
    d = sd.derive("where(x < 1, x**2, x)", wrt="x")
    page = d.html()
    assert "x &lt; 1" in page and "x < 1" not in page
    _tree(page)


# -- identities with the parts named ---------------------------------------------------------------
def _check_identity(step):
    """The identity's parts are the sub-steps' and the rule's formula, filled in with them and
    the sub-steps' derivatives, gives the step's result."""
    identity = identity_of(step)
    if identity is None:
        assert step.rule not in ("quotient", "product", "general power", "chain")
        return
    parts = {k: canonical(v) for k, v in identity.parts}  # parts as typed -> SymPy's form
    expr = canonical(step.expr)
    subs = [s.result for s in step.substeps]
    if step.rule == "quotient":
        f, g = parts["f"], parts["g"]
        want = (subs[0] * g - f * subs[1]) / g**2
    elif step.rule == "product":
        factors = list(parts.values())
        want = sum(
            d * sp.Mul(*(f for j, f in enumerate(factors) if j != i)) for i, d in enumerate(subs)
        )
    elif step.rule == "general power":
        f, g = parts["f"], parts["g"]
        want = f**g * (subs[1] * sp.log(f) + g * subs[0] / f)
    elif step.rule == "constant multiple":
        assert sp.simplify(parts["c"] * parts["f"] - expr) == 0
        want = parts["c"] * subs[0]
    elif step.rule == "power":
        n = parts["n"]
        assert expr == step.var**n
        want = n * step.var ** (n - 1)
    else:
        return
    x = sorted(expr.free_symbols | {step.var}, key=str)
    for point in np.random.default_rng(1).uniform(0.4, 1.9, (3, len(x))):
        at = dict(zip(x, point, strict=True))
        assert abs(complex(want.evalf(subs=at)) - complex(step.result.evalf(subs=at))) < 1e-9


@pytest.mark.parametrize(
    "text, wrt",
    [("sin(x)/x", "x"), ("x**2*sin(x)", "x"), ("x*exp(x)*sin(x)", "x"), ("x**x", "x"),
     ("(sigma/r)**12", "r"), ("3*x**-12 + sqrt(x)", "x"), ("1/(x*(x + 1))", "x"),
     ("(x**2 + 1)/(x - 3)", "x"), ("sin(x)**x", "x")],
)
def test_every_identity_shown_is_the_step_with_its_parts(text, wrt):
    d = sd.derive(text, wrt=wrt)
    for top in d.steps:
        for _, step in top.walk():
            _check_identity(step)
    assert_katex_safe(d.latex())


def test_latex_states_each_identity_with_its_parts_named():
    latex = sd.derive("sin(x)/x", wrt="x").latex()
    # the rule, then on rows of their own in the same column its identity and its parts
    assert (r"\text{(quotient rule)} \\" "\n"
            r"&&& \quad \left(\frac{f}{g}\right)' = \frac{f' g - f g'}{g^{2}} \\" "\n"
            r"&&& \quad \text{with } f = \sin{\left(x \right)},\ g = x") in latex
    assert r"\quad f'\colon\ \text{(trigonometric rule)}" in latex
    latex = sd.derive("x**2*sin(x)", wrt="x").latex()
    assert r"\left(f g\right)' = f' g + f g' \\" in latex
    assert r"\text{with } f = x^{2},\ g = \sin" in latex
    latex = sd.derive("(1 + x**2)**-12", wrt="x").latex()
    assert r"\frac{d}{du} u^{-12} = -12 u^{-13}" in latex  # the power rule's right-hand side
    assert r"\left(f(u)\right)' = f'(u)\, u'" in latex and "u &= 1 + x^{2}" in latex  # u as typed
    assert r"u'\colon\ \text{(sum rule)}" in latex


def test_x_to_the_x_is_a_named_general_power_step_with_base_and_exponent():
    d = sd.derive("x**x", wrt="x")
    text = str(d).splitlines()
    assert text[1].startswith("1. [general power] d/dx [x**x] = x**x*(ln(x) + 1)")
    assert "(f^g)' = (e^(g ln(f)))' = f^g (g' ln(f) + g f'/f)" in text[1]
    assert "with f = x (base), g = x (exponent)" in text[1]
    assert text[2].startswith("  base f': [variable] d/dx [x] = 1")
    assert text[3].startswith("  exponent g': [variable] d/dx [x] = 1")
    latex = d.latex()
    assert r"\text{(logarithmic differentiation)}" in latex
    assert r"\text{base } f'\colon" in latex and r"\text{exponent } g'\colon" in latex


# -- names as names --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "name, latex",
    [("lam", r"\mathrm{lam}"), ("sigma", r"\sigma"), ("x1", "x_{1}"), ("x", "x"),
     ("x_1", "x_{1}"), ("alpha2", r"\alpha_{2}"), ("lam_max", r"\mathrm{lam}_{\mathrm{max}}"),
     ("Lambda", r"\Lambda"), ("xdot", r"\dot{x}"), ("T", "T"), ("x12", "x_{12}")],
)
def test_latex_name(name, latex):
    assert latex_name(name) == latex


def test_every_latex_of_a_derivation_names_lam_sigma_and_x1():
    d = sd.derive("exp(-lam*x1)*sigma/lam", wrt="lam")
    latex = d.latex()
    assert r"\frac{d}{d\,\mathrm{lam}}\left[" in latex
    assert r"\mathrm{lam}" in latex and r"\sigma" in latex and "x_{1}" in latex
    assert not re.search(r"(?<!\\mathrm\{)\blam", latex)  # never the letters l a m
    assert "x1" not in latex and "sigma" not in latex.replace(r"\sigma", "")
    assert_katex_safe(latex)
    step = d.steps[0].latex()  # a step on its own, too
    assert r"\mathrm{lam}" in step and not re.search(r"(?<!\\mathrm\{)\blam", step)
    # Greek as Greek in the wrt operator
    assert r"\frac{d}{d\sigma}\left[" in sd.derive("sigma**2", wrt="sigma").latex()


# -- text: an indented tree ------------------------------------------------------------------------
def test_text_is_an_indented_tree_numbered_only_at_the_top():
    d = sd.derive("exp(sin(cos(x**2)))", wrt="x")
    rows = str(d).splitlines()[1:]
    lines = d.lines()
    assert len(rows) == len(lines) and max(line.depth for line in lines) >= 3
    for row, line in zip(rows, lines, strict=True):
        indent = len(row) - len(row.lstrip(" "))
        assert indent == 2 * line.depth
        if line.depth == 0:
            assert re.match(r"\d+\. \[", row)
        else:
            assert not re.match(r"\s*\d", row), row
    outer = "      f'(w): [trigonometric] d/dw [cos(w)] = -sin(w)"
    assert any(row.startswith(outer) for row in rows)
    assert any(row.startswith("      w': [power] d/dx [x**2] = 2*x") for row in rows)
