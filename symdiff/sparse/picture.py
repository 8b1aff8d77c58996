"""Reading a sparse function: its pattern as a small spy plot (SVG, for notebooks) and the
text ``explain()`` shows (the pattern's construction, then the values, block by block)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

#: The most cells a spy plot has along a side (larger matrices are binned).
CELLS = 120


def spy_svg(rows: np.ndarray, cols: np.ndarray, shape: tuple[int, int], pixels: int = 240,
            title: str = "") -> str:
    """An SVG spy plot of the entries ``(rows, cols)`` of a matrix of ``shape``: a cell per
    entry, or per bin of entries when the matrix has more than :data:`CELLS` rows or columns
    (darker where a bin holds more of them)."""
    n_rows, n_cols = (max(int(s), 1) for s in shape)
    side = max(n_rows, n_cols)
    cells = min(side, CELLS)
    scale = cells / side
    grid_rows, grid_cols = max(1, round(n_rows * scale)), max(1, round(n_cols * scale))
    counts = np.zeros((grid_rows, grid_cols), dtype=np.int64)
    if len(rows):
        r = np.minimum((np.asarray(rows) * grid_rows) // n_rows, grid_rows - 1)
        c = np.minimum((np.asarray(cols) * grid_cols) // n_cols, grid_cols - 1)
        np.add.at(counts, (r, c), 1)
    cell = pixels / max(grid_rows, grid_cols)
    width, height = grid_cols * cell, grid_rows * cell
    full = max(1.0, (n_rows / grid_rows) * (n_cols / grid_cols))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width + 2:.0f}" '
        f'height="{height + 20:.0f}" viewBox="-1 -1 {width + 2:.1f} {height + 20:.1f}">',
        f"<title>{_escape(title) or 'sparsity pattern'}</title>",
        f'<rect x="0" y="0" width="{width:.1f}" height="{height:.1f}" fill="white" '
        'stroke="#888" stroke-width="0.5"/>',
    ]
    for i, j in zip(*np.nonzero(counts), strict=True):
        shade = 0.25 + 0.75 * min(1.0, counts[i, j] / full)
        parts.append(f'<rect x="{j * cell:.2f}" y="{i * cell:.2f}" width="{cell:.2f}" '
                     f'height="{cell:.2f}" fill="#1f4e9c" fill-opacity="{shade:.2f}"/>')
    density = len(rows) / (n_rows * n_cols)
    parts.append(f'<text x="0" y="{height + 14:.1f}" font-family="sans-serif" font-size="11">'
                 f"{shape[0]} x {shape[1]}, {len(rows)} entries ({density:.2%})</text>")
    parts.append("</svg>")
    return "\n".join(parts)


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def function_text(source: str, name: str) -> list[str]:
    """The lines of the top-level function ``name`` in ``source`` (for display only)."""
    lines = source.splitlines()
    start = next((k for k, line in enumerate(lines) if line.startswith(f"def {name}(")), None)
    if start is None:
        return []
    end = start + 1
    while end < len(lines) and (not lines[end] or lines[end].startswith((" ", "\t"))):
        end += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def explanation(header: str, pattern: Sequence[str], values: Sequence[str]) -> str:
    """The text of a sparse function's ``explain()``."""
    lines = [
        header,
        "",
        "pattern: the structural nonzeros, derived from the expressions (an entry whose "
        "derivative is not identically zero), the same at every point; the module builds "
        "their rows and columns once per set of sizes:",
        *(f"  {line}" for line in pattern),
        "",
        "values: the module's function computes only these (each the derivative the rule "
        "table gave; sd.derive shows its steps), in the order of the pattern's blocks:",
        *(f"  {line}" for line in values),
    ]
    return "\n".join(lines)
