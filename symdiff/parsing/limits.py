"""The parser's limits: ``LIMITS`` (documented in :mod:`symdiff.parsing`), the recursion limit
raised around Python's parser, and the time budget for building an expression."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator

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
def recursion_limit(limit: int) -> Iterator[None]:
    """Temporarily raise (never lower) the interpreter's recursion limit."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(max(previous, limit))
    try:
        yield
    finally:
        sys.setrecursionlimit(previous)


def budget_seconds(length: int) -> float:
    """The time budget for an input of ``length`` characters: a fixed part plus a part that
    grows with the input, so that long legal inputs (1,000-variable sums) are not cut off."""
    return (LIMITS["max_milliseconds"] * 1e3 + LIMITS["max_microseconds_per_char"] * length) / 1e6
