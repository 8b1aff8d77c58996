"""Smart constructors for tensor nodes: infer and check the shape, apply the peephole rewrites
of :mod:`symdiff.tensor.simplify`, then intern the node.

Every node of a tensor program, whether parsed from the user's text or produced by a VJP or
JVP rule, is made here, so shape checks and simplifications apply everywhere alike.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import sympy as sp

from ..errors import ShapeError, SymdiffError
from . import simplify
from .ir import Graph, Node, arg_symbol
from .shapes import (
    Dim,
    IndexItem,
    Shape,
    broadcast,
    expand_shape,
    format_shape,
    index_shape,
    matmul_shape,
    normalize_axes,
    reduce_shape,
    repeat_shape,
    reshape_target,
    same_shape,
    size,
    transpose_perm,
    unbroadcast_axes,
)

REDUCTIONS = ("sum", "mean", "max", "min", "logsumexp", "prod")
_NOT_FINITE = (sp.zoo, sp.oo, -sp.oo, sp.nan)


@dataclass(frozen=True)
class Called:
    """One call of a family spelling as the user wrote it (``max_pool2d(h, 2)``): the node it
    returned, its array operands and the constants given by parameter name, so that the
    teaching views can show the call as one operation (:mod:`symdiff.graphs.tensor`) and head
    the rules of its parts with the spelling's ``identity`` (:mod:`symdiff.tensor.steps`)."""

    name: str
    identity: str
    node: Node
    operands: tuple[Node, ...]
    constants: tuple[tuple[str, Any], ...]

    def text(self, names: Sequence[str]) -> str:
        """``max_pool2d(z1, kernel_size=2)``: the call with its operands named ``names``."""
        given = [f"{k}={v!r}" for k, v in self.constants]
        return f"{self.name}({', '.join([*names, *given])})"


