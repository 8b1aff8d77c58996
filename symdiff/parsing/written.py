"""The expression as the student wrote it: unevaluated nodes for ``+ -``, ``*``, ``/``, unary
``-``, ``**`` and typed numbers, which SymPy would rewrite on construction.

SymPy builds ``(sigma/r)**12 - x - y/z`` as ``-x - y/z + sigma**12/r**12``: terms sorted,
``x - y`` stored as ``x + (-1)*y``, ``x/y`` as ``x*y**-1`` and the power of a quotient
distributed. For teaching (:func:`symdiff.parsing.teaching.parse_as_written`) the tree keeps
what was typed, in these nodes; they are SymPy expressions (free symbols, ``xreplace``,
hashing and the plain-text and LaTeX printers work on them) that SymPy leaves alone:

- :class:`SignedSum` ``a + b - c``: the terms in the order written, each with its sign;
- :class:`Product` ``a*b*c``: the factors in the order written (a run of ``*``);
- :class:`Quotient` ``a/b``: a division as written (``a*b/c`` is ``(a*b)/c``, as in Python);
- :class:`Negation` ``-a``;
- :class:`Power` ``a**b``: never distributed over a product or quotient;
- :class:`Literal`: a number or constant spelt as typed (``0.5``, ``e``), standing for its
  exact value;
- :class:`BaseLog` ``log(u, b)``: a logarithm to a base (SymPy makes it ``log(u)/log(b)``);
- :class:`Called` a function by the name typed: ``max(a, b)``/``min(a, b)`` with the arguments
  in the order typed (SymPy sorts them, even unevaluated: ``min(x, 1)`` is ``Min(1, x)``), and
  another name of a rule-table function (``ln(x)``, ``arctan(x)``: SymPy prints ``log(x)``,
  ``atan(x)``).

Functions of the rule table are SymPy's classes applied unevaluated to written arguments.
:func:`canonical` gives the SymPy expression a tree stands for, built as the parser builds it
(so it equals :func:`symdiff.parse` of the same text). The engine
(:class:`symdiff.engine.forward.Deriver`) walks these nodes with the same rule rows as
SymPy's, and computes every result from canonical values: only what is differentiated (a
step's ``expr``, the chain rule's ``u = ...``, the quotient rule's ``f`` and ``g``) is shown as
written. ``sympy.diff`` and ``evalf`` work on the nodes through their canonical value.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping
from types import MappingProxyType
from typing import ClassVar

import sympy as sp
from sympy.core.symbol import Str
from sympy.printing.latex import accepted_latex_functions
from sympy.printing.precedence import PRECEDENCE, precedence

from .. import registry
from ..simplify import quick

ADD, MUL, POW = PRECEDENCE["Add"], PRECEDENCE["Mul"], PRECEDENCE["Pow"]
#: Unary minus binds as in Python: tighter than ``*`` (``-x*y`` is ``(-x)*y``), looser than
#: ``**`` (``-x**2`` is ``-(x**2)``); SymPy prints it at the level of ``+``.
NEG = (MUL + POW) // 2
#: Runs of ``+ -`` or ``*`` longer than this are one ``Add``/``Mul`` call, as the parser makes
#: them (:mod:`symdiff.parsing.builder`): folding them one operand at a time is quadratic.
SEQUENTIAL_RUN = 32


def _prec(expr: sp.Basic) -> int:
    if isinstance(expr, Written):
        return expr.precedence
    return precedence(expr)


def _wrap(printer, expr: sp.Basic, level: int, strict: bool, left: str, right: str) -> str:
    """``expr`` printed, in brackets when it binds less tightly than ``level`` (or as tightly,
    when ``strict``)."""
    text = printer._print(expr)
    p = _prec(expr)
    return f"{left}{text}{right}" if p < level or (strict and p == level) else text


def _str(printer, expr: sp.Basic, level: int, strict: bool = False) -> str:
    return _wrap(printer, expr, level, strict, "(", ")")


def _tex(printer, expr: sp.Basic, level: int, strict: bool = False) -> str:
    return _wrap(printer, expr, level, strict, r"\left(", r"\right)")


class Written(sp.Expr):
    """A node of an expression as written; :meth:`value` is what SymPy would make of it."""

    is_commutative = True
    precedence = PRECEDENCE["Atom"]

    def value(self, args: list[sp.Expr]) -> sp.Expr:
        """The SymPy expression of this node, given its arguments' canonical values."""
        raise NotImplementedError

    def doit(self, **hints) -> sp.Expr:
        """The canonical SymPy expression (SymPy's protocol for unevaluated objects)."""
        return canonical(self)

    def _eval_evalf(self, prec: int) -> sp.Expr:
        return canonical(self).evalf(prec_to_dps(prec))

    def _eval_derivative(self, s: sp.Symbol) -> sp.Expr:
        # SymPy's protocol, for callers holding a written tree (tests use sympy.diff as the
        # reference); symdiff's engine never calls it, it walks the nodes by its own rules.
        return sp.diff(canonical(self), s)


