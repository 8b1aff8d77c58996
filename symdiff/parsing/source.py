"""The text before it becomes SymPy: character checks, scanning for :func:`ast.parse` (with the
map back to original offsets), syntax errors, and the node-count and depth checks on the tree."""

from __future__ import annotations

import ast
import re

from ..errors import ParseError
from .functions import FUNCTIONS
from .hints import juxtaposed, number_then_name
from .limits import LIMITS
from .names import describe_char
from .syntax import CHAINS

_FORBIDDEN_CHAR = re.compile(r"[^\t\n\r\x20-\x7e]")
#: The one string literal allowed: the subscripts that open an ``einsum(`` call (letters, commas,
#: ``->``, ``...`` and spaces only, so nothing but a subscripts string can hide in it).
_SUBSCRIPTS = re.compile(r"""\beinsum\s*\(\s*(?P<lit>(["'])[A-Za-z.,>\- ]*\2)""")


# --------------------------------------------------------------------------- source text


class Source:
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


def scan(text: str) -> Source:
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
    subscripts = {m.start("lit"): m.end("lit") for m in _SUBSCRIPTS.finditer(body)}
    i = 0
    continuation = last = -1  # offsets of the last line continuation and the last token
    while i < text_len:
        ch = body[i]
        start = i
        if not ch.isspace() and ch not in "#\\":
            last = i
        if i in subscripts:  # einsum("ij,j->i", ...): kept as written
            i = subscripts[i]
        elif ch.isalpha() or ch == "_":
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
        elif ch == "\\":
            _check_continuation(text, i)
            continuation = i
            out.append(" ")  # inside the brackets the scan adds, a line end is enough
            offsets.append(i)
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
    if continuation > last:
        raise ParseError(
            "the expression ends with a line continuation ('\\'): nothing follows it",
            text,
            continuation,
        )
    out.append("\n)")
    offsets.extend((text_len, text_len))
    return Source(text, "".join(out), offsets)


def _check_continuation(text: str, i: int) -> None:
    """A backslash is allowed only as a line continuation: at the end of a line (and, checked
    after the scan, with more of the expression after it: the scan wraps the text in brackets,
    where Python would read a final ``x\\`` as ``x``)."""
    if i + 1 == len(text):
        raise ParseError("the expression ends with a line continuation ('\\')", text, i)
    if text[i + 1] not in "\n\r":
        raise ParseError(
            "a backslash is only allowed as a line continuation, at the end of a line", text, i
        )


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
            f"{describe_char(ch)} is not allowed: only ASCII input is accepted "
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


def check_tree(tree: ast.Expression, src: Source) -> None:
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
    kind = CHAINS.get(type(parent.op))
    return kind is not None and child is parent.left and CHAINS.get(type(child.op)) == kind


def syntax_error(exc: SyntaxError, src: Source) -> ParseError:
    """The :class:`ParseError` for Python's ``SyntaxError`` on the scanned text, at the position
    in the original text (with the fix for a number glued to a name, as in ``2x``)."""
    offset = src.offset(exc.lineno, (exc.offset or 1) - 1)
    position = min(src.original_offset(offset), len(src.original))
    message = (exc.msg or "invalid syntax").strip()
    glued = number_then_name(src.transformed, offset)
    if glued is not None:  # "2x": Python calls it an invalid decimal literal
        where, number, name = glued
        return src.error(
            f"implicit multiplication is not supported: write {number}*{name}",
            src.original_offset(where),
        )
    gap = juxtaposed(src.transformed, offset) if "forgot a comma" in message else None
    if gap is not None:  # "x y", "sin(x) cos(x)": Python suggests a comma
        where, left, right = gap
        if left in FUNCTIONS:
            fix = f"{left}({right})"
        else:
            fix = f"...{left}*{right}..." if left in ")]" else f"{left}*{right}"
        return src.error(
            f"missing operator between {left!r} and {right!r} (implicit multiplication is "
            f"not supported): write {fix}",
            src.original_offset(where),
        )
    if not message.startswith("invalid syntax"):
        message = f"invalid syntax: {message}"
    return src.error(message, position)
