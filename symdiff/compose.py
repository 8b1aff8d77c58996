"""Compiled functions inside traced functions: ``sd.grad(sd.grad(f))``, a loss that calls a
compiled symdiff function, derivatives of any order of elementwise functions.

A :class:`~symdiff.compiled.CompiledFunction` runs generated NumPy code, which cannot take traced
values. While a function is traced, each compiled function it reaches by name (and one given to
a builder directly) is seen through :func:`proxy`: called with traced values, it computes what
the compiled function computes *symbolically*, in the trace, so that the outer builder can
differentiate it again:

* a function built without ``shapes=`` (elementwise): its :attr:`~CompiledFunction.exprs`, the
  SymPy expressions it computes, with the arguments put in (elementwise on traced arrays);
* a function built with ``shapes=``: its expression graph (kept with the function) copied into
  the running trace with fresh variables for its parameters, differentiated there as the
  function's kind asks (the same reverse and forward walks), and the arguments then put in
  place of the fresh variables (so derivatives with respect to each argument are partials,
  even where one argument is computed from another);
* a function over parameter trees or static arguments: its trees flattened, the
  specialisation of its static values taken, and the results given their structure back.

Called with plain values, the proxy calls the compiled function itself. What cannot be
composed is an :class:`~symdiff.errors.UnsupportedError` saying what to do: a function built
with ``shapes=`` called while tracing without ``shapes=`` (give the outer builder ``shapes=``),
a Hessian-vector product traced without ``shapes=``, random draws or large index constants of
the inner function.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sympy as sp

from .codegen import naming
from .errors import ShapeError, UnsupportedError
from .tensor.ir import Node, arg_symbol, rebuild
from .tensor.ops import Builder
from .tensor.shapes import format_shape
from .tensor.trace import Tracer
from .tensor.traced import TracedArray, tracer_of
from .tensor.walk import backward, forward
from .trace import DIRECTION, Symbolic, Traced, operand

#: A :class:`~symdiff.compiled.CompiledFunction` (not imported: that module reaches this one,
#: through the explanations it gives).
CompiledFunction = Any


@dataclass(frozen=True, eq=False)
class TensorGraph:
    """What a tensor function computes, kept with it for composition: the roots of its
    expression graph (before differentiation), its parameters and their shapes, and whether
    its roots are the rows of a Jacobian of several values."""

    roots: tuple[Node, ...]
    params: tuple[str, ...]
    shapes: dict[str, Any]
    many: bool


# -- the proxy ------------------------------------------------------------------------------
def proxy(function: CompiledFunction) -> Callable[..., Any]:
    """A Python function with ``function``'s signature that computes what it computes: on
    traced values symbolically (see the module docstring), else by calling it."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return symbolic_call(function, args, kwargs)

    functools.update_wrapper(call, function, assigned=("__doc__",), updated=())
    call.__name__ = call.__qualname__ = str(getattr(function, "name", "compiled"))
    call.__signature__ = inspect.signature(function)  # type: ignore[attr-defined]
    call._symdiff_compiled = function  # type: ignore[attr-defined]
    return call


def replace(value: Any, label: str) -> Any:
    """What a traced function reads instead of a compiled function it reaches by name: its
    :func:`proxy` (else None)."""
    if getattr(type(value), "_symdiff_compiled", False):
        return proxy(value)
    return None


def _traced(value: Any) -> bool:
    if isinstance(value, list | tuple):
        return any(_traced(v) for v in value)
    if isinstance(value, dict):
        return any(_traced(v) for v in value.values())
    if isinstance(value, np.ndarray) and value.dtype == object:
        return any(_traced(v) for v in value.flat)
    return isinstance(value, Symbolic | TracedArray)


