"""Every generated name a function reads is its own or the module's: bound by a parameter or a
statement of the function, or at module level (an import, a constant, a helper, the formulas).

The other checks allow any generated name (``_t0``, ``_x_bar``) where an expression reads one;
this one makes sure the function or the module binds it. A name no statement binds is looked up
in the module's globals: a ``NameError`` at call time at best, at worst a silent wrong value (the
emitter once printed ``_w_bar[1:] = _z0 + _z1`` for a gradient whose ``_z0`` it never built).
A local read before its statement runs raises ``UnboundLocalError``, which is loud, so only the
free names are checked. Python's own symbol table (:mod:`symtable`) answers, at C speed, for a
module of 10,000 lines too.
"""

from __future__ import annotations

import ast
import symtable
from collections.abc import Collection

from .allowed import INTERNAL
from .errors import VerificationError


def module_names(tree: ast.Module) -> set[str]:
    """The names ``tree`` binds at module level: imports, constants and functions."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def check_defined(source: str, functions: Collection[str], known: set[str]) -> None:
    """Refuse ``source`` if one of its ``functions`` reads a generated name (one
    :data:`INTERNAL` matches) that it never binds and that ``known`` (the module's names) lacks."""
    for table in symtable.symtable(source, "<generated>", "exec").get_children():
        if table.get_name() not in functions:
            continue
        for symbol in table.get_symbols():
            name = symbol.get_name()
            if (symbol.is_referenced() and not symbol.is_local() and name not in known
                    and INTERNAL.match(name)):
                raise VerificationError(
                    f"generated code refused in {table.get_name()}: {name!r} is read but no "
                    "statement binds it"
                )
