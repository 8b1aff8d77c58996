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
              | 'where' '(' cond ',' expr ',' expr ')'
    cond     := expr CMP expr (CMP expr)*       # chained: 0 < x < 1 is (0 < x) & (x < 1)
              | cond ('and' | 'or') cond | 'not' cond
              | '(' cond ')' ('&' | '|') '(' cond ')' | '~' '(' cond ')'
    CMP      := '<' | '<=' | '>' | '>='         # only in the condition of where(...)
    NAME     := [A-Za-z][A-Za-z0-9_]*           # ASCII, not a Python keyword -> real Symbol
    NUMBER   := Python int or float literal     # floats become exact rationals: 0.1 -> 1/10

Functions (``FUNCTIONS``): the rows of :mod:`symdiff.registry` under their names and aliases
(sin, ..., the NumPy spellings arcsin ... arctanh, ln; ``log(x)`` is natural, ``log(x, b)``
and ``log(x, base=b)`` are base ``b``; min and max take two or more arguments; the second
argument of heaviside must be a number), and ``where(cond, a, b)`` (a
:class:`sympy.Piecewise`). Constants: ``pi`` and ``e``. Every other name is a
variable, ``Symbol(name, real=True)``: ``np``, ``exec``, ``E``, ``I``, ``S``, ``N``, ``oo``
or ``lambda_`` are plain variables. Names starting with ``_`` (so every dunder) are refused.

Operators are applied as Python would apply them to SymPy objects, so the result is the
SymPy expression a user would get by typing the same formula on symbols: ``2*(x + y)*x`` is
``x*(2*x + 2*y)``. Only runs of more than 32 operands of ``+``/``-`` or ``*``/``/`` are
combined in one ``Add``/``Mul`` call (an equal value in SymPy's flat canonical form) to keep
sums of thousands of terms fast.

Messages say what was probably meant: a misspelt function gets a did-you-mean (``sinn`` ->
``sin``); a tensor operation (``sum``, ``mean``, ``max(a, axis=k)``, ``softmax``, ``@``,
``a[i]``, ``.T``, ...) names ``shapes=`` with an example; implicit multiplication (``2x``,
``x y``, ``2(x + 1)``) is refused with the fix (``2*x``) and the caret at the gap. A backslash
is allowed only as a line continuation with more of the expression after it.

Refused with a :class:`~symdiff.errors.ParseError` whose ``position`` is the 0-based offset of
the problem in the original text: attribute access, subscripts, lambdas, comprehensions,
strings and f-strings, ``:=``, ``a if c else b``, containers, starred arguments, keyword
arguments other than ``log``'s ``base``, ``//``, ``%``, ``@``, bit operators (``&``, ``|``,
``~`` join conditions only), ``==``, ``!=``, ``and``/``or``/``not`` outside a condition,
``True``/``False``/``None``, complex literals,
non-ASCII characters (Python would silently NFKC-normalise a full-width ``x`` to ``x``) and
control characters other than tab, newline and carriage return. A constant sub-expression
whose value is not a finite real number is refused at that sub-expression: ``1/0``,
``log(0)``, ``sqrt(-1)``, ``asin(2)``, ``(-2)**pi``, and also ``(-8)**(1/3)`` and
``loggamma(-0.5)``, which are complex in SymPy's principal-branch convention. So is a
sub-expression with variables that SymPy turns into ``zoo``/``nan`` on some branch, such as
``x / where(x > 0, x, 0)``.

SymPy input is not re-parsed: its symbols are checked and made real, and values that are not
finite real numbers (``zoo``, ``oo``, ``nan``, ``I``) are refused; the size limits below are
for strings. A symbol's name need not be an identifier (``Symbol("x_{1}")``, ``Symbol("\\alpha")``
from code that prints LaTeX): it only must not be empty, start with ``_`` or exceed
``max_name_length``; generated code uses a safe identifier for it (:mod:`symdiff.codegen.naming`).

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

Modules
-------
``limits`` (``LIMITS``, recursion limit, time budget) <- ``names`` (variable names, ``wrt``);
``functions`` (the function table) <- ``hints`` (did-you-mean, the ``shapes=`` hint for tensor
operations, implicit multiplication) and ``syntax`` (operator tables, messages) <- ``source``
(scanning, syntax errors, tree checks) and ``sizes`` (number sizes) <- ``guards`` (the
builder's limit checks) <- ``builder`` (ast to SymPy) <- ``entry`` (:func:`parse`) <-
``teaching`` (the same text and tree read again as written, into the unevaluated nodes of
``written``, for ``derive`` and ``graph``). This package re-exports what the rest of symdiff
uses.
"""

from __future__ import annotations

from .entry import parse as parse
from .entry import text_names as text_names
from .functions import FUNCTIONS as FUNCTIONS
from .limits import LIMITS as LIMITS
from .limits import PARSER_RECURSION_LIMIT as PARSER_RECURSION_LIMIT
from .names import check_identifier as check_identifier
from .names import check_symbol_name as check_symbol_name
from .names import check_wrt as check_wrt
from .names import check_wrt_occurs as check_wrt_occurs
from .source import check_tree as check_tree
from .source import scan as scan
from .source import syntax_error as syntax_error

# check_tree, scan and syntax_error: the scalar front end that symdiff.tensor.parse reuses
__all__ = [
    "FUNCTIONS",
    "LIMITS",
    "check_identifier",
    "check_wrt",
    "check_wrt_occurs",
    "parse",
    "text_names",
]