def symbolic_call(function: CompiledFunction, args: Sequence[Any], kwargs: dict[str, Any]
                  ) -> Any:
    """``function(*args, **kwargs)``, symbolically where an argument is traced."""
    if not _traced(list(args)) and not _traced(list(kwargs.values())):
        return function(*args, **kwargs)
    structured = getattr(function, "_symbolic", None)
    if structured is not None:  # trees and static arguments: flattened, then composed
        return structured(args, kwargs, inline)
    bound = inspect.signature(function).bind(*args, **kwargs)
    bound.apply_defaults()
    return inline(function, list(bound.arguments.values()))


def inline(function: CompiledFunction, values: list[Any]) -> Any:
    """What ``function`` computes on ``values`` (one per argument, in the order of ``args``),
    some of them traced."""
    tensors = [v for v in values if isinstance(v, TracedArray)]
    recipe = function.recipe
    if recipe is None:
        raise UnsupportedError(f"{function.name} has no recipe, so it cannot be composed; "
                               "build it again with symdiff")
    if recipe.shapes is not None:
        if not tensors:
            raise UnsupportedError(
                f"{function.name} was built with shapes=, and is called here while tracing "
                "without shapes=: give the outer builder shapes= too (shapes={'x': ()} for a "
                "scalar), or example=")
        return _tensor_call(function, values, tracer_of(tensors[0]))
    if tensors:
        return _elementwise_call(function, values, tracer_of(tensors[0]))
    return _scalar_call(function, values)


# -- elementwise functions (built without shapes=) --------------------------------------------
def _symbols(function: CompiledFunction) -> list[sp.Symbol]:
    return [sp.Symbol(name, real=True) for name in function.args]


def _layout(function: CompiledFunction, items: list[Any], wrap: Callable[[list[Any]], Any]
            ) -> Any:
    """The ``.exprs`` of a scalar function (as ``items``, already computed) in the structure its
    call returns: one value, a tuple, ``(value, grads)``, or an array for a Jacobian or a
    Hessian (``wrap`` stacks a list of rows)."""
    kind, wrt = function.kind, function.wrt
    single = isinstance(wrt, str)
    n = 1 if single else len(wrt or ())
    if kind == "value":
        return items[0]
    if kind == "grad":
        return items[0] if single else tuple(items)
    if kind == "value_and_grad":
        return items[0], (items[1] if single else tuple(items[1:]))
    if kind == "jacobian":
        if single:
            return wrap(items)
        return wrap([wrap(items[i:i + n]) for i in range(0, len(items), n)])
    if kind == "hessian":
        if single:
            return items[0]
        upper = iter(items)  # the upper triangle, row by row
        table: dict[tuple[int, int], Any] = {}
        for i in range(n):
            for j in range(i, n):
                table[i, j] = table[j, i] = next(upper)
        return wrap([wrap([table[i, j] for j in range(n)]) for i in range(n)])
    raise UnsupportedError(
        f"{function.name} is a Hessian-vector product built without shapes=, which cannot be "
        "composed; build sd.hessian instead (or give shapes=)")


def _object_array(rows: list[Any]) -> np.ndarray:
    """An object array of traced values (a row, or rows of them), filled item by item (NumPy
    would try to convert a traced value given to ``np.array``)."""
    nested = bool(rows) and isinstance(rows[0], np.ndarray)
    shape = (len(rows), len(rows[0])) if nested else (len(rows),)
    out = np.empty(shape, dtype=object)
    for i, row in enumerate(rows):
        if nested:
            for j, item in enumerate(row):
                out[i, j] = item
        else:
            out[i] = row
    return out


def _scalar_call(function: CompiledFunction, values: list[Any]) -> Any:
    swap = {s: operand(v) for s, v in zip(_symbols(function), values, strict=True)}
    items = [Traced(sp.sympify(e).xreplace(swap)) for e in function.exprs]
    return _layout(function, items, _object_array)