class Builder(Graph):
    """A graph whose node constructors check shapes and simplify.

    ``needs`` collects the least size each named dimension must have (from literal indices),
    checked when the generated function is called. ``called`` keeps, by the id of the node it
    returned, each family spelling the user called (:class:`Called`; the first call of a node).
    """

    def __init__(self) -> None:
        super().__init__()
        self.needs: dict[sp.Symbol, int] = {}
        self.called: dict[int, Called] = {}
        #: Set by a trace: makes a large index array a bound constant and returns its parameter
        #: name (:meth:`symdiff.tensor.captures.Captures.index`); None in the string language.
        self.bind_index: Callable[..., str] | None = None

    # -- leaves ------------------------------------------------------------------------------------
    def var(self, name: str, shape: Shape) -> Node:
        """A parameter of the function."""
        return self.node("var", (), (name,), shape)

    def constant(self, name: str, shape: Shape, dtype: str) -> Node:
        """A bound constant (:mod:`symdiff.tensor.constants`): the parameter ``name`` of a
        fixed shape and dtype, which nothing differentiates."""
        return self.node("const", (), (name, dtype), shape)

    def fill(self, value: Any, shape: Shape) -> Node:
        """A constant array (``value`` may involve named dimensions, e.g. ``n`` from a sum)."""
        value = sp.sympify(value)
        if value.has(*_NOT_FINITE):
            raise SymdiffError(f"a constant of the expression is not finite: {value}")
        return self.node("fill", (), (value,), shape)

    def eye(self, shape: Shape) -> Node:
        """The forward-mode seed of a variable: ``eye(size).reshape(shape + (size,))``."""
        return self.node("eye", (), (), (*shape, size(shape)))

    # -- elementwise -------------------------------------------------------------------------------
    def map(
        self, expr: Any, args: Sequence[Node], op: str = "elementwise", where: str = ""
    ) -> Node:
        """``expr`` (in ``arg_symbol(i)`` for ``args[i]``) applied elementwise, broadcasting."""
        shape = broadcast(op, *(a.shape for a in args), where=where)
        expr = sp.sympify(expr)
        replacements: dict[sp.Basic, sp.Basic] = {}
        kept: list[Node] = []
        position: dict[int, int] = {}
        for i, arg in enumerate(args):
            symbol = arg_symbol(i)
            if symbol not in expr.free_symbols:
                continue
            if arg.op == "fill":
                replacements[symbol] = arg.attrs[0]
                continue
            arg = simplify.broadcast_free(arg, shape)
            if id(arg) not in position:
                position[id(arg)] = len(kept)
                kept.append(arg)
            replacements[symbol] = arg_symbol(position[id(arg)])
        expr = expr.xreplace(replacements)
        if expr.has(*_NOT_FINITE):
            raise SymdiffError(f"an elementwise expression is not finite: {expr}")
        used = [i for i in range(len(kept)) if arg_symbol(i) in expr.free_symbols]
        if not used:
            return self.fill(expr, shape)
        if len(used) < len(kept):  # a constant cancelled an operand (0 * x + p): drop it, so
            # the node's value has its natural shape (it is broadcast below)
            expr = expr.xreplace({arg_symbol(i): arg_symbol(j) for j, i in enumerate(used)})
            kept = [kept[i] for i in used]
        natural = broadcast(op, *(a.shape for a in kept))
        if expr == arg_symbol(0) and len(kept) == 1:
            node = kept[0]
        else:
            node = self.node("map", kept, (expr,), natural)
        return node if same_shape(natural, shape) else self.broadcast(node, shape)

    # -- linear algebra ----------------------------------------------------------------------------
    def matmul(self, a: Node, b: Node, where: str = "") -> Node:
        """``a @ b`` with NumPy's rules."""
        shape = matmul_shape(a.shape, b.shape, where)
        found = simplify.matmul(self, a, b, shape)
        return found if found is not None else self.node("matmul", (a, b), (), shape)

    # -- reductions --------------------------------------------------------------------------------
    def reduce(self, kind: str, a: Node, axis: Any = None, keepdims: bool = False,
               where: str = "") -> Node:
        """``kind`` (sum, mean, max, min, logsumexp, prod) over ``axis`` (None: all axes)."""
        axes = normalize_axes(kind, axis, a.ndim, where)
        return self.reduce_axes(kind, a, axes, keepdims)

    def reduce_axes(self, kind: str, a: Node, axes: tuple[int, ...], keepdims: bool) -> Node:
        """A reduction over normalized ``axes``."""
        if kind not in REDUCTIONS:
            raise ValueError(kind)
        shape = reduce_shape(a.shape, axes, keepdims)
        if not axes:
            return a
        found = simplify.reduction(self, kind, a, axes, keepdims, shape)
        return found if found is not None else self.node(kind, (a,), (axes, keepdims), shape)

    def prod_others(self, a: Node, axes: tuple[int, ...]) -> Node:
        """Per element of ``a``, the product of the *other* elements along ``axes`` (the
        gradient of ``prod(a, axes)``), computed without dividing by zero (see
        :data:`symdiff.tensor.vjp.TENSOR_VJPS`)."""
        return self.node("prod_others", (a,), (axes,), a.shape)

    def softmax(self, a: Node, axis: Any = -1, where: str = "") -> Node:
        """``exp(a) / sum(exp(a), axis)`` (emitted in the stable shifted form)."""
        (axis,) = normalize_axes("softmax", axis, a.ndim, where)
        return self.node("softmax", (a,), (axis,), a.shape)

    def share(self, kind: str, a: Node, m: Node, axes: tuple[int, ...]) -> Node:
        """Share of the gradient of ``kind(a, axes)`` per element of ``a``: 1/k on a k-way tie."""
        return self.node("share", (a, m), (kind, axes), a.shape)

    # -- views and copies --------------------------------------------------------------------------
    def transpose(self, a: Node, perm: Any = None, where: str = "") -> Node:
        """Axes permuted (None reverses them, like ``.T``)."""
        perm = transpose_perm("transpose", perm, a.ndim, where)
        shape = tuple(a.shape[p] for p in perm)
        found = simplify.transpose(self, a, perm, shape)
        return found if found is not None else self.node("transpose", (a,), (perm,), shape)

    def reshape(self, a: Node, target: Sequence[Dim], where: str = "") -> Node:
        """``a`` reshaped (C order); one entry of ``target`` may be -1."""
        shape = reshape_target(a.shape, target, where)
        found = simplify.reshape(self, a, shape)
        return found if found is not None else self.node("reshape", (a,), (), shape)

    def expand(self, a: Node, axes: tuple[int, ...]) -> Node:
        """Size-1 axes inserted at ``axes`` (positions in the result)."""
        if not axes:
            return a
        shape = expand_shape(a.shape, axes)
        if a.op == "fill":
            return self.fill(a.attrs[0], shape)
        return self.node("expand", (a,), (tuple(sorted(axes)),), shape)

    def broadcast(self, a: Node, shape: Shape) -> Node:
        """``a`` broadcast to ``shape`` (a read-only view)."""
        broadcast("broadcast_to", a.shape, shape)
        if len(shape) < a.ndim:
            raise ShapeError(f"broadcast_to: cannot broadcast {format_shape(a.shape)} "
                             f"to {format_shape(shape)}")
        if same_shape(a.shape, shape):
            return a
        if a.op == "fill":
            return self.fill(a.attrs[0], shape)
        if a.op == "broadcast":
            a = a.args[0]
        return self.node("broadcast", (a,), (), shape)

    def unbroadcast(self, g: Node, shape: Shape) -> Node:
        """Sum ``g`` back to ``shape``, from which it was broadcast (the one place this is done)."""
        if same_shape(g.shape, shape):
            return g
        lead, ones = unbroadcast_axes(g.shape, shape)
        if ones:
            g = self.reduce_axes("sum", g, ones, True)
        if lead:
            g = self.reduce_axes("sum", g, lead, False)
        return g

    def index(self, a: Node, index: tuple[IndexItem, ...], where: str = "") -> Node:
        """Basic indexing ``a[index]``."""
        shape, needs = index_shape(a.shape, index, where)
        for dim, least in needs.items():
            self.needs[dim] = max(self.needs.get(dim, 0), least)
        if a.op == "fill":
            return self.fill(a.attrs[0], shape)
        if all(item == (None, None, None) for item in index):
            return a
        found = simplify.index(self, a, index)
        return found if found is not None else self.node("index", (a,), (index,), shape)

    def scatter(self, g: Node, index: tuple[IndexItem, ...], shape: Shape) -> Node:
        """Zeros of ``shape`` with ``g`` placed at ``index`` (the VJP of indexing)."""
        if all(item == (None, None, None) for item in index):
            return self.broadcast(g, shape)
        return self.node("scatter", (g,), (index,), shape)

    def stack(self, items: Sequence[Node]) -> Node:
        """``np.stack(items)``: same-shaped arrays along a new first axis."""
        first = items[0].shape
        for item in items[1:]:
            if not same_shape(item.shape, first):
                raise ShapeError(f"jacobian: outputs of shapes {format_shape(first)} and "
                                 f"{format_shape(item.shape)} cannot be stacked")
        return self.node("stack", items, (), (len(items), *first))

    def repeat(self, a: Node, repeats: Dim, axis: int, where: str = "") -> Node:
        """``np.repeat(a, repeats, axis)``: every element repeated along ``axis``."""
        (axis,) = normalize_axes("repeat", axis, a.ndim, where)
        shape = repeat_shape(a.shape, repeats, axis)
        if a.op == "fill":
            return self.fill(a.attrs[0], shape)
        if isinstance(repeats, int) and repeats == 1:
            return a
        return self.node("repeat", (a,), (repeats, axis), shape)
