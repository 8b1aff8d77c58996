"""Variable names: :func:`check_identifier` (what a symdiff variable may be called),
:func:`check_wrt` (an explicit ``wrt``) and :func:`check_wrt_occurs` (each ``wrt`` name is a
variable of the expression), with the helpers that quote names in messages."""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable, Collection, Sequence

import sympy as sp

from ..errors import ParseError, SymdiffError
from .closeness import close_names, did_you_mean
from .limits import LIMITS

_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


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
        f"{what} {shown} contains {describe_char(name[bad])}; use ASCII letters, digits and '_'",
        name,
        bad,
    )


def check_symbol_name(name: str) -> str:
    """Return the name of a SymPy symbol given as input, else raise :class:`ParseError`.

    Any name that is not empty, does not start with ``_`` (reserved for generated code) and is
    at most ``max_name_length`` characters long: names that are not identifiers (``x_{1}``,
    ``\\alpha``) are given safe identifiers in generated code (:mod:`symdiff.codegen.naming`).
    """
    if not name or name.startswith("_") or len(name) > LIMITS["max_name_length"]:
        check_identifier(name, "symbol name")  # raises, with the reason
    return name


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


#: The constants of the expression language, as a message describes them.
CONSTANT_NAMES = {"pi": "the constant pi", "e": "the constant e = 2.71828..."}


def check_wrt_occurs(
    wrt: Sequence[str],
    known: Sequence[str],
    *,
    more: Callable[[], Collection[str]] | None = None,
    functions: Collection[str] = (),
    function: str | None = None,
) -> None:
    """Raise :class:`ParseError` for a ``wrt`` name that is not a variable of the expression.

    ``known`` lists the variables (for a traced function, its parameters, in order; the message
    lists them). ``more`` is asked only when a name is not among them, for names that occur in
    the text although they cancel (``x - x`` with ``wrt="x"`` is fine and gives zeros). A
    function name (``functions``) or a constant (``pi``, ``e``) gets its own message; any other
    name a did-you-mean among the variables. ``function`` is the traced function's name, if any
    (then the variables are "its parameters"). The error has no position: the name is not in
    the text.
    """
    extra: Collection[str] | None = None
    for name in wrt:
        if name in known:
            continue
        if more is not None and extra is None:
            extra = more()
        if extra is not None and name in extra:
            continue
        if function is None and name in CONSTANT_NAMES:
            raise ParseError(f"wrt name {name!r} is {CONSTANT_NAMES[name]}, not a variable")
        if function is None and name in functions:
            raise ParseError(
                f"wrt name {name!r} is a function, not a variable of the expression"
            )
        candidates = list(dict.fromkeys([*known, *sorted(extra or ())]))
        hint = did_you_mean(close_names(name, candidates))
        shown = ", ".join(candidates[:12]) + (", ..." if len(candidates) > 12 else "")
        if function is not None:
            raise ParseError(
                f"wrt name {name!r} is not a parameter of {function} "
                f"(its parameters: {shown or 'none'}){hint}"
            )
        raise ParseError(
            f"wrt name {name!r} does not occur in the expression "
            f"(its variables: {shown or 'none'}){hint}"
        )


def _shorten(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


def describe_char(ch: str) -> str:
    """``the character 'x' (U+0078)``: a character named in a message, with its code point."""
    return f"the character {ch!r} (U+{ord(ch):04X})"
