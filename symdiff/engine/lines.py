"""The lines every view of a derivation prints: text, LaTeX and HTML read one :class:`Line` list.

:func:`derivation_lines` turns step trees into lines (a chain step's inner functions named,
one name per inner expression: :mod:`symdiff.engine.innernames`; a chain, product or quotient
rule's parts put together in an assembly line: :mod:`symdiff.engine.assembly`), each with the
identity its rule applies, parts
named (:mod:`symdiff.engine.identities`), and each sub-step labelled with the part of its
parent's identity it computes (``f'``, ``g'``, ``f'(u)``, ``u'``, ``base f'``): only the
top-level steps are numbered, the nesting is the tree itself. :func:`render_text` prints an
indented tree, :func:`render_latex` one ``aligned`` block, :func:`render_html` a tree of
collapsible ``<details>``; so the views cannot disagree. The step
data lives in :mod:`symdiff.engine.steps` (rule steps, :class:`~symdiff.engine.steps.Step`) and
:mod:`symdiff.tensor.steps`; here a rule step is anything with ``defines`` (its chain rule's
inner functions), any other step prints itself (``text()``, ``latex()``).
"""

from __future__ import annotations

import html
import textwrap
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy as sp

from ..errors import SymdiffError
from .assembly import assembly, shown_result
from .identities import Identity, display_name, identity_of, latex_math
from .innernames import InnerNames
from .inputtext import teaching_text
from .texnames import d_by, tex


def is_rule_step(step: Any) -> bool:
    """A rule step (:class:`symdiff.engine.steps.Step`: it may define inner functions), not a step
    of
    another kind that prints itself."""
    return hasattr(step, "defines")


def _latex_text(text: str) -> str:
    """Escape characters that are special inside ``\\text{...}``."""
    for char in "\\{}$&#^_%~":
        text = text.replace(char, "\\" + char if char not in "\\^~" else "")
    return text


#: The verbose levels: every step, or the key steps (leaf ``constant`` / ``variable`` steps hidden).
VERBOSE_LEVELS = ("all", "key")

#: Leaf rules hidden at ``verbose="key"``: a student knows d/dx c = 0 and d/dx x = 1.
TRIVIAL_RULES = frozenset({"constant", "variable"})

#: The orders of the lines of a rule: the rule's line first, then its parts and the line that
#: puts them together ("result-first", the default: the answer, then why, as a tree folds),
#: or the parts, the assembly and then the rule's line ("bottom-up", as worked on paper).
ORDERS = ("result-first", "bottom-up")

#: What a ``simplify`` step says when it has no note of its own.
EXPLANATIONS_SIMPLIFY = "simplify the result"

#: What the LaTeX view says beside an assembly line.
ASSEMBLED = "put together"


def check_verbose(verbose: str) -> str:
    if verbose not in VERBOSE_LEVELS:
        raise SymdiffError(f"verbose must be one of {', '.join(VERBOSE_LEVELS)}; got {verbose!r}")
    return verbose


def shown(verbose: str) -> Callable[[Any], bool]:
    """Which sub-steps a verbose level shows (top-level steps are always shown)."""
    if check_verbose(verbose) == "all":
        return lambda step: True
    return lambda step: bool(step.substeps) or step.rule not in TRIVIAL_RULES


# -- the lines every view prints ---------------------------------------------------------------
def annotation(text: str, depth: int) -> str:
    r"""The last column: ``\quad`` per depth, then ``\text{(...)}`` with escaped content.

    The indentation lives in this left-aligned column because the first column of ``aligned``
    is right-aligned: a ``\quad`` in front of the left-hand side would be swallowed by the padding.
    """
    return r"\quad" * depth + rf"\text{{({_latex_text(text)})}}"


def rule_annotation(depth: int, name: str, role: str = "", identity: str = "") -> str:
    r"""The last column of a step's row: indentation, the part of the parent's identity it
    computes (``f'\colon``), ``\text{(quotient rule)}``; then, each on a row of its own in the
    same column (so that a derivation stays as narrow as a page), the identity and the naming
    of its parts (``\text{with } f = ...``)."""
    head = rf" {role}\colon\ " if role else ""  # the space ends \quad before a letter
    rows = [r"\quad" * depth + head + rf"\text{{({_latex_text(name)})}}"]
    if identity:
        equality, joint, parts = identity.partition(r" \text{ with } ")
        rows.append(r"\quad" * (depth + 1) + " " + equality.strip())
        if joint:
            rows.append(r"\quad" * (depth + 1) + r" \text{with } " + parts.strip())
    return " \\\\\n&&& ".join(rows)  # the next rows in the same (fourth) column


