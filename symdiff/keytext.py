"""The exact text of a SymPy expression for cache keys: :func:`key_repr`.

``sympy.srepr`` prints a symbol's assumptions as they were *spelt* when that symbol object was
made (``Symbol('w', real=True, finite=True)``), yet ``Symbol('w', real=True)`` is the same
symbol (equal, same hash: ``finite`` follows from ``real``), and SymPy's cache hands back
whichever object it met first. So ``srepr`` of one parsed input depended on what the process
had built before, and with it the request key in the generated module's header and the cache
entry. :func:`key_repr` prints every symbol by its name and its full set of assumptions
(``assumptions0``, sorted), which equal symbols share.
"""

from __future__ import annotations

import sympy as sp
from sympy.printing.repr import ReprPrinter


class _KeyPrinter(ReprPrinter):
    """``srepr`` with symbols printed by name and sorted ``assumptions0`` (a ``Dummy``'s index
    too), arguments in the order stored (``order="none"``)."""

    def _print_Symbol(self, expr: sp.Symbol) -> str:
        facts = sorted(expr.assumptions0.items())
        if isinstance(expr, sp.Dummy):
            facts.append(("dummy_index", expr.dummy_index))
        inside = ", ".join([repr(expr.name), *(f"{k}={v!r}" for k, v in facts)])
        return f"{type(expr).__name__}({inside})"


def key_repr(expr: sp.Basic) -> str:
    """The text of ``expr`` for a key: ``srepr`` with arguments in their stored order and
    every symbol by name and its sorted assumptions (the same for equal symbols)."""
    return _KeyPrinter({"order": "none"}).doprint(expr)
