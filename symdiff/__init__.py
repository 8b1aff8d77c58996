"""symdiff: symbolic differentiation that emits readable, vectorized NumPy gradient code.

>>> import symdiff as sd
>>> g = sd.grad("sin(x)*exp(y)/(1 + x**2)")
>>> print(g.source)        # the module it runs; imports only NumPy

``import symdiff`` is cheap: SymPy and Jinja load on the first real derivation.
"""

from __future__ import annotations

import importlib
from typing import Any

from .errors import ArgumentError, ParseError, ShapeError, SymdiffError, UnsupportedError

__version__ = "0.1.0"

_LAZY = {
    "parse": "parsing",
    "derive": "api",
    "compile": "api",
    "grad": "api",
    "value_and_grad": "api",
    "jacobian": "api",
    "hessian": "api",
    "hvp": "api",
    "check_grad": "api",
    "objective": "objective",
    "cache_info": "api",
    "clear_cache": "api",
    "Objective": "objective",
    "CompiledFunction": "compiled",
    "Derivation": "engine.steps",
    "Step": "engine.steps",
    "RULES": "engine.rules",
    "math": "math",
    "nn": "nn",
    "graph": "graphs",
    "flatten": "trees",
    "unflatten": "trees",
    "custom_vjp": "custom",
    "defvjp": "custom",
}
#: Names in ``_LAZY`` that are submodules themselves rather than attributes of one.
_SUBMODULES = frozenset({"math", "nn"})

__all__ = [
    "ArgumentError",
    "ParseError",
    "ShapeError",
    "SymdiffError",
    "UnsupportedError",
    "__version__",
    *sorted(set(_LAZY) - _SUBMODULES),  # a star import must not shadow the standard math
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'symdiff' has no attribute {name!r}")
    imported = importlib.import_module(f".{module}", __name__)
    value = imported if name in _SUBMODULES else getattr(imported, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
