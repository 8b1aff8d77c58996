"""Source text -> callable: compile and execute one generated module, register it for tracebacks.

Only modules rendered by symdiff's own templates reach this function; user text never does.
"""

from __future__ import annotations

import linecache
from collections.abc import Callable
from typing import Any

from .verify import check_module


def load_function(source: str, name: str, filename: str) -> Callable[..., Any]:
    """Execute generated ``source`` in a fresh namespace and return its function ``name``.

    The module's syntax tree is checked first (:func:`symdiff.verify.check_module`); anything a
    template cannot produce is refused before it runs. The source is registered with
    :mod:`linecache` under ``filename`` so that tracebacks and ``inspect.getsource`` show the
    generated lines.
    """
    check_module(source)
    code = compile(source, filename, "exec")
    namespace: dict[str, Any] = {"__name__": "symdiff.generated", "__file__": filename}
    exec(code, namespace)  # our own rendered module, never user text
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    return namespace[name]
