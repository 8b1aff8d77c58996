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

from .simplify.dag import distinct_nodes, tree_size


class _KeyPrinter(ReprPrinter):
    """``srepr`` with symbols printed by name and sorted ``assumptions0`` (a ``Dummy``'s index
    too), arguments in the order stored (``order="none"``)."""

    def _print_Symbol(self, expr: sp.Symbol) -> str:
        facts = sorted(expr.assumptions0.items())
        if isinstance(expr, sp.Dummy):
            facts.append(("dummy_index", expr.dummy_index))
        inside = ", ".join([repr(expr.name), *(f"{k}={v!r}" for k, v in facts)])
        return f"{type(expr).__name__}({inside})"


#: Expressions whose tree has more operations than this get the DAG form of :func:`key_repr`.
TREE_KEY_MAX_OPS = 20_000


def key_repr(expr: sp.Basic) -> str:
    """The text of ``expr`` for a key: ``srepr`` with arguments in their stored order and
    every symbol by name and its sorted assumptions (the same for equal symbols).

    An expression whose tree has more than :data:`TREE_KEY_MAX_OPS` operations (a traced
    recurrence shares its subexpressions, and its tree grows exponentially with its depth) is
    written as its DAG instead: one line per distinct subexpression, children first, each
    naming its operands by line number (``#3``), so the text grows with the distinct nodes."""
    printer = _KeyPrinter({"order": "none"})
    if tree_size(expr, TREE_KEY_MAX_OPS + 1) <= TREE_KEY_MAX_OPS:
        return printer.doprint(expr)
    index: dict[sp.Basic, int] = {}
    lines = []
    for node in distinct_nodes([expr]):
        index[node] = len(index)
        if node.args:
            operands = ", ".join(f"#{index[a]}" for a in node.args)
            lines.append(f"{type(node).__name__}({operands})")
        else:
            lines.append(printer.doprint(node))
    return "dag:" + ";".join(lines)
