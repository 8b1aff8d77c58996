"""Which names a mistyped name probably meant, for did-you-mean hints on ``wrt`` names."""

from __future__ import annotations

from collections.abc import Collection

#: The letter rows of a QWERTY keyboard: a one-letter name next to a variable's key (``z`` for
#: ``x``) is a likely slip of the finger.
_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_PLACES = {ch: (r, c) for r, row in enumerate(_ROWS) for c, ch in enumerate(row)}


def _adjacent_keys(a: str, b: str) -> bool:
    """Whether two letters are neighbours on the keyboard (beside, above or below)."""
    pa, pb = _PLACES.get(a.lower()), _PLACES.get(b.lower())
    if pa is None or pb is None or pa == pb:
        return False
    (ra, ca), (rb, cb) = pa, pb
    return (ra == rb and abs(ca - cb) == 1) or (abs(ra - rb) == 1 and 0 <= ca - cb + (ra > rb) <= 1)


def edit_distance(a: str, b: str) -> int:
    """Insertions, deletions, substitutions and swaps of neighbours that turn ``a`` into ``b``
    (the optimal string alignment distance)."""
    previous2: list[int] = []
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            cost = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cost = min(cost, previous2[j - 2] + 1)
            current.append(cost)
        previous2, previous = previous, current
    return previous[-1]


def close_names(name: str, candidates: Collection[str], most: int = 3) -> list[str]:
    """The candidates ``name`` was probably meant to be, closest first (at most ``most``): the
    same name in another case (``X`` for ``x``), one edit away (``xx``, ``x2`` or ``yx`` for
    ``x``, ``x1`` or ``xy``) or two for names of six or more letters, and for one letter a key
    next to it on the keyboard (``z`` for ``x``)."""
    found: list[tuple[int, int, str]] = []
    for order, candidate in enumerate(candidates):
        if candidate.lower() == name.lower():
            found.append((0, order, candidate))
            continue
        if len(name) == 1 and len(candidate) == 1:
            if _adjacent_keys(name, candidate):
                found.append((2, order, candidate))
            continue
        distance = edit_distance(name.lower(), candidate.lower())
        if distance <= (2 if min(len(name), len(candidate)) >= 6 else 1):
            found.append((distance, order, candidate))
    return [candidate for *_, candidate in sorted(found)[:most]]


def did_you_mean(close: list[str]) -> str:
    """``"; did you mean 'x'?"``, ``"; did you mean 'x1' or 'x2'?"``, or ``""``."""
    if not close:
        return ""
    quoted = [repr(c) for c in close]
    listed = quoted[0] if len(quoted) == 1 else f"{', '.join(quoted[:-1])} or {quoted[-1]}"
    return f"; did you mean {listed}?"
