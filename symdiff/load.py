"""Source text -> callable: compile and execute one generated module, register it for tracebacks.

Only modules rendered by symdiff's own templates reach this function; user text never does.
"""

from __future__ import annotations

import linecache
from collections.abc import Callable
from typing import Any

from .errors import ArgumentError, ShapeError
from .verify import check_module

#: What the error classes of a generated module (``_ShapeError = ValueError``, see
#: :data:`symdiff.verify.ERROR_CONSTANTS`) are rebound to once it runs inside symdiff.
_ERRORS: dict[str, type[Exception]] = {"_ShapeError": ShapeError, "_ArgumentError": ArgumentError}


def load_function(source: str, name: str, filename: str) -> Callable[..., Any]:
    """Execute generated ``source`` in a fresh namespace and return its function ``name``.

    The module's syntax tree is checked first (:func:`symdiff.verify.check_module`); anything a
    template cannot produce is refused before it runs. The error classes its helpers raise are
    rebound to :class:`~symdiff.errors.ShapeError` and :class:`~symdiff.errors.ArgumentError`.
    The source is registered with :mod:`linecache` under ``filename`` so that tracebacks and
    ``inspect.getsource`` show the generated lines.
    """
    check_module(source)
    code = compile(source, filename, "exec")
    namespace: dict[str, Any] = {"__name__": "symdiff.generated", "__file__": filename}
    exec(code, namespace)  # our own rendered module, never user text
    for constant, error in _ERRORS.items():  # the module binds built-ins, for a saved copy
        if constant in namespace:
            namespace[constant] = error
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    return namespace[name]
