"""SymPy expressions as text in the input language: what :func:`symdiff.parse` (and the tensor
parser, for elementwise parts) reads back as the same expression.

SymPy's own text (``sstr``) writes ``Max``, ``Min``, ``Abs``, ``ceiling``, ``Mod``, ``E`` and
``Piecewise``, which the input language spells ``max``, ``min``, ``abs``, ``ceil``, ``mod``, ``e``
and ``where``: every function is printed under its registry row's first name. Recipes
(:mod:`symdiff.recipe`) store scalar expressions this way; tensor formulas
(:mod:`symdiff.tensor.formula`) print their elementwise parts with the same printer.
Derivations print with :func:`teaching_text`: the same language, the natural logarithm as ``ln``.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp
from sympy.printing.str import StrPrinter

from .. import registry
from ..codegen.quickprint import joined_terms, names_product_text
from ..codegen.terms import ordered_terms
from ..functions import sinc_d_closed_form
from ..simplify.dag import node_count, tree_size


class InputPrinter(StrPrinter):
    """SymPy's plain text in the input language, which :func:`symdiff.parse` reads back:
    ``max``/``min``/``abs`` for SymPy's ``Max``/``Min``/``Abs``, ``where`` for ``Piecewise``,
    ``e`` for E. ``order`` is SymPy's printing order of terms (None: the conventional one).
    """

    def __init__(self, order: str | None = None) -> None:
        super().__init__({"order": order})

    def _print(self, expr: sp.Basic, **kwargs) -> str:
        """A registry row's node under the row's first name (``ceil`` for SymPy's ``ceiling``,
        ``mod`` for ``Mod``); ``sinc`` with its argument over pi, since ``sinc(x)`` is read as
        SymPy's ``sinc(pi*x)``. Internal rows (no names) never occur in a user's expression."""
        row = registry.by_class_name().get(type(expr).__name__)
        if row is None or not row.names:
            return super()._print(expr, **kwargs)
        args = (expr.args[0] / sp.pi,) if row.method == "sinc" else expr.args
        return self._call(row.names[0], args)

    def _print_Add(self, expr: sp.Add, order: str | None = None) -> str:
        """SymPy's text of a sum (:func:`~symdiff.codegen.quickprint.joined_terms`: the same
        text, quicker), its terms in the stored order or the conventional one
        (:func:`~symdiff.codegen.terms.ordered_terms`, SymPy's ``as_ordered_terms``)."""
        order = order or self.order
        if order == "none":
            return joined_terms(self, list(expr.args))
        if order is None:
            return joined_terms(self, ordered_terms(expr))
        return super()._print_Add(expr, order=order)

    def _print_Mul(self, expr: sp.Mul) -> str:
        """SymPy's text of a product, quicker for an integer times names
        (:func:`~symdiff.codegen.quickprint.names_product_text`)."""
        text = names_product_text(self, expr)
        return super()._print_Mul(expr) if text is None else text

    def _call(self, name: str, args: Sequence[sp.Basic]) -> str:
        return f"{name}({', '.join(self._print(a) for a in args)})"

    def _print_Max(self, expr: sp.Max) -> str:
        return self._call("max", expr.args)

    def _print_Min(self, expr: sp.Min) -> str:
        return self._call("min", expr.args)

    def _print_Abs(self, expr: sp.Abs) -> str:
        return self._call("abs", expr.args)

    def _print_sinc_d(self, expr: sp.Basic) -> str:
        """The n-th derivative of ``sin(u)/u`` in closed form (the generated code evaluates the
        node by a series near 0; the closed form is what a reader checks)."""
        closed = sinc_d_closed_form(*expr.args)
        text = self._print(closed)
        return f"({text})" if closed.is_Add else text  # it stands as one factor

    def _print_Exp1(self, expr: sp.Basic) -> str:
        return "e"

    def _print_held(self, expr: sp.Basic) -> str:
        """A traced loop's held state (:class:`symdiff.functions.held`) is its value."""
        return f"({self._print(expr.args[0])})"

    def _print_Piecewise(self, expr: sp.Piecewise) -> str:
        *pairs, (otherwise, condition) = expr.args
        text = self._print(otherwise)
        if condition != sp.true:
            text = f"where({self._print(condition)}, {text}, nan)"
        for value, cond in reversed(pairs):
            text = f"where({self._print(cond)}, {self._print(value)}, {text})"
        return text


class TeachingPrinter(InputPrinter):
    """The input language as a derivation shows it: the natural logarithm written ``ln`` (which
    :func:`symdiff.parse` reads too), as a textbook and the rules' identities write it."""

    def _print(self, expr: sp.Basic, **kwargs) -> str:
        if type(expr) is sp.log:
            return self._call("ln", expr.args)
        return super()._print(expr, **kwargs)


def teaching_text(expr: sp.Basic) -> str:
    """``expr`` as a derivation's text view prints it: the input language with ``ln``."""
    return TeachingPrinter().doprint(expr)


def input_text(expr: sp.Basic, order: str | None = None) -> str:
    """``expr`` as text in the input language. Recipes (:class:`~symdiff.recipe.Recipe`) use
    ``order="none"``, SymPy's stored order: sorting a long sum costs more than deriving it."""
    return InputPrinter(order).doprint(expr)


#: Expressions whose tree has more operations than this are not spelt out in recipes.
RECIPE_MAX_OPS = 50_000


def recipe_text(expr: sp.Basic) -> str:
    """``expr`` as a recipe holds it: :func:`input_text` in stored order, or, for a tree of
    more than :data:`RECIPE_MAX_OPS` operations (a traced recurrence: its distinct
    subexpressions are few, but the text spells out every path of its tree, exponentially
    many), a description of its size that :func:`symdiff.parse` does not read back
    (``explain()`` then asks for ``expr=``)."""
    size = tree_size(expr, RECIPE_MAX_OPS + 1)
    if size <= RECIPE_MAX_OPS:
        return input_text(expr, order="none")
    return (f"<an expression of {tree_size(expr):,} operations in its tree and "
            f"{node_count([expr]):,} distinct ones, too large to spell out>")
