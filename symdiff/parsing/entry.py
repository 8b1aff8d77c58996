"""The entry point: :func:`parse` reads a string, a SymPy expression or a Python number."""

from __future__ import annotations

import ast
import math
import numbers
import warnings
from fractions import Fraction

import sympy as sp

from ..errors import ParseError, UnsupportedError
from ..simplify.dag import distinct_nodes, free_symbols, substitute
from .budget import OverBudget
from .builder import ExpressionBuilder
from .functions import CONSTANTS
from .limits import LIMITS, PARSER_RECURSION_LIMIT, recursion_limit
from .names import check_symbol_name
from .sizes import NON_FINITE, numerically_real, short_expr
from .source import Source, check_tree, scan, syntax_error

_NOT_REAL = frozenset([*NON_FINITE, sp.I])


def parse(source: str | sp.Expr | int | float) -> sp.Expr:
    """Parse ``source`` into a SymPy expression whose symbols are all real.

    ``source`` may be a string (see the module docstring for the grammar and ``LIMITS``), a
    SymPy expression (every symbol name is validated with :func:`check_symbol_name`, which
    also accepts names that are not identifiers, such as ``x_{1}``, and the symbol replaced by
    ``Symbol(name, real=True)``), or a Python ``int``/``float`` (floats
    become the exact rational of their ``repr``). Raises :class:`~symdiff.errors.ParseError`
    (with ``text`` and a 0-based ``position`` for strings) on anything else.
    """
    if isinstance(source, str):
        return _parse_text(source)
    if isinstance(source, sp.Basic):
        return _from_sympy(source)
    if isinstance(source, bool):
        raise ParseError(f"expected an expression, not the bool {source}")
    if isinstance(source, numbers.Integral):
        value = int(source)
        if abs(value) >= 10 ** LIMITS["max_int_digits"]:
            raise ParseError(f"integer has more than {LIMITS['max_int_digits']} digits")
        return sp.Integer(value)
    if isinstance(source, numbers.Real):
        value = float(source)
        if not math.isfinite(value):
            raise ParseError(f"{value} is not a finite real number")
        exact = Fraction(repr(value))
        return sp.Rational(exact.numerator, exact.denominator)
    raise ParseError(
        "expected a string, a SymPy expression or a number, "
        f"not {type(source).__module__}.{type(source).__qualname__}"
    )


def text_names(text: str) -> frozenset[str]:
    """The names a string uses as variables (every name that is neither called nor a constant),
    including those that cancel (``x - x``). Meant for text that :func:`parse` accepted; for
    text that does not parse, the result is empty."""
    try:
        src = scan(text)
        with recursion_limit(PARSER_RECURSION_LIMIT), warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = ast.parse(src.transformed, mode="eval")
    except (ParseError, SyntaxError, RecursionError, MemoryError, ValueError, OverflowError):
        return frozenset()
    nodes = list(ast.walk(tree))
    called = {id(node.func) for node in nodes if isinstance(node, ast.Call)}
    return frozenset(
        node.id
        for node in nodes
        if isinstance(node, ast.Name) and id(node) not in called and node.id not in CONSTANTS
    )


def _parse_text(text: str) -> sp.Expr:
    return read_text(text)[0]


def read_text(text: str) -> tuple[sp.Expr, Source, ast.Expression]:
    """A string's expression as :func:`parse` reads it, with the checked text and its syntax
    tree (which :mod:`symdiff.parsing.teaching` reads again as written)."""
    limit = LIMITS["max_length"]
    if len(text) > limit:
        raise ParseError(
            f"expression is longer than {limit} characters (limit max_length)", text, limit
        )
    if not text.strip():
        raise ParseError("empty expression", text, 0)
    src = scan(text)
    try:
        # Python's parser warns about things like "1x" (SyntaxWarning) on stderr; those inputs
        # are refused or read on our own terms, so the warning would only confuse.
        with recursion_limit(PARSER_RECURSION_LIMIT), warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = ast.parse(src.transformed, mode="eval")
    except SyntaxError as exc:
        raise syntax_error(exc, src) from None
    except (RecursionError, MemoryError, ValueError, OverflowError):
        raise src.error(
            "expression is too deeply nested or too long for Python's parser "
            "(too many operators in a row)",
            0,
        ) from None
    if isinstance(tree.body, ast.Tuple) and not tree.body.elts:  # only comments, or "()"
        raise src.error("empty expression", 0)
    check_tree(tree, src)
    builder = ExpressionBuilder(src, tree.body)
    try:
        return builder.build(tree.body), src, tree
    except OverBudget as exc:  # raised inside SymPy past the deadline (see parsing.budget)
        position = src.position(exc.node) if exc.node is not None else 0
        raise src.error(builder.over_budget(), position) from None
    except RecursionError:
        raise src.error("expression is too complex to evaluate", 0) from None


def _from_sympy(expr: sp.Basic) -> sp.Expr:
    """A SymPy expression validated, its symbols real. Each distinct subexpression is looked
    at once (:mod:`symdiff.simplify.dag`): a traced recurrence shares its subexpressions, and
    SymPy's own walks would follow every path of its tree."""
    if not isinstance(expr, sp.Expr):
        raise ParseError(f"expected a SymPy expression, not {type(expr).__name__}")
    nodes = distinct_nodes([expr])
    replacements: dict[sp.Basic, sp.Basic] = {}
    for sym in nodes:
        if not isinstance(sym, sp.Symbol):
            continue
        if type(sym) is not sp.Symbol:
            raise ParseError(f"{type(sym).__name__} {sym} is not supported; use sympy.Symbol")
        check_symbol_name(sym.name)
        real = sp.Symbol(sym.name, real=True)
        if real != sym:
            replacements[sym] = real
    for free in free_symbols([expr]):
        if not isinstance(free, sp.Symbol):
            raise UnsupportedError(f"{type(free).__name__} {free} is not supported")
    undefined = [n for n in nodes if isinstance(n, sp.core.function.AppliedUndef)]
    if undefined:
        raise UnsupportedError(
            f"undefined function {type(undefined[0]).__name__}() is not supported"
        )
    if any(n in _NOT_REAL for n in nodes):
        raise ParseError(f"{short_expr(expr)} contains a value that is not a finite real number")
    result = substitute(expr, replacements)
    if not free_symbols([result]) and not result.is_Rational:
        real = result.is_extended_real
        if real is False or (real is None and not numerically_real(result)):
            raise ParseError(f"{short_expr(result)} is not a finite real number")
    return result
