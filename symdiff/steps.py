"""Steps as data: what each rule did, and its text / LaTeX / HTML rendering.

A :class:`Step` records the rule applied, the expression differentiated, the result and the steps
inside it (SymPy's ``manualintegrate`` keeps its steps the same way). Rendering is a table from rule
name to explanation, not an ``isinstance`` chain.

In Jupyter a :class:`Derivation` (or a :class:`Step`) shows as one KaTeX-safe
``$$\\begin{aligned} ... \\end{aligned}$$`` block: ``_repr_mimebundle_`` gives LaTeX and plain text
only, and ``Derivation._ipython_display_`` publishes exactly that bundle (never HTML beside it);
``verbose="key"`` hides the leaf constant / variable steps.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field, replace

import sympy as sp

from .errors import SymdiffError

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
    """One application of a rule: ``d/d(var) expr = result``, with the steps inside it."""

    rule: str
    expr: sp.Expr
    result: sp.Expr
    var: sp.Symbol
    substeps: tuple[Step, ...] = ()
    note: str | Note = ""

    def walk(self, depth: int = 0) -> Iterator[tuple[int, Step]]:
        """This step and every step inside it, depth first, with their depth."""
        yield depth, self
        for sub in self.substeps:
            yield from sub.walk(depth + 1)

    def explanation(self) -> str:
        """The sentence shown beside this step: the rule's identity plus any note."""
        return str(self.note) if self.note else EXPLANATIONS.get(self.rule, "")

    def text(self) -> str:
        """``d/dx [expr] = result`` in plain text."""
        return f"d/d{self.var} [{sp.sstr(self.expr)}] = {sp.sstr(self.result)}"

    def latex(self) -> str:
        """The step as one row of an ``aligned`` block (no trailing ``\\\\``).

        A ``simplify`` step reads ``raw &= simplified`` (it rewrites the derivative, it does not
        differentiate it again); in a derivation it repeats the left-hand side of the step above.
        """
        return _row(self, 0)

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
_INNER_NAMES = ("u", "v", "w", "t", "s")


def _check_verbose(verbose: str) -> str:
    if verbose not in VERBOSE_LEVELS:
        raise SymdiffError(f"verbose must be one of {', '.join(VERBOSE_LEVELS)}; got {verbose!r}")
    return verbose


def _shown(verbose: str) -> Callable[[Step], bool]:
    """Which sub-steps a verbose level shows (top-level steps are always shown)."""
    if _check_verbose(verbose) == "all":
        return lambda step: True
    return lambda step: bool(step.substeps) or step.rule not in TRIVIAL_RULES


def _numbered(
    steps: list[Step], shown: Callable[[Step], bool] | None = None
) -> Iterator[tuple[str, int, Step]]:
    """Hierarchical numbers ``1``, ``1.1``, ``1.2``, ... for a list of step trees.

    ``shown`` filters sub-steps (a hidden step hides its subtree); numbering skips hidden steps.
    """

    def visit(step: Step, label: str, depth: int) -> Iterator[tuple[str, int, Step]]:
        yield label, depth, step
        subs = [sub for sub in step.substeps if shown is None or shown(sub)]
        for i, sub in enumerate(subs, 1):
            yield from visit(sub, f"{label}.{i}", depth + 1)

    for i, step in enumerate(steps, 1):
        yield from visit(step, str(i), 0)


def render_text(steps: list[Step], verbose: str = "all") -> str:
    """One step a line, numbered and indented by depth, with the rule and its explanation."""
    lines = []
    for label, depth, step in _numbered(steps, _shown(verbose)):
        why = step.explanation()
        lines.append(
            f"{'  ' * depth}{label}. [{step.rule}] {step.text()}" + (f"   ({why})" if why else "")
        )
    return "\n".join(lines)


# -- LaTeX ---------------------------------------------------------------------------------------
def _d(var: sp.Symbol) -> str:
    return rf"\frac{{d}}{{d{sp.latex(var)}}}"


def _annotation(text: str, depth: int) -> str:
    r"""The last column: ``\quad`` per depth, then ``\text{(...)}`` with escaped content.

    The indentation lives in this left-aligned column because the first column of ``aligned``
    is right-aligned: a ``\quad`` in front of the left-hand side would be swallowed by the padding.
    """
    return r"\quad" * depth + rf"\text{{({_latex_text(text)})}}"


