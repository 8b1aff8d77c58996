"""The message for a NumPy function a traced array does not support: it names the function and
suggests the closest supported spelling, read from the tracer's own tables (so the suggestion
stays true as operation families are added)::

    numpy function 'nanmax' is not supported when tracing arrays; did you mean np.amax?
    numpy function 'linalg.eig' is not supported when tracing arrays; the numpy.linalg functions
    supported are: det, inv

A function of a NumPy submodule (``np.linalg.eig``, ``np.fft.fft``) is matched only against the
supported functions of the same submodule.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

_CUTOFF = 0.7
_LISTED = 12  # supported names listed when none is close


def numpy_name(func: Callable[..., Any] | np.ufunc) -> tuple[str, str]:
    """``(submodule, name)`` of a NumPy function: ``("", "sum")``, ``("linalg", "det")``."""
    name = str(getattr(func, "__name__", repr(func)))
    module = str(getattr(func, "__module__", None) or "numpy")
    if isinstance(func, np.ufunc) or module in ("numpy", "numpy._core", "numpy.core") or (
        getattr(np, name, None) is func
    ):
        return "", name
    parts = module.split(".")
    return (parts[1] if len(parts) > 1 and parts[0] == "numpy" else module), name


def unsupported(func: Callable[..., Any] | np.ufunc,
                supported: Iterable[Callable[..., Any] | np.ufunc]) -> str:
    """The refusal of ``func`` with the closest of the ``supported`` functions."""
    group, name = numpy_name(func)
    shown = f"{group}.{name}" if group else name
    message = f"numpy function '{shown}' is not supported when tracing arrays"
    names = sorted({n for g, n in map(numpy_name, supported) if g == group})
    close = difflib.get_close_matches(name.lower(), names, n=1, cutoff=_CUTOFF)
    if close:
        return f"{message}; did you mean np.{group + '.' if group else ''}{close[0]}?"
    if not group:
        return message + " (see the functions listed in the docs of symdiff.tensor.trace)"
    if not names:
        return f"{message}; no numpy.{group} function is supported yet"
    listed = ", ".join(names[:_LISTED]) + (", ..." if len(names) > _LISTED else "")
    return f"{message}; the numpy.{group} functions supported are: {listed}"


__all__ = ["numpy_name", "unsupported"]
