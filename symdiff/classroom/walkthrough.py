"""A derivation as a walkthrough: for every line, first a hint (which rule applies, and to what),
then the step itself, in MathML.

The lines are those every view of a :class:`~symdiff.engine.steps.Derivation` prints
(:meth:`Derivation.lines`: the same equalities, rules, identities and parts), taken as they
are. Only the order of revealing is this module's: a rule's hint comes before the lines of its
parts and its own equality after them, so a student sees "product rule, with f = ..., g = ..."
then works out f' and g', then the result; a line without parts is its hint, then itself.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sympy as sp

from ..engine.identities import display_name
from . import mathml

#: The kinds of line whose right-hand side a student can work out and check.
CHECKABLE = frozenset({"derivative", "equality", "assembly"})


@dataclass(frozen=True)
class Reveal:
    """One thing the page reveals: a line's ``"hint"`` or its ``"step"``.

    ``line`` is the line's index in the derivation's lines, ``depth`` its nesting; ``html`` the
    content (escaped text and MathML), ``text`` the same in plain text (what a screen reader's
    summary or a test reads); ``checkable`` whether the student may check a result for it.
    """

    kind: str
    line: int
    depth: int
    html: str
    text: str
    checkable: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "line": self.line, "depth": self.depth, "html": self.html,
                "text": self.text, "checkable": self.checkable}


def reveal_order(depths: Sequence[int]) -> list[tuple[str, int]]:
    """``("hint", i)`` and ``("step", i)`` for lines at ``depths`` (a depth-first list of a
    tree): each line's hint, then the lines inside it (the following deeper ones), then the
    line itself."""
    order: list[tuple[str, int]] = []
    waiting: list[int] = []  # lines whose parts are still being revealed, innermost last
    for i, depth in enumerate(depths):
        while waiting and depths[waiting[-1]] >= depth:
            order.append(("step", waiting.pop()))
        order.append(("hint", i))
        waiting.append(i)
    while waiting:
        order.append(("step", waiting.pop()))
    return order


def _formula(line: Any) -> str:
    """The identity a line's rule applies, without the naming of its parts."""
    why = line.identity.text if line.identity is not None else line.why
    return why.split(" with ")[0]


def _parts_html(line: Any) -> tuple[str, str]:
    """`` with f = ..., g = ...`` in MathML and text, from the identity's named parts."""
    parts = [] if line.identity is None else [
        (name, expr) for name, expr in line.identity.parts if isinstance(expr, sp.Basic)
        and name != "n"]
    if not parts:
        return "", ""
    shown = ", ".join(
        mathml.math(mathml.equation(mathml.element(sp.Symbol(name)), mathml.element(expr)))
        for name, expr in parts)
    text = ", ".join(f"{name} = {expr}" for name, expr in parts)
    return f" with {shown}", f" with {text}"


def hint(line: Any, partial: frozenset[str] = frozenset()) -> tuple[str, str]:
    """What applies to a line, and to what, as (HTML, text); the line itself is not shown."""
    if line.kind == "definition":
        name = html.escape(str(line.lhs))
        return (f"Name the inner function <b>{name}</b>.", f"Name the inner function {line.lhs}.")
    if line.kind == "assembly":
        return ("Put the parts together: <code>" + html.escape(str(line.role)) + "</code>.",
                f"Put the parts together: {line.role}.")
    if line.kind == "other" or line.lhs is None:
        return (f"<b>{html.escape(line.rule)}</b>: {html.escape(line.why)}",
                f"{line.rule}: {line.why}")
    rule = display_name(line.rule)
    if line.rule == "simplify":  # its note says what, unless it is the plain one
        why = "" if line.why == "simplify the result" else f": {line.why}"
        return (f"<b>Simplify</b> the result{html.escape(why)}.", f"Simplify the result{why}.")
    variables = [line.var] if line.var is not None else []
    target = mathml.math(mathml.derivative_of(line.lhs, variables, _partial(line, partial)))
    parts_html, parts_text = _parts_html(line)
    formula = _formula(line)
    role = f"{html.escape(_primes(line.role))}: " if line.role else ""
    text_role = f"{line.role}: " if line.role else ""
    return (
        f"{role}Use the <b>{html.escape(rule)}</b> on {target}: "
        f"<code>{html.escape(formula)}</code>{parts_html}.",
        f"{text_role}Use the {rule} on d/d{line.var} [{line.lhs}]: {formula}{parts_text}.",
    )


def _partial(line: Any, partial: frozenset[str]) -> bool:
    return bool(line.partial) or (line.var is not None and str(line.var) in partial)


def step(line: Any, partial: frozenset[str] = frozenset()) -> tuple[str, str]:
    """The line's equality as (HTML, text): ``d/dx (lhs) = rhs``, ``u = ...``, ``parts =
    result``; the part of the parent's identity it computes in front (``f'``)."""
    role = f'<span class="role">{html.escape(_primes(line.role))}</span> ' if (
        line.role and line.kind != "assembly") else ""
    if line.kind == "derivative":
        left = mathml.derivative_of(line.lhs, [line.var], _partial(line, partial))
    elif line.kind == "assembly":
        left = mathml.element(line.lhs)
        role = f'<code class="role">{html.escape(line.role)}</code> = '
    elif line.lhs is not None:
        left = mathml.element(line.lhs)
    else:
        return f"<code>{html.escape(line.text())}</code>", line.text()
    body = mathml.equation(left, mathml.element(line.rhs))
    return role + mathml.math(body, label=line.text(), full=True), line.text()


def _primes(role: str) -> str:
    """``f'`` with a prime sign (U+2032), which reads better than an apostrophe."""
    return role.replace("'", "\u2032")


def walkthrough(lines: Sequence[Any], partial: frozenset[str] = frozenset()) -> list[Reveal]:
    """Every hint and step of a derivation's lines, in the order a page reveals them
    (:func:`reveal_order`). ``partial`` names the variables written with ``∂`` (the
    variable of a derivative of a function of several)."""
    reveals = []
    for kind, i in reveal_order([line.depth for line in lines]):
        line = lines[i]
        shown, text = (hint if kind == "hint" else step)(line, partial)
        checkable = kind == "hint" and line.kind in CHECKABLE and line.rhs is not None
        reveals.append(Reveal(kind, i, line.depth, shown, text, checkable))
    return reveals
