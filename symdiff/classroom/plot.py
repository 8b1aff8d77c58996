"""A plot of a function and its derivative over an interval, as an SVG drawn here (no script,
no network): the values are sampled by the functions :func:`symdiff.compile` builds.

The vertical range leaves out the values near a pole (:func:`shown_values`), so an asymptote
(``tan``, ``1/x``) does not flatten the rest of the curve; a curve leaving the plot far is cut
there, so no line is drawn across an asymptote. Points where a function is not defined (NaN,
infinities) are gaps.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import sympy as sp

#: How many points each curve is sampled at.
SAMPLES = 401
WIDTH, HEIGHT = 640, 360
LEFT, RIGHT, TOP, BOTTOM = 60, 16, 14, 44

#: Each curve's colour and dash pattern (told apart without colour too).
STYLES = (("#1864ab", ""), ("#d9480f", "7 4"), ("#2b8a3e", "2 3"))


@dataclass(frozen=True)
class Curve:
    """A sampled function: its label in the legend and its values at the plot's points."""

    label: str
    values: np.ndarray


def sample(expr: sp.Expr, var: str, fixed: Mapping[str, float], xs: np.ndarray) -> np.ndarray:
    """``expr`` at ``xs`` for the variable ``var``, the other variables at ``fixed``."""
    import symdiff as sd

    names = sorted(s.name for s in expr.free_symbols if isinstance(s, sp.Symbol))
    if not names:
        value = complex(sp.N(expr))
        constant = value.real if value.imag == 0 else math.nan
        return np.full(xs.shape, constant)
    function = sd.compile(expr, simplify=False)  # as it is: a derivative comes simplified
    arguments = {name: xs if name == var else float(fixed[name]) for name in names}
    with np.errstate(all="ignore"):
        values = function(**arguments)
    values = np.asarray(values)
    if np.iscomplexobj(values):
        values = np.where(values.imag == 0, values.real, np.nan)
    return np.broadcast_to(values.astype(float), xs.shape)