@dataclass(frozen=True)
class Line:
    """One line of a shown derivation, as data: the text, LaTeX and HTML views print these.

    ``kind`` is ``"derivative"`` (``d/d{var} [lhs] = rhs``; ``partial`` when ``var`` is one of
    several inner functions, held apart from the others), ``"definition"`` (``lhs = rhs``: an
    inner function's name and what it stands for), ``"equality"`` (``lhs = rhs``: a simplify
    step on its own), ``"assembly"`` (``role = lhs = rhs``: a chain, product or quotient
    rule's identity, ``role``, with its parts put in, ``lhs``, and the result; one side when
    both print alike) or ``"other"`` (a step of another kind, such as a tensor step, printed by
    its own ``text()``). ``label`` is the number of a top-level step (empty below: the nesting
    is shown by ``depth``); ``role`` and ``role_latex`` say which part of the parent step's
    identity a sub-step computes (``f'``, ``u'``, ``base f'``; empty when none); ``why`` is the
    explanation printed beside it, the identity with its parts named when the rule has one
    (``identity``, whose ``latex`` the LaTeX view prints).
    Every derivative and equality line states a true equality; tests check it from this data.
    """

    label: str
    depth: int
    kind: str
    rule: str
    why: str
    lhs: sp.Expr | None = None
    rhs: sp.Expr | None = None
    var: sp.Symbol | None = None
    partial: bool = False
    step: Any = field(default=None, repr=False, compare=False)
    role: str = ""
    role_latex: str = ""
    identity: Identity | None = field(default=None, repr=False, compare=False)

    def text(self) -> str:
        """The equality in plain text, without number, rule or explanation."""
        if self.kind == "derivative":
            return f"d/d{self.var} [{teaching_text(self.lhs)}] = {teaching_text(self.rhs)}"
        if self.kind in ("definition", "equality"):
            return f"{teaching_text(self.lhs)} = {teaching_text(self.rhs)}"
        if self.kind == "assembly":
            parts, result = teaching_text(self.lhs), teaching_text(self.rhs)
            return parts if parts == result else f"{parts} = {result}"
        return self.step.text()

    def head(self) -> str:
        """What the text and HTML views print before the equality: ``1. [quotient] `` for a
        top-level step, ``f': [trigonometric] `` for a sub-step, the identity's right-hand side
        for an assembly line (``f' g + f g' = ``), nothing for a definition."""
        if self.kind == "definition":
            return ""
        if self.kind == "assembly":
            return f"{self.role} = "
        if self.label:
            return f"{self.label}. [{self.rule}] "
        return (f"{self.role}: " if self.role else "") + f"[{self.rule}] "

    def latex(self) -> str:
        """One row of an ``aligned`` block: ``lhs &= rhs && (rule)``, then the identity on rows
        of its own in the last column (:func:`rule_annotation`)."""
        if self.kind == "other":
            return self.step.latex()
        if self.kind == "definition":
            return f"{tex(self.lhs)} &= {tex(self.rhs)} && " + annotation(
                "inner function", self.depth
            )
        if self.kind == "assembly":  # the result on a row of its own: as narrow as a page
            parts, result = tex(self.lhs), tex(self.rhs)
            row = f"{self.role_latex} &= {parts} && " + annotation(ASSEMBLED, self.depth)
            return row if parts == result else f"{row} \\\\\n&= {result} &&"
        lhs = tex(self.lhs)
        if self.kind == "derivative":
            lhs = rf"{d_by(self.var, self.partial)}\left[{lhs}\right]"
        identity = self.identity.latex if self.identity is not None else ""
        name = display_name(self.rule)
        if self.rule == "simplify" and self.why != EXPLANATIONS_SIMPLIFY:
            # what the simplification did, in words; a definition it used, in math
            words, _, formula = self.why.partition(": ")
            identity = rf"\text{{{_latex_text(words)}}}" + (
                rf"\quad {latex_math(formula)}" if formula else "")
        note = rule_annotation(self.depth, name, self.role_latex, identity)
        return f"{lhs} &= {tex(self.rhs)} && {note}"


def single_line(
    step: Any, label: str = "", depth: int = 0, partial: bool = False,
    role: tuple[str, str] = ("", ""), defines: Any = None,
) -> Line:
    """The line of one step on its own: ``d/d(var) [expr] = result`` (``raw = simplified``),
    with the identity its rule applies (in the chain rule's shown names ``defines``)."""
    kind = "equality" if step.rule == "simplify" else "derivative"
    identity = identity_of(step, defines)
    why = identity.text if identity is not None else step.explanation()
    result = step.result if step.rule == "simplify" else shown_result(step)
    return Line(label, depth, kind, step.rule, why, step.expr, result, step.var, partial,
                step, role[0], role[1], identity)


