"""From a builder's arguments with ``shapes=`` to a ``CompiledFunction``: parse, differentiate,
emit, load. With ``cache=True``, kept in memory and in the disk cache: the module entry is
keyed by :meth:`_Request.key` (kind, expression texts or a traced graph, resolved ``wrt``,
argument shapes, options) plus :func:`symdiff.warm.fingerprint`, so a second process parses the
request but does not derive it again (and, for plain strings, :mod:`symdiff.tensor.warm`
finds the entry before parsing).

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
  ``S_i + S_j``), forward over reverse: the gradient graph, differentiated by forward mode.
* ``hvp``: one ``wrt`` variable; the last argument ``_v`` is a direction of shape ``S`` and the
  result ``H @ _v`` has shape ``S``: the gradient of ``sum(grad * _v)`` (reverse over reverse),
  so no ``S + S`` Hessian is formed and every array keeps its own shape (a forward sweep of one
  direction would carry a size-1 tangent axis through the code).
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
from collections.abc import Sequence
from dataclasses import dataclass

import sympy as sp

from .. import __version__
from ..arguments import check_parameters, resolve_wrt
from ..cache import open_store
from ..compiled import CompiledFunction
from ..errors import ShapeError, SymdiffError, UnsupportedError
from ..options import Options
from ..parsing import FUNCTIONS as scalar_functions
from ..trace import (
    DIRECTION,
    call_signature,
    combine_signatures,
    signature_text,
    traced_name,
)
from ..warm import load_cached, module_key
from .emit import Program
from .formula import TensorFormula
from .ir import Node, arg_symbol, describe, serialize, topological, variables
from .module import emit_module, used_dims
from .ops import Builder
from .parse import TENSOR_FUNCTIONS, parse_tensor
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


@dataclass
class _Request:
    """A parsed builder call: the graph of its expressions and everything that keys its code."""

    kind: str
    texts: list[object]
    many: bool
    wrt: tuple[str, ...]
    single: bool
    options: Options
    shapes: dict[str, Shape]
    builder: Builder
    roots: list[Node]
    params: tuple[str, ...]
    signature: inspect.Signature | None = None  # a traced function's (see symdiff.arguments)

    @property
    def call_signature(self) -> inspect.Signature | None:
        """The compiled function's signature: the traced function's (with ``_v`` last for a
        Hessian-vector product), or None for the generated function's own."""
        return call_signature(self.signature, self.kind)

    @property
    def name(self) -> str:
        """The generated function's name."""
        return "f" if self.kind == "value" else f"{self.kind}_f"

    @property
    def wrt_value(self) -> str | tuple[str, ...] | None:
        """``CompiledFunction.wrt``: None for a value, one name, or a tuple."""
        if self.kind == "value":
            return None
        return self.wrt[0] if self.single else self.wrt

    @property
    def expression(self) -> str:
        """The expressions as the header shows them: the texts, or a traced graph's formula."""
        return "; ".join(t if isinstance(t, str) else describe(r)
                         for t, r in zip(self.texts, self.roots, strict=True))

    def key(self) -> str:
        """A digest of everything that determines the generated source and the signature."""
        identity = [t if isinstance(t, str) else "traced:" + serialize([r])
                    for t, r in zip(self.texts, self.roots, strict=True)]
        parts = [__version__, "tensor", self.kind, json.dumps(identity), str(self.many),
                 json.dumps(list(self.wrt)), str(self.single), self.options.code_key()]
        parts += [f"{p}:{format_shape(self.shapes[p])}" for p in self.params]
        parts += [f"{d}>={n}" for d, n in sorted(self.builder.needs.items(), key=str)]
        if self.signature is not None:
            parts.append("signature" + signature_text(self.signature))
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]


def _texts(kind: str, exprs: object) -> tuple[list[object], bool]:
    """The expressions, and whether a list was given (only jacobian takes one)."""
    if kind == "jacobian" and isinstance(exprs, list | tuple):
        if not exprs:
            raise SymdiffError("jacobian takes an expression or a non-empty list of expressions")
        return list(exprs), True
    return [exprs], False


