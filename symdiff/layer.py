"""The interface between the build pipeline (:mod:`symdiff.pipeline`) and the two layers that
turn a builder call into generated code: scalar expressions (:mod:`symdiff.build`) and tensor
expressions with ``shapes=`` (:mod:`symdiff.tensor.build`).

The pipeline owns everything the layers share: the in-memory memo, the request index, the disk
store and loading a module; a layer only parses a call into a :class:`Request` (which knows its
key and its :class:`~symdiff.recipe.Recipe`), derives and emits it (:class:`Built`), and gives
a function that derives the ``.exprs`` of a request later without emitting anything. No SymPy
here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .options import Options
from .recipe import Recipe


@dataclass(frozen=True)
class Call:
    """A builder call as the user made it: ``sd.<kind>(exprs, wrt, **options, shapes=...)``."""

    kind: str
    exprs: Any
    wrt: Any
    options: Options
    shapes: Any = None

    @property
    def layer(self) -> str:
        """Which layer builds it: ``"tensor"`` with ``shapes=``, else ``"scalar"``; with
        ``sparse=True``, ``"sparse tensor"`` or ``"sparse scalar"``."""
        layer = "scalar" if self.shapes is None else "tensor"
        return f"sparse {layer}" if self.options.sparse else layer


@dataclass(frozen=True)
class Built:
    """What a layer's build produces: the module's source, its recipe (with the mode and the
    output names filled in), the SymPy expressions or formulas it computes (or a function
    that derives them on first access) and the steps the engine recorded while deriving them
    (the scalar layer's :class:`~symdiff.engine.sweeps.Recorded`, which ``explain()`` shows;
    kept in memory only, never stored)."""

    source: str
    recipe: Recipe
    exprs: Sequence[Any] | Callable[[], Sequence[Any]]
    recorded: Any = None


class Request(Protocol):
    """A parsed and validated call."""

    @property
    def recipe(self) -> Recipe:
        """The recipe of the function it asks for (``mode`` and ``outputs`` not yet known)."""
        ...

    @property
    def options(self) -> Options:
        """The builder's options (``cache=False`` skips every level of the cache)."""
        ...

    @property
    def call_signature(self) -> inspect.Signature | None:
        """The compiled function's signature, or None for the generated function's own."""
        ...

    def key(self) -> str:
        """A digest of everything that determines the generated source and the signature."""
        ...


class Layer(Protocol):
    """What each layer gives the pipeline."""

    def request(self, call: Call) -> Request:
        """Parse and validate ``call`` (no derivation)."""
        ...

    def build(self, request: Request) -> Built:
        """Derive and emit ``request`` (no caching)."""
        ...

    def exprs(self, request: Request) -> Callable[[], list[Any]]:
        """A function that derives the ``.exprs`` of ``request`` without emitting code, when
        called (a loaded function's ``.exprs`` are derived on first access; it must pickle)."""
        ...
