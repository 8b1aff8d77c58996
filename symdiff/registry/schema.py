"""What a registry row is: :class:`Fn` (one elementwise function) and its :class:`Domain`, the
lazy namespaces through which rows reach SymPy, NumPy and :mod:`symdiff.functions` (only inside a
``lambda``, so importing the registry needs the standard library only), and how a row's
``head`` resolves to its SymPy class (:func:`head_class`, :func:`build_fn`)."""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .checks import check_row


class _Lazy:
    """A module imported on first attribute access; each attribute then cached."""

    def __init__(self, module: str) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        value = getattr(importlib.import_module(self._module), name)
        setattr(self, name, value)
        return value


sp = _Lazy("sympy")
np = _Lazy("numpy")
F = _Lazy("symdiff.functions")
H = _Lazy("symdiff.runtime")  # the runtime helpers, for a row's numeric=
CF = _Lazy("sympy.codegen.cfunctions")
errors = _Lazy("symdiff.errors")
#: Where a row's ``head`` is looked up: ``"sin"`` in SymPy, ``"CF:log1p"`` in
#: ``sympy.codegen.cfunctions``, ``"NN:logaddexp"`` in ``sympy.codegen.numpy_nodes``,
#: ``"F:relu"`` in :mod:`symdiff.functions`.
_HEAD_MODULES = {
    "": "sympy",
    "CF": "sympy.codegen.cfunctions",
    "NN": "sympy.codegen.numpy_nodes",
    "F": "symdiff.functions",
}

Partials = Callable[..., tuple[Any, ...]]


@dataclass(frozen=True)
class Domain:
    """Where a function is smooth and finite, for the generated tests.

    ``args`` is an open interval per parameter (for ``*more`` functions, per argument of the
    sample call); an interval ``(c, c)`` stands for the number ``c``, for a parameter that must
    be a number. ``kinks(*args)`` gives SymPy expressions that vanish where the function has a
    kink or a jump (tests keep away from those points). ``at`` holds the documented gradients
    at special points, ``(point, gradient)`` of the function of bare variables (``abs'(0) =
    0``, ties of ``max`` split evenly): the tests check them exactly.
    """

    args: tuple[tuple[float, float], ...]
    kinks: Callable[..., tuple[Any, ...]] | None = None
    at: tuple[tuple[tuple[float, ...], tuple[float, ...]], ...] = ()


def on(
    *args: tuple[float, float],
    kinks: Callable[..., tuple[Any, ...]] | None = None,
    at: tuple[tuple[tuple[float, ...], tuple[float, ...]], ...] = (),
) -> Domain:
    """``Domain(args, kinks, at)``, short enough for a row."""
    return Domain(tuple(args), kinks, at)


@dataclass(frozen=True)
class Fn:
    """One elementwise function. Only ``names``/``head`` are positional in the table.

    ``params``, ``build``, ``constant`` and ``check`` describe the call as a string writes it;
    ``partials``, ``int_args`` and the printing fields describe the SymPy node it builds (one
    argument for ``log(x, base)``, which builds ``log(x)/log(base)``).
    """

    # -- what it is and how it is written
    names: tuple[str, ...]  # string names, canonical first, then aliases; () = internal node
    head: str  # class of its SymPy node (see _HEAD_MODULES); "" = sugar for another node
    params: str = "x"  # "x" | "y, x" | "x, base=None" | "a, b, *more": arity, keywords, usage
    build: Callable[..., Any] | None = None  # constructor of the node, when not the head class
    constant: tuple[int, ...] = ()  # argument positions that must be numbers
    check: Callable[..., tuple[int, str] | None] | None = None  # parse check: (arg index, why)
    # -- derivative, as a student reads it
    rule: str = ""
    identity: str = ""
    partials: Partials | None = None  # node args -> one partial each; None = must not vary
    # -- generated code and tracing
    ufunc: str | None = None  # NumPy name: printed "_np.<ufunc>(...)" (unless helper/template)
    traced: tuple[str, ...] = ()  # further NumPy functions traced to this row
    # scipy.special ufuncs traced to this row (``scipy.special.expit`` of a traced value); SciPy
    # is not a dependency: they are looked up only in a process that imported scipy.special
    scipy: tuple[str, ...] = ()
    helper: str | None = None  # runtime helper printed "<helper>(...)", of symdiff.runtime
    helper_deps: tuple[str, ...] = ()  # helpers that helper calls
    template: str | None = None  # printed form with {0}, {1}, ... for the printed arguments
    method: str | None = None  # printer method for an irregular form ("nested", "heaviside")
    int_args: tuple[int, ...] = ()  # argument positions printed as int literals
    numeric: Callable[..., Any] | None = None  # symdiff.math on numbers, when not ufunc/helper
    in_place: bool = False  # tensor code may apply the ufunc with out= onto a fresh array
    # backend="numba": the runtime's scalar function printed for it (symdiff.runtime.scalar,
    # which the compiler vectorises; "_exp"), or ``instruction``: compiled code computes its
    # ufunc with instructions, not a call of the C library (the loop stays vectorisable)
    numba: str | None = None
    instruction: bool = False
    # the Array API standard's name of ufunc when it differs ("asin" for "arcsin"); "" when the
    # standard has none (backend="array_api" then refuses the function by name)
    standard: str | None = None
    tensor_form: Callable[..., Any] | None = None  # exact rewrite used only in tensor code
    # what one call of ufunc costs, in multiplications over a block of float64 (the cost model
    # of symdiff.codegen.cost; NumPy 2.4, AVX-512, rounded)
    passes: int = 1
    # -- numeric care and tests
    grows: bool = False  # parsing refuses number arguments above max_exponent
    nesting: int = 1  # weight towards max_constant_depth (SymPy evaluates via a rewrite)
    reference: Callable[..., Any] | None = None  # in SymPy primitives, for sympy.diff in tests
    domain: Domain | None = None
    doc: str = ""  # docstring of symdiff.math.<name>

    def __post_init__(self) -> None:
        check_row(self, frozenset(_HEAD_MODULES))


def unary(derivative: Callable[[Any], Any]) -> Partials:
    """Adapt ``u -> f'(u)`` to the table's ``*args -> (partials...)`` form."""
    return lambda u: (derivative(u),)


@functools.cache
def _class(head: str) -> type:
    prefix, _, name = head.rpartition(":")
    return getattr(importlib.import_module(_HEAD_MODULES[prefix]), name)


def head_class(row: Fn) -> type:
    """The SymPy class of the row's node (imports SymPy)."""
    if not row.head:
        raise ValueError(f"{row.names[0]} has no node of its own")
    return _class(row.head)


def build_fn(row: Fn) -> Callable[..., Any]:
    """What a call of the function builds from SymPy arguments."""
    return row.build or head_class(row)
