"""Safe parsing of expression strings into SymPy expressions.

``parse`` turns a string written in Python syntax into a SymPy expression **without ever running
it**: the text is checked character by character, handed to :func:`ast.parse`, and the syntax
tree is translated node by node through an allow-list. Nothing from the input is ever passed to
``eval``, ``exec``, ``compile``, ``sympify`` or ``parse_expr``.

Grammar
-------
::

    expr     := expr ('+' | '-') expr | expr ('*' | '/') expr
              | expr ('**' | '^') expr          # '^' is '**': same precedence, right-associative
              | ('-' | '+') expr | '(' expr ')' | call | NAME | NUMBER
    call     := FUNCTION '(' expr (',' expr)* ')'
              | 'log' '(' expr [',' expr | ',' 'base' '=' expr] ')'
              | 'where' '(' expr CMP expr ',' expr ',' expr ')'
    CMP      := '<' | '<=' | '>' | '>='         # only as the condition of where(...)
    NAME     := [A-Za-z][A-Za-z0-9_]*           # ASCII, not a Python keyword -> real Symbol
    NUMBER   := Python int or float literal     # floats become exact rationals: 0.1 -> 1/10

Functions (``FUNCTIONS``): sin cos tan asin acos atan atan2(y, x) sinh cosh tanh asinh acosh
atanh exp log (``log(x)`` is natural, ``log(x, b)`` and ``log(x, base=b)`` are base ``b``) ln
sqrt abs sign erf gamma loggamma min max (two or more arguments) relu sigmoid softplus
``where(cond, a, b)`` (a :class:`sympy.Piecewise`), and the NumPy spellings arcsin arccos
arctan arctan2 arcsinh arccosh arctanh. Constants: ``pi`` and ``e``. Every other name is a
variable, ``Symbol(name, real=True)``: ``np``, ``exec``, ``E``, ``I``, ``S``, ``N``, ``oo``
or ``lambda_`` are plain variables. Names starting with ``_`` (so every dunder) are refused.

Operators are applied as Python would apply them to SymPy objects, so the result is the
SymPy expression a user would get by typing the same formula on symbols: ``2*(x + y)*x`` is
``x*(2*x + 2*y)``. Only runs of more than 32 operands of ``+``/``-`` or ``*``/``/`` are
combined in one ``Add``/``Mul`` call (an equal value in SymPy's flat canonical form) to keep
sums of thousands of terms fast.

Refused with a :class:`~symdiff.errors.ParseError` whose ``position`` is the 0-based offset of
the problem in the original text: attribute access, subscripts, lambdas, comprehensions,
strings and f-strings, ``:=``, ``a if c else b``, containers, starred arguments, keyword
arguments other than ``log``'s ``base``, ``//``, ``%``, ``@``, bit operators, ``==``, ``!=``,
chained comparisons, ``and``/``or``/``not``, ``True``/``False``/``None``, complex literals,
non-ASCII characters (Python would silently NFKC-normalise a full-width ``x`` to ``x``) and
control characters other than tab, newline and carriage return. A constant sub-expression
whose value is not a finite real number is refused at that sub-expression: ``1/0``,
``log(0)``, ``sqrt(-1)``, ``asin(2)``, ``(-2)**pi``, and also ``(-8)**(1/3)`` and
``loggamma(-0.5)``, which are complex in SymPy's principal-branch convention. So is a
sub-expression with variables that SymPy turns into ``zoo``/``nan`` on some branch, such as
``x / where(x > 0, x, 0)``.

SymPy input is not re-parsed: its symbols are checked and made real, and values that are not
finite real numbers (``zoo``, ``oo``, ``nan``, ``I``) are refused; the size limits below are
for strings.

Limits (``LIMITS``)
-------------------
``max_length`` (100,000)
    characters of input.
``max_depth`` (100)
    nesting of brackets, checked by scanning the text before Python's parser sees it.
``max_ast_depth`` (200)
    nesting of operations and calls; a run of left-associative operators of the same kind
    (``a + b - c + ...``, ``a * b / c ...``) counts as one level.
``max_nodes`` (30,000)
    expression nodes (names, numbers, operations, calls).
``max_names`` (1,000)
    distinct variable names.
``max_name_length`` (100)
    characters of one variable name.
``max_int_digits`` (100)
    characters in one numeric literal (digits, exponent included).
``max_exponent`` (1,000)
    magnitude of the exponent of a power whose base and exponent are both numbers, and of the
    argument of ``exp``, ``sinh``, ``cosh``, ``gamma`` and ``loggamma`` when it is a number.
``max_constant_digits`` (500)
    digits of any exact rational produced while folding constants (numerator and denominator
    separately), of the estimated result of a numeric power, and of the numbers under
    fractional powers that SymPy would combine in one product (``sqrt(a)*sqrt(b)``).
``max_constant_depth`` (8)
    nesting of functions, powers and divisions inside a sub-expression without variables
    (``sigmoid`` and ``softplus`` count twice). SymPy's exact evaluation of nested constants
    such as ``exp(-exp(-exp(...)))`` or ``cos(2*cos(2*...))`` takes time exponential in
    their depth; ``exp(-exp(-x))`` with a variable is not affected.
``max_args`` (20)
    arguments of one ``min``/``max``, counting those of directly nested ``min``/``max`` that
    SymPy merges: SymPy compares the arguments pairwise, about a millisecond per pair of
    unrelated variables.
``max_milliseconds`` (1,000) and ``max_microseconds_per_char`` (50)
    a last-resort time budget for building the expression, checked between nodes: one second
    plus 50 microseconds per character of input (so 6 s at the 100,000-character limit, for
    legal inputs of 1,000 variables), counted in CPU time of the parsing thread so that a busy
    machine does not refuse a legal input; exceeding it is a ``ParseError``. The limits above
    keep every single step far below it.

Every limit is checked before the expensive step it guards, so a rejection takes milliseconds
(the time budget aside) and never surfaces as ``RecursionError`` or ``MemoryError``.
``LIMITS`` is read at every call, so a server may lower (or a test raise) any of them.
"""

from __future__ import annotations

import ast
import contextlib
import keyword
import math
import numbers
import re
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import ClassVar, NoReturn

import sympy as sp

