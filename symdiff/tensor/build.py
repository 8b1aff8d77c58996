"""The tensor layer: from a parsed :class:`~symdiff.tensor.request.TensorRequest` to generated
code: differentiate, emit (:data:`LAYER`, which the build pipeline of :mod:`symdiff.pipeline`
calls; caching is the pipeline's, as for the scalar layer: the module entry is keyed by
:meth:`TensorRequest.key` plus :func:`symdiff.request_index.fingerprint`, so a second process
parses the
request but does not derive it again, and for plain strings finds it before parsing).

What each kind returns (``S`` is a ``wrt`` variable's shape, ``O`` the expression's):

* ``compile``: the value, of shape ``O``;
* ``grad``: the gradient, of shape ``S`` (a tuple of them for a list of names); the expression
  must be scalar (``O == ()``). Reverse mode (``mode="auto"`` or ``"reverse"``): one forward
  sweep and one backward sweep. ``mode="forward"`` pushes ``size(S)`` tangents at once instead;
* ``value_and_grad``: ``(value, grad)``;
* ``jacobian``: of one expression (a string), shape ``O + S``; of a list of ``m`` expressions of
  the same shape, or a traced function returning a tuple of ``m`` such arrays,
  ``(m,) + O + S``. Forward mode (``mode="reverse"`` is refused);
* ``hessian``: shape ``S + S`` (for a list of names, a tuple of tuples of blocks
  ``S_i + S_j``, as JAX gives; for a list of scalars, one ``(n, n)`` array, as the API
  promises and the scalar layer gives), forward over reverse: the gradient graph,
  differentiated by forward mode;
  a matrix or vector variable that enters only through ``X @ W`` with a row-local gradient is
  seeded along its small axis and contracted with ``X`` (:mod:`symdiff.tensor.hessians`).
* ``hvp``: one ``wrt`` variable; the last argument ``_v`` is a direction of shape ``S`` and the
  result ``H @ _v`` has shape ``S``: the gradient of ``sum(grad * _v)`` (reverse over reverse),
  so no ``S + S`` Hessian is formed and every array keeps its own shape (a forward sweep of one
  direction would carry a size-1 tangent axis through the code).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from .. import progress
from ..codegen import naming
from ..constants import Bound
from ..errors import ShapeError, UnsupportedError
from ..layer import Built, Call
from ..options import Options
from ..recipe import KindTable, Recipe
from ..trace import DIRECTION
from .emit import Program
from .formula import TensorFormula
from .hessians import split_product, structured_hessian
from .ir import Node, arg_symbol, topological
from .module import emit_module, used_dims
from .ops import Builder
from .request import TensorRequest, request_for
from .shapes import Shape, dims_of, format_shape
from .walk import backward, forward


@dataclass
class _Plan:
    outputs: list[tuple[str, Node]]
    result: str
    returns: str
    title: str
    mode: str


def copied(kind: str, roots: Sequence[Node], many: bool, wrt: tuple[str, ...], single: bool,
           options: Options, shapes: dict[str, Shape], params: tuple[str, ...]) -> TensorRequest:
    """A parsed request (of a function loaded from the disk cache) with its graph copied into a
    fresh builder, to be differentiated there."""
    b = Builder()
    copies: dict[int, Node] = {}
    for node in topological(roots):
        copies[id(node)] = b.node(node.op, [copies[id(a)] for a in node.args], node.attrs,
                                  node.shape)
    new_roots = [copies[id(r)] for r in roots]
    return TensorRequest(kind, [""] * len(roots), many, wrt, single, options, shapes, b,
                         new_roots, params)


def _graph_exprs(kind: str, roots: Sequence[Node], many: bool, wrt: tuple[str, ...],
                 single: bool, options: Options, shapes: dict[str, Shape],
                 params: tuple[str, ...]) -> list:
    """The ``.exprs`` of a parsed request (a function loaded from the disk cache): its graph
    is copied into a fresh builder and differentiated there."""
    return _exprs(_plan(copied(kind, roots, many, wrt, single, options, shapes, params)))


def _exprs(plan: _Plan) -> list[TensorFormula]:
    """``CompiledFunction.exprs``: each output as a formula (text, shape and LaTeX)."""
    return [TensorFormula.of(node) for _, node in plan.outputs]


def _plan(request: TensorRequest) -> _Plan:
    """Differentiate: the outputs of the request's kind, as nodes of its builder."""
    b, shapes = request.builder, request.shapes
    vars_ = [b.var(w, shapes[w]) for w in request.wrt]
    plan = PLANNERS[request.kind](b, request.roots, request.many, vars_, request.single,
                                   request.options)
    bound = {d for p in request.params for d in dims_of(shapes[p])}
    unbound = used_dims([node for _, node in plan.outputs]) - bound
    if unbound:
        raise ShapeError(f"dimension(s) {', '.join(sorted(map(str, unbound)))} are not "
                         "dimensions of any argument, so their size is unknown when called")
    return plan


