"""Steps as data: what each rule did, and its text / LaTeX / HTML rendering.

A :class:`Step` records the rule applied, the expression differentiated, the variable it is
differentiated in, the result and the steps inside it (SymPy's ``manualintegrate`` keeps its steps
the same way). Rendering is a table from rule name to explanation, not an ``isinstance`` chain.

Every printed line is a true equality. The chain rule's step names its inner functions
(``Step.defines``: ``u = sin(x)``) and records its outer derivative in those names
(``d/du [u**2] = 2*u``), never ``d/dx [sin(x)**2] = 2*sin(x)``. Text, LaTeX and HTML all print
the same :class:`Line` list (:func:`derivation_lines`), so the views cannot disagree::

    d/dx [sin(x)**2] = sin(2*x)
    1. [chain] d/dx [sin(x)**2] = 2*sin(x)*cos(x)   ((f(u))' = f'(u) u': ...)
      u = sin(x)   (inner function)
      1.1. [power] d/du [u**2] = 2*u   (d/du u^n = n u^(n-1))
      1.2. [trigonometric] d/dx [sin(x)] = cos(x)   (d/du sin(u) = cos(u))
    2. [simplify] d/dx [sin(x)**2] = sin(2*x)   (simplify the result)

In Jupyter a :class:`Derivation` (or a :class:`Step`) shows as one KaTeX-safe
``$$\\begin{aligned} ... \\end{aligned}$$`` block: ``_repr_mimebundle_`` gives LaTeX and plain text
only, and ``Derivation._ipython_display_`` publishes exactly that bundle (never HTML beside it);
``verbose="key"`` hides the leaf constant / variable steps.
"""

from __future__ import annotations

import html
import itertools
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import sympy as sp

from .errors import SymdiffError
from .local import IDENTITIES

#: What each structural rule says, shown beside the step (the rules' own table,
#: :data:`symdiff.local.IDENTITIES`). Function rules carry their own identity.
EXPLANATIONS: dict[str, str] = IDENTITIES


@dataclass(frozen=True)
class Note:
    """A step's sentence with expressions in it, printed only when shown: ``text`` with
    ``{0}``, ``{1}``, ... standing for ``exprs`` in SymPy's plain text. Deriving a large
    expression records thousands of steps that nobody reads; printing each eagerly cost
    quadratic time (the chain rule of ``log`` of a 1000-term sum)."""

    text: str
    exprs: tuple[sp.Expr, ...] = ()

    def __str__(self) -> str:
        return self.text.format(*(sp.sstr(e) for e in self.exprs))


@dataclass(frozen=True)
class Step:
    """One application of a rule: ``d/d(var) expr = result``, with the steps inside it.

    Every step states a true equality in its own variable ``var``. A ``chain`` step also
    ``defines`` a name for each inner function (``((u, sin(x)),)``); its first
    ``len(defines)`` sub-steps are the outer derivative written in those names
    (``d/du [u**2] = 2*u``, ``var`` is ``u``; one partial derivative per name when there are
    several), the others the inner derivatives in the chain step's own variable. The printers
    read exactly this data (see :func:`derivation_lines`).
    """

    rule: str
    expr: sp.Expr
    result: sp.Expr
    var: sp.Symbol
    substeps: tuple[Step, ...] = ()
    note: str | Note = ""
    defines: tuple[tuple[sp.Symbol, sp.Expr], ...] = ()

    def walk(self, depth: int = 0) -> Iterator[tuple[int, Step]]:
        """This step and every step inside it, depth first, with their depth."""
        yield depth, self
        for sub in self.substeps:
            yield from sub.walk(depth + 1)

    @property
    def outer(self) -> tuple[Step, ...]:
        """For a chain step: the outer derivative(s), in the names of :attr:`defines`."""
        return self.substeps[: len(self.defines)]

    @property
    def inner(self) -> tuple[Step, ...]:
        """For a chain step: the inner derivative(s); for any other step, every sub-step."""
        return self.substeps[len(self.defines) :]

    def explanation(self) -> str:
        """The sentence shown beside this step: the rule's identity plus any note."""
        if self.note:
            return str(self.note)
        if self.rule == "variable":
            return f"d/d{self.var} {self.var} = 1"
        return EXPLANATIONS.get(self.rule, "")

    def text(self) -> str:
        """``d/dx [expr] = result`` in plain text (``raw = simplified`` for a simplify step)."""
        return _single_line(self).text()

    def latex(self) -> str:
        """The step as one row of an ``aligned`` block (no trailing ``\\\\``).

        A ``simplify`` step reads ``raw &= simplified`` (it rewrites the derivative, it does not
        differentiate it again); in a derivation it repeats the left-hand side of the step above.
        """
        return _single_line(self).latex()

    def __str__(self) -> str:
        return render_text([self])

    def _repr_latex_(self) -> str:
        """This step and its sub-steps as one KaTeX-safe ``aligned`` block."""
        return render_latex([self])

    def _repr_mimebundle_(
        self, include: Collection[str] | None = None, exclude: Collection[str] | None = None
    ) -> dict[str, str]:
        """LaTeX and plain text only (see :meth:`Derivation._repr_mimebundle_`)."""
        return _bundle(render_latex([self]), render_text([self]), None, include, exclude)


