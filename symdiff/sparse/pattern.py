"""The pattern of a sparse Jacobian or Hessian as data (:class:`Block`, :class:`Pattern`), and
as the ``_pattern`` function of its generated module.

A generated sparse function returns one flat vector of values; its pattern says, block by block,
where they go. The values of one block fill a grid of ``counts`` in C order, and the row and the
column of the value at grid index ``(i0, i1, ...)`` are affine in it::

    row = row0 + row_steps[0]*i0 + row_steps[1]*i1 + ...
    col = col0 + col_steps[0]*i0 + col_steps[1]*i1 + ...

so the pattern of a band (the chained Rosenbrock Hessian's three diagonals), of a grid stencil
or of a dense block is a few numbers, whatever the size. Sizes and offsets are ints or SymPy
expressions in the named dimensions (``n - 1``); the module's ``_pattern`` takes the sizes of the
named dimensions (sorted by name) and returns ``(rows, cols, shape)`` as NumPy int64 arrays and a
tuple. Entries may repeat (two blocks reaching one entry): they add up, as in a COO matrix.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import sympy as sp

from ..codegen import naming
from ..codegen.printer import CodePrinter
from ..codegen.spec import safe_comment
from ..verify.allowed import PATTERN

Size = int | sp.Expr


@dataclass(frozen=True)
class Block:
    """One block of values: a grid of ``counts`` and the affine rows and columns of its entries."""

    counts: tuple[Size, ...]
    row0: Size
    row_steps: tuple[Size, ...]
    col0: Size
    col_steps: tuple[Size, ...]

    def place(self) -> str:
        """Where the block's values go, in words: ``rows i + 1, columns i for i < n - 1``."""
        letters = "ijklpqrs"
        grid = [sp.Symbol(letters[k % len(letters)]) for k in range(len(self.counts))]
        row = self.row0 + sum((s * g for s, g in zip(self.row_steps, grid, strict=True)), 0)
        col = self.col0 + sum((s * g for s, g in zip(self.col_steps, grid, strict=True)), 0)
        ranges = ", ".join(f"{g} < {sp.sstr(c)}" for g, c in zip(grid, self.counts, strict=True))
        where = f"row {sp.sstr(row)}, column {sp.sstr(col)}"
        return where + (f" for {ranges}" if ranges else "")


@dataclass(frozen=True)
class Pattern:
    """The structural nonzeros of a matrix of ``shape``, block by block, and the named
    dimensions (sorted by name) its sizes depend on."""

    blocks: tuple[Block, ...]
    shape: tuple[Size, Size]
    dims: tuple[str, ...] = ()
    #: Parts kept dense (``"cumsum: the structure of its derivative is not analysed"``).
    dense: tuple[str, ...] = ()

    def function(self, described: str) -> str:
        """The text of ``_pattern(<dims>)``, returning ``(rows, cols, shape)`` of the values
        that ``described`` (the public function's name) returns; each block's line says where
        its values go (when there are at most :data:`LABELLED` blocks)."""
        params = ", ".join(naming.dimension(d) for d in self.dims)
        rows = [_grid(b.row0, b.row_steps, b.counts) for b in self.blocks]
        cols = [_grid(b.col0, b.col_steps, b.counts) for b in self.blocks]
        labels = ([safe_comment(b.place(), 90) for b in self.blocks]
                  if len(self.blocks) <= LABELLED else [""] * len(self.blocks))
        lines = [
            f"def {PATTERN}({params}):",
            f'    """Where the values {described} returns go, block by block: their rows and',
            "    columns (each block a grid of values in C order, its rows and columns affine in",
            "    the grid index), and the shape of the matrix. These are the structural nonzeros,",
            '    the same at every point; an entry reached twice is the sum of its values."""',
            *(f"    # kept dense (every entry it reaches): {safe_comment(note, 120)}"
              for note in self.dense),
            *_concatenated("_rows", rows, labels),
            *_concatenated("_cols", cols, [""] * len(cols)),
            f"    return _rows, _cols, {_tuple(self.shape)}",
        ]
        return "\n".join(lines)


#: Up to this many blocks, the pattern function says where each block's values go.
LABELLED = 40


def _concatenated(target: str, parts: Sequence[str], labels: Sequence[str]) -> list[str]:
    if not parts:
        return [f"    {target} = _affine_grid(0, (1,), (0,))"]
    if len(parts) == 1:
        return [f"    {target} = {parts[0]}" + (f"  # {labels[0]}" if labels[0] else "")]
    width = max(len(p) for p in parts) + 1
    lines = [f"        {(p + ',').ljust(width)}" + (f"  # {label}" if label else "")
             for p, label in zip(parts, labels, strict=True)]
    return [f"    {target} = _np.concatenate((", *(line.rstrip() for line in lines), "    ))"]


def _grid(offset: Size, steps: Sequence[Size], counts: Sequence[Size]) -> str:
    return f"_affine_grid({size_code(offset)}, {_tuple(steps)}, {_tuple(counts)})"


def _tuple(items: Sequence[Size]) -> str:
    codes = [size_code(i) for i in items]
    return f"({codes[0]},)" if len(codes) == 1 else f"({', '.join(codes)})"


def size_code(size: Size) -> str:
    """A size or offset as code: ``3``, ``_n_dim - 1``."""
    if isinstance(size, int):
        return str(size)
    size = sp.sympify(size)
    if size.is_Integer:
        return str(int(size))
    local = {s: sp.Symbol(naming.dimension(s.name)) for s in size.free_symbols}
    return CodePrinter().doprint(size.xreplace(local))


def evaluate(size: Size, dims: dict[str, int]) -> int:
    """A size at given sizes of the named dimensions."""
    if isinstance(size, int):
        return size
    value = sp.sympify(size).xreplace({s: sp.Integer(dims[s.name]) for s in size.free_symbols})
    return int(value)
