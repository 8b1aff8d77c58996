"""Builders of Python functions whose parameters are trees of arrays or static values.

``sd.grad(loss, wrt="params", example=(params, X, y))`` with ``params`` a list of ``(W, b)``
pairs, or ``shapes={"params": [((3, 4), (4,)), ((4, 1), (1,))], ...}``: each parameter of the
function is, by :func:`plan`,

* an **array** of one shape (``shapes=``, or the shape of its ``example=`` value);
* a **tree**: a (nested) list, tuple or dict of arrays and numbers (:mod:`symdiff.trees`),
  whose leaves become arguments of the generated function; its gradient comes back as a tree
  of the same structure;
* **static**: not differentiated and not an array of a declared shape: named in ``static=``,
  given an int, string, flag, None or other non-array value in ``example=``, with a default
  that is not a number, or (with ``shapes=``) given no shape at all. The function is then
  specialised for each value it is called with (traced again and cached per value, like
  JAX's ``static_argnames``), so ``i % n``, ``if training:`` and ``X[i * b:(i + 1) * b]``
  are plain Python.

:func:`build` returns a :class:`~symdiff.structured_function.StructuredFunction`, which flattens
the call's trees, picks (or builds) the specialisation of its static values and gives the
results the structure of the parameters. A function with only arrays (an ``example=`` of
arrays) is built as a plain :class:`~symdiff.compiled.CompiledFunction`.
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import ShapeError, SymdiffError, UnsupportedError
from .layer import Call
from .options import Options
from .parsing import check_identifier, check_wrt, check_wrt_occurs
from .trace.layout import Layout, Part, Structured
from .trees import TreeDef, is_container, leaf_names, structure


class _Unknown:
    """The value of a static argument that is not known until the function is called."""

    def __repr__(self) -> str:
        return "<given at the call>"

    def __reduce__(self) -> str:
        return "UNKNOWN"  # one object, also after pickling


#: A static value whose value is not known until the function is called.
UNKNOWN: Any = _Unknown()


@dataclass(frozen=True)
class Spec:
    """What one parameter is: ``"array"`` (of ``shape``), ``"tree"`` (of ``treedef`` with one
    shape per leaf) or ``"static"`` (with its value from ``example=`` or its default, or
    :data:`UNKNOWN`); ``why`` says how a static one was decided, for messages."""

    kind: str
    shape: tuple[Any, ...] = ()
    treedef: TreeDef | None = None
    leaf_shapes: tuple[tuple[Any, ...], ...] = ()
    value: Any = UNKNOWN
    why: str = ""


@dataclass(frozen=True, eq=False)
class Plan:
    """Everything a structured builder call fixed: the function, its parameters' specs, the
    generated function's arguments for them (:attr:`parts`), and ``wrt``."""

    kind: str
    fn: Callable[..., Any]
    signature: inspect.Signature
    specs: dict[str, Spec]
    parts: tuple[Part, ...]
    wrt: tuple[str, ...]
    single: bool
    options: Options
    tensor: bool

    @property
    def label(self) -> str:
        return str(getattr(self.fn, "__name__", None) or type(self.fn).__name__)

    @property
    def statics(self) -> tuple[str, ...]:
        """The static parameters, in order."""
        return tuple(n for n, s in self.specs.items() if s.kind == "static")

    @property
    def trees(self) -> bool:
        """Whether a ``wrt`` parameter is a tree (the results then need restructuring)."""
        return any(self.specs[w].kind == "tree" for w in self.wrt)

    def flat_wrt(self) -> str | list[str] | None:
        """The generated function's ``wrt``: the parameters' own names, a tree's leaves in its
        place; one name where one array was asked for."""
        if self.kind == "value":
            return None
        names = [n for w in self.wrt for n in self.part(w).names]
        return names[0] if self.single and not self.trees else names

    def part(self, name: str) -> Part:
        return next(p for p in self.parts if p.name == name)

    def shapes(self) -> dict[str, tuple[Any, ...]] | None:
        """``shapes=`` of the generated function (None for the scalar layer)."""
        if not self.tensor:
            return None
        shapes: dict[str, tuple[Any, ...]] = {}
        for part in self.parts:
            spec = self.specs[part.name]
            if spec.kind == "array":
                shapes[part.name] = spec.shape
            elif spec.kind == "tree":
                shapes.update(zip(part.names, spec.leaf_shapes, strict=True))
        return shapes

    def call(self, statics: Mapping[str, Any]) -> Call:
        """The builder call of the specialisation for ``statics`` (static values by name)."""
        parts = tuple(Part(p.name, p.kind, p.names, p.treedef, statics[p.name])
                      if p.kind == "static" else p for p in self.parts)
        layout = Layout(self.signature, parts)
        return Call(self.kind, Structured(self.fn, layout), self.flat_wrt(), self.options,
                    self.shapes())


