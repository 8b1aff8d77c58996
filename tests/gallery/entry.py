"""One gallery entry: a traced NumPy function, its shapes and what to differentiate."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Entry:
    """``fn`` traced with ``shapes``; its gradient with respect to ``wrt`` is checked against
    central differences at random points (``positive``: arguments drawn from (0.5, 2), for
    functions defined only there, such as ``log`` or ``det`` near singular)."""

    name: str
    fn: Callable[..., Any]
    shapes: dict[str, Any]
    wrt: tuple[str, ...] | None = None
    positive: bool = False
    extra: dict[str, Any] = field(default_factory=dict)  # notes for readers; unused by the test
