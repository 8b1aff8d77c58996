"""Program lines no deeper than :data:`MAX_LINE_DEPTH` operations: :func:`shallow_lines`.

A line is printed as one Python expression, and Python reads at most 200 nested brackets
(``SyntaxError: too many nested parentheses``); the cost model and the verifier parse every
line, and printing recurses once per level. A deep chain that nothing shares (a traced loop
``y = x/(1 + y**2)`` unrolled 300 times, whose derivative CSE leaves as one line) is therefore
cut into lines: a subexpression at :data:`MAX_LINE_DEPTH` levels is computed first into a
temporary of its own. The values are unchanged (each temporary holds what the line computed in
its place).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import sympy as sp

from ..codegen.naming import TEMPORARY
from .dag import depth, free_symbols
from .postorder import bottom_up
from .quick import rebuilt

#: The most operations nested in one another in one line (Python's parser allows 200 nested
#: brackets; a level of operations prints at most two).
MAX_LINE_DEPTH = 40

Line = tuple[sp.Symbol, sp.Expr]


def shallow_lines(assignments: Sequence[Line], outputs: Sequence[sp.Expr],
                  names: Iterator[sp.Symbol] | None = None, limit: int = MAX_LINE_DEPTH
                  ) -> tuple[list[Line], list[sp.Expr]]:
    """``(assignments, outputs)`` with every line at most ``limit`` operations deep: each
    subexpression that reaches ``limit`` levels named (``names``: the temporaries to use, by
    default ``_t`` names not taken) and assigned before its first use."""
    values = [v for _, v in assignments] + list(outputs)
    if depth(values) <= limit:
        return list(assignments), list(outputs)
    names = _fresh(assignments, values) if names is None else names
    cut = _Cut(names, limit)
    lines: list[Line] = []
    for symbol, value in assignments:
        value = cut(value, lines)
        lines.append((symbol, value))
    reduced = [cut(e, lines) for e in outputs]
    return lines, reduced


class _Cut:
    """Each distinct subexpression rebuilt once, with its arguments as cut (:func:`rebuilt`),
    and named where it reaches the limit; the lines that name them go to the caller's list."""

    def __init__(self, names: Iterator[sp.Symbol], limit: int):
        self.names, self.limit = names, limit
        self.done: dict[sp.Basic, tuple[sp.Basic, int]] = {}  # node -> (its form, its height)

    def __call__(self, root: sp.Expr, lines: list[Line]) -> sp.Expr:
        done = self.done

        def form(node: sp.Basic) -> tuple[sp.Basic, int]:
            if not node.args:
                return node, 0
            args = tuple(done[a][0] for a in node.args)
            value = node if all(a is b for a, b in zip(args, node.args, strict=True)) \
                else rebuilt(node.func, args)
            height = 1 + max(done[a][1] for a in node.args)
            if height >= self.limit and node is not root:
                symbol = next(self.names)
                lines.append((symbol, value))
                value, height = symbol, 0
            return value, height

        return bottom_up(root, done, form)[0]


def _fresh(assignments: Sequence[Line], values: Sequence[sp.Expr]) -> Iterator[sp.Symbol]:
    """Temporaries named ``_t0, _t1, ...`` skipping the names the program holds."""
    taken = {s.name for s, _ in assignments} | {s.name for s in free_symbols(values)}
    for symbol in sp.numbered_symbols(TEMPORARY, real=True):
        if symbol.name not in taken:
            yield symbol
