"""Display helpers for the teaching notebooks: Markdown tables, columns side by side, and SVG
charts drawn by hand.

The charts are plain SVG text, so the notebooks need no plotting library (matplotlib is not a
dependency of symdiff). A notebook in this folder imports them: ``from helpers import md_table``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from IPython.display import HTML, SVG, Markdown

COLORS = ("#1c7ed6", "#e8590c", "#2f9e44", "#ae3ec9", "#868e96")


def md_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> Markdown:
    """A Markdown table (Jupyter renders it) from a header and rows of cells."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return Markdown("\n".join(lines))


def line_chart(
    x: Sequence[float],
    series: Mapping[str, Sequence[float]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    logx: bool = False,
    logy: bool = False,
    size: tuple[int, int] = (660, 360),
) -> SVG:
    """An SVG line chart; ``series`` maps a name to y values (one per x)."""
    width, height = size
    box = left, top, right, bottom = 70, 30, width - 170, height - 45
    xs = np.log10(x) if logx else np.asarray(x, float)
    ys = {k: np.log10(v) if logy else np.asarray(v, float) for k, v in series.items()}
    finite = np.concatenate([y[np.isfinite(y)] for y in ys.values()])
    x0, x1 = xs.min(), xs.max()
    y0, y1 = finite.min(), finite.max()
    y0 = y0 if logy else min(y0, 0.0)

    def sx(v: float) -> float:
        return left + (v - x0) / ((x1 - x0) or 1) * (right - left)

    def sy(v: float) -> float:
        return bottom - (v - y0) / ((y1 - y0) or 1) * (bottom - top)

    out = _frame(width, height, box, title, xlabel, ylabel)
    xticks = _ticks(x0, x1, logx)
    for k, t in enumerate(xticks):
        text = f"1e{t:.0f}" if logx else f"{t:g}"
        text = text if k % -(-len(xticks) // 8) == 0 else ""  # at most 8 labels
        out.append(
            f'<line x1="{sx(t):.1f}" x2="{sx(t):.1f}" y1="{top}" y2="{bottom}" stroke="#e9ecef"/>'
            f'<text x="{sx(t):.1f}" y="{bottom + 15}" text-anchor="middle">{text}</text>'
        )
    for t in _ticks(y0, y1, logy):
        text = f"1e{t:.0f}" if logy else f"{t:g}"
        out.append(_grid_line(left, right, sy(t), text))
    out.append(_border(box))
    for i, y in enumerate(ys.values()):
        points = " ".join(
            f"{sx(a):.1f},{sy(b):.1f}" for a, b in zip(xs, y, strict=True) if np.isfinite(b)
        )
        out.append(
            f'<polyline points="{points}" fill="none" stroke="{COLORS[i % len(COLORS)]}" '
            'stroke-width="2"/>'
        )
    out += [*_legend(list(ys), right + 12, top + 14, "line"), "</svg>"]
    return SVG("".join(out))


def bar_chart(
    groups: Sequence[str],
    series: Mapping[str, Sequence[float]],
    *,
    title: str,
    ylabel: str,
    reference: float | None = None,
    size: tuple[int, int] = (700, 330),
) -> SVG:
    """An SVG grouped bar chart; ``series`` maps a name to one value per group. ``reference``
    draws a dashed horizontal line (say, 1 for a ratio)."""
    width, height = size
    box = left, top, right, bottom = 70, 30, width - 170, height - 45
    y1 = 1.1 * max(max(v) for v in series.values())

    def sy(v: float) -> float:
        return bottom - v / y1 * (bottom - top)

    out = _frame(width, height, box, title, "", ylabel)
    out += [_grid_line(left, right, sy(t), f"{t:g}") for t in _ticks(0.0, y1, False)]
    slot = (right - left) / len(groups)
    bar = 0.8 * slot / len(series)
    for g, group in enumerate(groups):
        for i, (name, values) in enumerate(series.items()):
            x, v = left + g * slot + 0.1 * slot + i * bar, values[g]
            out.append(
                f'<rect x="{x:.1f}" y="{sy(v):.1f}" width="{bar - 2:.1f}" '
                f'height="{bottom - sy(v):.1f}" fill="{COLORS[i % len(COLORS)]}">'
                f"<title>{_esc(name)}: {v:.3g}</title></rect>"
            )
        out.append(
            f'<text x="{left + (g + 0.5) * slot:.1f}" y="{bottom + 16}" '
            f'text-anchor="middle">{_esc(group)}</text>'
        )
    if reference is not None:
        out.append(
            f'<line x1="{left}" x2="{right}" y1="{sy(reference):.1f}" y2="{sy(reference):.1f}" '
            'stroke="#212529" stroke-dasharray="5 3"/>'
        )
    out.append(_border(box))
    out += [*_legend(list(series), right + 12, top + 14, "bar"), "</svg>"]
    return SVG("".join(out))


# -- pieces ----------------------------------------------------------------------------------------
def _esc(text: object) -> str:
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _ticks(lo: float, hi: float, log: bool) -> list[float]:
    """Whole exponents on a log axis (``lo``, ``hi`` are exponents), else about five round
    numbers; only ticks inside ``[lo, hi]``."""
    if log:
        ticks = [float(k) for k in range(int(np.floor(lo)), int(np.ceil(hi)) + 1)]
    else:
        step = 10 ** np.floor(np.log10((hi - lo) / 5 or 1))
        step *= next(m for m in (1, 2, 5, 10, 20) if (hi - lo) / (step * m) <= 6)
        ticks = list(np.arange(np.ceil(lo / step) * step, hi + step / 2, step))
    return [t for t in ticks if lo - 1e-9 <= t <= hi + 1e-9]


def _frame(width: int, height: int, box: tuple, title: str, xlabel: str, ylabel: str) -> list:
    left, top, right, bottom = box
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'font-family="sans-serif" font-size="12">',
        f'<text x="{width / 2}" y="18" text-anchor="middle" font-weight="bold">'
        f"{_esc(title)}</text>",
        f'<text x="{(left + right) / 2}" y="{height - 6}" text-anchor="middle">'
        f"{_esc(xlabel)}</text>",
        f'<text transform="translate(16 {(top + bottom) / 2}) rotate(-90)" '
        f'text-anchor="middle">{_esc(ylabel)}</text>',
    ]


def _grid_line(left: float, right: float, y: float, text: str) -> str:
    return (
        f'<line x1="{left}" x2="{right}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e9ecef"/>'
        f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{text}</text>'
    )


def _border(box: tuple) -> str:
    left, top, right, bottom = box
    return (
        f'<rect x="{left}" y="{top}" width="{right - left}" height="{bottom - top}" '
        'fill="none" stroke="#adb5bd"/>'
    )


def _legend(names: list[str], x: float, y: float, kind: str) -> list[str]:
    out = []
    for i, name in enumerate(names):
        color, row = COLORS[i % len(COLORS)], y + 18 * i
        if kind == "bar":
            mark = f'<rect x="{x}" y="{row - 10}" width="14" height="12" fill="{color}"/>'
        else:
            mark = (
                f'<line x1="{x}" x2="{x + 18}" y1="{row - 4}" y2="{row - 4}" stroke="{color}" '
                'stroke-width="3"/>'
            )
        out.append(f'{mark}<text x="{x + 24}" y="{row}">{_esc(name)}</text>')
    return out


def side_by_side(*columns: tuple[str, str]) -> HTML:
    """Columns next to each other, each a (title, LaTeX block) pair: Jupyter typesets the
    ``$$ ... $$`` math of an HTML output. The titles are escaped; the LaTeX is put as it is.

    Each column is as wide as its math; when both do not fit side by side the second wraps
    below the first (checked in Chromium: fixed half-widths cut the identities off)."""
    cells = "".join(
        '<div style="flex:0 1 auto;min-width:18em;max-width:100%;overflow-x:auto;'
        'overflow-y:hidden">'
        f"<p><b>{_esc(title)}</b></p>\n\n{latex}\n\n</div>"
        for title, latex in columns
    )
    return HTML('<div style="display:flex;flex-wrap:wrap;gap:1em 3em;align-items:flex-start">'
                f"{cells}</div>")
