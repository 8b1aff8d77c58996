"""The identity a step applies, with its parts named, in plain text and in LaTeX.

A textbook states the rule and then names its parts: ``(f/g)' = (f' g - f g')/g^2`` with
``f = sin(x)``, ``g = x``. :func:`identity_of` reads that from a step's own data (its rule, the
expression and its sub-steps), so every view prints the same identity: the quotient and product
rules with ``f`` and ``g`` named, the power rule with its right-hand side
(``d/du u^-12 = -12 u^-13``), the chain rule in the inner function's shown name, the general
power rule (logarithmic differentiation) with its base and exponent. :attr:`Identity.roles`
labels each sub-step with the part of the identity it computes (``f'``, ``g'``, ``f'(u)``,
``u'``, ``base f'``), which is how the nested views say why a sub-step is there.

A function of the rule table states its row's identity in the step's own variable
(``d/dx tan(x) = 1 + tan(x)^2``, never in a ``u`` that the derivation may have defined as
something else), with the natural logarithm as ``ln``, in text and in LaTeX alike
(:func:`_function`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import sympy as sp
from sympy.printing.latex import accepted_latex_functions
from sympy.printing.precedence import PRECEDENCE, precedence

from ..parsing.written import Written, canonical
from .inputtext import teaching_text
from .rules import rule_for
from .texnames import d_by, latex_name, tex

#: (text, LaTeX) of one label or one named part.
Pair = tuple[str, str]


@dataclass(frozen=True)
class Identity:
    """A rule's identity as applied at one step.

    ``text`` and ``latex`` state it with its parts named (``... with f = sin(x), g = x``);
    ``parts`` are those names and what they stand for; ``roles`` label the step's sub-steps, in
    order, as (text, LaTeX) pairs: the part of the identity each one computes.
    """

    text: str
    latex: str
    parts: tuple[tuple[str, sp.Expr], ...] = ()
    roles: tuple[Pair, ...] = ()


#: The defines a chain step shows: (inner function's name, what it stands for).
Defines = Sequence[tuple[sp.Symbol, sp.Expr]]

#: What the views call each rule (its rule name plus "rule", unless given here).
DISPLAY_NAMES = {
    "simplify": "simplify",
    "general power": "logarithmic differentiation",
}


def display_name(rule: str) -> str:
    """``quotient rule``, ``logarithmic differentiation``, ``simplify``."""
    return DISPLAY_NAMES.get(rule, rule + " rule")


def _with(parts: Sequence[tuple[str, sp.Expr, str]], names_tex: Sequence[str] = ()) -> Pair:
    """`` with f = sin(x), g = x`` in text and LaTeX; the third item of a part is a remark
    (``base``) or empty; ``names_tex`` are the names in LaTeX when they differ from the text."""
    names_tex = names_tex or [n for n, _, _ in parts]
    text = ", ".join(f"{n} = {teaching_text(e)}" + (f" ({r})" if r else "") for n, e, r in parts)
    latex = r",\ ".join(
        f"{t} = {tex(e)}" + (rf"\ \text{{({r})}}" if r else "")
        for t, (_, e, r) in zip(names_tex, parts, strict=True)
    )
    return f" with {text}", rf" \text{{ with }} {latex}"


def _bracketed(e: sp.Expr) -> bool:
    """Whether ``e`` needs brackets as a leading factor (a sum; not a negative number)."""
    return not e.is_Number and precedence(e) < PRECEDENCE["Mul"]


def _factor_text(e: sp.Expr) -> str:
    """``e`` as a leading factor in plain text (parenthesised when it is a sum)."""
    return f"({teaching_text(e)})" if _bracketed(e) else teaching_text(e)


def _factor_latex(e: sp.Expr) -> str:
    return rf"\left({tex(e)}\right)" if _bracketed(e) else tex(e)


def _exponent_text(e: sp.Expr) -> str:
    """``^12``, ``^-12``, ``^n``, ``^(1/2)``, ``^(n - 1)``."""
    return f"^{teaching_text(e)}" if e.is_Integer or e.is_Symbol else f"^({teaching_text(e)})"


# -- the builders, one per rule ------------------------------------------------------------------
def _quotient(step: Any, defines: Defines) -> Identity | None:
    if len(step.substeps) != 2:
        return None
    f, g = (s.expr for s in step.substeps)
    text = "(f/g)' = (f' g - f g')/g^2"
    latex = r"\left(\frac{f}{g}\right)' = \frac{f' g - f g'}{g^{2}}"
    if f == 1:
        text, latex = text + " = -g'/g^2", latex + r" = -\frac{g'}{g^{2}}"
    more = _with([("f", f, ""), ("g", g, "")])
    return Identity(text + more[0], latex + more[1], (("f", f), ("g", g)),
                    (("f'", "f'"), ("g'", "g'")))


#: Letters of a product's factors: f g, f g h, f g h k; more are f_1 ... f_n.
_FACTOR_LETTERS = ("f", "g", "h", "k")


def _product(step: Any, defines: Defines) -> Identity | None:
    factors = [s.expr for s in step.substeps]
    n = len(factors)
    if n < 2:
        return None
    if n <= len(_FACTOR_LETTERS):
        names = list(_FACTOR_LETTERS[:n])
        texs = names
        terms = [" ".join(m + "'" if j == i else m for j, m in enumerate(names)) for i in range(n)]
        text = f"({' '.join(names)})' = " + " + ".join(terms)
        latex = rf"\left({' '.join(names)}\right)' = " + " + ".join(terms)
    else:
        names = [f"f_{i}" for i in range(1, n + 1)]
        texs = [f"f_{{{i}}}" for i in range(1, n + 1)]
        text = f"(f_1 ... f_{n})' = sum of each f_i' times the other factors"
        latex = r"\left(\prod_{i} f_{i}\right)' = \sum_{i} f_{i}' \prod_{j \neq i} f_{j}"
    more = _with([(m, e, "") for m, e in zip(names, factors, strict=True)], texs)
    roles = tuple((m + "'", t + "'") for m, t in zip(names, texs, strict=True))
    return Identity(text + more[0], latex + more[1],
                    tuple(zip(names, factors, strict=True)), roles)


def _power(step: Any, defines: Defines) -> Identity | None:
    """``d/du u^-12 = -12 u^-13``: the power rule at the step's exponent, right-hand side too."""
    expr, var = step.expr, step.var
    if isinstance(expr, Written):  # x**2 as typed: the same power
        expr = canonical(expr)
    if not (isinstance(expr, sp.Pow) and expr.base == var and var not in expr.exp.free_symbols):
        return None
    n = expr.exp
    lower = n - 1
    name = latex_name(var.name)
    lead_text, lead_latex = (
        ("-", "-") if n == -1 else (_factor_text(n) + " ", _factor_latex(n) + " ")
    )
    rhs_text = lead_text + teaching_text(var)
    rhs_text += "" if lower == 1 else _exponent_text(lower)
    rhs_latex = lead_latex + name + ("" if lower == 1 else f"^{{{tex(lower)}}}")
    text = f"d/d{var} {var}{_exponent_text(n)} = {rhs_text}"
    latex = rf"{d_by(var)} {name}^{{{tex(n)}}} = {rhs_latex}"
    return Identity(text, latex, (("n", n),))


