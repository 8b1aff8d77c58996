"""Steps as data: what each rule did, and its text / LaTeX / HTML rendering.

A :class:`Step` records the rule applied, the expression differentiated, the result and the steps
inside it (SymPy's ``manualintegrate`` keeps its steps the same way). Rendering is a table from rule
name to explanation, not an ``isinstance`` chain.
"""

from __future__ import annotations

import html
from collections.abc import Iterator
from dataclasses import dataclass, field

import sympy as sp

#: What each structural rule says, shown beside the step. Function rules carry their own identity.
EXPLANATIONS: dict[str, str] = {
    "constant": "the derivative of a constant is 0",
    "variable": "d/dx x = 1",
    "sum": "differentiate term by term",
    "constant multiple": "(c f)' = c f'",
    "product": "(f g)' = f' g + f g'",
    "quotient": "(f/g)' = (f' g - f g')/g^2",
    "power": "d/du u^n = n u^(n-1)",
    "exponential": "d/du a^u = a^u ln(a)",
    "general power": "(u^v)' = u^v (v' ln(u) + v u'/u)",
    "chain": "(f(u))' = f'(u) u'",
    "piecewise": "differentiate each branch; the condition is kept",
    "simplify": "simplify the result",
}


@dataclass(frozen=True)
class Step:
    """One application of a rule: ``d/d(var) expr = result``, with the steps inside it."""

    rule: str
    expr: sp.Expr
    result: sp.Expr
    var: sp.Symbol
    substeps: tuple[Step, ...] = ()
    note: str = ""

    def walk(self, depth: int = 0) -> Iterator[tuple[int, Step]]:
        """This step and every step inside it, depth first, with their depth."""
        yield depth, self
        for sub in self.substeps:
            yield from sub.walk(depth + 1)

    def explanation(self) -> str:
        """The sentence shown beside this step: the rule's identity plus any note."""
        text = self.note or EXPLANATIONS.get(self.rule, "")
        return text

    def text(self) -> str:
        """``d/dx [expr] = result`` in plain text."""
        return f"d/d{self.var} [{sp.sstr(self.expr)}] = {sp.sstr(self.result)}"

    def latex(self) -> str:
        """The step as one row of an ``aligned`` block (no trailing ``\\\\``)."""
        lhs = rf"\frac{{d}}{{d{sp.latex(self.var)}}}\left[{sp.latex(self.expr)}\right]"
        return rf"{lhs} &= {sp.latex(self.result)} && \text{{({_latex_text(self.rule)} rule)}}"

    def __str__(self) -> str:
        return render_text([self])


def _latex_text(text: str) -> str:
    """Escape characters that are special inside ``\\text{...}``."""
    for char in "\\{}$&#^_%~":
        text = text.replace(char, "\\" + char if char not in "\\^~" else "")
    return text


def _numbered(steps: list[Step]) -> Iterator[tuple[str, int, Step]]:
    """Hierarchical numbers ``1``, ``1.1``, ``1.2``, ... for a list of step trees."""

    def visit(step: Step, label: str, depth: int) -> Iterator[tuple[str, int, Step]]:
        yield label, depth, step
        for i, sub in enumerate(step.substeps, 1):
            yield from visit(sub, f"{label}.{i}", depth + 1)

    for i, step in enumerate(steps, 1):
        yield from visit(step, str(i), 0)


def render_text(steps: list[Step]) -> str:
    """One step a line, numbered and indented by depth, with the rule and its explanation."""
    lines = []
    for label, depth, step in _numbered(steps):
        why = step.explanation()
        lines.append(
            f"{'  ' * depth}{label}. [{step.rule}] {step.text()}" + (f"   ({why})" if why else "")
        )
    return "\n".join(lines)


def render_latex(steps: list[Step]) -> str:
    """Every step as a row of one KaTeX-safe ``aligned`` block inside ``$$ ... $$``."""
    rows = [step.latex() for _, _, step in _numbered(steps)]
    return "$$\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}$$"


def render_html(steps: list[Step]) -> str:
    """An HTML table of the steps (rule, step, explanation), every value escaped."""
    rows = []
    for label, depth, step in _numbered(steps):
        rows.append(
            "<tr>"
            f"<td>{html.escape(label)}</td>"
            f'<td style="padding-left:{depth * 1.5}em">{html.escape(step.rule)}</td>'
            f"<td><code>{html.escape(step.text())}</code></td>"
            f"<td>{html.escape(step.explanation())}</td>"
            "</tr>"
        )
    head = "<tr><th>#</th><th>rule</th><th>step</th><th>why</th></tr>"
    return f'<table class="symdiff-steps">{head}{"".join(rows)}</table>'


@dataclass(frozen=True)
class Derivation:
    """A derivative and the steps that produced it.

    ``result`` is the simplified derivative; ``raw`` is what the rules produced before
    simplification; ``steps`` lists the rule tree (and a final ``simplify`` step when
    simplification changed the result).
    """

    expr: sp.Expr
    var: sp.Symbol
    result: sp.Expr
    raw: sp.Expr
    steps: list[Step] = field(default_factory=list)

    @property
    def rules(self) -> list[str]:
        """The rule names in the order they appear (depth first)."""
        return [step.rule for top in self.steps for _, step in top.walk()]

    def __str__(self) -> str:
        header = f"d/d{self.var} [{sp.sstr(self.expr)}] = {sp.sstr(self.result)}"
        return header + "\n" + render_text(self.steps)

    def __repr__(self) -> str:
        expr, result = sp.sstr(self.expr), sp.sstr(self.result)
        return f"Derivation({expr!r}, wrt={str(self.var)!r}, result={result!r})"

    def _repr_latex_(self) -> str:
        return render_latex(self.steps)

    def _repr_html_(self) -> str:
        return render_html(self.steps)
