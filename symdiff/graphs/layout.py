"""Where things go in the SVG picture of a graph: node order in each row, edge curves, labels.

Pure geometry on ids, widths and points; :mod:`symdiff.graphs.svg` puts it together.
"""

from __future__ import annotations

import bisect
import itertools


def order_rows(
    rows: list[list[str]],
    root: str,
    widths: dict[str, float],
    below: dict[str, list[str]],
    gap: float,
) -> dict[str, float]:
    """Each item's x centre, the rows (of node ids and waypoints) reordered in place.

    First the order of a walk from the output, operands in order (a tree has no crossing, and
    ``a`` is left of ``b`` in ``a - b``), then barycentre sweeps: down, each item under the
    mean of its parents, and up, each item over the mean of its children; an order replaces
    the first one only with fewer crossings. Last, neighbours in a row swap places while that
    removes crossings.
    """
    above: dict[str, list[str]] = {}
    for high, lows in below.items():
        for low in lows:
            above.setdefault(low, []).append(high)
    total = max(sum(widths[i] for i in row) + gap * (len(row) - 1) for row in rows)

    x_of: dict[str, float] = {}

    def place(row: list[str]) -> None:  # the row centred, in its order
        x = 20 + (total - sum(widths[i] for i in row) - gap * (len(row) - 1)) / 2
        for item in row:
            x_of[item] = x + widths[item] / 2
            x += widths[item] + gap

    def crossings(k: int) -> int:  # between rows k - 1 and k
        if not 0 < k < len(rows):
            return 0
        rank = {item: i for r in rows[k - 1 : k + 1] for i, item in enumerate(r)}
        seen: list[int] = []  # upper ends so far, sorted: an edge crosses those further right
        count = 0
        ends = sorted((rank[low], rank[high]) for high in rows[k] for low in below[high])
        for _, upper in ends:
            count += len(seen) - bisect.bisect_right(seen, upper)
            bisect.insort(seen, upper)
        return count

    def all_crossings() -> int:
        return sum(crossings(k) for k in range(1, len(rows)))

    def mean(items: list[str], own: str) -> float:
        return sum(x_of[i] for i in items) / len(items) if items else x_of[own]

    seen: dict[str, int] = {}
    stack = [(root, False)]
    while stack:  # post-order, operands left to right
        item, done = stack.pop()
        if done:
            seen.setdefault(item, len(seen))
        elif item not in seen:
            stack.append((item, True))
            stack += [(low, False) for low in reversed(below[item]) if low not in seen]
    for row in rows:
        row.sort(key=lambda i: seen.get(i, len(seen)))
        place(row)
    best = ([list(r) for r in rows], all_crossings())
    for _ in range(3):
        for k in reversed(range(len(rows) - 1)):
            rows[k].sort(key=lambda i: mean(above.get(i, []), i))
            place(rows[k])
        for k in range(1, len(rows)):
            rows[k].sort(key=lambda i: mean(below[i], i))
            place(rows[k])
        if all_crossings() < best[1]:
            best = ([list(r) for r in rows], all_crossings())
    rows[:] = best[0]
    rank = {item: i for row in rows for i, item in enumerate(row)}

    def pair(u: str, v: str) -> int:  # crossings between the edges of u and of v, u left of v
        return sum(rank[a] > rank[b] for a in below[u] for b in below[v]) + sum(
            rank[a] > rank[b] for a in above.get(u, []) for b in above.get(v, [])
        )

    for _ in range(4):  # then swap neighbours in a row while that removes crossings
        swapped = False
        for row in rows:
            for i in range(len(row) - 1):
                u, v = row[i], row[i + 1]
                if pair(v, u) < pair(u, v):
                    row[i], row[i + 1], rank[u], rank[v] = v, u, i + 1, i
                    swapped = True
        if not swapped:
            break
    for row in rows:
        place(row)
    return x_of