def _constant_multiple(step: Any, defines: Defines) -> Identity | None:
    """``(c f)' = c f'``; a product or quotient as typed (``x**2/2``) keeps the note its walk
    wrote (``(f/c)' = f'/c with c = 2``), which names the constant where the student put it."""
    if len(step.substeps) != 1 or isinstance(step.expr, Written):
        return None
    f = step.substeps[0].expr
    constant = [a for a in sp.Mul.make_args(step.expr) if step.var not in a.free_symbols]
    c = sp.Mul(*constant) if constant else step.expr / f
    more = _with([("c", c, ""), ("f", f, "")])
    return Identity("(c f)' = c f'" + more[0], r"\left(c f\right)' = c f'" + more[1],
                    (("c", c), ("f", f)), (("f'", "f'"),))


def _general_power(step: Any, defines: Defines) -> Identity | None:
    """``(f^g)' = f^g (g' ln(f) + g f'/f)``: ``f^g = e^(g ln f)`` differentiated, the base and the
    exponent named."""
    if len(step.substeps) != 2:
        return None
    f, g = (s.expr for s in step.substeps)
    more = _with([("f", f, "base"), ("g", g, "exponent")])
    text = "(f^g)' = (e^(g ln(f)))' = f^g (g' ln(f) + g f'/f)" + more[0]
    latex = (r"\left(f^{g}\right)' = \left(e^{g \ln{f}}\right)'"
             r" = f^{g} \left(g' \ln{f} + \frac{g f'}{f}\right)" + more[1])
    roles = (("base f'", r"\text{base } f'"), ("exponent g'", r"\text{exponent } g'"))
    return Identity(text, latex, (("f", f), ("g", g)), roles)


