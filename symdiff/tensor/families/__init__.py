"""Tensor operations added as rows: one module per family, each with its ``OPS`` (node ops) and
``SPELLINGS`` (the names users write), read by every table of the layer (see
:mod:`symdiff.tensor.oprow`).

To add a family: write the module, then add it to :data:`_FAMILIES`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ...errors import SymdiffError
from .. import simplify
from ..ir import Node
from ..oprow import OpRow, Param, Spelling
from ..ops import Builder, Called
from . import (
    building,
    contractions,
    conv,
    custom,
    decompositions,
    gather,
    grams,
    linalg,
    matrices,
    norms,
    npmisc,
    numeric,
    pooling,
    products,
    qr,
    quantiles,
    rearrange,
    scans,
    shifts,
    signals,
    sorting,
    stats,
    windows,
)

_FAMILIES = (
    scans, products, building, rearrange, stats, contractions, linalg, sorting, gather, numeric,
    decompositions, shifts, grams, windows, conv, pooling, norms,
    npmisc, matrices, quantiles, signals, qr, custom,
)

#: Every family op by name.
OPS: dict[str, OpRow] = {row.op: row for family in _FAMILIES for row in family.OPS}
simplify.INDEX_RULES.update({op: row.index for op, row in OPS.items() if row.index is not None})

#: Every spelling with a string-language name, by that name.
SPELLINGS: dict[str, Spelling] = {
    s.name: s for family in _FAMILIES for s in family.SPELLINGS if s.name
}
#: NumPy function -> its spelling (for tracing).
NUMPY_SPELLINGS: dict[Callable[..., Any], Spelling] = {
    function: s for family in _FAMILIES for s in family.SPELLINGS for function in s.numpy
}
#: ndarray method name -> its spelling (for tracing).
METHOD_SPELLINGS: dict[str, Spelling] = {
    method: s for family in _FAMILIES for s in family.SPELLINGS for method in s.methods
}


def numpy_names() -> frozenset[str]:
    """Every ``_np.<name>`` the family ops' statements use."""
    return frozenset(name for row in OPS.values() for name in row.numpy_names)


def bind(spelling: Spelling, args: tuple[Any, ...], kwargs: dict[str, Any]
         ) -> dict[str, tuple[Param, Any]]:
    """The user's arguments by parameter name, each with how it is read, or a
    :class:`SymdiffError` showing the spelling's usage."""
    signature = inspect.signature(spelling.build)
    parameters = list(signature.parameters.values())[1:]  # drop the builder
    try:
        bound = signature.replace(parameters=parameters).bind(*args, **kwargs)
    except TypeError as exc:
        raise SymdiffError(f"{spelling.usage}: {exc}") from None
    if "where" in bound.arguments:
        raise SymdiffError(f"{spelling.usage}: unexpected keyword argument 'where'")
    return {name: (spelling.kind(name), value) for name, value in bound.arguments.items()}


def call(spelling: Spelling, builder: Builder, args: tuple[Any, ...], kwargs: dict[str, Any],
         array: Callable[[Any], Node], static: Callable[[Any], Any], where: str,
         unpack: Callable[[Any], Any] = lambda value: value) -> Node:
    """Build ``spelling``'s node from the user's arguments: each read by ``array`` or ``static``
    as its parameter's kind says (shared by the parser and the tracer, which read arguments
    differently: syntax trees and traced values); ``unpack`` turns a sequence argument into a
    Python list or tuple of items (the parser's ``[a, b]`` is a syntax tree)."""
    values: dict[str, Any] = {}
    for name, (kind, value) in bind(spelling, args, kwargs).items():
        if kind is Param.ARRAY:  # an optional array left out as None stays None
            values[name] = None if value is None else array(value)
        elif kind is Param.ARRAYS:
            value = unpack(value)
            if not isinstance(value, list | tuple):
                raise SymdiffError(f"{spelling.usage}: {name} must be a list or tuple of arrays")
            if not value:
                raise SymdiffError(f"{spelling.usage}: {name} needs at least one array")
            values[name] = tuple(array(item) for item in value)
        else:
            values[name] = static(value)
    signature = inspect.signature(spelling.build)  # positionally where the build takes *args
    parameters = list(signature.parameters.values())[1:]
    bound = inspect.BoundArguments(signature.replace(parameters=parameters), values)
    node = spelling.build(builder, *bound.args, **bound.kwargs, where=where)
    operands = tuple(n for v in values.values() for n in (v if isinstance(v, tuple) else (v,))
                     if isinstance(n, Node))
    if isinstance(node, Node) and not any(node is o for o in operands):
        defaults = {p.name: p.default for p in parameters}
        constants = tuple((k, v) for k, v in values.items()  # as given, defaults left out
                          if spelling.kind(k) is Param.STATIC and not _same(v, defaults[k]))
        name = spelling.name or spelling.usage.split("(")[0]
        builder.called.setdefault(id(node), Called(name, spelling.identity, node, operands,
                                                   constants))
    return node


def _same(value: Any, default: Any) -> bool:
    """Whether a constant given is the parameter's default (``1`` is not ``True``)."""
    return value is default or (type(value) is type(default) and value == default)


__all__ = [
    "METHOD_SPELLINGS", "NUMPY_SPELLINGS", "OPS", "SPELLINGS", "bind", "call", "numpy_names",
]