def _build(request: TensorRequest) -> Built:
    """Derive and emit (no caching): the module, its recipe and the formulas it computes."""
    with progress.stage("derive") as counts:
        plan = _plan(request)
        counts["outputs"] = len(plan.outputs)
    recipe = replace(request.recipe, mode=plan.mode,
                     outputs=tuple(name for name, _ in plan.outputs))
    program = program_for(request, recipe, plan.outputs, plan.result, plan.title, plan.returns)
    with progress.stage("print") as counts:  # (the tensor layer's CSE included)
        source = emit_module(program)
        counts["lines"] = source.count("\n")
    return Built(source, recipe, _exprs(plan))


def program_for(request: TensorRequest, recipe: Recipe, outputs: Sequence[tuple[str, Node]],
                result: str, title: str, returns: str) -> Program:
    """The program that emits ``outputs`` (returned as ``result``) for ``request``, whose
    recipe (with its mode) is ``recipe``: the arguments with their shapes and the bound
    constants, the docstring, the checks of the named dimensions."""
    b, shapes, params = request.builder, request.shapes, request.params
    bound = {d for p in params for d in dims_of(shapes[p])}
    argument_text = ", ".join(f"{p} {format_shape(shapes[p])}" for p in params)
    constants = request.passed
    return Program(
        name=recipe.name,
        title=title,
        expression=request.expression,
        params=params + tuple(c.name for c in constants),
        shapes={**{p: shapes[p] for p in params}, **{c.name: c.shape for c in constants}},
        outputs=outputs,
        result=result,
        doc=[
            f"Arguments (in this order, or by name): {argument_text or 'none'}.",
            *_constants_doc(constants),
            "Named dimensions must have one size across arguments; shapes are checked "
            "(ValueError). Integers give float64, float32 stays float32.",
            f"Returns {returns}.",
        ],
        mode=recipe.mode,
        key=request.key(),
        needs={d: n for d, n in b.needs.items() if d in bound},
        cse=request.options.cse,
        indices=tuple(c.name for c in constants if c.is_index),
        backend=request.options.backend,
    )


def _constants_doc(constants: Sequence[Bound]) -> list[str]:
    """The docstring's lines on the bound constants and the random draws
    (:mod:`symdiff.constants`), if any."""
    arrays = [c for c in constants if c.draw is None]
    draws = [c for c in constants if c.draw is not None]
    lines = []
    if arrays:
        items = ", ".join(f"{c.name} {format_shape(c.shape)} {c.dtype}" + (
            f" (computed from {', '.join(c.sources)} when bound)" if c.prelude is not None
            else "" if c.label == c.name else f" ({c.label})") for c in arrays)
        lines.append(f"Bound constants (captured when traced, passed by the compiled function; "
                     f"g.bind(name=array) rebinds): {items}.")
    if draws:
        items = ", ".join(f"{c.name} {format_shape(c.shape)} {c.dtype} = {c.draw.text}"
                          for c in draws)
        lines.append("Random draws (made again by the compiled function at every call, in this "
                     f"order, from the generator the traced function used): {items}.")
    return lines


class TensorLayer:
    """The tensor layer as the build pipeline sees it (:class:`symdiff.layer.Layer`)."""

    def request(self, call: Call) -> TensorRequest:
        """Parse and validate a builder call (:func:`symdiff.tensor.request.request_for`)."""
        return request_for(call.kind, call.exprs, call.wrt, call.options, call.shapes)

    def build(self, request: TensorRequest) -> Built:
        """Derive and emit ``request``."""
        return _build(request)

    def exprs(self, request: TensorRequest) -> Callable[[], list]:
        """The ``.exprs`` of ``request``, derived when first called, from a copy of its graph
        (what it holds pickles: never the traced function itself)."""
        r = request
        return functools.partial(_graph_exprs, r.kind, r.roots, r.many, r.wrt, r.single,
                                 r.options, r.shapes, r.params)


#: The tensor layer (see :data:`symdiff.pipeline.LAYERS`).
LAYER = TensorLayer()


# -- one planner per kind --------------------------------------------------------------------------
#: The planner of each kind: the outputs it computes, and how (registered below, one each).
PLANNERS = KindTable()


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


@PLANNERS.kind("value")
def _plan_value(b, roots, many, vars_, single, options) -> _Plan:
    (root,) = roots
    return _Plan([(naming.VALUE, root)], naming.VALUE,
                 f"the value, of shape {format_shape(root.shape)}", "Value", "value")