def _chain(step: Any, defines: Defines) -> Identity | None:
    """``(f(u))' = f'(u) u'`` in the inner function's shown name (``v`` inside another chain)."""
    count = len(defines)
    if not count or len(step.substeps) != 2 * count:
        return None
    names = [(teaching_text(s), latex_name(s.name)) for s, _ in defines]
    parts = tuple((n, e) for (n, _), (_, e) in zip(names, defines, strict=True))
    if count == 1:
        ((u, u_tex),) = names
        text = f"(f({u}))' = f'({u}) {u}': outer derivative times inner derivative"
        latex = rf"\left(f({u_tex})\right)' = f'({u_tex})\, {u_tex}'"
        outer: tuple[Pair, ...] = ((f"f'({u})", f"f'({u_tex})"),)
    else:
        args_text = ", ".join(n for n, _ in names)
        args_tex = ", ".join(t for _, t in names)
        text = (f"(f({args_text}))' = sum of (d/du_i f) u_i': each partial derivative times its"
                " inner derivative")
        latex = (rf"\left(f({args_tex})\right)' = \sum_{{i}} "
                 r"\frac{\partial f}{\partial u_{i}}\, u_{i}'")
        outer = tuple((f"df/d{n}", rf"\frac{{\partial f}}{{\partial {t}}}") for n, t in names)
    inner = tuple((f"{n}'", f"{t}'") for n, t in names)
    return Identity(text, latex, parts, outer + inner)


def _sum(step: Any, defines: Defines) -> Identity | None:
    n = len(step.substeps)
    if n < 2:
        return None
    if n == 2:
        latex = r"\left(f + g\right)' = f' + g'"
    else:
        latex = r"\left(f_{1} + \dots + f_{n}\right)' = f_{1}' + \dots + f_{n}'"
    return Identity("differentiate term by term", latex)


#: ``log(`` of the natural logarithm in a row's identity (not ``log2(``, ``log10(``, ``log_b(``).
_NATURAL_LOG = re.compile(r"\blog\(")
#: The generic argument of a one-argument row's identity (``d/du sin(u) = cos(u)``).
_GENERIC = re.compile(r"\bu\b")


def _remark(identity: str) -> tuple[str, str]:
    """A row's identity split into the equality and its remark (``(0 at u = 0)``)."""
    head, sep, rest = identity.partition("  (")
    return head, (sep.strip() + rest) if sep else ""