# -- deciding each parameter ------------------------------------------------------------------
def is_python_function(value: object) -> bool:
    """Whether a builder's expression is a Python function (not a string, not a SymPy
    expression, which can be callable too)."""
    return callable(value) and not type(value).__module__.startswith("sympy")


def wanted(fn: object, shapes: object, example: object, static: object) -> bool:
    """Whether a builder call needs this module: a Python function with ``example=`` or
    ``static=``, a tree in ``shapes=``, a parameter without a shape in ``shapes=``, or a
    default that is not a number."""
    if not is_python_function(fn):
        return False
    if example is not None or static is not None:
        return True
    try:
        parameters = inspect.signature(fn).parameters.values()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    if any(not _number_default(p) for p in parameters):
        return True
    if isinstance(shapes, Mapping):
        if any(not _is_shape(s) for s in shapes.values()):
            return True
        return any(p.name not in shapes and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                   for p in parameters)
    return False


def _number_default(parameter: inspect.Parameter) -> bool:
    default = parameter.default
    return default is parameter.empty or (
        isinstance(default, numbers.Real) and not isinstance(default, bool))


def _is_shape(value: object) -> bool:
    """Whether a ``shapes=`` value is one shape (a tuple or list of names and ints), not a
    tree of shapes."""
    return isinstance(value, tuple | list) and all(
        isinstance(d, str) or (isinstance(d, int | np.integer) and not isinstance(d, bool))
        for d in value)


def _example_values(sig: inspect.Signature, example: object, label: str) -> dict[str, Any]:
    """``example=`` by parameter name: a tuple or list of the positional arguments (as the
    function is called: ``f(*example)``), or a dict by name."""
    if example is None:
        return {}
    try:
        if isinstance(example, Mapping):
            bound = sig.bind_partial(**example)
        elif isinstance(example, tuple | list):
            bound = sig.bind_partial(*example)
        else:
            raise SymdiffError(
                f"example= takes the arguments of {label} as a tuple (as in {label}(*example)) "
                f"or a dict by name, not a {type(example).__name__}; for one argument write "
                "example=(value,)")
    except TypeError as exc:
        raise SymdiffError(f"example= does not fit {label}{sig}: {exc}") from None
    return dict(bound.arguments)


def _numeric_leaf(leaf: object) -> bool:
    if isinstance(leaf, np.ndarray):
        return leaf.dtype.kind in "biuf"
    return isinstance(leaf, np.generic | numbers.Real) and not isinstance(leaf, bool | np.bool_)


def _array_leaf(leaf: object) -> bool:
    """A leaf that is an array of real numbers or a float (not a Python int or bool, which
    are static unless differentiated)."""
    if isinstance(leaf, np.ndarray):
        return leaf.dtype.kind in "biuf"
    return isinstance(leaf, float | np.floating | np.integer)


def _from_example(name: str, value: Any, differentiated: bool, label: str) -> Spec:
    """The spec of a parameter from its example value."""
    if is_container(value) and value is not None:
        treedef, leaves = structure(value)
        if differentiated or any(_array_leaf(leaf) for leaf in leaves):
            bad = [leaf for leaf in leaves if not _numeric_leaf(leaf)]
            if bad or not leaves:
                what = type(bad[0]).__name__ if bad else "no leaves"
                raise SymdiffError(
                    f"example value of {name!r} of {label} is a tree whose leaves must be arrays "
                    f"and numbers; it has {what}")
            if treedef.is_leaf:  # pragma: no cover - a container is never one leaf
                return Spec("array", np.shape(leaves[0]))
            return Spec("tree", treedef=treedef,
                        leaf_shapes=tuple(tuple(int(d) for d in np.shape(x)) for x in leaves))
        return Spec("static", value=value, why="its example= value holds no arrays")
    if _array_leaf(value) or (differentiated and _numeric_leaf(value)):
        return Spec("array", tuple(int(d) for d in np.shape(value)))
    if isinstance(value, np.ndarray):
        raise SymdiffError(f"example value of {name!r} of {label} is an array of dtype "
                           f"{value.dtype}; give real numbers")
    return Spec("static", value=value, why=f"its example= value is a {type(value).__name__}")


