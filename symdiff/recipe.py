"""What a compiled function is, as data: the :class:`Recipe` it was built from.

A :class:`Recipe` names the kind of function (``"value"``, ``"grad"``, ``"value_and_grad"``,
``"jacobian"``, ``"hessian"``, ``"hvp"``), the expression(s) as text in the input language,
the generated function's arguments, ``wrt``, the argument shapes of a tensor function, the
options that change code, the mode the code was written in and the names of its outputs. The
builders make one for every function; it travels with
:class:`~symdiff.compiled.CompiledFunction` (``.recipe``) and is stored as JSON next to the
module in the disk cache, so a function loaded by another process (without SymPy) knows what
it is. Nothing reads the generated source to find out.

Standard library only (with :mod:`symdiff.options`): the warm path uses it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .options import Options

#: The version of :meth:`Recipe.to_json`'s layout; a record of another version is not read.
RECIPE_FORMAT = 1

#: Kinds of function, as the builders name them (``sd.compile`` builds a ``"value"``).
KINDS = ("value", "grad", "value_and_grad", "jacobian", "hessian", "hvp")

Shape = tuple[int | str, ...]


@dataclass(frozen=True)
class Recipe:
    """What a compiled function computes and how it was built.

    * ``kind``: one of :data:`KINDS`;
    * ``exprs``: the expression(s) it was built from, as text that :func:`symdiff.parse` (or,
      with ``shapes``, the tensor parser) reads back: the parsed expressions in their stable
      forms (scalar layer, symbols under their code names), or the texts given (tensor layer;
      a traced function's graph as a formula);
    * ``args``: the generated function's parameters, as the caller named them (``_v`` last for
      a Hessian-vector product); ``wrt``: the differentiation variables, and ``single``
      whether one name (not a list) was given;
    * ``shapes``: ``(name, shape)`` for every argument of a tensor function, None for a scalar
      function;
    * ``options``: the options that change code (``cache`` does not, so it is always True
      here: a function built with ``cache=False`` has the same recipe);
    * ``mode``: the mode the code was written in (``"forward"``, ``"reverse"``, ``"forward over
      reverse"``, ...), as the module's ``# Mode:`` line says;
    * ``outputs``: the names the generated code gives its outputs, in order (``_x_bar``,
      ``_w_bar``, ...; empty when the result is assembled as one array);
    * ``constants``: the bound constants of a traced function (:mod:`symdiff.constants`): the
      generated function's parameters after ``args`` (``_c0``, ...), which the compiled
      function passes itself; their shapes follow the arguments' in ``shapes``. Their values
      are never part of a recipe.
    """

    kind: str
    exprs: tuple[str, ...]
    args: tuple[str, ...]
    wrt: tuple[str, ...] = ()
    single: bool = False
    shapes: tuple[tuple[str, Shape], ...] | None = None
    options: Options = field(default_factory=Options)
    mode: str = ""
    outputs: tuple[str, ...] = ()
    constants: tuple[str, ...] = ()

    # -- views -------------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The generated function's name: ``f`` for a value, else ``<kind>_f``."""
        return function_name(self.kind)

    @property
    def wrt_value(self) -> str | tuple[str, ...] | None:
        """``CompiledFunction.wrt``: None for a value, the one name given, or a tuple."""
        if self.kind == "value":
            return None
        return self.wrt[0] if self.single else self.wrt

    @property
    def shape_map(self) -> dict[str, Shape] | None:
        """``shapes`` as a dict (None for a scalar function)."""
        return None if self.shapes is None else dict(self.shapes)

    @property
    def tensor(self) -> bool:
        """Whether the function was built with ``shapes=`` (the tensor layer)."""
        return self.shapes is not None

    def same_function(self, other: Recipe) -> bool:
        """Whether ``other`` describes the same function: every field but ``mode`` and
        ``outputs`` (which the build decides) equal."""
        return replace(self, mode="", outputs=()) == replace(other, mode="", outputs=())

    # -- JSON --------------------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (see :meth:`from_json`)."""
        return {
            "format": RECIPE_FORMAT,
            "kind": self.kind,
            "exprs": list(self.exprs),
            "args": list(self.args),
            "wrt": list(self.wrt),
            "single": self.single,
            "shapes": None if self.shapes is None else [[n, list(s)] for n, s in self.shapes],
            "options": {
                "simplify": self.options.simplify,
                "cse": self.options.cse,
                "mode": self.options.mode,
                # only another backend's: NumPy recipes read as they did before backends
                **({"backend": self.options.backend} if self.options.backend != "numpy" else {}),
                **({"sparse": True} if self.options.sparse else {}),
            },
            "mode": self.mode,
            "outputs": list(self.outputs),
            **({"constants": list(self.constants)} if self.constants else {}),
        }

    def dumps(self) -> str:
        """:meth:`to_json` as one line of JSON (ASCII, keys sorted)."""
        return json.dumps(self.to_json(), sort_keys=True, ensure_ascii=True)

    @classmethod
    def from_json(cls, data: object) -> Recipe:
        """The recipe of a :meth:`to_json` dict; ``ValueError`` for anything else (another
        format, a missing or mistyped field), so a foreign record is a cache miss."""
        if not isinstance(data, Mapping) or data.get("format") != RECIPE_FORMAT:
            raise ValueError("not a symdiff recipe of this format")
        try:
            kind = _text(data["kind"])
            if kind not in KINDS:
                raise ValueError(f"unknown kind {kind!r}")
            options = data["options"]
            if not isinstance(options, Mapping):
                raise ValueError("options is not an object")
            return cls(
                kind=kind,
                exprs=_texts(data["exprs"]),
                args=_texts(data["args"]),
                wrt=_texts(data["wrt"]),
                single=_flag(data["single"]),
                shapes=_shapes(data["shapes"]),
                options=Options(
                    _flag(options["simplify"]), _flag(options["cse"]), _text(options["mode"]),
                    backend=_text(options.get("backend", "numpy")),
                    sparse=_flag(options.get("sparse", False)),
                ),
                mode=_text(data["mode"]),
                outputs=_texts(data["outputs"]),
                constants=_texts(data.get("constants", [])),
            )
        except (KeyError, TypeError, ValueError) as error:  # SymdiffError is a ValueError
            raise ValueError(f"malformed recipe: {error}") from error

    @classmethod
    def loads(cls, text: str) -> Recipe:
        """The recipe of a :meth:`dumps` text; ``ValueError`` if it is not one."""
        return cls.from_json(json.loads(text))


class KindTable(dict[str, Any]):
    """A layer's dispatch table by kind (its planners): each entry registered next to its
    function with ``@table.kind("grad")``; :meth:`complete` checks that every kind has one."""

    def kind(self, name: str) -> Callable[[Any], Any]:
        """Register the decorated function for kind ``name`` (one of :data:`KINDS`)."""
        if name not in KINDS or name in self:
            raise ValueError(f"not a new kind: {name!r}")

        def register(function: Any) -> Any:
            self[name] = function
            return function

        return register

    def complete(self) -> KindTable:
        """The table itself, once every kind of :data:`KINDS` has an entry."""
        missing = [k for k in KINDS if k not in self]
        if missing:
            raise ValueError(f"no entry for kind(s) {', '.join(missing)}")
        return self


def function_name(kind: str) -> str:
    """The generated function's name for ``kind``: ``f`` for a value, else ``<kind>_f``."""
    return "f" if kind == "value" else f"{kind}_f"


def shapes_of(shapes: Mapping[str, Sequence[Any]], names: Sequence[str]) -> tuple[
    tuple[str, Shape], ...
]:
    """``(name, shape)`` for each of ``names``, dimensions as ints or their text."""
    return tuple(
        (n, tuple(d if isinstance(d, int) else str(d) for d in shapes[n])) for n in names
    )


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a string, got {type(value).__name__}")
    return value


def _flag(value: object) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false, got {type(value).__name__}")
    return value


def _texts(value: object) -> tuple[str, ...]:
    if not isinstance(value, list):
        raise ValueError(f"expected a list, got {type(value).__name__}")
    return tuple(_text(v) for v in value)


def _shapes(value: object) -> tuple[tuple[str, Shape], ...] | None:
    if value is None:
        return None
    if not isinstance(value, list):
        raise ValueError("shapes is not a list")
    pairs = []
    for item in value:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[1], list)):
            raise ValueError("a shape is not a [name, dims] pair")
        dims = tuple(
            d if isinstance(d, str) or (type(d) is int) else _text(d) for d in item[1]
        )
        pairs.append((_text(item[0]), dims))
    return tuple(pairs)