def _is_function(item: object) -> bool:
    return callable(item) and not isinstance(item, sp.Basic)  # a SymPy Symbol is callable


def request_for(kind: str, exprs: object, wrt: object, options: Options,
                shapes: object, occurs: bool = True) -> _Request:
    """Validate and parse a builder call (no derivation yet).

    The arguments and ``wrt`` follow :mod:`symdiff.arguments`: a traced function's parameters
    in the ``def``'s order (its signature is the compiled function's), else every variable
    sorted by name; an explicit ``wrt`` name must be a variable of the expression (a
    ``ParseError`` otherwise; not checked with ``occurs=False``, for ``derive``) and have a
    shape. A traced function given to ``jacobian`` may
    return a tuple of arrays of one shape: the rows, stacked as for a list of expressions.
    """
    if kind not in _PLANNERS:
        raise UnsupportedError(f"{kind} is not available for tensor expressions (shapes=); "
                               "use hessian, or grad of a directional derivative")
    parsed_shapes = parse_shapes(shapes)
    items, many = _texts(kind, exprs)
    b = Builder()
    texts: list[object] = []
    roots: list[Node] = []
    signatures: list[inspect.Signature] = []
    functions: list[object] = []
    for item in items:
        if _is_function(item):
            from .trace import trace_tensor

            nodes, sig, listed = trace_tensor(item, parsed_shapes, b, many=kind == "jacobian")
            many = many or listed
            signatures.append(sig)
            functions.append(item)
            texts += [item] * len(nodes)
            roots += nodes
        else:
            texts.append(item)
            roots.append(parse_tensor(item, parsed_shapes, b))
    signature = combine_signatures(signatures, functions) if signatures else None
    label = traced_name(functions, len(items) == 1) if functions else ""
    found = variables(roots)
    if signature is not None:
        check_parameters(signature, found, label)
    wrt_names: tuple[str, ...] = ()
    single = False
    if kind != "value":
        wrt_names, single = resolve_wrt(wrt, signature, found, items,
                                        TENSOR_FUNCTIONS | scalar_functions, label, occurs)
        for w in wrt_names:
            if w not in parsed_shapes:
                raise ShapeError(f"wrt name {w!r} has no shape: add it to shapes=")
    if kind == "hvp":
        if len(wrt_names) != 1:
            raise UnsupportedError(
                "a tensor hvp takes one wrt variable (the direction _v has its shape); "
                f"got {len(wrt_names)}: put the variables in one array, or use hessian")
        parsed_shapes = {**parsed_shapes, DIRECTION: parsed_shapes[wrt_names[0]]}
    names = tuple(signature.parameters) if signature is not None else tuple(found)
    params = _parameters(kind, names, wrt_names, ordered=signature is not None)
    return _Request(kind, texts, many, wrt_names, single, options, parsed_shapes, b, roots,
                    params, signature)


def _parameters(kind: str, names, wrt: Sequence[str], ordered: bool = False) -> tuple[str, ...]:
    """The generated function's parameters: a traced function's parameters in order (when
    ``ordered``), else every variable and wrt name sorted; then the direction ``_v`` of a
    Hessian-vector product."""
    params = tuple(names) if ordered else tuple(sorted(set(names) | set(wrt)))
    return params + ((DIRECTION,) if kind == "hvp" else ())


def build_tensor(
    kind: str, exprs: object, wrt: object, options: Options, shapes: object
) -> CompiledFunction:
    """The compiled tensor function for one builder call (see the module docstring): from
    memory, from the disk cache, or derived, emitted and loaded now (then cached), as
    ``cache=True`` allows."""
    request = request_for(kind, exprs, wrt, options, shapes)
    key = request.key()
    if not options.cache:
        return _build(request, key, None)
    if key in _MEMO:  # the key holds the signature; annotations may still differ
        return _MEMO[key]._with_signature(request.call_signature)
    disk_key = module_key(key)
    lazy = functools.partial(_graph_exprs, kind, request.roots, request.many, request.wrt,
                             request.single, options, request.shapes, request.params)
    compiled = load_cached(disk_key, request.name, request.params, request.wrt_value, kind, lazy,
                           request.call_signature)
    if compiled is None:
        compiled = _build(request, key, disk_key)
        open_store().put("module", disk_key, compiled.source)
    _MEMO[key] = compiled
    return compiled


