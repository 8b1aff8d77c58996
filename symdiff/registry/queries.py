"""Views derived from the table, which the consumers read: rows by name and by SymPy class,
parsing's names, signatures and usage texts, the NumPy names printed code may call, the runtime
helpers of the rows, tracing's map, tensor code's in-place ufuncs, and the docs' table
(:func:`markdown`, docs/functions.md)."""

from __future__ import annotations

import functools
import inspect
import re

from .checks import template_indices
from .rows import ROWS
from .schema import Fn, head_class

#: Call forms of the string grammar that are not functions of their own.
GRAMMAR = frozenset({"where"})


@functools.cache
def by_name() -> dict[str, Fn]:
    """Every name a string may call (canonical names and aliases) -> its row."""
    return {name: row for row in ROWS for name in row.names}


@functools.cache
def by_class_name() -> dict[str, Fn]:
    """The class name of each row's SymPy node (``"Max"``, ``"log1p"``, ``"relu"``) -> its row."""
    return {row.head.rpartition(":")[2]: row for row in ROWS if row.head}


def parse_names() -> frozenset[str]:
    """The function names of strings (the grammar's ``where`` aside)."""
    return frozenset(by_name())


@functools.cache
def _signature(params: str) -> inspect.Signature:
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    parameters = []
    for param in params.split(", "):
        name, eq, default = param.partition("=")
        if name.startswith("*"):
            parameters.append(inspect.Parameter(name[1:], inspect.Parameter.VAR_POSITIONAL))
        elif eq:
            assert default == "None", param
            parameters.append(inspect.Parameter(name, kind, default=None))
        else:
            parameters.append(inspect.Parameter(name, kind))
    return inspect.Signature(parameters)


def signature(row: Fn) -> inspect.Signature:
    """The Python signature of ``row.params`` (``symdiff.math``'s functions have it)."""
    return _signature(row.params)


def arity(row: Fn) -> tuple[int, int | None]:
    """Least and most positional arguments (most None: any number)."""
    kinds = [p.default is inspect.Parameter.empty for p in signature(row).parameters.values()
             if p.kind is not inspect.Parameter.VAR_POSITIONAL]
    variadic = row.params.split(", ")[-1].startswith("*")
    return sum(kinds), None if variadic else len(kinds)


def keywords(row: Fn) -> tuple[str, ...]:
    """The optional parameters, which a string may also pass by keyword (``base`` of log)."""
    return tuple(p.name for p in signature(row).parameters.values() if p.default is None)


_COUNTS = ("no", "one", "two", "three", "four")


def usage(row: Fn) -> str:
    """How many arguments the function takes, as parse errors say it."""
    least, most = arity(row)
    params = row.params.split(", ")
    if most is None:
        return f"{_COUNTS[least]} or more arguments"
    if least == most:
        listed = "" if least == 1 else f" ({row.params})"
        return f"{_COUNTS[least]} argument{'s' if least != 1 else ''}{listed}"
    required = ", ".join(params[:least])
    optional = [p.partition("=")[0] for p in params[least:]]
    brackets = "".join(f"[, {p}" for p in optional) + "]" * len(optional)
    keywords = " or ".join(f"the keyword {p}=" for p in optional)
    return f"{_COUNTS[least]} or {_COUNTS[most]} arguments ({required}{brackets}) or {keywords}"


def numpy_names() -> frozenset[str]:
    """The ``_np.<name>`` functions printed code of the rows may call."""
    names = {row.ufunc for row in ROWS if row.ufunc}
    for row in ROWS:
        names.update(re.findall(r"_np\.(\w+)", row.template or ""))
    return frozenset(names)


@functools.cache
def template_parts(template: str) -> tuple[tuple[str, int | None, bool], ...]:
    """A row's template as ``(text, argument, bracket)`` parts: ``argument`` is a position (or
    None for plain text), ``bracket`` whether the printed argument needs brackets there unless it
    is one operand already: everywhere but a whole argument of a call (``_np.maximum({0}, 0.0)``
    takes ``x - 1`` as it is, ``_np.arctan(1.0/{0})`` must get ``1.0/(x - 1)``)."""
    parts: list[tuple[str, int | None, bool]] = []
    pieces = re.split(r"(\{\d+\})", template)
    for i, piece in enumerate(pieces):
        if i % 2 == 0:
            if piece:
                parts.append((piece, None, False))
            continue
        before, after = pieces[i - 1].rstrip(), pieces[i + 1].lstrip()
        whole = before.endswith(("(", ",")) and after.startswith((")", ","))
        parts.append(("", int(piece[1:-1]), not whole))
    assert [p[1] for p in parts if p[1] is not None] == template_indices(template)
    return tuple(parts)


