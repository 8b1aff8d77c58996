"""What a refused string probably meant: did-you-mean for unknown functions, the ``shapes=`` hint
for tensor operations in a scalar expression, and implicit multiplication (``2x``, ``x y``,
``2(x + 1)``) located at the gap where the ``*`` is missing."""

from __future__ import annotations

import ast
import difflib
import io
import keyword
import re
import tokenize

from .functions import CONSTANTS, FUNCTIONS, TENSOR_FUNCTIONS

#: A Python numeric literal (without the imaginary suffix), for finding ``2x`` and ``3.5e2y``.
_NUMBER = re.compile(
    r"0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+"
    r"|(?:(?:\d(?:_?\d)*)?\.\d(?:_?\d)*|\d(?:_?\d)*\.?)(?:[eE][+-]?\d(?:_?\d)*)?"
)
_WORD = re.compile(r"[A-Za-z_]\w*")


def variables(tree: ast.AST | None, limit: int = 3) -> list[str]:
    """The first ``limit`` distinct variable names in ``tree`` (in order of appearance)."""
    if tree is None:
        return []
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    found: list[str] = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Name)
            and id(node) not in called
            and node.id not in CONSTANTS
            and node.id not in FUNCTIONS
            and node.id not in found
        ):
            found.append(node.id)
            if len(found) == limit:
                break
    return found


def needs_shapes(text: str, names: list[str]) -> str:
    """``needs shapes=, e.g. sd.grad("sum(x)", shapes={"x": ("n",)})`` for ``text``."""
    shown = " ".join(text.split())
    shown = shown if len(shown) <= 40 and '"' not in shown else "expr"
    entries = ", ".join(f'"{n}": ("n",)' for n in names if n.isidentifier()) or '"x": ("n",)'
    return (
        f'needs shapes= (arrays), e.g. sd.grad("{shown}", shapes={{{entries}}}) '
        "(a dimension name or size per axis; () for a scalar)"
    )


def unknown_function(name: str, text: str, names: list[str]) -> str:
    """The message for a call of ``name``, which is not a scalar function."""
    if name in TENSOR_FUNCTIONS:
        return f"{name}() is a tensor operation: it {needs_shapes(text, names)}"
    close = _closest(name, FUNCTIONS)
    if close is not None:
        return f"unknown function {name!r}; did you mean {close!r}?"
    close = _closest(name, TENSOR_FUNCTIONS)
    if close is not None:
        return (
            f"unknown function {name!r}; did you mean {close!r}? "
            f"({close}() is a tensor operation: it {needs_shapes(text, names)})"
        )
    if len(name) == 1:  # "x(y + 1)": more likely a product than a function
        return f"unknown function {name!r} (to multiply, write {name}*(...))"
    return f"unknown function {name!r}"


def did_you_mean(name: str, candidates: frozenset[str]) -> str:
    """``"; did you mean 'sin'?"`` for the candidate closest to ``name``, or ``""``."""
    close = _closest(name, candidates)
    return "" if close is None else f"; did you mean {close!r}?"


def _closest(name: str, candidates: frozenset[str]) -> str | None:
    """The candidate most like ``name`` (ignoring case: ``Sin`` -> ``sin``), if any is close."""
    lowered = {c.lower(): c for c in sorted(candidates)}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.75)
    return lowered[close[0]] if close else None


def number_then_name(text: str, position: int) -> tuple[int, str, str] | None:
    """``(where, number, name)`` if a numeric literal runs straight into a name (``2x``) around
    ``position`` (where Python's tokenizer stopped); ``where`` is the offset of the name."""
    for match in _NUMBER.finditer(text):
        start, end = match.span()
        if start > position:
            break
        if end < position or (start and (text[start - 1].isalnum() or text[start - 1] in "_.")):
            continue
        word = _WORD.match(text, end)
        if word is None or keyword.iskeyword(word.group()) or word.group()[0] in "jJ":
            continue
        call = "(...)" if text.startswith("(", word.end()) else ""
        return end, match.group(), word.group() + call
    return None


_ENDS_OPERAND = {tokenize.NUMBER, tokenize.NAME}


def juxtaposed(text: str, position: int) -> tuple[int, str, str] | None:
    """``(where, left, right)`` for the first two operands at or after ``position`` with only
    blanks between them (``x y``, ``sin(x) cos(x)``, ``(a + b) c``): ``where`` is the offset
    of the second one in ``text``, ``left``/``right`` the tokens on either side of the gap."""
    line_starts = [0]
    line_starts.extend(m.end() for m in re.finditer("\n", text))
    previous: tokenize.TokenInfo | None = None
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type not in (tokenize.NAME, tokenize.NUMBER, tokenize.OP):
                continue
            if token.start[0] > len(line_starts):
                break
            offset = line_starts[token.start[0] - 1] + token.start[1]
            starts = token.type in _ENDS_OPERAND and not keyword.iskeyword(token.string)
            if (
                previous is not None
                and starts
                and offset >= position
                and (
                    (previous.type in _ENDS_OPERAND and not keyword.iskeyword(previous.string))
                    or previous.string in (")", "]")
                )
            ):
                return offset, previous.string, token.string
            previous = token
    except (tokenize.TokenError, SyntaxError):
        return None
    return None