def check_order(order: str) -> str:
    if order not in ORDERS:
        raise SymdiffError(f"order must be one of {', '.join(ORDERS)}; got {order!r}")
    return order


def _variables(steps: Sequence[Any]) -> set[str]:
    """The names of the variables the steps differentiate and in."""
    names: set[str] = set()
    for step in steps:
        expr, var = getattr(step, "expr", None), getattr(step, "var", None)
        if isinstance(expr, sp.Basic):
            names |= {s.name for s in expr.free_symbols if isinstance(s, sp.Symbol)}
        if isinstance(var, sp.Symbol):
            names.add(var.name)
    return names


def derivation_lines(
    steps: Sequence[Any], verbose: str = "all", order: str = "result-first"
) -> list[Line]:
    """Every shown line of a list of step trees, depth first; top-level steps numbered ``1``,
    ``2``, sub-steps labelled with their role in the parent's identity (``f'``, ``u'``).

    A chain step is followed by one definition line per inner function (``u = x**2``), then the
    outer derivative in ``u`` (``d/du [exp(u)] = exp(u)``, role ``f'(u)``), then the inner
    derivative(s) (role ``u'``), then the assembly line that puts them together with ``u``
    put back (``f'(u) u' = exp(x**2)*(2*x) = 2*x*exp(x**2)``); a product and a quotient rule
    end with theirs too (:func:`~symdiff.engine.assembly.assembly`). Each inner expression has
    one name in the whole derivation, and no name stands for two
    (:class:`~symdiff.engine.innernames.InnerNames`).
    ``verbose="key"`` hides the leaf ``constant`` / ``variable`` sub-steps. ``order``
    (:data:`ORDERS`) puts a rule's own line before its parts (``"result-first"``) or after its
    assembly line (``"bottom-up"``). A top-level ``simplify`` step repeats the left-hand side
    of the step above it: ``d/dx [f] = simplified``; on its own it reads ``raw = simplified``.
    """
    is_shown = shown(verbose)
    bottom_up = check_order(order) == "bottom-up"
    names = InnerNames(_variables(steps))
    lines: list[Line] = []

    def visit(step: Any, label: str, depth: int, partial: bool, role: tuple[str, str]) -> None:
        subs: list[Any] = list(step.substeps)
        outer_count = 0
        roles: tuple[tuple[str, str], ...] = ()
        first = len(lines)
        defines: Any = ()
        if is_rule_step(step):
            defines, outer = names.shown(step) if step.defines else ((), ())
            line = single_line(step, label, depth, partial, role, defines)
            lines.append(line)
            for symbol, expr in defines:
                lines.append(Line("", depth + 1, "definition", "inner function",
                                  "inner function", symbol, expr))
            if defines:
                subs[: len(outer)] = outer
                outer_count = len(outer) if len(outer) > 1 else 0
            if line.identity is not None and len(line.identity.roles) == len(subs):
                roles = line.identity.roles
        else:
            line = Line(label, depth, "other", step.rule, step.explanation(), step=step,
                        role=role[0], role_latex=role[1])
            lines.append(line)
        for i, sub in enumerate(subs):
            if is_shown(sub):
                visit(sub, "", depth + 1, i < outer_count, roles[i] if roles else ("", ""))
        assembled = assembly(step, defines) if is_rule_step(step) else None
        if assembled is not None:
            lines.append(Line("", depth + 1, "assembly", "assembly", "", assembled.parts,
                              line.rhs, step.var, step=step, role=assembled.pattern,
                              role_latex=assembled.pattern_latex))
        if bottom_up and len(lines) > first + 1:
            lines.append(lines.pop(first))

    previous: Any = None
    for number, step in enumerate(steps, 1):
        if is_rule_step(step) and step.rule == "simplify" and previous is not None:
            lines.append(Line(str(number), 0, "derivative", "simplify", step.explanation(),
                              previous.expr, step.result, previous.var, step=step))
            continue
        visit(step, str(number), 0, False, ("", ""))
        previous = step if is_rule_step(step) else None
    return lines


def render_text(steps: Sequence[Any], verbose: str = "all", order: str = "result-first") -> str:
    """An indented tree, one line each: numbered top-level steps, sub-steps two spaces further
    in with their role (``f': [trigonometric] ...``), the rule, the equality and the identity
    with its parts named, and the definition of each inner function of the chain rule
    (``u = sin(x)``)."""
    rows = []
    for line in derivation_lines(steps, verbose, order):
        why = f"   ({line.why})" if line.why else ""
        rows.append(f"{'  ' * line.depth}{line.head()}{line.text()}{why}")
    return "\n".join(rows)