@PLANNERS.kind("grad")
def _plan_grad(b, roots, many, vars_, single, options) -> _Plan:
    root = _scalar_root(roots, "grad")
    grads = _gradients(b, root, vars_, options)
    names = [naming.adjoint(v.name) for v in vars_]
    shapes = ", ".join(format_shape(v.shape) for v in vars_)
    mode = "forward" if options.mode == "forward" else "reverse"
    return _Plan(list(zip(names, grads, strict=True)), _structure(names, single),
                 f"the gradient with respect to ({_names(vars_)}), of shape(s) {shapes}",
                 f"Gradient with respect to ({_names(vars_)})", mode)


@PLANNERS.kind("value_and_grad")
def _plan_value_and_grad(b, roots, many, vars_, single, options) -> _Plan:
    plan = _plan_grad(b, roots, many, vars_, single, options)
    return _Plan([(naming.VALUE, roots[0]), *plan.outputs], f"({naming.VALUE}, {plan.result})",
                 f"(value, gradient): {plan.returns[4:]}",
                 f"Value and gradient with respect to ({_names(vars_)})", plan.mode)


@PLANNERS.kind("jacobian")
def _plan_jacobian(b, roots, many, vars_, single, options) -> _Plan:
    if options.mode == "reverse":
        raise UnsupportedError("tensor Jacobians are computed in forward mode; "
                               "use mode='auto' or 'forward'")
    outputs = []
    for v in vars_:
        blocks = [b.reshape(t, (*r.shape, *v.shape))
                  for r, t in zip(roots, forward(b, roots, v, options.simplify), strict=True)]
        outputs.append((naming.jacobian(v.name), b.stack(blocks) if many else blocks[0]))
    lead = f"({len(roots)},) + " if many else ""
    return _Plan(outputs, _structure([n for n, _ in outputs], single),
                 f"the Jacobian for each wrt name, of shape {lead}output shape + its shape",
                 f"Jacobian with respect to ({_names(vars_)})", "forward")


@PLANNERS.kind("hessian")
def _plan_hessian(b, roots, many, vars_, single, options) -> _Plan:
    root = _scalar_root(roots, "hessian")
    returns = "the Hessian, of shape wrt shape + wrt shape (blocks for several names)"
    # the Gram-matrix forms call the NumPy helper _gram, which the Array API standard lacks
    grams = options.backend == "numpy"
    if single and grams:  # one variable entering through X @ W: H from the rows of X (no d*k seed)
        (var,) = vars_
        structured = structured_hessian(b, root, var, options.simplify)
        if structured is not None:
            name = naming.hessian(var.name)
            return _Plan([(name, structured)], name, returns,
                         f"Hessian with respect to ({var.name})",
                         "forward over reverse, structured (row by row through the matrix product)")
    grads = backward(b, root, vars_, options.simplify)
    outputs = []
    for j, vj in enumerate(vars_):
        tangents = forward(b, grads, vj, options.simplify)
        for i, (vi, t) in enumerate(zip(vars_, tangents, strict=True)):
            if grams:  # P.T @ (w*P + c r^T): a Gram matrix and outers
                t = split_product(b, t) or t
            name = naming.hessian(vi.name) if single else naming.hessian_block(i, j)
            outputs.append(((i, j), name, b.reshape(t, (*vi.shape, *vj.shape))))
    outputs.sort(key=lambda item: item[0])
    if single:
        result = outputs[0][1]
    elif all(v.shape == () for v in vars_):  # scalars: one (n, n) array, as without shapes=
        rows = [[name for (i, _), name, _ in outputs if i == k] for k in range(len(vars_))]
        result = "_np.stack((" + ", ".join(
            f"_np.stack(({', '.join(row)},))" for row in rows) + ",))"
        returns = "the Hessian, an array of shape (n, n) for the n scalar wrt names"
    else:
        rows = [[name for (i, _), name, _ in outputs if i == k] for k in range(len(vars_))]
        result = _structure([_structure(row, False) for row in rows], False)
    return _Plan([(name, node) for _, name, node in outputs], result, returns,
                 f"Hessian with respect to ({_names(vars_)})", "forward over reverse")


@PLANNERS.kind("hvp")
def _plan_hvp(b, roots, many, vars_, single, options) -> _Plan:
    root = _scalar_root(roots, "hvp")
    (var,) = vars_
    (grad,) = backward(b, root, vars_, options.simplify)
    direction = b.var(DIRECTION, var.shape)
    axes = tuple(range(var.ndim))
    along = b.reduce_axes("sum", b.map(arg_symbol(0) * arg_symbol(1), [grad, direction]), axes,
                          False)  # the directional derivative grad . _v, a scalar
    (product,) = backward(b, along, vars_, options.simplify)
    return _Plan([(naming.hvp(var.name), product)], naming.hvp(var.name),
                 f"the Hessian with respect to {var.name} times {DIRECTION}, of shape "
                 f"{format_shape(var.shape)}",
                 f"Hessian-vector product with respect to ({var.name})", "reverse over reverse")


PLANNERS.complete()
