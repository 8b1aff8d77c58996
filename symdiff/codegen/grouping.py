"""Groups of alike lines for the packed point path (:mod:`symdiff.codegen.pack`).

Lines of one shape key (:mod:`symdiff.codegen.shapes`) at one *level* (one more than the
highest level of the lines they read) form a group that one vector expression computes: no
line of a group reads another of it. A *chain* is the exception worth recognising: lines
``t_0 = a*b``, ``t_k = t_{k-1}*e_k`` (or sums), each reading the one before it, are the
running product ``_np.multiply.accumulate([a, b, e_1, ...])`` (the prefix and suffix products of
the gradient of a product of n names); NumPy accumulates in that same order, so the values are
the same bit for bit. A chain is one group when nothing it reads depends on it.

Everything here is linear in the number of lines (a few passes over them; no pairwise
comparison), so that grouping adds little to the build of a 1,000-name gradient.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy as sp

from .shapes import PRODUCT, SUM, SYMBOL, Shapes

#: Chains of fewer lines stay lines of their levels.
SCAN_MIN = 4


class Unpackable(Exception):
    """Something in the program the packed path does not pack."""


@dataclass(frozen=True)
class Group:
    """Lines computed together: ``members`` (line numbers), and for a chain (``scan``) the
    leaves it accumulates: its first line's two arguments, then each later line's other one."""

    level: int
    members: tuple[int, ...]
    scan: tuple[sp.Symbol, ...] = ()
    kind: int = 0


def group_lines(lines: Sequence[tuple[sp.Symbol | None, sp.Expr]], shapes: Shapes,
                inputs: set[str]) -> list[Group]:
    """The groups of ``lines`` (``(target, value)``; target None for an output), in an order
    in which each reads only groups before it."""
    defined = {s.name: i for i, (s, _) in enumerate(lines) if s is not None}
    operands: list[list[int]] = []
    for _, value in lines:
        found = []
        for name in shapes.of(value).names:
            if name in defined:
                found.append(defined[name])
            elif name not in inputs:
                raise Unpackable(name)
        operands.append(found)
    chains = _chains(lines, shapes, defined)
    chains = _independent(chains, operands)
    chain_of = {i: c for c, chain in enumerate(chains) for i in chain[0]}
    levels = _levels(operands, chains, chain_of)
    groups: dict[tuple[int, int], list[int]] = {}
    for i, (_, value) in enumerate(lines):
        if i not in chain_of:
            groups.setdefault((shapes.of(value).key, levels[i]), []).append(i)
    made = [Group(level, tuple(members)) for (_, level), members in groups.items()]
    made += [Group(levels[members[0]], tuple(members), leaves, shapes.of(lines[members[0]][1]).kind)
             for members, leaves, _ in chains]
    return sorted(made, key=lambda g: (g.level, g.members[0]))


def _chains(lines, shapes: Shapes, defined: dict[str, int]):
    """Chains ``(members, leaves, externals)``: lines of one binary sum or product shape of
    two symbols, each (but the first) reading the one before."""
    previous: dict[int, tuple[int, sp.Symbol]] = {}
    taken: set[int] = set()
    for i, (target, value) in enumerate(lines):
        if target is None:
            continue
        shape = shapes.of(value)
        if shape.kind not in (SUM, PRODUCT) or len(shape.singles) != 2 or shape.many:
            continue
        if any(shapes.of(a).kind != SYMBOL for a in shape.singles):
            continue
        before = [a for a in shape.singles if a.name in defined
                  and lines[defined[a.name]][0] is not None
                  and shapes.of(lines[defined[a.name]][1]).key == shape.key]
        if len(before) != 1 or defined[before[0].name] in taken:
            continue
        j = defined[before[0].name]
        taken.add(j)
        other = next(a for a in shape.singles if a is not before[0])
        previous[i] = (j, other)
    after = {j: i for i, (j, _) in previous.items()}
    chains = []
    for head in after:
        if head in previous:
            continue
        members = [head]
        while members[-1] in after:
            members.append(after[members[-1]])
        if len(members) < SCAN_MIN:
            continue
        first = shapes.of(lines[head][1]).singles
        leaves = [*first, *(previous[i][1] for i in members[1:])]
        externals = {defined[s.name] for s in leaves if s.name in defined}
        chains.append((tuple(members), tuple(leaves), externals))
    return chains


def _independent(chains, operands):
    """The chains none of whose leaves depends on the chain itself."""
    chain_of = {i: c for c, chain in enumerate(chains) for i in chain[0]}
    reach: list[frozenset[int]] = []
    for found in operands:
        through: set[int] = set()
        for o in found:
            through |= reach[o]
            if o in chain_of:
                through.add(chain_of[o])
        reach.append(frozenset(through))
    return [chain for c, chain in enumerate(chains)
            if not any(c in reach[e] or chain_of.get(e) == c for e in chain[2])]


def _levels(operands, chains, chain_of) -> list[int]:
    """Each line's level; a chain's lines all at the chain's (one more than its leaves')."""
    chain_level = [0] * len(chains)
    for _ in range(len(chains) + 2):
        levels: list[int] = []
        for i, found in enumerate(operands):
            if i in chain_of:
                levels.append(chain_level[chain_of[i]])
            else:
                levels.append(1 + max((levels[o] for o in found), default=-1))
        new = [1 + max((levels[e] for e in chain[2]), default=-1) for chain in chains]
        if new == chain_level:
            return levels
        chain_level = new
    raise Unpackable("chain levels do not settle")