def _latex_text(text: str) -> str:
    """Escape characters that are special inside ``\\text{...}``."""
    for char in "\\{}$&#^_%~":
        text = text.replace(char, "\\" + char if char not in "\\^~" else "")
    return text


#: The verbose levels: every step, or the key steps (leaf ``constant`` / ``variable`` steps hidden).
VERBOSE_LEVELS = ("all", "key")

#: Leaf rules hidden at ``verbose="key"``: a student knows d/dx c = 0 and d/dx x = 1.
TRIVIAL_RULES = frozenset({"constant", "variable"})

#: Names tried, in order, for the inner function of the chain rule (one not in the expression).
INNER_NAMES = ("u", "v", "w", "t", "s")


def inner_names(count: int, taken: Collection[str]) -> list[str]:
    """Names for ``count`` inner functions, none in ``taken``: ``u`` for one, else ``u_1, ...``
    (the next of :data:`INNER_NAMES` when those are taken)."""
    taken = set(taken)
    fallback = (f"u{i}" for i in itertools.count(1))
    for base in itertools.chain(INNER_NAMES, fallback):
        names = [base] if count == 1 else [f"{base}_{i}" for i in range(1, count + 1)]
        if base not in taken and not taken.intersection(names):
            return names
    raise AssertionError("unreachable")  # pragma: no cover


def _check_verbose(verbose: str) -> str:
    if verbose not in VERBOSE_LEVELS:
        raise SymdiffError(f"verbose must be one of {', '.join(VERBOSE_LEVELS)}; got {verbose!r}")
    return verbose


def _shown(verbose: str) -> Callable[[Step], bool]:
    """Which sub-steps a verbose level shows (top-level steps are always shown)."""
    if _check_verbose(verbose) == "all":
        return lambda step: True
    return lambda step: bool(step.substeps) or step.rule not in TRIVIAL_RULES


# -- the lines every view prints ---------------------------------------------------------------
def _d(var: sp.Symbol, partial: bool = False) -> str:
    if partial:
        return rf"\frac{{\partial}}{{\partial {sp.latex(var)}}}"
    return rf"\frac{{d}}{{d{sp.latex(var)}}}"


def _annotation(text: str, depth: int) -> str:
    r"""The last column: ``\quad`` per depth, then ``\text{(...)}`` with escaped content.

    The indentation lives in this left-aligned column because the first column of ``aligned``
    is right-aligned: a ``\quad`` in front of the left-hand side would be swallowed by the padding.
    """
    return r"\quad" * depth + rf"\text{{({_latex_text(text)})}}"