from .errors import ParseError, SymdiffError, UnsupportedError
from .functions import relu, sigmoid, softplus

__all__ = ["FUNCTIONS", "LIMITS", "check_identifier", "parse"]

LIMITS: dict[str, int] = {
    "max_length": 100_000,
    "max_depth": 100,
    "max_ast_depth": 200,
    "max_nodes": 30_000,
    "max_names": 1_000,
    "max_name_length": 100,
    "max_int_digits": 100,
    "max_exponent": 1_000,
    "max_constant_digits": 500,
    "max_constant_depth": 8,
    "max_args": 20,
    "max_milliseconds": 1_000,
    "max_microseconds_per_char": 50,
}


#: Python's parser converts a flat chain ``a + b + c + ...`` recursively; with the default
#: recursion limit (1,000, less the caller's stack) a sum of a thousand terms fails. While
#: parsing, the limit is raised to this, which allows chains of about 9,000 operators; longer
#: ones still raise RecursionError, reported as a ParseError.
PARSER_RECURSION_LIMIT = 10_000


@contextlib.contextmanager
def _recursion_limit(limit: int) -> Iterator[None]:
    """Temporarily raise (never lower) the interpreter's recursion limit."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def _budget_seconds(length: int) -> float:
    """The time budget for an input of ``length`` characters: a fixed part plus a part that
    grows with the input, so that long legal inputs (1,000-variable sums) are not cut off."""
    return (LIMITS["max_milliseconds"] * 1e3 + LIMITS["max_microseconds_per_char"] * length) / 1e6

_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
_FLOAT = re.compile(r"(?P<int>[0-9]*)(?:\.(?P<frac>[0-9]*))?(?:[eE](?P<exp>[+-]?[0-9]+))?\Z")
_FORBIDDEN_CHAR = re.compile(r"[^\t\n\r\x20-\x7e]")
_LOG2_10 = math.log2(10)
_NON_FINITE = (sp.zoo, sp.oo, -sp.oo, sp.nan)

_CONSTANTS: dict[str, sp.Expr] = {"pi": sp.pi, "e": sp.E}


# --------------------------------------------------------------------------- functions


@dataclass(frozen=True)
class _Function:
    """How one function name is built: ``build(*args)`` with ``min_args..max_args`` arguments."""

    build: Callable[..., sp.Expr]
    min_args: int = 1
    max_args: int | None = 1  # None: any number
    usage: str = "one argument"


def _unary(func: Callable[..., sp.Expr]) -> _Function:
    return _Function(func)


def _log(x: sp.Expr, base: sp.Expr | None = None) -> sp.Expr:
    return sp.log(x) if base is None else sp.log(x, base)


_FUNCTION_TABLE: dict[str, _Function] = {
    "sin": _unary(sp.sin),
    "cos": _unary(sp.cos),
    "tan": _unary(sp.tan),
    "asin": _unary(sp.asin),
    "acos": _unary(sp.acos),
    "atan": _unary(sp.atan),
    "atan2": _Function(sp.atan2, 2, 2, "two arguments (y, x)"),
    "sinh": _unary(sp.sinh),
    "cosh": _unary(sp.cosh),
    "tanh": _unary(sp.tanh),
    "asinh": _unary(sp.asinh),
    "acosh": _unary(sp.acosh),
    "atanh": _unary(sp.atanh),
    "exp": _unary(sp.exp),
    "log": _Function(_log, 1, 2, "one or two arguments (x[, base]) or the keyword base="),
    "sqrt": _unary(sp.sqrt),
    "abs": _unary(sp.Abs),
    "sign": _unary(sp.sign),
    "erf": _unary(sp.erf),
    "gamma": _unary(sp.gamma),
    "loggamma": _unary(sp.loggamma),
    "min": _Function(sp.Min, 2, None, "two or more arguments"),
    "max": _Function(sp.Max, 2, None, "two or more arguments"),
    "relu": _unary(relu),
    "sigmoid": _unary(sigmoid),
    "softplus": _unary(softplus),
    "where": _Function(
        lambda cond, a, b: sp.Piecewise((a, cond), (b, True)),
        3,
        3,
        "three arguments (condition, value if true, value if false)",
    ),
}
_ALIASES = {
    "ln": "log",
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "arctan2": "atan2",
    "arcsinh": "asinh",
    "arccosh": "acosh",
    "arctanh": "atanh",
}
_FUNCTION_TABLE.update({alias: _FUNCTION_TABLE[name] for alias, name in _ALIASES.items()})

FUNCTIONS: frozenset[str] = frozenset(_FUNCTION_TABLE)

# Functions whose value grows at least exponentially with a numeric argument.
_GROWING = frozenset({sp.exp, sp.sinh, sp.cosh, sp.gamma, sp.loggamma})
# Runs of + - or * / up to this long are combined left to right, exactly as Python would.
_SEQUENTIAL_RUN = 32
# Functions that SymPy evaluates numerically through a rewrite two levels deep.
_DOUBLE_NESTING = frozenset({"sigmoid", "softplus"})

# --------------------------------------------------------------------------- descriptions

_CONSTRUCTS: dict[type[ast.AST], str] = {
    ast.Attribute: "attribute access ('a.b') is not supported",
    ast.Subscript: "subscripts ('a[i]') are not supported (they need tensor shapes)",
    ast.Slice: "slices are not supported",
    ast.Lambda: "lambda expressions are not supported",
    ast.ListComp: "list comprehensions are not supported",
    ast.SetComp: "set comprehensions are not supported",
    ast.DictComp: "dict comprehensions are not supported",
    ast.GeneratorExp: "generator expressions are not supported",
    ast.Starred: "starred expressions ('*a') are not supported",
    ast.JoinedStr: "f-strings are not supported",
    ast.FormattedValue: "f-strings are not supported",
    ast.NamedExpr: "assignment expressions (':=') are not supported",
    ast.IfExp: "conditional expressions ('a if c else b') are not supported; use where(c, a, b)",
    ast.Dict: "dicts are not supported",
    ast.List: "lists are not supported",
    ast.Tuple: "tuples are not supported; write a single expression",
    ast.Set: "sets are not supported",
    ast.Await: "'await' is not supported",
    ast.Yield: "'yield' is not supported",
    ast.YieldFrom: "'yield from' is not supported",
}

_BIN_SYMBOLS: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.Pow: "**",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.MatMult: "@",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitOr: "|",
    ast.BitAnd: "&",
    ast.BitXor: "^",
}
_BIN_NOTES: dict[type[ast.operator], str] = {
    ast.MatMult: " (matrix products need tensor shapes, which are not supported yet)",
    ast.FloorDiv: " (use '/')",
}
_CHAINS: dict[type[ast.operator], str] = {
    ast.Add: "additive",
    ast.Sub: "additive",
    ast.Mult: "multiplicative",
    ast.Div: "multiplicative",
    ast.FloorDiv: "multiplicative",
    ast.Mod: "multiplicative",
    ast.MatMult: "multiplicative",
}
_COMPARISONS: dict[type[ast.cmpop], tuple[str, Callable[..., sp.Basic] | None]] = {
    ast.Lt: ("<", sp.Lt),
    ast.LtE: ("<=", sp.Le),
    ast.Gt: (">", sp.Gt),
    ast.GtE: (">=", sp.Ge),
    ast.Eq: ("==", None),
    ast.NotEq: ("!=", None),
    ast.Is: ("is", None),
    ast.IsNot: ("is not", None),
    ast.In: ("in", None),
    ast.NotIn: ("not in", None),
}
_UNARY_SYMBOLS: dict[type[ast.unaryop], str] = {
    ast.USub: "-",
    ast.UAdd: "+",
    ast.Not: "not",
    ast.Invert: "~",
}


# --------------------------------------------------------------------------- identifiers


def check_identifier(name: object, what: str = "variable name") -> str:
    """Return ``name`` if it is a valid symdiff variable name, else raise :class:`ParseError`.

    A valid name is an ASCII identifier ``[A-Za-z][A-Za-z0-9_]*`` that is not a Python keyword
    (soft keywords such as ``match`` or ``type`` are fine). Names starting with ``_``, and so
    every dunder, are refused. ``what`` names the role of the value in the message, e.g.
    ``"wrt name"``. The check is purely lexical: ``"sin"`` or ``"e"`` pass (they can be the
    names of SymPy symbols), although a string expression reads them as a function/constant.
    """
    if not isinstance(name, str):
        raise ParseError(f"{what} must be a string, not {type(name).__name__}")
    if len(name) > LIMITS["max_name_length"]:
        raise ParseError(
            f"{what} {_shorten(name)} is longer than {LIMITS['max_name_length']} characters "
            "(limit max_name_length)",
            name if len(name) <= 200 else None,
            LIMITS["max_name_length"],
        )
    if _IDENTIFIER.match(name) and not keyword.iskeyword(name):
        return name
    shown = _shorten(name)
    if not name:
        raise ParseError(f"{what} must not be empty", name, 0)
    if keyword.iskeyword(name):
        raise ParseError(f"{what} {shown} is a Python keyword", name, 0)
    first = name[0]
    if not ("A" <= first <= "Z" or "a" <= first <= "z"):
        why = "names starting with '_' are reserved" if first == "_" else f"not {first!r}"
        raise ParseError(f"{what} {shown} must start with an ASCII letter ({why})", name, 0)
    bad = next(i for i, ch in enumerate(name) if not (ch.isascii() and (ch.isalnum() or ch == "_")))
    raise ParseError(
        f"{what} {shown} contains {_describe_char(name[bad])}; use ASCII letters, digits and '_'",
        name,
        bad,
    )


def check_wrt(wrt: object) -> tuple[tuple[str, ...], bool]:
    """Validate an explicit ``wrt``: a name, or an ordered, non-empty list of distinct names.

    Returns the names and whether a single name (not a list) was given. SymPy symbols stand for
    their names. A set has no order and is refused, as is anything else.
    """
    if isinstance(wrt, str | sp.Symbol):
        return (check_identifier(str(wrt), "wrt name"),), True
    if isinstance(wrt, set | frozenset | dict):
        raise SymdiffError("wrt must be a name or an ordered list of names, not a set (no order)")
    if not isinstance(wrt, Sequence):
        raise SymdiffError(f"wrt must be a name or a list of names, not {type(wrt).__name__}")
    names = tuple(
        check_identifier(str(w) if isinstance(w, sp.Symbol) else w, "wrt name") for w in wrt
    )
    if not names:
        raise SymdiffError("wrt is empty: give at least one variable name")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise SymdiffError(f"duplicate wrt name(s): {', '.join(duplicates)}")
    return names, False


def _shorten(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _describe_char(ch: str) -> str:
    return f"the character {ch!r} (U+{ord(ch):04X})"


# --------------------------------------------------------------------------- source text


class _Source:
    """The original text, the text given to ``ast.parse`` and the map between their offsets."""

    def __init__(self, original: str, transformed: str, offsets: list[int]):
        self.original = original
        self.transformed = transformed
        self.offsets = offsets  # transformed offset -> original offset
        self.line_starts = [0]
        self.line_starts.extend(m.end() for m in re.finditer("\n", transformed))

    def error(self, message: str, position: int) -> ParseError:
        return ParseError(message, self.original, position)

    def offset(self, lineno: int | None, col: int | None) -> int:
        """Offset into the transformed text of an ``ast`` (1-based line, 0-based column)."""
        if lineno is None or col is None:
            return 0
        line = min(max(lineno, 1), len(self.line_starts)) - 1
        return min(self.line_starts[line] + max(col, 0), len(self.offsets) - 1)

    def original_offset(self, transformed_offset: int) -> int:
        return self.offsets[min(max(transformed_offset, 0), len(self.offsets) - 1)]

    def position(self, node: ast.AST) -> int:
        """0-based offset in the original text where ``node`` starts."""
        start = self.offset(getattr(node, "lineno", None), getattr(node, "col_offset", None))
        return self.original_offset(start)

    def end(self, node: ast.AST) -> int:
        """Offset in the transformed text just after ``node``."""
        return self.offset(getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None))

    def segment(self, node: ast.AST) -> str:
        start = self.offset(getattr(node, "lineno", None), getattr(node, "col_offset", None))
        return self.transformed[start : self.end(node)]

    def find_between(self, left: ast.AST, right: ast.AST, symbol: str) -> int:
        """Original offset of ``symbol`` between two nodes (an operator), else of ``left``."""
        start, stop = self.end(left), self.offset(right.lineno, right.col_offset)
        found = self.transformed.find(symbol, start, stop)
        return self.original_offset(found) if found >= 0 else self.position(left)


def _scan(text: str) -> _Source:
    """Check ``text`` character by character and prepare it for :func:`ast.parse`.

    Refuses non-ASCII and control characters, string literals, over-long numeric literals and
    unbalanced or too deeply nested brackets, with their positions. Replaces ``^`` by ``**``,
    normalises ``\\r`` line ends (keeping offsets) and wraps the text in parentheses so that
    multi-line input and leading blanks parse; ``offsets`` maps every character back.
    """
    text_len = len(text)
    bad = _FORBIDDEN_CHAR.search(text)
    if bad is not None:
        _check_char(text, bad.start())
    body = text.replace("\r\n", " \n").replace("\r", "\n")
    out: list[str] = ["("]
    offsets: list[int] = [0]
    brackets: list[tuple[str, int]] = []
    max_depth, max_digits = LIMITS["max_depth"], LIMITS["max_int_digits"]
    closing = {")": "(", "]": "[", "}": "{"}
    i = 0
    while i < text_len:
        ch = body[i]
        start = i
        if ch.isalpha() or ch == "_":
            while i < text_len and (body[i].isalnum() or body[i] == "_"):
                i += 1
        elif ch.isdigit() or (ch == "." and body[i + 1 : i + 2].isdigit()):
            i = _scan_number(body, i)
            digits = sum(c.isalnum() for c in body[start:i])
            if digits > max_digits:
                raise ParseError(
                    f"numeric literal has more than {max_digits} digits (limit max_int_digits)",
                    text,
                    start,
                )
        elif ch == "#":
            end = body.find("\n", i)
            i = text_len if end < 0 else end
        elif ch == "^":
            out.append("**")
            offsets.extend((i, i))
            i += 1
            continue
        else:
            _check_char(text, i)
            if ch in "([{":
                brackets.append((ch, i))
                if len(brackets) > max_depth:
                    raise ParseError(
                        f"brackets are nested more than {max_depth} deep (limit max_depth)",
                        text,
                        i,
                    )
            elif ch in closing:
                if not brackets:
                    raise ParseError(f"unmatched {ch!r}", text, i)
                opener, where = brackets.pop()
                if opener != closing[ch]:
                    raise ParseError(
                        f"closing {ch!r} does not match {opener!r} at position {where}", text, i
                    )
            i += 1
        out.append(body[start:i])
        offsets.extend(range(start, i))
    if brackets:
        opener, where = brackets[-1]
        raise ParseError(f"{opener!r} was never closed", text, where)
    out.append("\n)")
    offsets.extend((text_len, text_len))
    return _Source(text, "".join(out), offsets)


def _scan_number(body: str, i: int) -> int:
    """End of the numeric literal starting at ``i`` (loosely: Python checks it afterwards)."""
    decimal = not body.startswith(("0x", "0X", "0o", "0O", "0b", "0B"), i)
    n = len(body)
    while i < n:
        ch = body[i]
        sign = ch in "+-" and decimal and body[i - 1] in "eE"
        if ch.isalnum() or ch in "_." or sign:
            i += 1
        else:
            break
    return i


def _check_char(text: str, i: int) -> None:
    """Refuse ``text[i]`` if it is non-ASCII, a control character or a string quote."""
    ch = text[i]
    if not ch.isascii():
        raise ParseError(
            f"{_describe_char(ch)} is not allowed: only ASCII input is accepted "
            "(Python would silently turn look-alike letters into others)",
            text,
            i,
        )
    if ch in "'\"":
        prefix = re.search(r"[A-Za-z]*\Z", text[max(0, i - 3) : i])
        kind = "f-strings" if prefix and "f" in prefix.group().lower() else "string literals"
        raise ParseError(f"{kind} are not supported", text, i)
    if (ord(ch) < 32 and ch not in "\t\n\r") or ord(ch) == 127:
        raise ParseError(f"control character U+{ord(ch):04X} is not allowed", text, i)


# --------------------------------------------------------------------------- tree checks


def _check_tree(tree: ast.Expression, src: _Source) -> None:
    """Enforce ``max_nodes`` and ``max_ast_depth`` without recursion, before building."""
    max_nodes, max_depth = LIMITS["max_nodes"], LIMITS["max_ast_depth"]
    stack: list[tuple[ast.AST, int]] = [(tree.body, 1)]
    count = 0
    while stack:
        node, depth = stack.pop()
        if isinstance(node, ast.expr):
            count += 1
            if count > max_nodes:
                raise src.error(
                    f"expression has more than {max_nodes} nodes (limit max_nodes)",
                    src.position(node),
                )
            if depth > max_depth:
                raise src.error(
                    f"expression is nested more than {max_depth} levels deep (limit max_ast_depth)",
                    src.position(node),
                )
        children = list(ast.iter_child_nodes(node))
        for child in reversed(children):
            stack.append((child, depth if _continues_chain(node, child) else depth + 1))


def _continues_chain(parent: ast.AST, child: ast.AST) -> bool:
    """Whether ``child`` is the left operand of ``parent`` in a run like ``a + b - c``."""
    if not (isinstance(parent, ast.BinOp) and isinstance(child, ast.BinOp)):
        return False
    kind = _CHAINS.get(type(parent.op))
    return kind is not None and child is parent.left and _CHAINS.get(type(child.op)) == kind


# --------------------------------------------------------------------------- numbers


def _digits(n: int) -> int:
    """Number of decimal digits of ``n`` (without building its decimal string)."""
    n = abs(n)
    return 1 if n < 10 else math.floor(_log10_int(n)) + 1


def _rational_digits(value: sp.Rational) -> int:
    """Decimal digits of the larger of numerator and denominator."""
    return max(_digits(int(value.p)), _digits(int(value.q)))


def _exact_float(literal: str) -> sp.Rational | None:
    """The exact value of a decimal float literal, or None if it is too large to build."""
    match = _FLOAT.match(literal.replace("_", ""))
    if match is None:
        return None
    whole, frac = match.group("int") or "", match.group("frac") or ""
    exponent = int(match.group("exp") or 0) - len(frac)
    mantissa = int(whole + frac or "0")
    if mantissa == 0:
        return sp.Integer(0)
    limit = LIMITS["max_constant_digits"]
    if abs(exponent) > limit + len(whole + frac):
        return None
    if exponent >= 0:
        return sp.Integer(mantissa * 10**exponent)
    return sp.Rational(mantissa, 10**-exponent)


def _log10_abs(value: sp.Expr) -> float:
    """log10 of ``|value|`` for a tame numeric expression (``-inf`` for zero)."""
    if value.is_Rational:
        if value.p == 0:
            return -math.inf
        return _log10_int(abs(int(value.p))) - _log10_int(int(value.q))
    approx = value.evalf(15)
    if approx.is_Float:
        parts = [approx]
    else:
        parts = [p for p in approx.as_real_imag() if p.is_Float]
        if not parts:
            raise ValueError(f"cannot estimate the size of {_short_expr(value)}")
    best = -math.inf
    for part in parts:
        _sign, man, exp, bc = part._mpf_
        if man:
            best = max(best, (exp + bc) / _LOG2_10)
        elif exp:  # mpmath's special values: inf, -inf, nan
            raise ValueError(f"{_short_expr(value)} is not finite")
    return best


def _numerically_real(value: sp.Expr) -> bool:
    """Whether a constant SymPy cannot classify, such as ``(-2)**pi``, evaluates to a real."""
    try:
        real, imag = (float(part) for part in value.evalf(15).as_real_imag())
    except (TypeError, ValueError, ArithmeticError):
        return True  # no numeric verdict: leave it to evaluation time
    return math.isfinite(real) and abs(imag) <= 1e-9 * max(1.0, abs(real))


def _log10_int(n: int) -> float:
    bits = n.bit_length()
    if bits < 1000:
        return math.log10(n)
    return math.log10(n >> (bits - 53)) + (bits - 53) / _LOG2_10


def _short_expr(expr: sp.Basic, limit: int = 60) -> str:
    text = str(expr)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _root_digits(expr: sp.Expr) -> int:
    """Digits of the rational numbers under fractional powers among the factors of ``expr``."""
    total = 0
    for factor in sp.Mul.make_args(expr):
        base, exponent = factor.as_base_exp()
        if base.is_Rational and exponent.is_Rational and not exponent.is_Integer:
            total += _digits(int(base.p)) + _digits(int(base.q))
    return total


def _nesting(node: ast.AST) -> int:
    """How much ``node`` adds to the nesting of a constant (see ``max_constant_depth``)."""
    if isinstance(node, ast.Call):
        func = node.func
        return 2 if isinstance(func, ast.Name) and func.id in _DOUBLE_NESTING else 1
    if isinstance(node, ast.Compare):
        return 1
    if isinstance(node, ast.BinOp):
        if isinstance(node.op, ast.Pow):
            return 1
        while isinstance(node, ast.BinOp) and _CHAINS.get(type(node.op)) == "multiplicative":
            if isinstance(node.op, ast.Div):
                return 1
            node = node.left
    return 0


def _value_depth(expr: sp.Basic) -> int:
    """Nesting of function applications and powers in a SymPy expression (iteratively)."""
    deepest = 0
    stack = [(expr, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, sp.Function | sp.Pow):
            depth += 1
        deepest = max(deepest, depth)
        stack.extend((arg, depth) for arg in node.args)
    return deepest


# --------------------------------------------------------------------------- builder


class _Builder:
    """Translates an allow-listed ``ast`` tree into SymPy, one handler per node type."""

    _HANDLERS: ClassVar[dict[type[ast.AST], Callable[[_Builder, ast.AST], sp.Expr]]]

    def __init__(self, src: _Source):
        self.src = src
        self.symbols: dict[str, sp.Symbol] = {}
        # CPU time of this thread: a busy machine must not cut off a legal input.
        self.deadline = time.thread_time() + _budget_seconds(len(src.original))
        self.built: set[int] = set()  # ids of the nodes built so far
        self.constant_depth: dict[int, int] = {}  # node id -> nesting, for numeric values

    # -- helpers -------------------------------------------------------------------------

    def fail(self, message: str, node: ast.AST | int) -> NoReturn:
        position = node if isinstance(node, int) else self.src.position(node)
        raise self.src.error(message, position)

    def build(self, node: ast.AST) -> sp.Expr:
        """Build ``node`` (dispatching on its type) and check the value it stands for."""
        handler = self._HANDLERS.get(type(node))
        if handler is None:
            self.fail(_CONSTRUCTS.get(type(node), f"{type(node).__name__} is not supported"), node)
        if time.thread_time() > self.deadline:
            self.fail(
                "expression is too expensive to evaluate exactly "
                f"(over {_budget_seconds(len(self.src.original)) * 1000:.0f} ms, "
                "limit max_milliseconds plus max_microseconds_per_char)",
                node,
            )
        try:
            value = handler(self, node)
            self.check_value(value, node)
            self.record(node, value)
        except SymdiffError:
            raise
        except (RecursionError, MemoryError):
            self.fail("expression is too complex to evaluate", node)
        except (ArithmeticError, ValueError, TypeError) as exc:
            self.fail(f"cannot evaluate this: {exc}", node)
        return value

    def check_size(self, value: sp.Basic, node: ast.AST) -> None:
        """Refuse exact rationals (the value or its direct arguments) with too many digits."""
        for part in (value, *value.args):
            if part.is_Rational and _rational_digits(part) > LIMITS["max_constant_digits"]:
                self.fail(
                    f"constant has more than {LIMITS['max_constant_digits']} digits "
                    "(limit max_constant_digits)",
                    node,
                )

    def check_value(self, value: sp.Basic, node: ast.AST) -> None:
        """Refuse oversized exact numbers and constants that are not finite real numbers."""
        if value.is_Symbol:
            return
        self.check_size(value, node)
        if not isinstance(value, sp.Expr):
            return
        shown = " ".join(self.src.segment(node).split())
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        if value.has(*_NON_FINITE):
            if value.is_number:
                self.fail(f"{shown} is not a finite real number", node)
            self.fail(f"{shown} is infinite or undefined for some values (SymPy: {value})", node)
        if value.is_number and not value.is_Rational:
            real = value.is_extended_real
            if real is False or (real is None and not _numerically_real(value)):
                self.fail(f"{shown} is not a finite real number", node)

    def operand_depths(self, node: ast.AST) -> tuple[bool, int]:
        """Whether every built operand of ``node`` is a number, and their deepest nesting."""
        every, deepest = True, 0
        stack = list(ast.iter_child_nodes(node))
        while stack:
            child = stack.pop()
            if id(child) not in self.built:  # keywords, comparisons, runs of + or *
                stack.extend(ast.iter_child_nodes(child))
                continue
            depth = self.constant_depth.get(id(child))
            if depth is None:
                every = False
            else:
                deepest = max(deepest, depth)
        return every, deepest

    def record(self, node: ast.AST, value: sp.Expr) -> None:
        self.built.add(id(node))
        if value.is_Rational or value.is_Symbol:
            depth = 0 if value.is_Rational else None
        elif value.is_number:
            every, deepest = self.operand_depths(node)
            # A constant made from variables that cancelled, e.g. (x + c) - x: measure it.
            depth = _nesting(node) + deepest if every else _value_depth(value)
        else:
            depth = None
        if depth is not None:
            self.constant_depth[id(node)] = depth

    def guard(self, node: ast.AST) -> None:
        """Refuse to let SymPy evaluate a deeply nested constant (exponential time in SymPy)."""
        every, deepest = self.operand_depths(node)
        limit = LIMITS["max_constant_depth"]
        if every and deepest + _nesting(node) > limit:
            self.fail(
                f"constant sub-expression is nested more than {limit} functions deep "
                "(limit max_constant_depth; SymPy's exact evaluation would take too long)",
                node,
            )

    def check_growth(self, name: str, func: object, arg: sp.Expr, node: ast.AST) -> None:
        """Refuse ``exp``-like functions of numbers too large to keep exact."""
        if func in _GROWING and arg.is_number:
            limit = LIMITS["max_exponent"]
            if _log10_abs(arg) > math.log10(limit):
                self.fail(
                    f"the argument of {name}() is larger than {limit} (limit max_exponent)", node
                )

    def check_power(self, base: sp.Expr, exponent: sp.Expr, node: ast.BinOp) -> None:
        """Bound a power whose base and exponent are both numbers before SymPy folds it."""
        if not (base.is_number and exponent.is_number):
            return
        limit, max_digits = LIMITS["max_exponent"], LIMITS["max_constant_digits"]
        where = self.src.find_between(node.left, node.right, "**")
        size = _log10_abs(exponent)
        if size > math.log10(limit):
            self.fail(f"exponent is larger than {limit} (limit max_exponent)", where)
        magnitude = 10.0**size
        if base.is_Rational:
            if base.p == 0 or abs(base.p) == base.q:  # 0, 1 and -1 stay small
                return
            digits = max(_log10_int(abs(int(base.p))), _log10_int(int(base.q)))
        else:
            rationals = [abs(_log10_abs(r)) for r in base.atoms(sp.Rational) if r != 0]
            digits = max([abs(_log10_abs(base)), *rationals])
        if magnitude * digits > max_digits:
            self.fail(
                f"the power has more than {max_digits} digits (limit max_constant_digits)", where
            )

    def symbol(self, name: str, node: ast.AST) -> sp.Symbol:
        sym = self.symbols.get(name)
        if sym is None:
            try:
                check_identifier(name)
            except ParseError as exc:
                self.fail(exc.reason, node)
            if len(self.symbols) >= LIMITS["max_names"]:
                self.fail(
                    f"more than {LIMITS['max_names']} distinct variable names (limit max_names)",
                    node,
                )
            sym = self.symbols[name] = sp.Symbol(name, real=True)
        return sym

    # -- leaves --------------------------------------------------------------------------

    def visit_Name(self, node: ast.Name) -> sp.Expr:
        name = node.id
        if name in _CONSTANTS:
            return _CONSTANTS[name]
        if name in _FUNCTION_TABLE:
            self.fail(f"{name!r} is a function; call it as {name}(...)", node)
        return self.symbol(name, node)

    def visit_Constant(self, node: ast.Constant) -> sp.Expr:
        value = node.value
        if isinstance(value, bool) or value is None:
            self.fail(f"{value} is not supported", node)
        if isinstance(value, int):
            if abs(value) >= 10 ** LIMITS["max_int_digits"]:
                self.fail(f"integer has more than {LIMITS['max_int_digits']} digits", node)
            return sp.Integer(value)
        if isinstance(value, float):
            exact = _exact_float(self.src.segment(node))
            if exact is None:
                self.fail(
                    f"number is too large or too small to keep exactly "
                    f"(limit max_constant_digits = {LIMITS['max_constant_digits']})",
                    node,
                )
            return exact
        if isinstance(value, complex):
            self.fail("complex numbers are not supported", node)
        if value is Ellipsis:
            self.fail("'...' is not supported", node)
        kind = "bytes literals" if isinstance(value, bytes) else "string literals"
        self.fail(f"{kind} are not supported", node)

    # -- operators -----------------------------------------------------------------------

    def visit_UnaryOp(self, node: ast.UnaryOp) -> sp.Expr:
        if isinstance(node.op, ast.USub):
            return -self.build(node.operand)
        if isinstance(node.op, ast.UAdd):
            return self.build(node.operand)
        symbol = _UNARY_SYMBOLS.get(type(node.op), type(node.op).__name__)
        self.fail(f"operator {symbol!r} is not supported", node)

    def visit_BinOp(self, node: ast.BinOp) -> sp.Expr:
        kind = _CHAINS.get(type(node.op))
        if kind is None:
            self.check_operator(node)
            base, exponent = self.build(node.left), self.build(node.right)
            self.guard(node)
            self.check_power(base, exponent, node)
            return sp.Pow(base, exponent)
        # A left-leaning run of same-precedence operators is built iteratively.
        run: list[ast.BinOp] = []
        left: ast.AST = node
        while isinstance(left, ast.BinOp) and _CHAINS.get(type(left.op)) == kind:
            run.append(left)
            left = left.left
        run.reverse()
        if kind == "additive":
            return self.add_run(left, run)
        return self.multiply_run(node, left, run)

    def check_operator(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.Pow | ast.Add | ast.Sub | ast.Mult | ast.Div):
            return
        symbol = _BIN_SYMBOLS.get(type(node.op), type(node.op).__name__)
        note = _BIN_NOTES.get(type(node.op), "")
        self.fail(f"operator {symbol!r} is not supported{note}", self.operator_position(node))

    def operator_position(self, node: ast.BinOp) -> int:
        symbol = _BIN_SYMBOLS.get(type(node.op), "")
        return self.src.find_between(node.left, node.right, symbol)

    def add_run(self, first: ast.AST, run: list[ast.BinOp]) -> sp.Expr:
        """``a + b - c ...``, combined like :meth:`multiply_run`."""
        operands = [(first, self.build(first))]
        for item in run:
            term = self.build(item.right)
            operands.append((item, -term if isinstance(item.op, ast.Sub) else term))
        if len(operands) <= _SEQUENTIAL_RUN:
            total = operands[0][1]
            for item, term in operands[1:]:
                total = total + term
                self.check_size(total, item)
            return total
        terms: list[sp.Expr] = []
        constant = sp.Integer(0)
        for item, term in operands:
            if term.is_Rational:
                constant += term
                self.check_size(constant, item)
            else:
                terms.append(term)
        return sp.Add(*terms, constant)

    def multiply_run(self, node: ast.BinOp, first: ast.AST, run: list[ast.BinOp]) -> sp.Expr:
        """``a * b / c ...``: left to right as Python would (SymPy's canonical form depends on
        the order: ``2*(x + y)*x`` is ``x*(2*x + 2*y)``), or in one ``Mul`` for long runs, which
        SymPy would otherwise re-flatten at every step. Guards SymPy's merging of numeric roots
        (``sqrt(a)*sqrt(b)`` becomes ``sqrt(a*b)``, whose square factors it then searches for).
        """
        operands: list[tuple[ast.AST, sp.Expr]] = [(first, self.build(first))]
        for item in run:
            self.check_operator(item)
            factor = self.build(item.right)
            if isinstance(item.op, ast.Div):
                if factor.is_zero:
                    self.fail("division by zero", self.operator_position(item))
                factor = sp.Pow(factor, -1)
            operands.append((item, factor))
        self.guard(node)
        root_digits = 0
        for item, factor in operands:
            root_digits += _root_digits(factor)
            if root_digits > LIMITS["max_constant_digits"]:
                self.fail(
                    "the numbers under roots in this product have more than "
                    f"{LIMITS['max_constant_digits']} digits together (limit max_constant_digits)",
                    item,
                )
        if len(operands) <= _SEQUENTIAL_RUN:
            product = operands[0][1]
            for item, factor in operands[1:]:
                product = product * factor
                self.check_size(product, item)
        else:
            factors: list[sp.Expr] = []
            coefficient = sp.Integer(1)
            for item, factor in operands:
                if factor.is_Rational:
                    coefficient *= factor
                    self.check_size(coefficient, item)
                else:
                    factors.append(factor)
            product = sp.Mul(coefficient, *factors)
        if product.is_number and not product.is_Rational:
            # Bound the magnitude so that later numeric comparisons (Max, where, assumptions)
            # never need huge precision, e.g. sin(exp(1000)*exp(1000)*...).
            limit = LIMITS["max_constant_digits"]
            if _log10_abs(product) > limit:
                self.fail(f"constant is larger than 10**{limit} (limit max_constant_digits)", node)
        return product

    def visit_BoolOp(self, node: ast.BoolOp) -> sp.Expr:
        word = "and" if isinstance(node.op, ast.And) else "or"
        self.fail(f"{word!r} is not supported (where() takes a single comparison)", node)

    def visit_Compare(self, node: ast.Compare) -> sp.Expr:
        self.comparison(node)  # raises with the most specific message
        self.fail("comparisons are only allowed as the condition of where(cond, a, b)", node)

    def comparison(self, node: ast.Compare) -> sp.Basic:
        """Build a single ``<``, ``<=``, ``>`` or ``>=`` comparison."""
        left = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            symbol, build = _COMPARISONS.get(type(op), (type(op).__name__, None))
            if build is None:
                self.fail(
                    f"comparison {symbol!r} is not supported; use < <= > >= inside where()",
                    self.src.find_between(left, right, symbol.split()[0]),
                )
            left = right
        if len(node.ops) > 1:
            self.fail(
                "chained comparisons such as 'a < b < c' are not supported; nest where() instead",
                node,
            )
        _, build = _COMPARISONS[type(node.ops[0])]
        assert build is not None
        left_value, right_value = self.build(node.left), self.build(node.comparators[0])
        self.guard(node)
        return build(left_value, right_value)

    # -- calls ---------------------------------------------------------------------------

    def visit_Call(self, node: ast.Call) -> sp.Expr:
        func = node.func
        if not isinstance(func, ast.Name):
            what = "method calls ('a.f(...)')" if isinstance(func, ast.Attribute) else "calls"
            self.fail(f"{what} are not supported; only calls of a function name", node)
        name = func.id
        if name in _CONSTANTS:
            self.fail(f"{name!r} is a constant, not a function", func)
        spec = _FUNCTION_TABLE.get(name)
        if spec is None:
            self.fail(f"unknown function {name!r}", func)
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                self.fail("starred arguments ('*a') are not supported", arg)
        base = self.keyword_base(name, node)
        given = len(node.args) + (base is not None)
        too_many = spec.max_args is not None and given > spec.max_args
        if len(node.args) < spec.min_args or too_many:
            self.fail(f"{name}() takes {spec.usage} ({given} given)", func)
        if name == "where":
            return self.where(node, spec)
        if spec.max_args is None and len(node.args) > LIMITS["max_args"]:
            self.fail(
                f"{name}() has more than {LIMITS['max_args']} arguments (limit max_args)", node
            )
        args = [self.build(arg) for arg in node.args]
        if base is not None:
            args.append(self.build(base))
        if len(args) == 2 and spec is _FUNCTION_TABLE["log"]:
            self.check_log_base(args[1], base if base is not None else node.args[1])
        if spec.max_args is None:
            self.check_argument_count(spec, args, node)
        self.guard(node)
        self.check_growth(name, spec.build, args[0], node)
        return spec.build(*args)

    def check_argument_count(self, spec: _Function, args: list[sp.Expr], node: ast.Call) -> None:
        """Bound min/max arguments, counting those of nested min/max SymPy would merge."""
        merged = sum(len(a.args) if isinstance(a, spec.build) else 1 for a in args)
        limit = LIMITS["max_args"]
        if merged > limit:
            name = getattr(node.func, "id", "function")
            self.fail(f"{name}() has more than {limit} arguments (limit max_args)", node)

    def keyword_base(self, name: str, node: ast.Call) -> ast.AST | None:
        """The ``base=`` keyword of ``log``; any other keyword is an error."""
        base = None
        for kw in node.keywords:
            if kw.arg is None:
                self.fail("keyword unpacking ('**kwargs') is not supported", kw.value)
            if _FUNCTION_TABLE[name] is not _FUNCTION_TABLE["log"]:
                self.fail(f"{name}() takes no keyword arguments (got {kw.arg!r})", kw)
            if kw.arg != "base":
                self.fail(f"{name}() got an unexpected keyword argument {kw.arg!r}", kw)
            if base is not None or len(node.args) > 1:
                self.fail(f"{name}() got multiple values for 'base'", kw)
            base = kw.value
        return base

    def check_log_base(self, base: sp.Expr, node: ast.AST) -> None:
        if base.is_number and (base.is_positive is False or base == 1):
            self.fail("the base of log must be a positive number other than 1", node)

    def where(self, node: ast.Call, spec: _Function) -> sp.Expr:
        cond_node, yes_node, no_node = node.args
        if not isinstance(cond_node, ast.Compare):
            self.fail("the first argument of where() must be a comparison (< <= > >=)", cond_node)
        cond = self.comparison(cond_node)
        if cond.has(sp.Piecewise):  # SymPy would solve it as a set: exponential time
            self.fail(
                "a where() inside the condition of a where() is not supported; "
                "nest where() in the values instead",
                cond_node,
            )
        yes, no = self.build(yes_node), self.build(no_node)
        self.guard(node)
        return spec.build(cond, yes, no)


_Builder._HANDLERS = {
    ast.Name: _Builder.visit_Name,
    ast.Constant: _Builder.visit_Constant,
    ast.UnaryOp: _Builder.visit_UnaryOp,
    ast.BinOp: _Builder.visit_BinOp,
    ast.BoolOp: _Builder.visit_BoolOp,
    ast.Compare: _Builder.visit_Compare,
    ast.Call: _Builder.visit_Call,
}


# --------------------------------------------------------------------------- entry points


def parse(source: str | sp.Expr | int | float) -> sp.Expr:
    """Parse ``source`` into a SymPy expression whose symbols are all real.

    ``source`` may be a string (see the module docstring for the grammar and ``LIMITS``), a
    SymPy expression (every symbol name is validated with :func:`check_identifier` and the
    symbol replaced by ``Symbol(name, real=True)``), or a Python ``int``/``float`` (floats
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


def _parse_text(text: str) -> sp.Expr:
    limit = LIMITS["max_length"]
    if len(text) > limit:
        raise ParseError(
            f"expression is longer than {limit} characters (limit max_length)", text, limit
        )
    if not text.strip():
        raise ParseError("empty expression", text, 0)
    src = _scan(text)
    try:
        # Python's parser warns about things like "1x" (SyntaxWarning) on stderr; those inputs
        # are refused or read on our own terms, so the warning would only confuse.
        with _recursion_limit(PARSER_RECURSION_LIMIT), warnings.catch_warnings():
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = ast.parse(src.transformed, mode="eval")
    except SyntaxError as exc:
        raise _syntax_error(exc, src) from None
    except (RecursionError, MemoryError, ValueError, OverflowError):
        raise src.error(
            "expression is too deeply nested or too long for Python's parser "
            "(too many operators in a row)",
            0,
        ) from None
    if isinstance(tree.body, ast.Tuple) and not tree.body.elts:  # only comments, or "()"
        raise src.error("empty expression", 0)
    _check_tree(tree, src)
    builder = _Builder(src)
    try:
        return builder.build(tree.body)
    except RecursionError:
        raise src.error("expression is too complex to evaluate", 0) from None


def _syntax_error(exc: SyntaxError, src: _Source) -> ParseError:
    offset = src.offset(exc.lineno, (exc.offset or 1) - 1)
    position = min(src.original_offset(offset), len(src.original))
    message = (exc.msg or "invalid syntax").strip()
    if not message.startswith("invalid syntax"):
        message = f"invalid syntax: {message}"
    return src.error(message, position)


def _from_sympy(expr: sp.Basic) -> sp.Expr:
    if not isinstance(expr, sp.Expr):
        raise ParseError(f"expected a SymPy expression, not {type(expr).__name__}")
    replacements: dict[sp.Basic, sp.Basic] = {}
    for sym in expr.atoms(sp.Symbol):
        if type(sym) is not sp.Symbol:
            raise ParseError(f"{type(sym).__name__} {sym} is not supported; use sympy.Symbol")
        check_identifier(sym.name, "symbol name")
        replacements[sym] = sp.Symbol(sym.name, real=True)
    for free in expr.free_symbols:
        if not isinstance(free, sp.Symbol):
            raise UnsupportedError(f"{type(free).__name__} {free} is not supported")
    undefined = expr.atoms(sp.core.function.AppliedUndef)
    if undefined:
        raise UnsupportedError(
            f"undefined function {type(next(iter(undefined))).__name__}() is not supported"
        )
    if expr.has(*_NON_FINITE, sp.I):
        raise ParseError(f"{_short_expr(expr)} contains a value that is not a finite real number")
    result = expr.xreplace(replacements)
    if result.is_number and not result.is_Rational:
        real = result.is_extended_real
        if real is False or (real is None and not _numerically_real(result)):
            raise ParseError(f"{_short_expr(result)} is not a finite real number")
    return result
