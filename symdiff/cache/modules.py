"""The module entry: a generated module's source together with the JSON record of what it is.

An entry of namespace ``module`` is one line ``# symdiff-module {json}`` (the record: the
function's :class:`~symdiff.recipe.Recipe` as JSON, one line, ASCII) followed by the module's
source, verbatim; the whole body is still a Python file. :func:`unpack_module` reads only that
first line, never the generated source: an entry without it (written by an older symdiff, or
foreign) is a miss, and the caller rebuilds it.

Standard library only, no I/O.
"""

from __future__ import annotations

import json
from typing import Any

MODULE_TAG = "# symdiff-module "


def pack_module(source: str, record: dict[str, Any]) -> str:
    """The entry text for ``source`` and its JSON-ready ``record``."""
    line = json.dumps(record, sort_keys=True, ensure_ascii=True)  # no newline inside
    return f"{MODULE_TAG}{line}\n{source}"


def unpack_module(text: str) -> tuple[str, dict[str, Any]] | None:
    """``(source, record)`` of an entry written by :func:`pack_module`, else None."""
    if not text.startswith(MODULE_TAG):
        return None
    line, newline, source = text.partition("\n")
    if not newline:
        return None
    try:
        record = json.loads(line[len(MODULE_TAG) :])
    except ValueError:
        return None
    return (source, record) if isinstance(record, dict) else None
