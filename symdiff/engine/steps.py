"""Steps as data: what each rule of forward mode did, and the :class:`Derivation` that holds them.

A :class:`Step` records the rule applied, the expression differentiated, the variable it is
differentiated in, the result and the steps inside it (SymPy's ``manualintegrate`` keeps its steps
the same way). Rendering is a table from rule name to explanation, not an ``isinstance`` chain;
the printing itself lives in :mod:`symdiff.engine.lines` (re-exported here). Reverse mode's steps
are
:mod:`symdiff.engine.adjoints`.

Every printed line is a true equality. The chain rule's step names its inner functions
(``Step.defines``: ``u = sin(x)``) and records its outer derivative in those names
(``d/du [u**2] = 2*u``), never ``d/dx [sin(x)**2] = 2*sin(x)``. Text, LaTeX and HTML all print
the same :class:`Line` list (:func:`derivation_lines`), so the views cannot disagree. Each
step states the identity its rule applies with the parts named, and each sub-step says which
part of its parent's identity it computes (an indented tree; only top-level steps are
numbered)::

    d/dx [sin(x)**2] = sin(2*x)
    1. [chain] d/dx [sin(x)**2] = 2*sin(x)*cos(x)   ((f(u))' = f'(u) u': ...)
      u = sin(x)   (inner function)
      f'(u): [power] d/du [u**2] = 2*u   (d/du u^2 = 2 u)
      u': [trigonometric] d/dx [sin(x)] = cos(x)   (d/du sin(u) = cos(u))
    2. [simplify] d/dx [sin(x)**2] = sin(2*x)   (simplify the result)

The LaTeX view writes the same identities in LaTeX (``\\left(\\frac{f}{g}\\right)' = ...`` with
``f = \\sin{...}``), variables as names (``\\mathrm{lam}``, ``\\sigma``, ``x_{1}``:
:mod:`symdiff.engine.texnames`); the HTML view is a tree of collapsible ``<details>``.

In Jupyter a :class:`Derivation` (or a :class:`Step`) shows as one KaTeX-safe
``$$\\begin{aligned} ... \\end{aligned}$$`` block: ``_repr_mimebundle_`` gives LaTeX and plain text
only, and ``Derivation._ipython_display_`` publishes exactly that bundle (never HTML beside it);
``verbose="key"`` hides the leaf constant / variable steps.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field, replace

import sympy as sp

from .identities import identity_of
from .innernames import INNER_NAMES, avoiding, inner_names
from .inputtext import teaching_text
from .lines import (
    ORDERS,
    TRIVIAL_RULES,
    VERBOSE_LEVELS,
    Line,
    bundle,
    check_order,
    check_verbose,
    derivation_lines,
    latex_rows,
    render_html,
    render_latex,
    render_text,
    single_line,
    wrapped,
)
from .local import IDENTITIES

__all__ = [
    "EXPLANATIONS", "INNER_NAMES", "ORDERS", "TRIVIAL_RULES", "VERBOSE_LEVELS", "Derivation",
    "Line", "Note", "Step", "avoiding", "derivation_lines", "inner_names", "latex_rows",
    "render_html", "render_latex", "render_text",
]

#: What each structural rule says, shown beside the step (the rules' own table,
#: :data:`symdiff.engine.local.IDENTITIES`). Function rules carry their own identity.
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
        return self.text.format(*(teaching_text(e) for e in self.exprs))


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
        """The sentence shown beside this step: the rule's identity with its parts named
        (:func:`~symdiff.engine.identities.identity_of`), else its note or the rule's identity."""
        identity = identity_of(self)
        if identity is not None:
            return identity.text
        if self.note:
            return str(self.note)
        if self.rule == "variable":
            return f"d/d{self.var} {self.var} = 1"
        return EXPLANATIONS.get(self.rule, "")

    def text(self) -> str:
        """``d/dx [expr] = result`` in plain text (``raw = simplified`` for a simplify step)."""
        return single_line(self).text()

    def latex(self) -> str:
        """The step as one row of an ``aligned`` block (no trailing ``\\\\``).

        A ``simplify`` step reads ``raw &= simplified`` (it rewrites the derivative, it does not
        differentiate it again); in a derivation it repeats the left-hand side of the step above.
        """
        return single_line(self).latex()

    def __str__(self) -> str:
        return render_text([self])

    def _repr_latex_(self) -> str:
        """This step and its sub-steps as one KaTeX-safe ``aligned`` block."""
        return render_latex([self])

    def _repr_mimebundle_(
        self, include: Collection[str] | None = None, exclude: Collection[str] | None = None
    ) -> dict[str, str]:
        """LaTeX and plain text only (see :meth:`Derivation._repr_mimebundle_`)."""
        return bundle(render_latex([self]), render_text([self]), None, include, exclude)


