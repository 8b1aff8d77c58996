"""From a builder's arguments with ``shapes=`` to a ``CompiledFunction``: parse, differentiate,
emit, load. Memoised in memory (``cache=True``).

What each kind returns (``S`` is a ``wrt`` variable's shape, ``O`` the expression's):

* ``compile``: the value, of shape ``O``;
* ``grad``: the gradient, of shape ``S`` (a tuple of them for a list of names); the expression
  must be scalar (``O == ()``). Reverse mode (``mode="auto"`` or ``"reverse"``): one forward
  sweep and one backward sweep. ``mode="forward"`` pushes ``size(S)`` tangents at once instead;
* ``value_and_grad``: ``(value, grad)``;
* ``jacobian``: of one expression (a string), shape ``O + S``; of a list of ``m`` expressions of
  the same shape, ``(m,) + O + S``. Forward mode (``mode="reverse"`` is refused);
* ``hessian``: shape ``S + S`` (for a list of names, a tuple of tuples of blocks
  ``S_i + S_j``), forward over reverse: the gradient graph, differentiated by forward mode.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from .. import __version__
from ..compiled import CompiledFunction
from ..errors import ShapeError, SymdiffError, UnsupportedError
from ..options import Options
from ..parsing import check_wrt
from .emit import Program
from .ir import Node, describe, variables
from .module import emit_module, used_dims
from .ops import Builder
from .parse import parse_tensor
from .shapes import Shape, dims_of, format_shape, parse_shapes
from .walk import backward, forward

_MEMO: dict[str, CompiledFunction] = {}


@dataclass
class _Plan:
    outputs: list[tuple[str, Node]]
    result: str
    returns: str
    title: str
    mode: str


def _texts(kind: str, exprs: object) -> tuple[list[object], bool]:
    """The expression texts, and whether a list was given (only jacobian takes one)."""
    if kind == "jacobian" and isinstance(exprs, list | tuple):
        if not exprs:
            raise SymdiffError("jacobian takes an expression or a non-empty list of expressions")
        return list(exprs), True
    if callable(exprs):
        raise UnsupportedError("tracing functions with shapes= is not supported yet; "
                               "pass the expression as a string")
    return [exprs], False


def _wrt_spec(wrt: object) -> tuple[tuple[str, ...] | None, bool]:
    """Validated wrt names (None: every variable) and whether one name was given."""
    if wrt is None:
        return None, False
    return check_wrt(wrt)


def _key(kind: str, texts: list[object], wrt: object, options: Options,
         shapes: dict[str, Shape]) -> str:
    parts = [__version__, "tensor", kind, *map(repr, texts), repr(wrt), options.code_key()]
    parts += [f"{n}:{format_shape(s)}" for n, s in shapes.items()]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]


def build_tensor(
    kind: str, exprs: object, wrt: object, options: Options, shapes: object
) -> CompiledFunction:
    """The compiled tensor function for one builder call (see the module docstring)."""
    parsed_shapes = parse_shapes(shapes)
    texts, many = _texts(kind, exprs)
    wrt_names, single = _wrt_spec(wrt) if kind != "value" else (None, False)
    key = _key(kind, texts, (wrt_names, single), options, parsed_shapes)
    if options.cache and key in _MEMO:
        return _MEMO[key]
    compiled = _build(kind, texts, many, wrt_names, single, options, parsed_shapes, key)
    if options.cache:
        _MEMO[key] = compiled
    return compiled


def clear_memo() -> None:
    """Forget the tensor functions kept in memory."""
    _MEMO.clear()


def _build(kind: str, texts: list[object], many: bool, wrt: tuple[str, ...] | None,
           single: bool, options: Options, shapes: dict[str, Shape], key: str) -> CompiledFunction:
    b = Builder()
    roots = [parse_tensor(text, shapes, b) for text in texts]
    names = variables(roots)
    if kind != "value":
        if wrt is None:
            wrt = tuple(names)
            if not wrt:
                raise SymdiffError("the expression has no variables; give wrt= explicitly")
        for w in wrt:
            if w not in shapes:
                raise ShapeError(f"wrt name {w!r} has no shape: add it to shapes=")
    wrt = wrt or ()
    params = tuple(sorted(set(names) | set(wrt)))
    vars_ = [b.var(w, shapes[w]) for w in wrt]
    plan = _PLANNERS[kind](b, roots, many, vars_, single, options)
    bound = {d for p in params for d in dims_of(shapes[p])}
    unbound = used_dims([node for _, node in plan.outputs]) - bound
    if unbound:
        raise ShapeError(f"dimension(s) {', '.join(sorted(map(str, unbound)))} are not "
                         "dimensions of any argument, so their size is unknown when called")
    argument_text = ", ".join(f"{p} {format_shape(shapes[p])}" for p in params)
    program = Program(
        name="f" if kind == "value" else f"{kind}_f",
        title=plan.title,
        expression="; ".join(map(str, texts)),
        params=params,
        shapes={p: shapes[p] for p in params},
        outputs=plan.outputs,
        result=plan.result,
        doc=[
            f"Arguments (in this order, or by name): {argument_text or 'none'}.",
            "Named dimensions must have one size across arguments; shapes are checked "
            "(ValueError). Integers give float64, float32 stays float32.",
            f"Returns {plan.returns}.",
        ],
        mode=plan.mode,
        key=key,
        needs={d: n for d, n in b.needs.items() if d in bound},
        cse=options.cse,
    )
    return CompiledFunction(
        source=emit_module(program),
        name=program.name,
        args=params,
        wrt=None if kind == "value" else (wrt[0] if single else wrt),
        exprs=[describe(node) for _, node in plan.outputs],
        kind=kind,
    )


# -- one planner per kind --------------------------------------------------------------------------
def _scalar_root(roots: list[Node], what: str) -> Node:
    (root,) = roots
    if root.shape != ():
        raise ShapeError(f"{what} needs a scalar expression, but this one has shape "
                         f"{format_shape(root.shape)}; sum it, or use jacobian")
    return root


def _gradients(b: Builder, root: Node, vars_: list[Node], options: Options) -> list[Node]:
    if options.mode == "forward":
        return [b.reshape(forward(b, [root], v, options.simplify)[0], v.shape) for v in vars_]
    return backward(b, root, vars_, options.simplify)


def _names(vars_: list[Node]) -> str:
    return ", ".join(v.name for v in vars_)


def _structure(names: list[str], single: bool) -> str:
    if single:
        return names[0]
    return f"({names[0]},)" if len(names) == 1 else f"({', '.join(names)})"


def _plan_value(b, roots, many, vars_, single, options) -> _Plan:
    (root,) = roots
    return _Plan([("_value", root)], "_value", f"the value, of shape {format_shape(root.shape)}",
                 "Value", "value")


def _plan_grad(b, roots, many, vars_, single, options) -> _Plan:
    root = _scalar_root(roots, "grad")
    grads = _gradients(b, root, vars_, options)
    names = [f"_{v.name}_bar" for v in vars_]
    shapes = ", ".join(format_shape(v.shape) for v in vars_)
    mode = "forward" if options.mode == "forward" else "reverse"
    return _Plan(list(zip(names, grads, strict=True)), _structure(names, single),
                 f"the gradient with respect to ({_names(vars_)}), of shape(s) {shapes}",
                 f"Gradient with respect to ({_names(vars_)})", mode)


def _plan_value_and_grad(b, roots, many, vars_, single, options) -> _Plan:
    plan = _plan_grad(b, roots, many, vars_, single, options)
    return _Plan([("_value", roots[0]), *plan.outputs], f"(_value, {plan.result})",
                 f"(value, gradient): {plan.returns[4:]}",
                 f"Value and gradient with respect to ({_names(vars_)})", plan.mode)


def _plan_jacobian(b, roots, many, vars_, single, options) -> _Plan:
    if options.mode == "reverse":
        raise UnsupportedError("tensor Jacobians are computed in forward mode; "
                               "use mode='auto' or 'forward'")
    outputs = []
    for v in vars_:
        blocks = [b.reshape(t, (*r.shape, *v.shape))
                  for r, t in zip(roots, forward(b, roots, v, options.simplify), strict=True)]
        outputs.append((f"_{v.name}_jac", b.stack(blocks) if many else blocks[0]))
    lead = f"({len(roots)},) + " if many else ""
    return _Plan(outputs, _structure([n for n, _ in outputs], single),
                 f"the Jacobian for each wrt name, of shape {lead}output shape + its shape",
                 f"Jacobian with respect to ({_names(vars_)})", "forward")


def _plan_hessian(b, roots, many, vars_, single, options) -> _Plan:
    root = _scalar_root(roots, "hessian")
    grads = backward(b, root, vars_, options.simplify)
    outputs = []
    for j, vj in enumerate(vars_):
        tangents = forward(b, grads, vj, options.simplify)
        for i, (vi, t) in enumerate(zip(vars_, tangents, strict=True)):
            name = f"_{vi.name}_hess" if single else f"_hess_{i}_{j}"
            outputs.append(((i, j), name, b.reshape(t, (*vi.shape, *vj.shape))))
    outputs.sort(key=lambda item: item[0])
    if single:
        result = outputs[0][1]
    else:
        rows = [[name for (i, _), name, _ in outputs if i == k] for k in range(len(vars_))]
        result = _structure([_structure(row, False) for row in rows], False)
    return _Plan([(name, node) for _, name, node in outputs], result,
                 "the Hessian, of shape wrt shape + wrt shape (blocks for several names)",
                 f"Hessian with respect to ({_names(vars_)})", "forward over reverse")


_PLANNERS = {
    "value": _plan_value,
    "grad": _plan_grad,
    "value_and_grad": _plan_value_and_grad,
    "jacobian": _plan_jacobian,
    "hessian": _plan_hessian,
}
