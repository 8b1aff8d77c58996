"""The values of the command line's options: ``--wrt x`` or ``x,y`` and ``--shapes "X=n,d;y=n"``."""

from __future__ import annotations

import argparse
import re
from typing import Any

from ..errors import SymdiffError


def wrt_option(text: str) -> str | list[str]:
    """Parse ``--wrt``, as ``wrt=`` of the Python API: one name (``x``) is that name, so the
    function returns one array; names with commas (``x,y``) are a list, so it returns a tuple;
    one name with a trailing comma (``x,``) is a list of one, a 1-tuple."""
    if "," not in text:
        name = text.strip()
        if not name:
            raise argparse.ArgumentTypeError("empty --wrt; write a name, or names as x,y")
        return name
    parts = text.split(",")
    if len(parts) > 1 and not parts[-1].strip():
        parts = parts[:-1]  # "x," (a list of one), as ("x",) in Python
    names = [name.strip() for name in parts]
    if any(not name for name in names):
        raise argparse.ArgumentTypeError(f"empty name in {text!r}; write names as x,y")
    return names


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Longest integer dimension accepted as text (the API bounds the value itself).
_MAX_DIGITS = 20


def parse_shapes_option(text: str) -> dict[str, tuple[int | str, ...]]:
    """Parse ``--shapes "X=n,d;y=n;w=3;s="`` into ``{"X": ("n", "d"), "y": ("n",), ...}``.

    Entries are separated by ``;`` and written ``NAME=DIMS``; the dimensions are separated by
    ``,`` and each is a name (``n``) or a non-negative int (``3``); nothing after ``=`` declares
    a scalar. Spaces around the parts, parentheses around the dimensions (``X=(n, d)``) and a
    trailing ``;`` or ``,`` are allowed. Raises :class:`~symdiff.SymdiffError` naming the bad
    part (the command line reports it in one line, exit code 2); names and sizes are then
    checked by the builder like ``shapes=`` in Python.
    """
    shapes: dict[str, tuple[int | str, ...]] = {}
    entries = [entry.strip() for entry in text.split(";")]
    if entries and not entries[-1]:
        entries.pop()  # a trailing ";"
    if not entries:
        raise SymdiffError('--shapes: no NAME=DIMS entry; write e.g. --shapes "X=n,d;y=n;s="')
    for entry in entries:
        if not entry:
            raise SymdiffError(f"--shapes: empty entry in {text!r}; separate entries by one ;")
        name, equals, dims_text = (part.strip() for part in entry.partition("="))
        if not equals:
            raise SymdiffError(
                f"--shapes: {entry!r} is not NAME=DIMS; write e.g. X=n,d (a scalar: s=)"
            )
        if not _IDENTIFIER.fullmatch(name):
            raise SymdiffError(f"--shapes: {name!r} in {entry!r} is not a variable name")
        if name in shapes:
            raise SymdiffError(f"--shapes: {name!r} is declared twice")
        if dims_text.startswith("(") and dims_text.endswith(")"):
            dims_text = dims_text[1:-1].strip()
        dims = [dim.strip() for dim in dims_text.split(",")] if dims_text else []
        if dims and not dims[-1] and len(dims) > 1:
            dims.pop()  # a trailing "," as in Python's (n,)
        shape: list[int | str] = []
        for dim in dims:
            if dim.isascii() and dim.isdigit() and len(dim) <= _MAX_DIGITS:
                shape.append(int(dim))
            elif _IDENTIFIER.fullmatch(dim):
                shape.append(dim)
            else:
                raise SymdiffError(
                    f"--shapes: dimension {dim!r} of {name!r} must be a name (n) or a "
                    "non-negative int (3)"
                )
        shapes[name] = tuple(shape)
    return shapes


def shapes_keyword(args: argparse.Namespace) -> dict[str, Any]:
    """``{"shapes": ...}`` when ``--shapes`` was given, else nothing (the scalar layer)."""
    text = getattr(args, "shapes", None)
    return {} if text is None else {"shapes": parse_shapes_option(text)}