def prec_to_dps(prec: int) -> int:
    return max(1, int(round(prec / 3.3219280948873626) - 1))


class SignedSum(Written):
    """``a + b - c`` as written: ``SignedSum(Tuple(1, 1, -1), a, b, c)``. The first sign is
    always +1 (a leading minus is a :class:`Negation` of the first term)."""

    precedence = ADD

    @classmethod
    def of(cls, signs: Iterable[int], terms: Iterable[sp.Expr]) -> SignedSum:
        return cls(sp.Tuple(*(sp.Integer(s) for s in signs)), *terms)

    @property
    def signs(self) -> tuple[int, ...]:
        return tuple(int(s) for s in self.args[0])

    @property
    def terms(self) -> tuple[sp.Expr, ...]:
        return self.args[1:]

    def value(self, args: list[sp.Expr]) -> sp.Expr:
        terms = [t if sign > 0 else quick.negative(t)
                 for sign, t in zip(self.signs, args[1:], strict=True)]
        if len(terms) > SEQUENTIAL_RUN:  # one Add, as the parser builds a long run
            return quick.addition(terms)
        return functools.reduce(lambda a, b: quick.addition([a, b]), terms)

    def _sympystr(self, printer) -> str:
        first, *rest = self.terms
        parts = [_str(printer, first, ADD)]
        for sign, term in zip(self.signs[1:], rest, strict=True):
            parts.append(("+ " if sign > 0 else "- ") + _str(printer, term, ADD, strict=True))
        return " ".join(parts)

    def _latex(self, printer) -> str:
        first, *rest = self.terms
        parts = [_tex(printer, first, ADD)]
        for sign, term in zip(self.signs[1:], rest, strict=True):
            parts.append(("+ " if sign > 0 else "- ") + _tex(printer, term, ADD, strict=True))
        return " ".join(parts)


class Product(Written):
    """``a*b*c`` as written: the factors of a run of ``*``, in order."""

    precedence = MUL

    def value(self, args: list[sp.Expr]) -> sp.Expr:
        if len(args) > SEQUENTIAL_RUN:
            return quick.multiplication(args)
        return functools.reduce(quick.product, args)

    def _sympystr(self, printer) -> str:
        first, *rest = self.args
        return "*".join([_str(printer, first, MUL)] + [_str(printer, f, MUL, True) for f in rest])

    def _latex(self, printer) -> str:
        first, *rest = self.args
        text = _tex(printer, first, MUL)
        for factor in rest:
            shown = _tex(printer, factor, MUL, True)
            text += (r" \cdot " if shown[:1].isdigit() or shown[:1] in "-." else " ") + shown
        return text


class Quotient(Written):
    """``a/b`` as written."""

    precedence = MUL

    def value(self, args: list[sp.Expr]) -> sp.Expr:
        numerator, denominator = args
        return quick.product(numerator, quick.power(denominator, sp.S.NegativeOne))

    def _sympystr(self, printer) -> str:
        numerator, denominator = self.args
        return f"{_str(printer, numerator, MUL)}/{_str(printer, denominator, MUL, True)}"

    def _latex(self, printer) -> str:
        numerator, denominator = self.args
        return rf"\frac{{{printer._print(numerator)}}}{{{printer._print(denominator)}}}"


class Negation(Written):
    """``-a`` as written."""

    precedence = NEG

    def value(self, args: list[sp.Expr]) -> sp.Expr:
        return quick.negative(args[0])

    def _sympystr(self, printer) -> str:
        return "-" + _str(printer, self.args[0], NEG)

    def _latex(self, printer) -> str:
        return "-" + _tex(printer, self.args[0], NEG)


class Power(Written):
    """``a**b`` as written: ``(sigma/r)**12`` stays a power of a quotient."""

    precedence = POW

    def value(self, args: list[sp.Expr]) -> sp.Expr:
        return quick.power(*args)

    def _sympystr(self, printer) -> str:
        base, exponent = self.args
        # Python reads x**-1 and x**y**z without brackets (** is right-associative)
        shown = printer._print(exponent) if isinstance(exponent, Negation) else _str(
            printer, exponent, POW
        )
        return f"{_str(printer, base, POW, True)}**{shown}"

    def _latex(self, printer) -> str:
        # SymPy's own layout of a power (sin^2(x), sqrt), with the written base and exponent
        return printer._print(sp.Pow(*self.args, evaluate=False))