def wrapped(text: str, width: int | None) -> str:
    """``text`` with every line longer than ``width`` broken at spaces (never inside a word or
    an expression written without spaces); a continued line is indented four spaces further
    than its first. ``None`` (or 0) leaves the text as it is."""
    if not width:
        return text
    out = []
    for line in text.splitlines():
        indent = line[: len(line) - len(line.lstrip(" "))]
        out += textwrap.wrap(line, width, subsequent_indent=indent + "    ", drop_whitespace=True,
                             break_long_words=False, break_on_hyphens=False) or [line]
    return "\n".join(out)


def latex_rows(steps: Sequence[Any], verbose: str = "all", order: str = "result-first"
               ) -> list[str]:
    r"""The rows of the ``aligned`` block: the lines of :func:`derivation_lines`, in LaTeX."""
    return [line.latex() for line in derivation_lines(steps, verbose, order)]


def render_latex(steps: Sequence[Any], verbose: str = "all", order: str = "result-first") -> str:
    r"""Every step as a row of one KaTeX-safe ``aligned`` block inside ``$$ ... $$``.

    Only ``aligned`` (no ``align``), ``\frac``, ``\left[ \right]``, ``\quad``, ``\colon``,
    ``\mathrm`` and ``\text{...}`` with escaped content are added to SymPy's own LaTeX.
    """
    rows = latex_rows(steps, verbose, order)
    return "$$\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}$$"


#: Inline styles (a notebook may drop a ``<style>`` element): sub-steps indented under their
#: step, a leaf's text in line with the text of a ``<summary>`` beside its marker.
_CHILDREN_STYLE = "margin-left:1.5em"
_LEAF_STYLE = "padding-left:1.1em"


def _html_content(line: Line) -> str:
    """A line's role, rule, equality and explanation, escaped."""
    parts = []
    if line.label:
        parts.append(f'<span class="symdiff-label">{html.escape(line.label)}.</span> ')
    if line.kind == "assembly":  # the identity's right-hand side, then its parts put in
        parts.append(f'<span class="symdiff-role">{html.escape(line.head())}</span>')
    elif line.role and line.kind != "definition":
        parts.append(f'<span class="symdiff-role">{html.escape(line.role)}:</span> ')
    if line.kind not in ("definition", "assembly"):
        parts.append(f'<span class="symdiff-rule">[{html.escape(line.rule)}]</span> ')
    parts.append(f"<code>{html.escape(line.text())}</code>")
    if line.why:
        parts.append(f' <span class="symdiff-why">({html.escape(line.why)})</span>')
    return "".join(parts)


def render_html(steps: Sequence[Any], verbose: str = "all") -> str:
    """A tree of the steps: each step with sub-steps a ``<details open>`` whose ``<summary>`` is
    its line (role, rule, equality, identity) and whose body holds its inner functions'
    definitions and its sub-steps; a step without sub-steps a ``<div>``. Every value escaped."""
    lines = derivation_lines(steps, verbose)
    out = ['<div class="symdiff-steps">']
    open_depths: list[int] = []
    for i, line in enumerate(lines):
        while open_depths and open_depths[-1] >= line.depth:
            out.append("</div></details>")
            open_depths.pop()
        content = _html_content(line)
        if i + 1 < len(lines) and lines[i + 1].depth > line.depth:
            out.append(f'<details open class="symdiff-step"><summary>{content}</summary>'
                       f'<div style="{_CHILDREN_STYLE}">')
            open_depths.append(line.depth)
        else:
            kind = "definition" if line.kind == "definition" else "step"
            out.append(f'<div class="symdiff-{kind}" style="{_LEAF_STYLE}">{content}</div>')
    out += ["</div></details>"] * len(open_depths)
    out.append("</div>")
    return "".join(out)


# -- Jupyter display -------------------------------------------------------------------------------
def bundle(
    latex: str,
    text: str,
    html_text: str | None,
    include: Collection[str] | None,
    exclude: Collection[str] | None,
) -> dict[str, str]:
    """The display bundle: LaTeX and plain text; HTML only when ``include`` names it."""
    data = {"text/latex": latex, "text/plain": text}
    if include is not None and "text/html" in include and html_text is not None:
        data["text/html"] = html_text
    if include is not None:
        data = {k: v for k, v in data.items() if k in include}
    if exclude is not None:
        data = {k: v for k, v in data.items() if k not in exclude}
    return data