def _elementwise_call(function: CompiledFunction, values: list[Any], tracer: Tracer) -> Any:
    symbols = _symbols(function)

    def one(expr: sp.Expr) -> Any:
        def build(*placed: sp.Expr) -> sp.Expr:
            return expr.xreplace(dict(zip(symbols, placed, strict=True)))

        return tracer.elementwise(function.name, build, *values)

    items = [one(sp.sympify(e)) for e in function.exprs]
    return _layout(function, items, lambda rows: np.stack(rows))


# -- tensor functions ---------------------------------------------------------------------------
def _graph(function: CompiledFunction) -> TensorGraph:
    """The function's expression graph: kept with it, else parsed again from its recipe."""
    found = function.__dict__.get("_graph")
    if found is not None:
        return TensorGraph(*found)
    from .tensor.parse import parse_tensor  # a function from the disk cache or unpickled

    recipe = function.recipe
    assert recipe is not None and recipe.shapes is not None
    shapes = dict(recipe.shapes)
    b = Builder()
    try:
        roots = tuple(parse_tensor(text, shapes, b) for text in recipe.exprs)
    except Exception as exc:
        raise UnsupportedError(
            f"{function.name} cannot be composed: its expression {recipe.exprs[0]!r} does not "
            f"parse again ({exc}); build it in this process (a function loaded from the disk "
            "cache or unpickled keeps only the text of what it computes)") from exc
    return TensorGraph(roots, tuple(recipe.args), shapes, len(roots) > 1)


def _bind_dims(name: str, declared: tuple[Any, ...], actual: tuple[Any, ...],
               dims: dict[sp.Symbol, Any]) -> None:
    if len(declared) != len(actual):
        raise ShapeError(f"argument {name!r} has shape {format_shape(actual)}, expected "
                         f"{format_shape(declared)}")
    for want, got in zip(declared, actual, strict=True):
        if isinstance(want, sp.Basic) and not want.is_number:
            if want in dims and sp.simplify(dims[want] - got) != 0:
                raise ShapeError(f"argument {name!r} has shape {format_shape(actual)}: dimension "
                                 f"{want} is {dims[want]} elsewhere")
            dims[want] = got
        elif sp.simplify(sp.sympify(want) - got) != 0:
            raise ShapeError(f"argument {name!r} has shape {format_shape(actual)}, expected "
                             f"{format_shape(declared)}")


def _dim(value: Any, dims: dict[sp.Symbol, Any]) -> Any:
    if isinstance(value, sp.Basic):
        value = value.xreplace(dims)
        return int(value) if value.is_Integer else value
    if isinstance(value, tuple):
        return tuple(_dim(v, dims) for v in value)
    return value


def _constants(function: CompiledFunction, tracer: Tracer) -> dict[str, Node]:
    """The inner function's bound constants as constants of the running trace."""
    found: dict[str, Node] = {}
    for bound in getattr(function, "_constants", ()):
        if bound.draw is not None:
            raise UnsupportedError(
                f"{function.name} draws random numbers ({bound.draw.text}); composing it would "
                "draw them once for the outer function: pass the noise as an argument instead")
        if bound.kind in ("index", "mask"):
            raise UnsupportedError(
                f"{function.name} indexes with a large constant index array ({bound.label}), "
                "which cannot be composed yet; trace the outer function from the Python "
                "function itself")
        found[bound.name] = tracer.captures.node(tracer.b, np.asarray(bound.value), tracer.fn)
    return found