class Literal(Written):
    """A number or named constant as typed: ``Literal(1/2, Str("0.5"))``, ``Literal(E, "e")``."""

    @classmethod
    def of(cls, value: sp.Expr, text: str) -> Literal:
        return cls(value, Str(text))

    @property
    def text(self) -> str:
        return self.args[1].name

    def value(self, args: list[sp.Expr]) -> sp.Expr:
        return args[0]

    def _sympystr(self, printer) -> str:
        return self.text

    def _latex(self, printer) -> str:
        return self.text if self.text[:1].isdigit() or self.text[:1] == "." else printer._print(
            self.args[0]
        )


class BaseLog(Written):
    """``log(u, b)`` as written: the logarithm of ``u`` to the base ``b``."""

    def value(self, args: list[sp.Expr]) -> sp.Expr:
        return sp.log(*args)

    def _sympystr(self, printer) -> str:
        return f"log({printer._print(self.args[0])}, {printer._print(self.args[1])})"

    def _latex(self, printer) -> str:
        argument, base = (printer._print(a) for a in self.args)
        return rf"\log_{{{base}}}\left({argument}\right)"


def _called_functions() -> Mapping[str, type[sp.Expr]]:
    """The names a :class:`Called` node keeps: ``max``/``min`` (SymPy sorts their arguments) and
    every other name of a rule-table function (``ln``, ``arctan``, ...: SymPy prints its own)."""
    functions: dict[str, type[sp.Expr]] = {"max": sp.Max, "min": sp.Min}
    for row in registry.ROWS:
        if row.head and row.names[1:]:
            functions.update(dict.fromkeys(row.names[1:], registry.head_class(row)))
    return MappingProxyType(functions)


class Called(Written):
    """A function called by the name typed, with its arguments in the order typed:
    ``Called(Str("min"), x, 1)`` (SymPy's ``Min(1, x)``), ``Called(Str("ln"), x)`` (SymPy's
    ``log(x)``)."""

    #: The SymPy class of each such name (its value is that class applied, evaluated).
    FUNCTIONS: ClassVar[Mapping[str, type[sp.Expr]]] = _called_functions()

    @classmethod
    def of(cls, name: str, operands: Iterable[sp.Expr]) -> Called:
        return cls(Str(name), *operands)

    @property
    def name(self) -> str:
        return self.args[0].name

    @property
    def function(self) -> type[sp.Expr]:
        return self.FUNCTIONS[self.name]

    @property
    def operands(self) -> tuple[sp.Expr, ...]:
        return self.args[1:]

    def value(self, args: list[sp.Expr]) -> sp.Expr:
        return self.function(*args[1:])

    def _sympystr(self, printer) -> str:
        return f"{self.name}({', '.join(printer._print(a) for a in self.operands)})"

    def _latex(self, printer) -> str:
        inside = ", ".join(printer._print(a) for a in self.operands)
        name = self.name.replace("_", r"\_")
        commands = (*accepted_latex_functions, "max", "min")  # LaTeX's own: \\ln, \\max
        head = rf"\{name}" if name in commands else rf"\operatorname{{{name}}}"
        return rf"{head}\left({inside}\right)"


def canonical(expr: sp.Basic, memo: dict[sp.Basic, sp.Basic] | None = None) -> sp.Basic:
    """The SymPy expression a written tree stands for (``expr`` itself when nothing in it is
    written). ``memo`` shares the work between calls on subtrees of one tree."""
    memo = {} if memo is None else memo
    return _canonical(expr, memo)


def _canonical(expr: sp.Basic, memo: dict[sp.Basic, sp.Basic]) -> sp.Basic:
    found = memo.get(expr)
    if found is not None:
        return found
    if isinstance(expr, Literal):
        value = expr.args[0]
    elif not expr.args or isinstance(expr, Str):
        value = expr
    else:
        args = [_canonical(a, memo) for a in expr.args]
        if isinstance(expr, Written):
            value = expr.value(args)
        elif all(a is b for a, b in zip(args, expr.args, strict=True)):
            value = expr
        else:
            value = expr.func(*args)
    memo[expr] = value
    return value


def canonical_values() -> Callable[[sp.Basic], sp.Basic]:
    """:func:`canonical` with one memo for many subtrees of the same tree."""
    memo: dict[sp.Basic, sp.Basic] = {}
    return lambda expr: _canonical(expr, memo)