def _row(step: Step, depth: int) -> str:
    """One row: ``d/dx [expr] &= result && (rule rule)``; ``simplify`` continues the line above."""
    if step.rule == "simplify":
        return (
            rf"{sp.latex(step.expr)} &= {sp.latex(step.result)} && {_annotation('simplify', depth)}"
        )
    lhs = rf"{_d(step.var)}\left[{sp.latex(step.expr)}\right]"
    return rf"{lhs} &= {sp.latex(step.result)} && {_annotation(step.rule + ' rule', depth)}"


def _inner_symbols(step: Step, used: Collection[str] = ()) -> list[tuple[sp.Symbol, sp.Expr]]:
    """For a chain step (substeps ``[outer, *inner]``): a fresh name for each inner function.

    The inner functions are the ``expr`` of the inner steps, so the names come from the step data
    itself (the outer step's note says the same in words). ``used`` are the names an enclosing
    chain step already gave (a chain inside a chain names its inner function ``v``, not ``u``
    again).
    """
    inner = [sub.expr for sub in step.substeps[1:]]
    taken = {s.name for s in step.expr.free_symbols} | set(used)
    base = next((n for n in _INNER_NAMES if n not in taken), "u")
    if len(inner) == 1:
        names = [base]
    else:
        names = [f"{base}_{i}" for i in range(1, len(inner) + 1)]
        if taken & set(names):
            names = [f"{base}_{{{i}}}" for i in range(1, len(inner) + 1)]
    return [(sp.Symbol(name), expr) for name, expr in zip(names, inner, strict=True)]


def _chain_outer_rows(outer: Step, inner: list[tuple[sp.Symbol, sp.Expr]], depth: int) -> list[str]:
    """The outer derivative written in the inner names: ``d/du [e^u] &= e^u``.

    The outer function in ``u`` is differentiated again by the project's own rule engine (so the
    row reads in ``u`` even where SymPy has rewritten ``1/(x^2)`` as ``x^(-2)``); with several
    inner functions there is one ``\\partial/\\partial u_i`` row each. If that fails for any
    reason the outer step is shown as recorded.
    """
    from .differentiate import differentiate  # here: differentiate imports this module

    outer_expr = outer.expr.xreplace(dict((expr, symbol) for symbol, expr in inner))
    rule = _annotation(outer.rule + " rule", depth)
    body = sp.latex(outer_expr)
    rows = []
    try:
        for symbol, _ in inner:
            result = differentiate(outer_expr, symbol).result
            d = (
                _d(symbol)
                if len(inner) == 1
                else rf"\frac{{\partial}}{{\partial {sp.latex(symbol)}}}"
            )
            rows.append(rf"{d}\left[{body}\right] &= {sp.latex(result)} && {rule}")
    except Exception:  # a display must not fail: show the step as recorded
        return [_row(outer, depth)]
    return rows


def latex_rows(steps: list[Step], verbose: str = "all") -> list[str]:
    r"""The rows of the ``aligned`` block, depth first.

    A chain step is followed by a row naming each inner function (``u &= x^{2}``), then the outer
    derivative in ``u``, then the inner derivative(s). ``verbose="key"`` hides the leaf
    ``constant`` / ``variable`` sub-steps.
    """
    shown = _shown(verbose)
    rows: list[str] = []

    def visit(step: Step, depth: int, used: frozenset[str] = frozenset()) -> None:
        rows.append(_row(step, depth))
        if step.rule == "chain" and len(step.substeps) >= 2:
            inner = _inner_symbols(step, used)
            used = used | {symbol.name for symbol, _ in inner}
            for symbol, expr in inner:
                rows.append(
                    rf"{sp.latex(symbol)} &= {sp.latex(expr)} && "
                    + _annotation("inner function", depth + 1)
                )
            outer, *inside = step.substeps
            rows.extend(_chain_outer_rows(outer, inner, depth + 1))
            for sub in outer.substeps:
                if shown(sub):
                    visit(sub, depth + 2, used)
            for sub in inside:
                if shown(sub):
                    visit(sub, depth + 1, used)
            return
        for sub in step.substeps:
            if shown(sub):
                visit(sub, depth + 1, used)

    previous: Step | None = None
    for step in steps:
        if step.rule == "simplify" and previous is not None:
            lhs = rf"{_d(previous.var)}\left[{sp.latex(previous.expr)}\right]"
            rows.append(rf"{lhs} &= {sp.latex(step.result)} && {_annotation('simplify', 0)}")
            continue
        visit(step, 0)
        previous = step
    return rows


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
    for label, depth, step in _numbered(steps, _shown(verbose)):
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