def nice_ticks(low: float, high: float, count: int = 6) -> list[float]:
    """Round numbers from ``low`` to ``high``, about ``count`` of them: 1, 2 or 5 times a
    power of ten apart, the spacing nearest to an even split."""
    span = high - low
    raw = span / max(count - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = min((m * power for m in (1, 2, 5, 10)), key=lambda s: abs(math.log(s / raw)))
    first = math.ceil(low / step) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(0.0 if abs(value) < step * 1e-9 else value)
        value += step
    return ticks


def number(value: float) -> str:
    """A tick label: ``0.5``, ``-2``, ``1e+04``."""
    return f"{value:.6g}"


def shown_values(values: np.ndarray) -> np.ndarray:
    """Which values set the vertical range: the finite ones, less those near a pole (more
    than ten times the median size and changing by more than a fifth from a neighbouring
    sample); exp(x) keeps its large values, tan(x) does not."""
    finite = np.isfinite(values)
    if not finite.any():
        return finite
    size = np.abs(np.where(finite, values, np.nan))
    big = size > 10 * max(float(np.nanmedian(size)), 1e-300)
    with np.errstate(all="ignore"):
        ratio = np.fmax(size[1:] / size[:-1], size[:-1] / size[1:])
    change = np.ones_like(size)
    change[1:] = np.fmax(change[1:], ratio)
    change[:-1] = np.fmax(change[:-1], ratio)
    steep = ~(change < 1.2)  # NaN next to a gap counts as steep
    return finite & ~(big & steep)


def value_range(curves: Sequence[Curve]) -> tuple[float, float]:
    """The vertical range of the values that set it (:func:`shown_values`) with a margin, or
    -1 to 1 when there is nothing finite to show."""
    shown = [c.values[shown_values(c.values)] for c in curves]
    finite = np.concatenate(shown or [np.empty(0)])
    if finite.size == 0:
        return -1.0, 1.0
    low, high = float(finite.min()), float(finite.max())
    span = high - low
    if span <= 1e-12 * max(1.0, abs(high)):
        return low - 1.0, high + 1.0
    return low - 0.06 * span, high + 0.06 * span


def _paths(xs: np.ndarray, values: np.ndarray, to_x, to_y, low: float, high: float
           ) -> list[str]:
    """The curve as path commands, cut at gaps, far outside the range and where it jumps by
    more than the plot's height between two samples (across a pole)."""
    span = high - low
    near = np.isfinite(values) & (values > low - 2 * span) & (values < high + 2 * span)
    paths: list[list[str]] = []
    current: list[str] = []
    previous = math.nan
    for x, y, ok in zip(xs, values, near, strict=True):
        if current and (not ok or abs(y - previous) > span):
            paths.append(current)
            current = []
        if ok:
            current.append(f"{to_x(x):.1f},{to_y(y):.1f}")
        previous = y
    if current:
        paths.append(current)
    return ["M" + " L".join(points) for points in paths if len(points) > 1]


def _grid_line(line: tuple[float, float, float, float], label: tuple[float, float],
               anchor: str, value: float) -> list[str]:
    """A grid line across the plot and its value beside the axis."""
    x1, y1, x2, y2 = line
    return [f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#e9ecef"/>',
            f'<text x="{label[0]:.1f}" y="{label[1]:.1f}" text-anchor="{anchor}" '
            f'fill="#343a40">{html.escape(number(value))}</text>']


def draw(xs: np.ndarray, curves: Sequence[Curve], var: str, title: str, uid: str = "plot"
         ) -> str:
    """The SVG of ``curves`` over ``xs`` (horizontal axis ``var``), with axes, a grid, tick
    labels, a legend and ``title`` (what a screen reader says)."""
    a, b = float(xs[0]), float(xs[-1])
    low, high = value_range(curves)
    inner_w, inner_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def to_x(x: float) -> float:
        return LEFT + (x - a) / (b - a) * inner_w

    def to_y(y: float) -> float:
        return TOP + (high - y) / (high - low) * inner_h

    uid = "".join(c for c in uid if c.isalnum() or c == "-") or "plot"
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="symdiff-plot" role="img" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        f'aria-labelledby="{uid}-title" font-family="sans-serif" font-size="12">',
        f'<title id="{uid}-title">{html.escape(title)}</title>',
        f'<defs><clipPath id="{uid}-clip"><rect x="{LEFT}" y="{TOP}" width="{inner_w}" '
        f'height="{inner_h}"/></clipPath></defs>',
        f'<rect x="{LEFT}" y="{TOP}" width="{inner_w}" height="{inner_h}" fill="#fff" '
        'stroke="#868e96"/>',
    ]
    for tick in nice_ticks(a, b):
        x = to_x(tick)
        out += _grid_line((x, TOP, x, TOP + inner_h), (x, TOP + inner_h + 16), "middle", tick)
    for tick in nice_ticks(low, high):
        y = to_y(tick)
        out += _grid_line((LEFT, y, LEFT + inner_w, y), (LEFT - 6, y + 4), "end", tick)
    if a < 0 < b:
        out.append(f'<line x1="{to_x(0):.1f}" y1="{TOP}" x2="{to_x(0):.1f}" '
                   f'y2="{TOP + inner_h}" stroke="#495057"/>')
    if low < 0 < high:
        out.append(f'<line x1="{LEFT}" y1="{to_y(0):.1f}" x2="{LEFT + inner_w}" '
                   f'y2="{to_y(0):.1f}" stroke="#495057"/>')
    out.append(f'<text x="{LEFT + inner_w / 2}" y="{HEIGHT - 8}" text-anchor="middle" '
               f'fill="#212529" font-style="italic">{html.escape(var)}</text>')
    out.append(f'<g clip-path="url(#{uid}-clip)" fill="none" stroke-width="2">')
    for curve, (colour, dash) in zip(curves, STYLES, strict=False):
        dashes = f' stroke-dasharray="{dash}"' if dash else ""
        for d in _paths(xs, curve.values, to_x, to_y, low, high):
            out.append(f'<path class="curve" d="{d}" stroke="{colour}"{dashes}/>')
    out.append("</g>")
    width = 56 + 7 * max((len(c.label) for c in curves), default=0)
    out.append(f'<rect x="{LEFT + 4}" y="{TOP + 4}" width="{width}" '
               f'height="{8 + 18 * len(curves)}" fill="#fff" fill-opacity="0.9" '
               'stroke="#ced4da"/>')
    for i, (curve, (colour, dash)) in enumerate(zip(curves, STYLES, strict=False)):
        y = TOP + 16 + 18 * i
        dashes = f' stroke-dasharray="{dash}"' if dash else ""
        out.append(f'<line x1="{LEFT + 10}" y1="{y}" x2="{LEFT + 40}" y2="{y}" '
                   f'stroke="{colour}" stroke-width="2"{dashes}/>')
        out.append(f'<text x="{LEFT + 46}" y="{y + 4}" fill="#212529">'
                   f"{html.escape(curve.label)}</text>")
    out.append("</svg>")
    return "\n".join(out)


def plot(exprs: Sequence[tuple[str, sp.Expr]], var: str, fixed: Mapping[str, float],
         interval: tuple[float, float], uid: str = "plot") -> str:
    """The SVG of each ``(label, expression)`` against ``var`` over ``interval``, the other
    variables at ``fixed``."""
    a, b = interval
    xs = np.linspace(a, b, SAMPLES)
    curves = [Curve(label, sample(expr, var, fixed, xs)) for label, expr in exprs]
    others = ", ".join(f"{name} = {number(v)}" for name, v in sorted(fixed.items())
                       if name != var)
    title = (" and ".join(label for label, _ in exprs) + f" for {var} from {number(a)} to "
             f"{number(b)}" + (f", with {others}" if others else ""))
    return draw(xs, curves, var, title, uid)
