"""Self-contained HTML pages: a derivation (``sd.derive(...).to_html_page()``, ``symdiff derive
... --html FILE``) and a practice worksheet, with or without answers.

A page is one file: its style inline, its math MathML (typeset by the browser), its pictures
inline SVG; it loads nothing, runs no script and reads the same offline, printed or on a slide.
The templates live beside this module (``templates/``, rendered by Jinja with autoescaping:
only MathML and SVG made by symdiff are inserted as markup).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import sympy as sp

from ..errors import SymdiffError
from . import mathml
from .figures import default_point, graph_figure, plot_svg, point_text
from .plot import number
from .walkthrough import walkthrough

TEMPLATES = Path(__file__).resolve().parent / "templates"


@functools.cache
def _environment() -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def stylesheet() -> str:
    """The style every classroom page uses."""
    return (TEMPLATES / "classroom.css").read_text(encoding="utf-8")


def render(template: str, **context: Any) -> str:
    """A page from ``template``; the strings in ``context`` are escaped unless marked as
    markup (:func:`markup`)."""
    from symdiff import __version__

    return _environment().get_template(template).render(
        style=markup(stylesheet()), version=__version__, **context)


def markup(text: str) -> Any:
    """MathML or SVG made by symdiff, inserted into a page as it is."""
    from markupsafe import Markup

    return Markup(text)


def _reveals(lines: Sequence[Any], partial: frozenset[str]) -> list[dict[str, Any]]:
    return [{"kind": r.kind, "depth": r.depth, "html": markup(r.html)}
            for r in walkthrough(lines, partial)]


def derivation_page(derivation: Any, at: Mapping[str, float] | None = None,
                    interval: tuple[float, float] = (-5.0, 5.0), title: str | None = None
                    ) -> str:
    """One self-contained HTML page of a derivation: the answer, every hint and step, a plot
    of f and f' over ``interval`` and the computational graph at ``at`` (by default a point
    where both are finite; a function of several variables is plotted against the variable of
    the derivative, the others at ``at``)."""
    from ..engine.inputtext import input_text

    if not isinstance(derivation.expr, sp.Basic):
        raise SymdiffError("an HTML page shows the derivation of a scalar expression; a tensor "
                           "derivation (shapes=) prints as text or LaTeX")
    var = str(derivation.var)
    names = sorted(s.name for s in derivation.expr.free_symbols if isinstance(s, sp.Symbol))
    point = default_point([derivation.expr, derivation.result], names) if at is None else {
        name: float(at[name]) for name in names if name in at}
    missing = [name for name in names if name not in point]
    if missing:
        raise SymdiffError(f"at= needs a value for {', '.join(missing)}")
    partial = frozenset({var}) if len(names) > 1 else frozenset()
    name = mathml.operator([var], bool(partial), "f")
    text = input_text(derivation.shown)
    graph = graph_figure(text, point)
    context = {
        "title": title or f"d/d{var} [{text}]",
        "expression": markup(mathml.expression(derivation.shown, display=True)),
        "answer": markup(mathml.math(mathml.equation(name, mathml.element(derivation.result)),
                                     display=True)),
        "answer_text": input_text(derivation.result),
        "reveals": _reveals(derivation.lines(), partial),
        "plot": markup(plot_svg(derivation.expr, derivation.result, f"f' = df/d{var}", var,
                                point, interval, "page-plot")),
        "interval": [number(v) for v in interval],
        "graph": markup(graph["svg"]),
        "point": graph["point"],
        "gradient": graph["gradient"],
        "var": var,
    }
    return render("derivation.html.jinja", **context)


def worksheet_page(seed: str, rules: Sequence[str], difficulty: int, count: int,
                   answers: bool) -> str:
    """A printable worksheet of a practice set (:func:`~.practice.exercises`), with the
    answers under each exercise when ``answers``."""
    from ..engine.inputtext import input_text
    from .lesson import derivations
    from .practice import RULES, exercises

    items = []
    for exercise in exercises(seed, rules, difficulty, count):
        written = mathml.expression(_written(exercise.text))
        item = {"number": exercise.number, "rule": RULES[exercise.rule],
                "prompt": markup(written), "text": exercise.text}
        if answers:
            (derivation,) = derivations(exercise.text, ("x",))
            item["answer"] = markup(mathml.expression(derivation.result))
            item["answer_text"] = input_text(derivation.result)
        items.append(item)
    return render("worksheet.html.jinja", items=items, seed=seed, answers=answers,
                  difficulty=difficulty, rules=[RULES[r] for r in rules],
                  operator=markup(mathml.operator(["x"])))


def _written(text: str) -> sp.Basic:
    from ..parsing.teaching import parse_as_written

    return parse_as_written(text)[0]


__all__ = ["derivation_page", "point_text", "stylesheet", "worksheet_page"]
