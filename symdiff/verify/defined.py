"""Every generated name a function reads is bound first: by a parameter, a module-level name
(an import, a constant, a helper, the formulas) or an earlier statement of the function.

The other checks allow any generated name (``_t0``, ``_x_bar``) where an expression reads one;
this one makes sure some statement wrote it before. A name read before it is bound would be a
``NameError`` at call time at best, and at worst, read from the module's globals, a silent
wrong value: the emitter lost a statement (it once printed ``_w_bar[1:] = _z0 + _z1`` for a
gradient whose ``_z0`` it never built).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from .allowed import INTERNAL
from .errors import refuse


def module_names(tree: ast.Module) -> set[str]:
    """The names ``tree`` binds at module level: imports, constants and functions."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(_stored(node.targets))
    return names


def check_defined(func: ast.FunctionDef, known: set[str]) -> None:
    """Refuse ``func`` if it reads a generated name (one :data:`INTERNAL` matches) that neither
    ``known`` (the module's names), its parameters nor an earlier statement binds. A name bound
    in an ``if`` counts after it only when both branches bind it; ``del`` unbinds."""
    args = func.args
    bound = set(known) | {a.arg for a in (*args.args, *args.kwonlyargs)}
    _check_body(func.body, bound)


def _check_body(body: Iterable[ast.stmt], bound: set[str]) -> None:
    """Check ``body`` in order, adding to ``bound`` what each statement binds."""
    for statement in body:
        if isinstance(statement, ast.If):
            _check_reads(statement.test, bound)
            branches = []
            for branch in (statement.body, statement.orelse):
                inner = set(bound)
                _check_body(branch, inner)
                branches.append(inner)
            if statement.orelse:
                bound.update(branches[0] & branches[1])
            continue
        if isinstance(statement, ast.Delete):
            bound.difference_update(_stored(statement.targets, ast.Del))
            continue
        _check_reads(statement, bound)
        targets = statement.targets if isinstance(statement, ast.Assign) else []
        bound.update(_stored(targets))


def _check_reads(node: ast.AST, bound: set[str]) -> None:
    """Refuse a generated name that ``node`` reads and ``bound`` lacks (names that ``node``
    itself binds, such as a comprehension's variable, excepted)."""
    local = _stored([node])
    for child in ast.walk(node):
        if (isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load)
                and INTERNAL.match(child.id) and child.id not in bound
                and child.id not in local):
            raise refuse(child, f"{child.id!r} is read before any statement binds it")


def _stored(targets: Iterable[ast.AST], context: type = ast.Store) -> set[str]:
    """The plain names (not subscripts) bound under ``targets``, tuples unpacked."""
    return {
        child.id
        for target in targets
        for child in ast.walk(target)
        if isinstance(child, ast.Name) and isinstance(child.ctx, context)
    }