def _from_shapes(name: str, given: Any, label: str) -> Spec:
    """The spec of a parameter from its ``shapes=`` entry: a shape, or a tree of shapes."""
    if _is_shape(given):
        return Spec("array", _dims(given))
    if not is_container(given) or given is None:
        raise ShapeError(f"shape of {name!r} must be a tuple of dimension names or ints (() for "
                         f"a scalar), or a list, tuple or dict of them for a parameter tree, not "
                         f"{type(given).__name__}")
    treedef, leaves = structure(given, is_leaf=_is_shape)
    for leaf in leaves:
        if not _is_shape(leaf):
            raise ShapeError(f"the shapes= tree of {name!r} of {label} has the leaf {leaf!r}; "
                             "each leaf must be a shape: a tuple of dimension names or ints")
    return Spec("tree", treedef=treedef, leaf_shapes=tuple(_dims(s) for s in leaves))


def _dims(shape: Sequence[Any]) -> tuple[Any, ...]:
    return tuple(int(d) if isinstance(d, np.integer) else d for d in shape)


def plan(kind: str, fn: Callable[..., Any], wrt: object, options: Options, shapes: object,
         example: object, static: object) -> Plan:
    """Decide what each parameter of ``fn`` is (see the module docstring) and ``wrt``."""
    label = str(getattr(fn, "__name__", None) or type(fn).__name__)
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise UnsupportedError(f"cannot trace {label}: its parameters cannot be read ({exc})"
                               ) from exc
    for p in sig.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            star = "*" if p.kind is p.VAR_POSITIONAL else "**"
            raise UnsupportedError(
                f"cannot trace {label}: parameter {star}{p.name} is not supported; each "
                "argument must be one named parameter (a list of arrays can be one parameter "
                "that is a tree)")
        check_identifier(p.name, "parameter name")
    names = tuple(sig.parameters)
    if shapes is not None and not isinstance(shapes, Mapping):
        raise SymdiffError(f"shapes must be a mapping from names to shapes, not "
                           f"{type(shapes).__name__}")
    shapes = dict(shapes or {})
    unknown = sorted(set(shapes) - set(names))
    if unknown:
        check_wrt_occurs(unknown, names, function=label)
    statics = _static_names(static, names, label)
    examples = _example_values(sig, example, label)
    asked = set(check_wrt(wrt)[0]) if wrt is not None else set()
    tensor = bool(shapes) or example is not None
    specs: dict[str, Spec] = {}
    for p in sig.parameters.values():
        default = p.default
        if p.name in statics:
            if p.name in shapes:
                raise SymdiffError(f"{p.name!r} is both static= and in shapes=")
            value = examples.get(p.name, UNKNOWN if default is p.empty else default)
            specs[p.name] = Spec("static", value=value, why="it is named in static=")
        elif p.name in shapes:
            specs[p.name] = _from_shapes(p.name, shapes[p.name], label)
        elif p.name in examples:
            specs[p.name] = _from_example(p.name, examples[p.name], p.name in asked, label)
        elif default is not p.empty and not _number_default(p):
            specs[p.name] = Spec("static", value=default,
                                 why=f"its default is a {type(default).__name__}")
        elif tensor:
            specs[p.name] = Spec("static", value=UNKNOWN if default is p.empty else default,
                                 why="it has no shape in shapes= (nor an example= value)")
        else:
            specs[p.name] = Spec("array")  # a scalar symbol, elementwise
        if specs[p.name].kind != "static" and not _number_default(p):
            raise UnsupportedError(
                f"cannot trace {label}: parameter {p.name!r} has the default {p.default!r}, "
                "which is not a number (a parameter with a shape takes arrays)")
    parts = _parts(specs, names)
    wrt_names, single = _wrt(kind, wrt, specs, names, label)
    return Plan(kind, fn, sig, specs, parts, wrt_names, single, options, tensor)


def _static_names(static: object, names: Sequence[str], label: str) -> set[str]:
    if static is None:
        return set()
    given = [static] if isinstance(static, str) else static
    if not isinstance(given, Sequence) or isinstance(given, str) or not all(
            isinstance(n, str) for n in given):
        raise SymdiffError("static= takes a parameter name or a list of them")
    check_wrt_occurs(list(given), names, function=label)
    return set(given)


