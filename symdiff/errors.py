"""The exceptions symdiff raises. Every one is a ``ValueError`` through ``SymdiffError``;
:class:`ArgumentError` is also a ``TypeError``."""

from __future__ import annotations


class SymdiffError(ValueError):
    """Base class of every error symdiff raises on bad input."""


class ParseError(SymdiffError):
    """A string could not be parsed; ``position`` is the 0-based column of the problem."""

    def __init__(self, message: str, text: str | None = None, position: int | None = None):
        self.reason = message
        self.text = text
        self.position = position
        super().__init__(self._format(message, text, position))

    @staticmethod
    def _format(message: str, text: str | None, position: int | None) -> str:
        if text is None or position is None or len(text) > 200 or "\n" in text:
            where = f" (at position {position})" if position is not None else ""
            return f"{message}{where}"
        return f"{message} (at position {position})\n  {text}\n  {' ' * position}^"


class UnsupportedError(SymdiffError):
    """The input is well formed but uses something symdiff cannot differentiate or emit."""


class ShapeError(SymdiffError):
    """Array shapes do not fit together."""


class ArgumentError(SymdiffError, TypeError):
    """A compiled function was called with an argument that is not real numbers: ``None``, a
    string, complex numbers, an object array, a datetime. Also a ``TypeError``, as Python raises
    for an argument of the wrong type."""