@dataclass(frozen=True)
class Derivation:
    """A derivative and the steps that produced it.

    ``expr`` is the SymPy expression differentiated and ``written`` the same expression as the
    student typed it (a string given to :func:`symdiff.derive`; ``None`` otherwise): the steps
    then differentiate ``written`` (the order of terms, subtraction, division and powers of
    quotients as typed) and a last ``simplify`` step links their result to the derivative the
    compiled code computes, that of ``expr``. ``result`` is the simplified derivative (the
    code's); ``raw`` is what the rules produced before simplification; ``steps`` lists the
    rule tree (and a final ``simplify`` step when simplification changed the result).
    ``verbose`` (``"all"`` or ``"key"``) chooses what the Jupyter display shows: every step,
    or the key steps (leaf ``constant`` and ``variable`` steps hidden). ``str()`` always lists
    every step, numbered.

    In Jupyter a derivation shows as one ``aligned`` LaTeX block, never as HTML: JupyterLab picks
    HTML over LaTeX when a bundle has both. See :meth:`_ipython_display_`.
    """

    expr: sp.Expr
    var: sp.Symbol
    result: sp.Expr
    raw: sp.Expr
    steps: list[Step] = field(default_factory=list)
    verbose: str = "all"
    written: sp.Expr | None = None
    final: sp.Expr | None = None
    order: str = "result-first"

    def __post_init__(self) -> None:
        check_verbose(self.verbose)
        check_order(self.order)

    @property
    def shown(self) -> sp.Expr:
        """The expression as the first line shows it: :attr:`written` (as the student typed
        it, :mod:`symdiff.parsing.written`) when there is one, else :attr:`expr`."""
        return self.expr if self.written is None else self.written

    @property
    def rules(self) -> list[str]:
        """The rule names in the order they appear (depth first)."""
        return [step.rule for top in self.steps for _, step in top.walk()]

    def __str__(self) -> str:
        return self.text("all")

    def __repr__(self) -> str:
        expr, result = teaching_text(self.expr), teaching_text(self.result)
        return f"Derivation({expr!r}, wrt={str(self.var)!r}, result={result!r})"

    def header(self) -> str:
        """``d/dx [expr] = result`` in plain text (the result in its final form)."""
        result = self.result if self.final is None else self.final
        return f"d/d{self.var} [{teaching_text(self.shown)}] = {teaching_text(result)}"

    def lines(self, verbose: str | None = None, order: str | None = None) -> list[Line]:
        """The shown lines as data (:class:`Line`): what :meth:`text`, :meth:`latex` and
        :meth:`html` print, one equality or definition each (``verbose`` as in :meth:`text`,
        ``order`` one of :data:`ORDERS`, default :attr:`order`)."""
        return derivation_lines(self.steps, verbose or self.verbose, order or self.order)

    def text(
        self, verbose: str | None = None, order: str | None = None, width: int | None = None
    ) -> str:
        """The header line and the numbered steps (``verbose`` defaults to :attr:`verbose`,
        ``order`` to :attr:`order`); with ``width``, lines longer than that are broken at
        spaces (:func:`~symdiff.engine.lines.wrapped`)."""
        text = self.header() + "\n" + render_text(self.steps, verbose or self.verbose,
                                                  order or self.order)
        return wrapped(text, width)

    def latex(self, verbose: str | None = None, order: str | None = None) -> str:
        """The ``$$\\begin{aligned} ... \\end{aligned}$$`` block at a verbose level."""
        return render_latex(self.steps, verbose or self.verbose, order or self.order)

    def html(self, verbose: str | None = None) -> str:
        """The steps as an escaped HTML tree of collapsible ``<details>`` at a verbose level
        (always result-first: a folded step shows its own line)."""
        return render_html(self.steps, verbose or self.verbose)

    def to_html_page(
        self,
        at: Mapping[str, float] | None = None,
        interval: tuple[float, float] = (-5.0, 5.0),
        title: str | None = None,
    ) -> str:
        """One self-contained HTML page (no script, nothing loaded; math as MathML): every hint
        and step, the answer, a plot of f and f' over ``interval`` and the computational graph
        at the point ``at`` (:func:`symdiff.classroom.page.derivation_page`)."""
        from ..classroom.page import derivation_page

        return derivation_page(self, at=at, interval=interval, title=title)

    def with_verbose(self, verbose: str) -> Derivation:
        """The same derivation, displayed at another verbose level (``"all"`` or ``"key"``)."""
        return replace(self, verbose=check_verbose(verbose))

    def with_order(self, order: str) -> Derivation:
        """The same derivation, its rules' lines in another order (:data:`ORDERS`)."""
        return replace(self, order=check_order(order))

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
        return bundle(self.latex(), self.text(), self.html(), include, exclude)

    def _ipython_display_(self) -> None:
        """IPython's display hook: publish the LaTeX + plain-text bundle, and nothing else.

        IPython's ``DisplayFormatter`` takes :meth:`_repr_mimebundle_` and then still calls every
        ``_repr_<format>_`` method for a format the bundle lacks, so :meth:`_repr_html_` would add
        ``text/html`` beside the LaTeX and JupyterLab would show the HTML instead of the
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
        """The HTML tree of the steps (each step with sub-steps a ``<details>``), escaped.

        Never shown by IPython (see :meth:`_ipython_display_`); there for callers that want HTML,
        like :meth:`html` at the derivation's own verbose level.
        """
        return self.html()