def _function(step: Any, defines: Defines) -> Identity | None:
    """A function of the rule table (or the exponential ``a^x``) at a step: the row's identity
    with its generic ``u`` written as the step's variable; in LaTeX, the same equality built
    from the row's derivative at that variable. A row of several arguments (``atan2``,
    ``max``) keeps its identity as it is, in words in LaTeX too."""
    expr = canonical(step.expr) if isinstance(step.expr, Written) else step.expr
    var = step.var
    if isinstance(expr, sp.Pow) and var not in expr.base.free_symbols:  # a^u
        if expr.base.is_zero:
            return None  # 0^u: its walk's note says why it is 0
        base, name = expr.base, teaching_text(var)
        power, derivative = sp.Pow(base, var), sp.Pow(base, var) * sp.log(base)
        bare = base.is_Symbol or (base.is_Integer and base.is_positive)
        a = teaching_text(base) if bare else f"({teaching_text(base)})"
        text = f"d/d{name} {a}^{name} = {a}^{name} ln({teaching_text(base)})"
        return Identity(text, rf"{d_by(var)} {tex(power)} = {tex(derivative)}")
    structural = expr.is_Atom or isinstance(expr, sp.Add | sp.Mul | sp.Pow | sp.Piecewise)
    rule = None if structural else rule_for(expr.func)
    if rule is None or not rule.identity:
        return None
    identity, remark = _remark(rule.identity)
    if identity.startswith("d/du ") and len(expr.args) == 1:
        name = teaching_text(var)
        text = f"d/d{name} " + _GENERIC.sub(name, identity.removeprefix("d/du "))
        (partial,) = rule.partials(var)
        latex = rf"{d_by(var)} {tex(expr.func(var))} = {tex(partial)}"
        if remark:
            text += "  " + _GENERIC.sub(name, remark)
            latex += r"\quad " + latex_math(_GENERIC.sub(name, remark))
    else:
        text = rule.identity
        latex = latex_math(_NATURAL_LOG.sub("ln(", text))
    return Identity(_NATURAL_LOG.sub("ln(", text), latex)


def _math_word(match: re.Match[str]) -> str:
    """A word in math mode: one of LaTeX's own function names (``\\sin``, ``\\ln``) as that
    command, another upright."""
    word = match.group(0)
    if word in accepted_latex_functions or word in ("max", "min"):
        return "\\" + word + "{}"
    return r"\mathrm{" + word.replace("_", r"\_") + "}"


def latex_math(text: str) -> str:
    """A row's identity (or remark) written in plain text as LaTeX in math mode: ``^2`` and
    ``^(n - 1)`` as superscripts, words of several letters upright (``\\mathrm{atan2}``,
    ``\\mathrm{ties}``), spaces kept; no ``\\text`` (whose content KaTeX reads differently)."""
    text = text.replace("\\", "").replace("{", "(").replace("}", ")")
    text = re.sub(r"\^\(([^()]*)\)", r"^{\1}", text)
    text = re.sub(r"\^(-?\w+)", r"^{\1}", text)
    text = re.sub(r"[A-Za-z_][A-Za-z0-9_]+", _math_word, text)
    for char in "$&#%":
        text = text.replace(char, "\\" + char)
    return text.replace(" ", r"\ ")


Builder = Callable[[Any, Defines], "Identity | None"]

#: The identity of each rule that names parts; other rules print their explanation.
BUILDERS: dict[str, Builder] = {
    "quotient": _quotient,
    "product": _product,
    "power": _power,
    "constant multiple": _constant_multiple,
    "general power": _general_power,
    "chain": _chain,
    "sum": _sum,
}


def identity_of(step: Any, defines: Defines | None = None) -> Identity | None:
    """The identity ``step`` applies with its parts named, or ``None`` for a rule that names
    none. ``defines`` are a chain step's inner functions as shown (renamed inside another
    chain); by default the step's own."""
    if not hasattr(step, "defines"):
        return None
    builder = BUILDERS.get(step.rule)
    defines = step.defines if defines is None else defines
    found = builder(step, defines) if builder is not None else None
    if found is None and step.rule not in _STRUCTURAL:
        found = _function(step, defines)
    return found


#: Rules of the structure of an expression, which no row of the rule table states.
_STRUCTURAL = frozenset({*BUILDERS.keys() - {"power"}, "constant", "variable", "difference",
                         "piecewise", "simplify", "change of base"})
