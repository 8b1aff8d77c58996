"""The names variables have in generated code: the one place that maps a SymPy symbol name which
is not a Python identifier (``x_{1}``, ``\\alpha``, ``lambda``, or anything hostile) to a safe one.

SymPy code that prints LaTeX names its symbols ``Symbol("x_{1}")``; symdiff accepts them and
generates code under :func:`code_names`'s identifiers, while ``g.args``, ``g.wrt``, ``g.exprs``
and keyword calls keep the original names (:func:`rename_keywords`). The original text never
reaches the generated source, not even in a comment. Standard library only: the loader of cached
modules uses this without SymPy.
"""

from __future__ import annotations

import functools
import keyword
import re
from collections.abc import Callable, Iterable
from typing import Any

_CODE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
_OTHER = re.compile(r"[^A-Za-z0-9]+")
_LONGEST = 40


def is_code_name(name: str) -> bool:
    """Whether ``name`` is used in generated code as it is: a symdiff variable name (an ASCII
    identifier that is not a keyword) or a generated name (``_v``, starting with ``_``)."""
    return (bool(_CODE_NAME.match(name)) and not keyword.iskeyword(name)) or name.startswith("_")


def code_names(names: Iterable[str]) -> dict[str, str]:
    """``{original: identifier}`` for every name in ``names`` that is not a code name.

    The identifier keeps the ASCII letters and digits of the original, every other run of
    characters becomes ``_`` (``x_{1}`` -> ``x_1``, ``\\alpha`` -> ``alpha``, ``lambda`` ->
    ``lambda_``), and a suffix ``_2``, ``_3``, ... keeps it apart from every other name of the
    set and every identifier already given. Deterministic: it depends only on the set.
    """
    names = set(names)
    taken = {n for n in names if is_code_name(n)}
    mapping: dict[str, str] = {}
    for name in sorted(names - taken):
        base = _OTHER.sub("_", name).strip("_")[:_LONGEST].rstrip("_") or "v"
        if not base[0].isalpha():
            base = f"v{base}"
        if keyword.iskeyword(base):
            base += "_"
        candidate, count = base, 1
        while candidate in taken:
            count += 1
            candidate = f"{base}_{count}"
        taken.add(candidate)
        mapping[name] = candidate
    return mapping


def rename_keywords(function: Callable[..., Any], args: Iterable[str]) -> Callable[..., Any]:
    """``function`` (whose parameters are the code names of ``args``) called by the original
    names too: ``g(**{"x_{1}": 1.0})``. Messages that name a parameter name it as the caller
    knows it. Without renamed arguments, ``function`` itself (no wrapper, no cost)."""
    renamed = code_names(args)
    if not renamed:
        return function
    back = {code: original for original, code in renamed.items()}

    @functools.wraps(function)
    def call(*positional: Any, **keywords: Any) -> Any:
        given = {renamed.get(key, key): value for key, value in keywords.items()}
        if len(given) != len(keywords):
            twice = sorted(k for k in keywords if k in renamed and renamed[k] in keywords)
            raise TypeError(f"{function.__name__}() got multiple values for argument {twice[0]!r}")
        try:
            return function(*positional, **given)
        except (TypeError, ValueError) as error:  # Argument-, ShapeError; a missing argument
            raise _renamed(error, back).with_traceback(error.__traceback__) from None

    return call


def _renamed(error: Exception, back: dict[str, str]) -> Exception:
    """``error`` with every quoted code name replaced by the original name (same class)."""
    text = str(error)
    for code, original in back.items():
        text = text.replace(repr(code), repr(original))
    if text == str(error):
        return error
    try:
        return type(error)(text)
    except Exception:  # an exception class that needs other arguments: keep it as it was
        return error
