"""The error :func:`symdiff.verify.check_module` raises, and how a refusal names its line."""

from __future__ import annotations

import ast

from ..errors import SymdiffError


class VerificationError(SymdiffError):
    """A generated module is not of the shape symdiff's templates produce."""


def refuse(node: ast.AST, why: str) -> VerificationError:
    """The error refusing ``node`` (its line number in the message) because of ``why``."""
    line = getattr(node, "lineno", "?")
    return VerificationError(f"generated code refused at line {line}: {why}")