_NAME_OR_NUMBER = re.compile(r"[A-Za-z_][\w.]*|\d+(\.\d*)?([eE][+-]?\d+)?")


def is_operand(code: str) -> bool:
    """Whether printed code is one operand, which no operator around it can split: a name, a
    non-negative number, a call or subscript (``_np.cos(x)``, ``x[0]``) or a whole bracket."""
    if _NAME_OR_NUMBER.fullmatch(code):
        return True
    head = re.match(r"[A-Za-z_][\w.]*", code)
    start = head.end() if head else 0
    if start >= len(code) or code[start] not in "([":
        return False
    depth = 0
    for i in range(start, len(code)):
        depth += (code[i] in "([{") - (code[i] in ")]}")
        if depth == 0:
            return i == len(code) - 1
    return False


def print_template(template: str, printed: list[str]) -> str:
    """The template with the printed arguments in place, each bracketed where its place needs
    it, and the whole bracketed unless it is one operand (``1.0/_np.cos(x)`` inside ``x**...``)."""
    text = "".join(
        part if index is None
        else f"({printed[index]})" if bracket and not is_operand(printed[index])
        else printed[index]
        for part, index, bracket in template_parts(template)
    )
    return text if is_operand(text) else f"({text})"


def standard_names() -> dict[str, str]:
    """NumPy name -> the Array API standard's name, for the rows' ``ufunc`` and template
    functions the standard has (``arcsin`` -> ``asin``, ``sin`` -> ``sin``)."""
    names = {name: name for name in numpy_names()}
    for row in ROWS:
        if row.ufunc and row.standard is not None:
            names[row.ufunc] = row.standard
    return {numpy: standard for numpy, standard in names.items() if standard}


def helper_dependencies() -> dict[str, tuple[str, ...]]:
    """Runtime helpers of the rows -> the helpers each calls (those listed too, calling none)."""
    deps: dict[str, tuple[str, ...]] = {}
    for row in ROWS:
        if row.helper:
            deps[row.helper] = row.helper_deps
            for dep in row.helper_deps:
                deps.setdefault(dep, ())
    return deps


def traced_numpy() -> dict[str, Fn]:
    """NumPy function name -> the row tracing maps it to (rows with names only)."""
    return {u: row for row in ROWS if row.names for u in (row.ufunc, *row.traced) if u}


def traced_scipy() -> dict[str, Fn]:
    """``scipy.special`` ufunc name -> the row tracing maps it to."""
    return {name: row for row in ROWS if row.names for name in row.scipy}


def call_passes() -> dict[str, int]:
    """NumPy function -> what one call costs in multiplications (the rows' ``passes``), for
    the functions that cost more than one."""
    return {row.ufunc: row.passes for row in ROWS if row.ufunc and row.passes != 1}


def instruction_ufuncs() -> frozenset[str]:
    """The NumPy names (printed and traced) of the rows compiled code computes with
    instructions (``sqrt``, ``abs``, ``maximum``, ...), not a call of the C library."""
    return frozenset(name for row in ROWS if row.instruction
                     for name in (row.ufunc, *row.traced) if name)


def in_place_ufuncs() -> dict[type, str]:
    """SymPy class -> ufunc, for the functions tensor code applies in place (imports SymPy)."""
    return {head_class(row): row.ufunc for row in ROWS if row.in_place and row.ufunc}


def markdown() -> str:
    """The function table of docs/functions.md (between its ``functions`` markers; a test checks
    it; ``python -m symdiff.registry markdown --write`` writes it there):
    one line per public row, with its aliases, what it is and its derivative rule."""
    lines = [
        "| function | also | what it is | derivative |",
        "|---|---|---|---|",
    ]
    for row in ROWS:
        if not row.names:
            continue
        call = f"`{row.names[0]}({row.params})`"
        aliases = " ".join([*(f"`{name}`" for name in row.names[1:]),
                            *(f"`scipy.special.{name}`" for name in row.scipy)])
        identity = f"`{row.identity}`" if row.head else row.identity  # sugar: what it builds
        cells = (call, aliases, row.doc, identity)
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"
