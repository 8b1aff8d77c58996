"""Expressions as MathML Core: well formed, only MathML Core elements, every text escaped, and
the written forms (``x - y/z``, ``(sigma/r)**12``, typed decimals) shown as typed."""

from __future__ import annotations

import re
import xml.dom.minidom

import pytest
import sympy as sp
from hypothesis import given, settings

import symdiff as sd
from symdiff.classroom import mathml
from symdiff.parsing.teaching import parse_as_written

from .classroom_texts import texts


def _tags(text: str) -> tuple[xml.dom.minidom.Document, set[str]]:
    document = xml.dom.minidom.parseString(f"<root>{text}</root>")
    tags = {node.tagName for node in document.getElementsByTagName("*")} - {"root"}
    return document, tags


def _text_of(text: str) -> str:
    document, _ = _tags(text)
    return "".join(node.data for node in _walk(document) if node.nodeType == node.TEXT_NODE)


def _walk(node):
    yield node
    for child in node.childNodes:
        yield from _walk(child)


@settings(max_examples=150)
@given(texts)
def test_every_expression_is_well_formed_mathml_core(text):
    try:
        written, parsed = parse_as_written(text)
    except sd.SymdiffError:
        return
    for expr in (written, parsed):
        shown = mathml.expression(expr)
        _, tags = _tags(shown)
        assert tags <= mathml.CORE_ELEMENTS, tags - mathml.CORE_ELEMENTS
        assert "mfenced" not in shown
        assert not re.search(r"&#?\w+;", _text_of(shown)), shown  # escaped once, not twice


@pytest.mark.parametrize(("text", "pieces"), [
    ("x - y/z", ["<mi>x</mi><mo>\u2212</mo><mfrac><mi>y</mi><mi>z</mi></mfrac>"]),
    ("(sigma/r)**12", ["<msup><mrow><mo>(</mo><mfrac><mi>\u03c3</mi><mi>r</mi></mfrac>"
                       "<mo>)</mo></mrow><mn>12</mn></msup>"]),
    ("0.5*x", ["<mn>0.5</mn>"]),
    ("ln(x) + log(x)", ["<mi>ln</mi>"]),
    ("e^x", ["<msup><mi>e</mi><mi>x</mi></msup>"]),
    ("exp(x)", ["<msup><mi>e</mi><mi>x</mi></msup>"]),
    ("x*2", ["<mi>x</mi><mo>\u00b7</mo><mn>2</mn>"]),
    ("min(x, 1)", ["<mi>min</mi>", "<mi>x</mi><mo>,</mo><mn>1</mn>"]),
    ("log(x, 2)", ["<msub><mi>log</mi><mn>2</mn></msub>"]),
    ("where(x < 1, x, 2)", ["<mtable>", "<mo>&lt;</mo>", "<mtext>otherwise</mtext>"]),
    ("-x**2", ["<mo>\u2212</mo><msup><mi>x</mi><mn>2</mn></msup>"]),
])
def test_written_forms_show_as_typed(text, pieces):
    written, _ = parse_as_written(text)
    shown = mathml.element(written)
    _tags(shown)  # well formed
    for piece in pieces:
        assert piece in shown, shown


def test_text_is_escaped_and_named_entities_are_characters():
    shown = mathml.element(sp.Piecewise((sp.Symbol("x"), sp.Symbol("x") < 1), (0, True)))
    assert "&lt;" in shown and "<mo><</mo>" not in shown
    shown = mathml.element(sp.pi * sp.Symbol("x"))
    assert "\u03c0" in shown and "\u2062" in shown and "&pi;" not in shown


@pytest.mark.parametrize(("variables", "partial", "expected"), [
    (["x"], False, '<mfrac><mrow><mi mathvariant="normal">d</mi><mi>f</mi></mrow>'
                   '<mrow><mi mathvariant="normal">d</mi><mi>x</mi></mrow></mfrac>'),
    (["x", "x", "y"], True, "<mfrac><mrow><msup><mi>\u2202</mi><mn>3</mn></msup><mi>f</mi>"
                            "</mrow><mrow><mi>\u2202</mi><mi>y</mi><mi>\u2202</mi><msup>"
                            "<mi>x</mi><mn>2</mn></msup></mrow></mfrac>"),
])
def test_the_derivative_operator_names_the_order_and_the_variables(variables, partial,
                                                                   expected):
    assert mathml.operator(variables, partial, "f") == expected


def test_math_says_what_it_shows():
    shown = mathml.expression(sp.Symbol("x") ** 2, display=True, label='x**2 < "1"')
    assert shown.startswith('<math display="block" alttext="x**2 &lt; &quot;1&quot;">')