def request_exprs(kind: str, exprs: object, wrt: object, options: Options,
                  shapes: object) -> list:
    """The ``.exprs`` of a builder call, derived without emitting or loading code."""
    return _exprs(_plan(request_for(kind, exprs, wrt, options, shapes)))


def _graph_exprs(kind: str, roots: Sequence[Node], many: bool, wrt: tuple[str, ...],
                 single: bool, options: Options, shapes: dict[str, Shape],
                 params: tuple[str, ...]) -> list:
    """The ``.exprs`` of a parsed request (a function loaded from the disk cache): its graph
    is copied into a fresh builder and differentiated there."""
    b = Builder()
    copies: dict[int, Node] = {}
    for node in topological(roots):
        copies[id(node)] = b.node(node.op, [copies[id(a)] for a in node.args], node.attrs,
                                  node.shape)
    new_roots = [copies[id(r)] for r in roots]
    request = _Request(kind, [""] * len(roots), many, wrt, single, options, shapes, b,
                       new_roots, params)
    return _exprs(_plan(request))


def clear_memo() -> None:
    """Forget the tensor functions kept in memory."""
    _MEMO.clear()


def _exprs(plan: _Plan) -> list[TensorFormula]:
    """``CompiledFunction.exprs``: each output as a formula (text, shape and LaTeX)."""
    return [TensorFormula.of(node) for _, node in plan.outputs]


def _plan(request: _Request) -> _Plan:
    """Differentiate: the outputs of the request's kind, as nodes of its builder."""
    b, shapes = request.builder, request.shapes
    vars_ = [b.var(w, shapes[w]) for w in request.wrt]
    plan = _PLANNERS[request.kind](b, request.roots, request.many, vars_, request.single,
                                   request.options)
    bound = {d for p in request.params for d in dims_of(shapes[p])}
    unbound = used_dims([node for _, node in plan.outputs]) - bound
    if unbound:
        raise ShapeError(f"dimension(s) {', '.join(sorted(map(str, unbound)))} are not "
                         "dimensions of any argument, so their size is unknown when called")
    return plan


def _build(request: _Request, key: str, disk_key: str | None) -> CompiledFunction:
    """Derive, emit and load (no caching)."""
    plan = _plan(request)
    b, shapes, params = request.builder, request.shapes, request.params
    bound = {d for p in params for d in dims_of(shapes[p])}
    argument_text = ", ".join(f"{p} {format_shape(shapes[p])}" for p in params)
    program = Program(
        name=request.name,
        title=plan.title,
        expression=request.expression,
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
        cse=request.options.cse,
    )
    return CompiledFunction(
        source=emit_module(program),
        name=program.name,
        args=params,
        wrt=request.wrt_value,
        exprs=_exprs(plan),
        kind=request.kind,
        key=disk_key,
        signature=request.call_signature,
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


def _plan_hvp(b, roots, many, vars_, single, options) -> _Plan:
    root = _scalar_root(roots, "hvp")
    (var,) = vars_
    (grad,) = backward(b, root, vars_, options.simplify)
    direction = b.var(DIRECTION, var.shape)
    axes = tuple(range(var.ndim))
    along = b.reduce_axes("sum", b.map(arg_symbol(0) * arg_symbol(1), [grad, direction]), axes,
                          False)  # the directional derivative grad . _v, a scalar
    (product,) = backward(b, along, vars_, options.simplify)
    return _Plan([(f"_{var.name}_hvp", product)], f"_{var.name}_hvp",
                 f"the Hessian with respect to {var.name} times _v, of shape "
                 f"{format_shape(var.shape)}",
                 f"Hessian-vector product with respect to ({var.name})", "reverse over reverse")


_PLANNERS = {
    "value": _plan_value,
    "grad": _plan_grad,
    "value_and_grad": _plan_value_and_grad,
    "jacobian": _plan_jacobian,
    "hessian": _plan_hessian,
    "hvp": _plan_hvp,
}
