"""The names a derivation shows for the chain rule's inner functions.

The engine names a chain rule's inner functions ``u`` (``u_1, u_2, ...`` for several), the
same at every chain step; the views (:func:`symdiff.engine.lines.derivation_lines`) give each
inner expression its own name in the whole derivation (:class:`InnerNames`: sibling chains are
``u`` and ``v``, a chain inside a chain ``v``, and no name a variable of the expression), and
rename the outer steps to match. A tensor derivation first renames its steps away from the
names it shows elsewhere (:func:`avoiding`).
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Mapping
from dataclasses import replace
from typing import Any

import sympy as sp

#: Names tried, in order, for the inner function of the chain rule (one not in the expression).
INNER_NAMES = ("u", "v", "w", "t", "s")

def inner_names(count: int, taken: Collection[str]) -> list[str]:
    """Names for ``count`` inner functions, none in ``taken``: ``u`` for one, else ``u_1, ...``
    (the next of :data:`INNER_NAMES` when those are taken)."""
    taken = set(taken)
    fallback = (f"u{i}" for i in itertools.count(1))
    for base in itertools.chain(INNER_NAMES, fallback):
        names = [base] if count == 1 else [f"{base}_{i}" for i in range(1, count + 1)]
        if base not in taken and not taken.intersection(names):
            return names
    raise AssertionError("unreachable")  # pragma: no cover


def _renamed(step: Any, names: Mapping[sp.Symbol, sp.Symbol]) -> Any:
    """An outer step of a chain with its inner-function names changed."""
    return replace(
        step,
        expr=step.expr.xreplace(names),
        result=step.result.xreplace(names),
        var=names.get(step.var, step.var),
    )


def _names_for(step: Any, used: frozenset[str]) -> tuple[tuple[tuple[sp.Symbol, sp.Expr], ...],
                                                          tuple[Any, ...]]:
    """A chain step's definitions and outer steps, renamed if an enclosing chain already uses a
    name (a chain inside a chain names its inner function ``v``, not ``u`` again) or if the
    expression has a variable of that name (tensor steps rename their placeholders late)."""
    taken = {s.name for s in step.expr.free_symbols} | used
    if not any(symbol.name in taken for symbol, _ in step.defines):
        return step.defines, step.outer
    new = inner_names(len(step.defines), taken)
    names = {
        old: sp.Symbol(name, **old.assumptions0)
        for (old, _), name in zip(step.defines, new, strict=True)
    }
    defines = tuple((names[symbol], expr) for symbol, expr in step.defines)
    return defines, tuple(_renamed(outer, names) for outer in step.outer)


def avoiding(step: Any, names: Collection[str]) -> Any:
    """The step tree with every chain rule's inner functions renamed away from ``names``: the
    names a derivation shows outside these steps (a tensor derivation's variables and values),
    which the steps themselves cannot know."""
    subs = tuple(avoiding(sub, names) for sub in step.substeps)
    step = replace(step, substeps=subs) if subs != step.substeps else step
    if not any(symbol.name in names for symbol, _ in step.defines):
        return step
    defines, outer = _names_for(step, frozenset(names))
    return replace(step, defines=defines, substeps=(*outer, *step.inner))


class InnerNames:
    """The names a derivation shows for its chain rules' inner functions: one name per inner
    expression, and never one name for two expressions or for a variable of the derivation
    (sibling chains are ``u`` and ``v``, not ``u`` twice)."""

    def __init__(self, taken: Collection[str]) -> None:
        self.taken = set(taken)
        self.named: dict[tuple[sp.Expr, ...], tuple[sp.Symbol, ...]] = {}

    def shown(self, step: Any) -> tuple[tuple[tuple[sp.Symbol, sp.Expr], ...], tuple[Any, ...]]:
        """A chain step's definitions and outer steps in the names shown (the same inner
        expressions, in the same order, keep their names)."""
        exprs = tuple(expr for _, expr in step.defines)
        if exprs not in self.named:
            fresh = inner_names(len(exprs), self.taken)
            self.named[exprs] = tuple(sp.Symbol(name, **old.assumptions0)
                                      for (old, _), name in zip(step.defines, fresh, strict=True))
            self.taken.update(fresh)
            self.taken.add(fresh[0].split("_")[0] if len(fresh) > 1 else fresh[0])
        names = {old: new for (old, _), new in zip(step.defines, self.named[exprs], strict=True)}
        defines = tuple((names[old], expr) for old, expr in step.defines)
        if all(old == new for old, new in names.items()):
            return defines, step.outer
        return defines, tuple(_renamed(outer, names) for outer in step.outer)