def _tensor_call(function: CompiledFunction, values: list[Any], tracer: Tracer) -> Any:
    graph = _graph(function)
    b = tracer.b
    names = list(function.args)
    nodes = {name: tracer.node(value) for name, value in zip(names, values, strict=True)}
    dims: dict[sp.Symbol, Any] = {}
    for name in graph.params:
        _bind_dims(name, tuple(graph.shapes[name]), nodes[name].shape, dims)
    serial = len(b)
    fresh = {name: b.var(naming.inner_variable(serial, name), nodes[name].shape)
             for name in graph.params}
    constants = _constants(function, tracer)

    def leaf(node: Node) -> Node | None:
        if node.op not in ("var", "const"):
            return None
        found = fresh.get(node.name, constants.get(node.name))
        if found is None:
            raise UnsupportedError(f"{function.name}'s constant {node.name} is not known")
        return found

    roots = rebuild(b, graph.roots, leaf, lambda value: _dim(value, dims))
    outputs = _outputs(function, b, roots, graph, fresh)
    swap = {id(fresh[n]): nodes[n] for n in graph.params}
    placed = rebuild(b, outputs, lambda n: swap.get(id(n)))
    wrapped = [tracer.wrap(n) for n in placed]
    return _tensor_layout(function, wrapped, len(roots))


def _outputs(function: CompiledFunction, b: Builder, roots: list[Node], graph: TensorGraph,
             fresh: dict[str, Node]) -> list[Node]:
    """The nodes of what ``function`` returns, in terms of the fresh variables."""
    recipe = function.recipe
    assert recipe is not None
    options = recipe.options
    kind = function.kind
    wrt = [function.wrt] if isinstance(function.wrt, str) else list(function.wrt or ())
    variables = [fresh[w] for w in wrt]
    if kind == "value":
        return roots

    def gradients(root: Node) -> list[Node]:
        if options.mode == "forward":
            return [b.reshape(forward(b, [root], v, options.simplify)[0], v.shape)
                    for v in variables]
        return backward(b, root, variables, options.simplify)

    if kind in ("grad", "value_and_grad"):
        grads = gradients(roots[0])
        return [roots[0], *grads] if kind == "value_and_grad" else grads
    if kind == "jacobian":
        out = []
        for v in variables:
            blocks = [b.reshape(t, (*r.shape, *v.shape))
                      for r, t in zip(roots, forward(b, roots, v, options.simplify), strict=True)]
            out.append(_stack(b, blocks) if graph.many else blocks[0])
        return out
    if kind == "hessian":
        grads = backward(b, roots[0], variables, options.simplify)
        blocks = []
        for vi in variables:
            for vj, t in zip(variables, forward(b, grads, vi, options.simplify), strict=True):
                blocks.append(b.reshape(t, (*vj.shape, *vi.shape)))
        n = len(variables)  # blocks[i * n + j] is d grad_j / d v_i: the (j, i) block
        return [blocks[j * n + i] for i in range(n) for j in range(n)]
    if kind == "hvp":
        (var,) = variables
        (grad,) = backward(b, roots[0], variables, options.simplify)
        along = b.reduce_axes("sum", b.map(arg_symbol(0) * arg_symbol(1),
                                           [grad, fresh[DIRECTION]]),
                              tuple(range(var.ndim)), False)
        return backward(b, along, variables, options.simplify)
    raise UnsupportedError(f"{kind} functions cannot be composed")


def _stack(b: Builder, blocks: list[Node]) -> Node:
    from .tensor.families.building import stack

    return stack(b, tuple(blocks))


def _tensor_layout(function: CompiledFunction, items: list[Any], roots: int) -> Any:
    kind, wrt = function.kind, function.wrt
    single = isinstance(wrt, str)
    if kind == "value":
        return items[0] if roots == 1 else tuple(items)
    if kind in ("grad", "jacobian"):
        return items[0] if single else tuple(items)
    if kind == "value_and_grad":
        return items[0], (items[1] if single else tuple(items[1:]))
    if kind == "hessian":
        if single:
            return items[0]
        n = len(wrt or ())
        rows = [[items[i * n + j] for j in range(n)] for i in range(n)]
        if all(item.ndim == 0 for item in items):  # scalars: one (n, n) array
            return np.stack([np.stack(row) for row in rows])
        return tuple(tuple(row) for row in rows)
    return items[0]


__all__ = ["TensorGraph", "inline", "proxy", "replace", "symbolic_call"]