def _parts(specs: dict[str, Spec], names: Sequence[str]) -> tuple[Part, ...]:
    taken = set(names)
    parts = []
    for name, spec in specs.items():
        if spec.kind == "tree":
            assert spec.treedef is not None
            parts.append(Part(name, "tree", tuple(leaf_names(name, spec.treedef, taken)),
                              spec.treedef))
        elif spec.kind == "static":
            parts.append(Part(name, "static"))
        else:
            parts.append(Part(name, "array", (name,)))
    return tuple(parts)


def _wrt(kind: str, wrt: object, specs: dict[str, Spec], names: Sequence[str], label: str
         ) -> tuple[tuple[str, ...], bool]:
    if kind == "value":
        return (), False
    if wrt is None:
        chosen = tuple(n for n in names if specs[n].kind != "static")
        if not chosen:
            raise SymdiffError(f"every parameter of {label} is static, so there is nothing to "
                               "differentiate; give shapes= or example= arrays for the "
                               "parameters to differentiate")
        return chosen, False
    chosen, single = check_wrt(wrt)
    check_wrt_occurs(chosen, names, function=label)
    for name in chosen:
        spec = specs[name]
        if spec.kind == "static":
            raise SymdiffError(
                f"wrt name {name!r} of {label} is a static argument ({spec.why}), which is "
                "not differentiated; give it a shape in shapes= (() for a scalar) or an array "
                "in example=")
    if kind == "hvp" and (len(chosen) != 1 or specs[chosen[0]].kind == "tree"):
        raise UnsupportedError(
            "hvp takes one array wrt name (the direction _v has its shape); for a tree of "
            "parameters flatten them with sd.flatten and take the hvp of the function of one "
            "vector")
    return chosen, single


# -- the results, in the structure of the parameters --------------------------------------------
def restructure(plan: Plan, result: Any) -> Any:
    """What the generated function returned, with a tree's leaves put back into its structure
    (only when a ``wrt`` parameter is a tree: otherwise it is already the builders' usual)."""
    if not plan.trees:
        return result
    if plan.kind == "value_and_grad":
        value, grads = result
        return value, _per_wrt(plan, grads)
    if plan.kind == "hessian":
        return _per_wrt(plan, [_per_wrt(plan, row) for row in result])
    return _per_wrt(plan, result)


def _per_wrt(plan: Plan, items: Sequence[Any]) -> Any:
    """``items`` (one per leaf of the ``wrt`` parameters) grouped per parameter: one array, or a
    tree of them; the one value itself for a single ``wrt`` name, else a tuple."""
    items = list(items)
    grouped, start = [], 0
    for name in plan.wrt:
        part = plan.part(name)
        chunk = items[start:start + len(part.names)]
        start += len(part.names)
        grouped.append(part.treedef.build(chunk) if part.kind == "tree" and part.treedef
                       else chunk[0])
    return grouped[0] if plan.single else tuple(grouped)


# -- static values as cache keys --------------------------------------------------------------
def static_key(name: str, value: Any, label: str) -> Any:
    """A hashable key of a static argument's value (the specialisation it selects): values of
    different types never share one (``1``, ``1.0`` and ``True`` are three). An array of
    integers or booleans (observations, indices, a mask) is keyed by its dtype, shape and
    values; an array of floats is refused (it would select a build per value)."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "biu":  # indices, counts, masks
        return ("ndarray", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, np.ndarray) or getattr(value, "_symdiff_symbolic", False):
        raise ShapeError(
            f"argument {name!r} of {label} is static (not differentiated, with no shape in "
            f"shapes=), so its value selects the code, but it got an array; give it a shape in "
            f"shapes= or an array in example= to make it an argument")
    if isinstance(value, list | tuple):
        return (type(value).__name__, tuple(static_key(name, v, label) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted(((repr(k), static_key(name, v, label))
                                      for k, v in value.items()), key=lambda kv: kv[0])))
    try:
        hash(value)
    except TypeError:
        raise SymdiffError(f"the static argument {name!r} of {label} must be hashable (an int, "
                           f"string, flag, None or a tuple of them), not a "
                           f"{type(value).__name__}") from None
    return (type(value), value)


__all__ = ["UNKNOWN", "Plan", "Spec", "plan", "restructure", "static_key", "wanted"]