@dataclass(frozen=True)
class Line:
    """One line of a shown derivation, as data: the text, LaTeX and HTML views print these.

    ``kind`` is ``"derivative"`` (``d/d{var} [lhs] = rhs``; ``partial`` when ``var`` is one of
    several inner functions, held apart from the others), ``"definition"`` (``lhs = rhs``: an
    inner function's name and what it stands for), ``"equality"`` (``lhs = rhs``: a simplify
    step on its own) or ``"other"`` (a step of another kind, such as a tensor step, printed by
    its own ``text()``). ``label`` is the hierarchical number (empty for a definition).
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

    def text(self) -> str:
        """The equality in plain text, without number, rule or explanation."""
        if self.kind == "derivative":
            return f"d/d{self.var} [{sp.sstr(self.lhs)}] = {sp.sstr(self.rhs)}"
        if self.kind in ("definition", "equality"):
            return f"{sp.sstr(self.lhs)} = {sp.sstr(self.rhs)}"
        return self.step.text()

    def latex(self) -> str:
        """One row of an ``aligned`` block: ``lhs &= rhs && (rule)``."""
        if self.kind == "other":
            return self.step.latex()
        if self.kind == "definition":
            return f"{sp.latex(self.lhs)} &= {sp.latex(self.rhs)} && " + _annotation(
                "inner function", self.depth
            )
        name = self.rule if self.rule == "simplify" else self.rule + " rule"
        lhs = sp.latex(self.lhs)
        if self.kind == "derivative":
            lhs = rf"{_d(self.var, self.partial)}\left[{lhs}\right]"
        return f"{lhs} &= {sp.latex(self.rhs)} && {_annotation(name, self.depth)}"


def _single_line(step: Step, label: str = "", depth: int = 0, partial: bool = False) -> Line:
    """The line of one step on its own: ``d/d(var) [expr] = result`` (``raw = simplified``)."""
    kind = "equality" if step.rule == "simplify" else "derivative"
    why = step.explanation()
    return Line(label, depth, kind, step.rule, why, step.expr, step.result, step.var, partial, step)


def _renamed(step: Step, names: Mapping[sp.Symbol, sp.Symbol]) -> Step:
    """An outer step of a chain with its inner-function names changed."""
    return replace(
        step,
        expr=step.expr.xreplace(names),
        result=step.result.xreplace(names),
        var=names.get(step.var, step.var),
    )


def _names_for(step: Step, used: frozenset[str]) -> tuple[tuple[tuple[sp.Symbol, sp.Expr], ...],
                                                          tuple[Step, ...]]:
    """A chain step's definitions and outer steps, renamed if an enclosing chain already uses a
    name (a chain inside a chain names its inner function ``v``, not ``u`` again) or if the
    expression has a variable of that name (tensor steps rename their placeholders late)."""
    taken = {s.name for s in step.expr.free_symbols} | used
    if not any(symbol.name in taken for symbol, _ in step.defines):
        return step.defines, step.outer
    new = inner_names(len(step.defines), taken)
    names = {
        old: sp.Symbol(name, **old.assumptions0)
        for (old, _), name in zip(step.defines, new, strict=True)
    }
    defines = tuple((names[symbol], expr) for symbol, expr in step.defines)
    return defines, tuple(_renamed(outer, names) for outer in step.outer)


def avoiding(step: Step, names: Collection[str]) -> Step:
    """The step tree with every chain rule's inner functions renamed away from ``names``: the
    names a derivation shows outside these steps (a tensor derivation's variables and values),
    which the steps themselves cannot know."""
    subs = tuple(avoiding(sub, names) for sub in step.substeps)
    step = replace(step, substeps=subs) if subs != step.substeps else step
    if not any(symbol.name in names for symbol, _ in step.defines):
        return step
    defines, outer = _names_for(step, frozenset(names))
    return replace(step, defines=defines, substeps=(*outer, *step.inner))


def derivation_lines(steps: list[Step], verbose: str = "all") -> list[Line]:
    """Every shown line of a list of step trees, depth first, numbered ``1``, ``1.1``, ...

    A chain step is followed by one definition line per inner function (``u = x**2``), then the
    outer derivative in ``u`` (``d/du [exp(u)] = exp(u)``), then the inner derivative(s).
    ``verbose="key"`` hides the leaf ``constant`` / ``variable`` sub-steps (and numbering skips
    them). A top-level ``simplify`` step repeats the left-hand side of the step above it:
    ``d/dx [f] = simplified``; on its own it reads ``raw = simplified``.
    """
    shown = _shown(verbose)
    lines: list[Line] = []

    def visit(step: Any, label: str, depth: int, used: frozenset[str], partial: bool) -> None:
        subs: list[Any] = list(step.substeps)
        outer_count = 0
        if isinstance(step, Step):
            lines.append(_single_line(step, label, depth, partial))
            if step.defines:
                defines, outer = _names_for(step, used)
                used = used | {symbol.name for symbol, _ in defines}
                for symbol, expr in defines:
                    lines.append(Line("", depth + 1, "definition", "inner function",
                                      "inner function", symbol, expr))
                subs[: len(outer)] = outer
                outer_count = len(outer) if len(outer) > 1 else 0
        else:
            lines.append(Line(label, depth, "other", step.rule, step.explanation(), step=step))
        number = 0
        for i, sub in enumerate(subs):
            if shown(sub):
                number += 1
                visit(sub, f"{label}.{number}", depth + 1, used, i < outer_count)

    previous: Step | None = None
    for number, step in enumerate(steps, 1):
        if isinstance(step, Step) and step.rule == "simplify" and previous is not None:
            lines.append(Line(str(number), 0, "derivative", "simplify", step.explanation(),
                              previous.expr, step.result, previous.var, step=step))
            continue
        visit(step, str(number), 0, frozenset(), False)
        previous = step if isinstance(step, Step) else None
    return lines


def render_text(steps: list[Step], verbose: str = "all") -> str:
    """One line each, indented by depth: numbered steps with the rule and its explanation, and
    the definition of each inner function of the chain rule (``u = sin(x)``)."""
    rows = []
    for line in derivation_lines(steps, verbose):
        head = f"{line.label}. [{line.rule}] " if line.label else ""
        why = f"   ({line.why})" if line.why else ""
        rows.append(f"{'  ' * line.depth}{head}{line.text()}{why}")
    return "\n".join(rows)


def latex_rows(steps: list[Step], verbose: str = "all") -> list[str]:
    r"""The rows of the ``aligned`` block: the lines of :func:`derivation_lines`, in LaTeX."""
    return [line.latex() for line in derivation_lines(steps, verbose)]


def render_latex(steps: list[Step], verbose: str = "all") -> str:
    r"""Every step as a row of one KaTeX-safe ``aligned`` block inside ``$$ ... $$``.

    Only ``aligned`` (no ``align``), ``\frac``, ``\left[ \right]``, ``\quad`` and ``\text{...}``
    with escaped content are added to SymPy's own LaTeX.
    """
    rows = latex_rows(steps, verbose)
    return "$$\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}$$"


def render_html(steps: list[Step], verbose: str = "all") -> str:
    """An HTML table of the steps (rule, step, explanation), every value escaped."""
    rows = []
    for line in derivation_lines(steps, verbose):
        rule = line.rule if line.label else ""
        rows.append(
            "<tr>"
            f"<td>{html.escape(line.label)}</td>"
            f'<td style="padding-left:{line.depth * 1.5}em">{html.escape(rule)}</td>'
            f"<td><code>{html.escape(line.text())}</code></td>"
            f"<td>{html.escape(line.why)}</td>"
            "</tr>"
        )
    head = "<tr><th>#</th><th>rule</th><th>step</th><th>why</th></tr>"
    return f'<table class="symdiff-steps">{head}{"".join(rows)}</table>'


# -- Jupyter display -------------------------------------------------------------------------------
def _bundle(
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


@dataclass(frozen=True)
class Derivation:
    """A derivative and the steps that produced it.

    ``result`` is the simplified derivative; ``raw`` is what the rules produced before
    simplification; ``steps`` lists the rule tree (and a final ``simplify`` step when
    simplification changed the result). ``verbose`` (``"all"`` or ``"key"``) chooses what the
    Jupyter display shows: every step, or the key steps (leaf ``constant`` and ``variable``
    steps hidden). ``str()`` always lists every step, numbered.

    In Jupyter a derivation shows as one ``aligned`` LaTeX block, never as HTML: JupyterLab picks
    HTML over LaTeX when a bundle has both. See :meth:`_ipython_display_`.
    """

    expr: sp.Expr
    var: sp.Symbol
    result: sp.Expr
    raw: sp.Expr
    steps: list[Step] = field(default_factory=list)
    verbose: str = "all"

    def __post_init__(self) -> None:
        _check_verbose(self.verbose)

    @property
    def rules(self) -> list[str]:
        """The rule names in the order they appear (depth first)."""
        return [step.rule for top in self.steps for _, step in top.walk()]

    def __str__(self) -> str:
        return self.text("all")

    def __repr__(self) -> str:
        expr, result = sp.sstr(self.expr), sp.sstr(self.result)
        return f"Derivation({expr!r}, wrt={str(self.var)!r}, result={result!r})"

    def header(self) -> str:
        """``d/dx [expr] = result`` in plain text."""
        return f"d/d{self.var} [{sp.sstr(self.expr)}] = {sp.sstr(self.result)}"

    def lines(self, verbose: str | None = None) -> list[Line]:
        """The shown lines as data (:class:`Line`): what :meth:`text`, :meth:`latex` and
        :meth:`html` print, one equality or definition each (``verbose`` as in :meth:`text`)."""
        return derivation_lines(self.steps, verbose or self.verbose)

    def text(self, verbose: str | None = None) -> str:
        """The header line and the numbered steps (``verbose`` defaults to :attr:`verbose`)."""
        return self.header() + "\n" + render_text(self.steps, verbose or self.verbose)

    def latex(self, verbose: str | None = None) -> str:
        """The ``$$\\begin{aligned} ... \\end{aligned}$$`` block at a verbose level."""
        return render_latex(self.steps, verbose or self.verbose)

    def html(self, verbose: str | None = None) -> str:
        """The escaped HTML table of the steps at a verbose level."""
        return render_html(self.steps, verbose or self.verbose)

    def with_verbose(self, verbose: str) -> Derivation:
        """The same derivation, displayed at another verbose level (``"all"`` or ``"key"``)."""
        return replace(self, verbose=_check_verbose(verbose))

    def display(self, verbose: str | None = None) -> None:
        """Show the derivation now: through IPython's ``display`` when available, else print.

        ``d.display(verbose="key")`` shows only the key steps; ``"all"`` shows every step.
        """
        shown = self.with_verbose(verbose or self.verbose)
        try:
            from IPython.core.interactiveshell import InteractiveShell
            from IPython.display import display
        except ImportError:
            print(shown.text())
            return
        if not InteractiveShell.initialized():
            print(shown.text())
            return
        display(shown)

    def _repr_latex_(self) -> str:
        return self.latex()

    def _repr_mimebundle_(
        self, include: Collection[str] | None = None, exclude: Collection[str] | None = None
    ) -> dict[str, str]:
        """``text/latex`` and ``text/plain`` only (``text/html`` only when ``include`` asks)."""
        return _bundle(self.latex(), self.text(), self.html(), include, exclude)

    def _ipython_display_(self) -> None:
        """IPython's display hook: publish the LaTeX + plain-text bundle, and nothing else.

        IPython's ``DisplayFormatter`` takes :meth:`_repr_mimebundle_` and then still calls every
        ``_repr_<format>_`` method for a format the bundle lacks, so :meth:`_repr_html_` would add
        ``text/html`` beside the LaTeX and JupyterLab would show the table instead of the
        equations. An object with ``_ipython_display_`` decides alone what is shown (IPython's
        documented hook), so notebooks, JupyterLab, VS Code and nbconvert get exactly
        ``text/latex`` and ``text/plain``. Outside a running IPython this prints the text.
        """
        from IPython.core.interactiveshell import InteractiveShell
        from IPython.display import display

        if not InteractiveShell.initialized():
            print(self.text())
            return
        display(self._repr_mimebundle_(), raw=True)

    def _repr_html_(self) -> str:
        """The HTML table of the steps (rule, step, explanation), every value escaped.

        Never shown by IPython (see :meth:`_ipython_display_`); there for callers that want HTML,
        like :meth:`html` at the derivation's own verbose level.
        """
        return self.html()
