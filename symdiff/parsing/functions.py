"""The names a string expression may call or use as constants: ``FUNCTIONS`` (each row of
:mod:`symdiff.registry` under its names, plus the grammar's ``where``), ``pi`` and ``e``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sympy as sp

from .. import registry

CONSTANTS: dict[str, sp.Expr] = {"pi": sp.pi, "e": sp.E}
"""The named constants an expression may use, and the SymPy numbers they stand for."""


@dataclass(frozen=True)
class FunctionSpec:
    """How one function name is built: ``build(*args)`` with ``min_args..max_args`` arguments,
    the optional ones also by ``keywords``; ``check(*args)`` gives ``(index, why)`` for an
    argument to refuse; ``grows``: refuse numbers above ``max_exponent``; ``nesting``: weight
    towards ``max_constant_depth``; ``constant``: positions of arguments that must be numbers
    (their check says so)."""

    build: Callable[..., sp.Expr]
    min_args: int = 1
    max_args: int | None = 1  # None: any number
    usage: str = "one argument"
    keywords: tuple[str, ...] = ()
    check: Callable[..., tuple[int, str] | None] | None = None
    grows: bool = False
    nesting: int = 1
    constant: tuple[int, ...] = ()


def _spec(row: registry.Fn) -> FunctionSpec:
    least, most = registry.arity(row)
    return FunctionSpec(
        registry.build_fn(row), least, most, registry.usage(row), registry.keywords(row),
        row.check, row.grows, row.nesting, row.constant,
    )


def _where(cond: sp.Expr, a: sp.Expr, b: sp.Expr) -> sp.Expr:
    return sp.Piecewise((a, cond), (b, True))


def _table() -> dict[str, FunctionSpec]:
    """Every name a string may call -> its spec (aliases share their canonical name's)."""
    table: dict[str, FunctionSpec] = {}
    for row in registry.ROWS:
        table.update(dict.fromkeys(row.names, _spec(row)))
    usage = "three arguments (condition, value if true, value if false)"
    table["where"] = FunctionSpec(_where, 3, 3, usage)
    return table


FUNCTION_SPECS: dict[str, FunctionSpec] = _table()
FUNCTIONS: frozenset[str] = frozenset(FUNCTION_SPECS)

#: Operations of the tensor layer (``shapes=``) that are not scalar functions, or that take an
#: ``axis`` there (``max(a, axis=0)``): the scalar parser names ``shapes=`` when it meets them.
#: Kept equal to :data:`symdiff.tensor.parse.TENSOR_FUNCTIONS` (tested).
TENSOR_FUNCTIONS: frozenset[str] = frozenset(
    {"sum", "mean", "max", "min", "logsumexp", "prod", "softmax", "transpose", "reshape", "repeat"}
)
