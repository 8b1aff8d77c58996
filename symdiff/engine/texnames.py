"""Variable names in LaTeX as a student writes them: ``lam`` as the name ``\\mathrm{lam}``,
``sigma`` as ``\\sigma``, ``x1`` as ``x_{1}``.

SymPy already prints Greek names as Greek letters and a trailing number or ``_1`` as a subscript,
but a name of several letters as a product of italic letters (``lam`` reads ``l a m``). Here each
such word (the name's base, and each word of its subscripts and superscripts, as SymPy's own
:func:`~sympy.printing.conventions.split_super_sub` splits them) becomes ``\\mathrm{...}``,
through SymPy's ``symbol_names`` printer setting: the printer never sees a rewritten string.
"""

from __future__ import annotations

from functools import lru_cache

import sympy as sp
from sympy.printing.conventions import split_super_sub
from sympy.printing.latex import translate

from ..codegen.naming import CONSTANT


def _word(word: str) -> str:
    """One word of a name: a Greek letter or SymPy modifier (``xdot``) as SymPy prints it, a
    single letter or a number as it is, a longer word upright (``\\mathrm{lam}``)."""
    translated = translate(word)
    if translated != word or len(word) <= 1 or not word.isalpha():
        return translated
    return rf"\mathrm{{{word}}}"


@lru_cache(maxsize=4096)
def latex_name(name: str) -> str:
    """The LaTeX of a variable called ``name``: ``lam`` -> ``\\mathrm{lam}``, ``sigma`` ->
    ``\\sigma``, ``x1`` -> ``x_{1}``, ``lam_max`` -> ``\\mathrm{lam}_{\\mathrm{max}}``; a
    traced function's bound constant ``_c0`` as its code name, ``\\mathtt{\\_c0}``."""
    if CONSTANT.match(name):
        return r"\mathtt{\_" + name[1:] + "}"
    base, supers, subs = split_super_sub(name)
    if not base or not base.replace("_", "").isalnum():  # not a plain name: SymPy's own
        return sp.latex(sp.Symbol(name))
    out = _word(base)
    if supers:
        out += "^{" + " ".join(_word(s) for s in supers) + "}"
    if subs:
        out += "_{" + " ".join(_word(s) for s in subs) + "}"
    return out


def symbol_names(*exprs: sp.Basic) -> dict[sp.Symbol, str]:
    """The ``symbol_names`` setting of SymPy's LaTeX printer for the symbols of ``exprs``."""
    symbols: set[sp.Symbol] = set()
    for expr in exprs:
        symbols |= {s for s in expr.free_symbols if isinstance(s, sp.Symbol)}
    return {s: latex_name(s.name) for s in symbols}


def tex(expr: sp.Basic) -> str:
    """``sympy.latex(expr)`` with every variable named as :func:`latex_name` writes it, in a
    textbook's notation: ``\\ln`` for the natural logarithm, ``\\arcsin`` for the inverse
    sine (and the other inverse trigonometric functions)."""
    return sp.latex(expr, symbol_names=symbol_names(expr), ln_notation=True,
                    inv_trig_style="full")


def d_by(var: sp.Symbol, partial: bool = False) -> str:
    """``\\frac{d}{dx}``, ``\\frac{d}{d\\,\\mathrm{lam}}`` (a thin space before a word) or the
    partial ``\\frac{\\partial}{\\partial u_{1}}``."""
    name = latex_name(var.name)
    space = r"\," if name.startswith(r"\mathrm") else ""
    if partial:
        return rf"\frac{{\partial}}{{\partial {space}{name}}}"
    return rf"\frac{{d}}{{d{space}{name}}}"