LABEL_CHAR = 6.6  # width of one character of an edge label (11px monospace)
CELL = 40.0  # grid cell of the points along the edges, to find those under a label quickly
# where along its edge (0 at the child, 1 at the parent) a label may go, in order of preference:
# a little above the middle, away from where edges cross, nearer the parent whose local rule it is
_LABEL_SPOTS = (0.6, 0.5, 0.7, 0.4, 0.8, 0.3, 0.2, 0.65, 0.55, 0.45, 0.75, 0.35, 0.25)

Curve = list[tuple[float, float, float, float, float, float, float, float]]


def ports(chains: list[list[str]], boxes: dict, x_of: dict, end: int, next_: int) -> list[float]:
    """Per edge, its offset from the centre of its node at ``end`` (0: the child, -1: the
    parent): the edges at one node are spread along its side in the order of where they go,
    so that two edges into one node do not meet before they reach it."""
    at: dict[str, list[int]] = {}
    for i, chain in enumerate(chains):
        at.setdefault(chain[end], []).append(i)
    offsets = [0.0] * len(chains)
    for node_id, ids in at.items():
        if len(ids) < 2:
            continue
        ids.sort(key=lambda i: x_of[chains[i][next_]])
        step = min(18.0, 0.5 * boxes[node_id]["w"] / (len(ids) - 1))
        for k, i in enumerate(ids):
            offsets[i] = (k - (len(ids) - 1) / 2) * step
    return offsets


def smooth_curve(points: list[tuple[float, float]]) -> Curve:
    """A smooth path through ``points`` (bottom to top): one cubic Bezier segment between two
    points, vertical where it leaves and enters them."""
    curve = []
    for (xa, ya), (xb, yb) in itertools.pairwise(points):
        k = (ya - yb) / 2
        curve.append((xa, ya, xa, ya - k, xb, yb + k, xb, yb))
    return curve


def point_at(curve: Curve, t: float) -> tuple[float, float]:
    """The point at ``t`` (0 to 1) along ``curve``, each segment an equal share."""
    k = min(int(t * len(curve)), len(curve) - 1)
    u = t * len(curve) - k
    x0, y0, x1, y1, x2, y2, x3, y3 = curve[k]
    a, b, c, d = (1 - u) ** 3, 3 * (1 - u) ** 2 * u, 3 * (1 - u) * u**2, u**3
    return a * x0 + b * x1 + c * x2 + d * x3, a * y0 + b * y1 + c * y2 + d * y3


def centred_box(cx: float, cy: float, w: float, h: float) -> tuple[float, float, float, float]:
    """A box (left, top, right, bottom) of size ``w`` x ``h`` centred at (cx, cy)."""
    return (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)


def place_label(
    curve: Curve, w: float, h: float, taken: list, others: dict
) -> tuple[float, float, float, float]:
    """Where an edge's label goes: the first spot along the curve that covers no node, label
    or other edge (``others``: points along them, by grid cell), else the least covered one,
    a label or node counting more than any number of edges."""

    def cover(box) -> tuple[bool, int, float]:  # with a margin of 3 around the label
        left, top, right, bottom = box[0] - 3, box[1] - 3, box[2] + 3, box[3] + 3
        area = sum(
            max(0.0, min(right, o[2]) - max(left, o[0]))
            * max(0.0, min(bottom, o[3]) - max(top, o[1]))
            for o in taken
            if o[0] < right and left < o[2] and o[1] < bottom and top < o[3]
        )
        cells = [
            (i, j)
            for i in range(int(left // CELL), int(right // CELL) + 1)
            for j in range(int(top // CELL), int(bottom // CELL) + 1)
        ]
        points = [p for c in cells for p in others.get(c, ())]
        crossed = sum(left < x < right and top < y < bottom for x, y in points)
        return (area > 0, crossed, area)  # rather over an edge than over a node or label

    spots = []
    for t in _LABEL_SPOTS:
        box = centred_box(*point_at(curve, t), w, h)
        if cover(box) == (False, 0, 0):
            return box
        spots.append((cover(box), box))
    return min(spots)[1]
