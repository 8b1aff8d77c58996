"""Expressions as MathML Core, which Chromium and Firefox typeset without any script or font.

SymPy's presentation MathML printer does the layout (fractions, roots, powers, ``sin^2``); this
module adds what a classroom page needs on top of it:

- the nodes of an expression *as written* (:mod:`symdiff.parsing.written`: ``a - b``, ``a/b``,
  ``(sigma/r)**12`` as typed, typed numbers, ``ln``, ``max`` in the order typed), which SymPy
  does not know;
- ``ln`` for the natural logarithm, ``e`` for Euler's number, ``where(...)`` as cases;
- its own serialisation (:func:`serialise`): every text node escaped, SymPy's named entities
  (``&InvisibleTimes;``) as characters, a minus sign for ``-``, and no element outside MathML
  Core (``mfenced`` becomes brackets in an ``mrow``), so the output is safe to put in any
  HTML page.

:func:`math` wraps an expression in ``<math>``; :func:`derivative_of` writes
``d/dx (expr) = result`` and :func:`operator` the ``d^n/dx^n`` or ``∂^2/∂y∂x`` in front.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import Any

import sympy as sp
from sympy.printing.mathml import MathMLPresentationPrinter
from sympy.printing.precedence import PRECEDENCE

from ..parsing.written import Written

ADD, MUL, POW = PRECEDENCE["Add"], PRECEDENCE["Mul"], PRECEDENCE["Pow"]

#: The elements of MathML Core (https://www.w3.org/TR/mathml-core/), which browsers typeset.
CORE_ELEMENTS = frozenset({
    "math", "annotation", "annotation-xml", "maction", "merror", "mfrac", "mi", "mmultiscripts",
    "mn", "mo", "mover", "mpadded", "mphantom", "mprescripts", "mroot", "mrow", "ms", "mspace",
    "msqrt", "mstyle", "msub", "msubsup", "msup", "mtable", "mtd", "mtext", "mtr", "munder",
    "munderover", "semantics", "none",
})

#: Characters an operator is shown as (a minus sign, not a hyphen).
_OPERATOR_TEXT = {"-": "\u2212"}


class ClassroomPrinter(MathMLPresentationPrinter):
    """SymPy's presentation MathML with ``ln``, ``e``, cases for ``where`` and the written
    nodes of :mod:`symdiff.parsing.written`."""

    def __init__(self) -> None:
        super().__init__({"ln_notation": True, "inv_trig_style": "full"})

    # -- helpers --------------------------------------------------------------------------
    def _element(self, tag: str, *children: Any, text: str | None = None) -> Any:
        element = self.dom.createElement(tag)
        if text is not None:
            element.appendChild(self.dom.createTextNode(text))
        for child in children:
            element.appendChild(child)
        return element

    def _mo(self, text: str) -> Any:
        return self._element("mo", text=text)

    def _row(self, *children: Any) -> Any:
        return self._element("mrow", *children)

    def _bracketed(self, child: Any) -> Any:
        return self._row(self._mo("("), child, self._mo(")"))

    def _wrapped(self, expr: sp.Basic, level: int, strict: bool = False) -> Any:
        """``expr`` printed, in brackets when it binds less tightly than ``level`` (or as
        tightly, when ``strict``)."""
        printed = self._print(expr)
        p = _precedence(expr)
        return self._bracketed(printed) if p < level or (strict and p == level) else printed

    def _call(self, name: str, args: Sequence[sp.Basic]) -> Any:
        inside = self._row()
        for i, arg in enumerate(args):
            if i:
                inside.appendChild(self._mo(","))
            inside.appendChild(self._print(arg))
        return self._row(self._element("mi", text=name), self._bracketed(inside))

    # -- SymPy's own nodes ----------------------------------------------------------------
    def _print_Exp1(self, expr: sp.Basic) -> Any:
        return self._element("mi", text="e")

    def _print_exp(self, expr: sp.Basic) -> Any:
        return self._element("msup", self._print_Exp1(sp.E), self._print(expr.args[0]))

    def _print_Piecewise(self, expr: sp.Piecewise) -> Any:
        table = self._element("mtable")
        for value, condition in expr.args:
            when = (self._element("mtext", text="otherwise") if condition == sp.true else
                    self._row(self._element("mtext", text="if\u00a0"), self._print(condition)))
            cells = [self._element("mtd", self._print(value)), self._element("mtd", when)]
            table.appendChild(self._element("mtr", *cells))
        return self._row(self._mo("{"), table)

    def _print_BooleanTrue(self, expr: sp.Basic) -> Any:
        return self._element("mtext", text="true")

    def _print_Max(self, expr: sp.Basic) -> Any:
        return self._call("max", expr.args)

    def _print_Min(self, expr: sp.Basic) -> Any:
        return self._call("min", expr.args)

    # -- the written nodes ----------------------------------------------------------------
    def _print_SignedSum(self, expr: Any) -> Any:
        first, *rest = expr.terms
        row = self._row(self._wrapped(first, ADD))
        for sign, term in zip(expr.signs[1:], rest, strict=True):
            row.appendChild(self._mo("+" if sign > 0 else "-"))
            row.appendChild(self._wrapped(term, ADD, strict=True))
        return row

    def _print_Product(self, expr: Any) -> Any:
        first, *rest = expr.args
        row = self._row(self._wrapped(first, MUL))
        for factor in rest:
            # a number after another factor gets a visible dot: 2·3, x·2
            dot = isinstance(factor, sp.Number) or _is_number_literal(factor)
            row.appendChild(self._mo("\u00b7" if dot else "\u2062"))
            row.appendChild(self._wrapped(factor, MUL, strict=True))
        return row

    def _print_Quotient(self, expr: Any) -> Any:
        numerator, denominator = expr.args
        return self._element("mfrac", self._print(numerator), self._print(denominator))

    def _print_Negation(self, expr: Any) -> Any:
        return self._row(self._mo("-"), self._wrapped(expr.args[0], expr.precedence))

    def _print_Power(self, expr: Any) -> Any:
        base, exponent = expr.args
        if isinstance(base, sp.Function) and not isinstance(base, Written) and (
            exponent.is_Integer and exponent > 0
        ):
            return self._print_Pow(sp.Pow(base, exponent, evaluate=False))  # sin^2(x)
        return self._element("msup", self._wrapped(base, POW, strict=True),
                             self._print(exponent))

    def _print_Literal(self, expr: Any) -> Any:
        if _is_number_literal(expr):
            return self._element("mn", text=expr.text)
        return self._print(expr.args[0])

    def _print_BaseLog(self, expr: Any) -> Any:
        argument, base = expr.args
        head = self._element("msub", self._element("mi", text="log"), self._print(base))
        return self._row(head, self._bracketed(self._print(argument)))

    def _print_Called(self, expr: Any) -> Any:
        return self._call(expr.name, expr.operands)


def _precedence(expr: sp.Basic) -> int:
    if isinstance(expr, Written):
        return expr.precedence
    from sympy.printing.precedence import precedence_traditional

    return precedence_traditional(expr)


def _is_number_literal(expr: sp.Basic) -> bool:
    text = getattr(expr, "text", "") if isinstance(expr, Written) else ""
    return bool(text) and (text[0].isdigit() or text[0] == ".")


# -- serialisation ------------------------------------------------------------------------------
def serialise(node: Any) -> str:
    """A MathML DOM node as text: text escaped, entities as characters, MathML Core only."""
    if node.nodeType == node.TEXT_NODE:
        return html.escape(html.unescape(node.data), quote=False)
    tag = node.tagName
    children = "".join(serialise(child) for child in node.childNodes)
    if tag == "mfenced":  # not in MathML Core: brackets around the children in a row
        opening = node.getAttribute("open") or "("
        closing = node.getAttribute("close") or ")"
        return (f"<mrow><mo>{html.escape(opening)}</mo>{children}"
                f"<mo>{html.escape(closing)}</mo></mrow>")
    if tag not in CORE_ELEMENTS:
        return f"<mrow>{children}</mrow>"
    if tag == "mo":
        text = html.unescape("".join(c.data for c in node.childNodes if c.nodeType == c.TEXT_NODE))
        children = html.escape(_OPERATOR_TEXT.get(text, text), quote=False)
    attributes = "".join(
        f' {name}="{html.escape(value)}"' for name, value in sorted(node.attributes.items())
        if name in ("mathvariant", "linethickness", "stretchy", "displaystyle")
    )
    return f"<{tag}{attributes}>{children}</{tag}>"


def element(expr: sp.Basic) -> str:
    """``expr`` as MathML (no ``<math>`` around it)."""
    printer = ClassroomPrinter()
    return serialise(printer._print(expr))


def math(body: str, display: bool = False, label: str | None = None, full: bool = False
         ) -> str:
    """A ``<math>`` element around MathML ``body``; ``display`` centres it on a line of its
    own, ``full`` sets it in line at full size (fractions not shrunk); ``label`` is what a
    screen reader says for it (``alttext``)."""
    attributes = ' display="block"' if display else ' displaystyle="true"' if full else ""
    if label is not None:
        attributes += f' alttext="{html.escape(label)}"'
    return f"<math{attributes}>{body}</math>"


def expression(expr: sp.Basic, display: bool = False, label: str | None = None) -> str:
    """``expr`` in a ``<math>`` element."""
    return math(element(expr), display, label)


def _mi(name: str) -> str:
    return element(sp.Symbol(name))


def operator(variables: Sequence[sp.Symbol | str], partial: bool = False,
             function: str | None = None) -> str:
    """``d/dx``, ``d^3/dx^3`` or ``∂^2/∂y∂x`` (differentiated by ``x`` first, as written
    right to left), with ``function`` (``f``) in the numerator when given."""
    names = [str(v) for v in variables]
    d = "<mi>\u2202</mi>" if partial else '<mi mathvariant="normal">d</mi>'
    order = len(names)
    top = d if order == 1 else f"<msup>{d}<mn>{order}</mn></msup>"
    if function is not None:
        top = f"<mrow>{top}<mi>{html.escape(function)}</mi></mrow>"
    groups: list[list[str]] = []  # runs of one variable, last differentiated first
    for name in reversed(names):
        if groups and groups[-1][0] == name:
            groups[-1].append(name)
        else:
            groups.append([name])
    bottom = ""
    for group in groups:
        power = _mi(group[0]) if len(group) == 1 else (
            f"<msup>{_mi(group[0])}<mn>{len(group)}</mn></msup>")
        bottom += f"{d}{power}"
    return f"<mfrac>{top}<mrow>{bottom}</mrow></mfrac>"


def derivative_of(expr: sp.Basic, variables: Sequence[sp.Symbol | str], partial: bool = False
                  ) -> str:
    """``d/dx (expr)`` as MathML (no ``<math>`` around it)."""
    return (f"<mrow>{operator(variables, partial)}<mrow><mo>(</mo>{element(expr)}<mo>)</mo>"
            "</mrow></mrow>")


def equation(left: str, right: str) -> str:
    """``left = right`` of two MathML pieces, as one row."""
    return f"<mrow>{left}<mo>=</mo>{right}</mrow>"
