"""The options every builder takes, validated without importing SymPy."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import SymdiffError

MODES = ("auto", "forward", "reverse")


@dataclass(frozen=True)
class Options:
    """``simplify``: readable simplified derivatives; ``cse``: share common subexpressions;
    ``mode``: ``"forward"``, ``"reverse"`` or ``"auto"``; ``cache``: reuse generated modules
    (in memory and on disk)."""

    simplify: bool = True
    cse: bool = True
    mode: str = "auto"
    cache: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.mode, str) or self.mode not in MODES:
            allowed = ", ".join(map(repr, MODES))
            raise SymdiffError(f"mode must be one of {allowed}, not {self.mode!r}")
        for name in ("simplify", "cse", "cache"):
            if not isinstance(getattr(self, name), bool):
                raise SymdiffError(f"{name} must be True or False, not {getattr(self, name)!r}")

    def code_key(self) -> str:
        """The options that change generated code (``cache`` does not)."""
        return f"simplify={self.simplify},cse={self.cse},mode={self.mode}"
