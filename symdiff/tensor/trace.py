"""Tracing Python functions with ``shapes=``: NumPy code on arrays, recorded as a tensor graph.

``sd.grad(f, wrt="w", shapes={...})`` calls ``f`` once with one :class:`TracedTensor` per
parameter (each of its declared shape). What the body does builds the same graph the parser
builds from the same computation written as a string, through the same checked constructors
(:class:`~symdiff.tensor.ops.Builder`), so shapes are checked as the function runs (a mismatch is
a :class:`~symdiff.errors.ShapeError` naming the operation, both shapes and the line of ``f``)
and the string and the function give the same code::

    def loss(X, w, y):
        return np.sum(np.log(1 + np.exp(-y * (X @ w))))

Recorded: ``+ - * / **`` and unary ``-``, ``@`` (and ``np.matmul``, ``np.dot``), ``.T``,
indexing by ints, slices, ``None`` and ``...`` (``x[:, 0]``, ``x[1:3]``, ``s[:, None]``) and by
constant integer arrays, lists and boolean masks (``x[idx]``, ``x[:, [0, 2]]``,
``logp[np.arange(n), labels]``, ``x[mask]``: :mod:`symdiff.tensor.families.gather`), the
NumPy ufuncs of :data:`symdiff.trace.UFUNCS` (``np.exp``, ``np.log``, ``np.tanh``,
``np.maximum``, comparisons ...), ``np.sum``/``np.mean``/``np.max``/``np.min``/``np.prod``
(and the methods ``.sum()`` ...) with ``axis=`` and ``keepdims=``,
``np.transpose``/``.transpose()``, ``np.reshape``/``.reshape()``, ``np.repeat``/``.repeat()``,
``np.where`` (a traced comparison or a constant boolean mask as the condition), ``np.clip``,
:mod:`symdiff.math` (``sd.math.sigmoid``, ``sd.math.relu``, ..., ``sd.math.logsumexp``,
``sd.math.softmax``), and the family operations of :mod:`symdiff.tensor.families`
(``np.stack``, ``np.concatenate``, ``np.cumsum``, ``np.roll``, ``np.triu``, ``np.var``,
``np.take``, ``np.nan_to_num``, ``np.linalg.det``, ``np.einsum``, ``x.ravel()``, ``np.median``,
``np.interp``, ``np.linalg.qr`` ...), and ``np.argmax``/``np.argmin`` as an index
(``y[np.argmax(x)]``: :func:`symdiff.tensor.families.quantiles.index_by`); iterating over a first
axis of fixed size (``a, b, c = theta``, ``sum(x ** 2)``: one index per row), the ufunc methods
``reduce`` / ``accumulate`` / ``outer``, ``np.round(x, decimals)`` and ``np.ediff1d``
(:mod:`symdiff.tensor.numpy_handlers`).
``x.shape`` gives the declared dimensions (ints, or SymPy symbols for named ones, usable as
numbers: ``np.sum(z) / X.shape[0]``).

A NumPy array the function closes over or builds (``X`` in ``np.sum((X @ w - y) ** 2)``,
``np.eye(3)``, a mask ``np.arange(5) > 2``) becomes a *bound constant* when it meets a traced
value: a parameter ``_c0, _c1, ...`` of the generated module that the compiled function passes
(:mod:`symdiff.constants`, :mod:`symdiff.tensor.captures`); a constant boolean array is also a
condition of ``np.where``. Scalars (numbers, 0-d arrays) stay literals. The arrays it reads by
name are traced constants from the start, so that what it computes from them is too
(:mod:`symdiff.tensor.closed`); its random draws are drawn again at every call
(:meth:`Tracer.draw`, :mod:`symdiff.trace.draws`); :func:`symdiff.tensor.tracing.trace_tensor`
runs the trace.

Anything else is an :class:`~symdiff.errors.UnsupportedError` naming it: Python ``if`` on a
traced value (use ``np.where``), ``float(x)``, iteration over a named first dimension, lists
combined with a traced array, assigning into a traced array (``x[i] = v``) or a traced value
into a NumPy array, indexing by a traced comparison (``x[x > 0]``), other NumPy functions (the
message suggests the closest supported one: :func:`symdiff.trace.refusals.unsupported_numpy`).
"""

from __future__ import annotations

import operator
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import sympy as sp

from .. import trace as scalar
from ..errors import SymdiffError, UnsupportedError
from ..functions import held
from ..parsing import LIMITS
from ..trace import draws
from ..trace.refusals import code_line
from .captures import Captures
from .closed import ClosedArray, ClosedArrays, as_array, numbers_of, unnamed
from .families import gather, quantiles
from .families.building import stack
from .ir import Node
from .ops import Builder
from .shapes import Dim, broadcast
from .traced import (
    ELEMENT_LIMIT,
    TensorCondition,
    TracedArray,
    TracedTensor,
    no_array,
    settle,
    tracer_of,
    value_of,
)
from .values import Elem, Values, large_elementwise, reread_elementwise

_NOT_FINITE = (sp.zoo, sp.oo, -sp.oo, sp.nan)
_NO_MASK = ("indexing by a mask from a traced comparison (x[x > 0.5]) is not supported: how "
            "many elements it selects depends on the values, so the result has no static "
            "shape; keep the shape and zero the rest instead, e.g. "
            "np.sum(np.where(x > 0.5, x, 0)) (a constant NumPy boolean mask works as an index)")


class Tracer(Values):
    """The state of one trace: the builder, the placeholders, and where messages point."""

    def __init__(self, builder: Builder, fn: Callable[..., Any],
                 captures: Captures | None = None, closed: ClosedArrays | None = None):
        super().__init__(builder)
        self.fn = fn
        self.captures = Captures() if captures is None else captures
        #: The arrays ``fn`` reads by name, seen as traced constants (:mod:`.closed`).
        self.closed = ClosedArrays(self.captures.folded) if closed is None else closed
        self.closed.tracer = self
        builder.bind_index = self.bind_index
        self.handed_out = 0  # elements handed to NumPy one by one (``np.array([x, y])``)
        self.code = getattr(fn, "__code__", None)
        #: The traced arrays read so far (by id, each kept alive so that its id stays its
        #: own): an elementwise value read a second time becomes a node (``operand``).
        self.read: dict[int, TracedTensor] = {}
        self.name = str(getattr(fn, "__name__", None) or type(fn).__name__)

    def bind_index(self, positions: np.ndarray, given: Any, kind: str, axis_size: int,
                   involved: tuple[Any, ...] = ()) -> str:
        """A large index array as a bound constant (:meth:`Captures.index`): its name."""
        return self.captures.index(positions, self.fn, given, kind, axis_size, involved,
                                   label=self.closed.label_of(given))

    def where(self) -> str:
        """`` (in f, line 3: 'return X @ v')``: the line of the traced function running now."""
        frame = sys._getframe(1)
        while frame is not None and frame.f_code is not self.code:
            frame = frame.f_back
        if frame is None:
            return f" (in {self.name})"
        return code_line(self.name, frame.f_code, frame.f_lineno)

    # -- values ------------------------------------------------------------------------------------
    def operand(self, value: object) -> Elem:
        """``value`` (a traced array, a dimension, a number) as an elementwise value."""
        if isinstance(value, TracedTensor):
            if tracer_of(value) is not self:
                raise UnsupportedError("a traced array from another trace cannot be used here")
            return self.state(value)
        if isinstance(value, TensorCondition):
            raise UnsupportedError(scalar.CONDITION_ONLY)
        if isinstance(value, scalar.Symbolic):
            raise UnsupportedError("a scalar traced value cannot be combined with a traced array")
        if isinstance(value, sp.Expr):
            if not all(s.is_integer for s in value.free_symbols):
                raise UnsupportedError(f"the SymPy expression {value} is not a number or a "
                                       "dimension of shapes=")
            return Elem(value, ())
        value = as_array(value)  # a named array of ints or booleans: the original
        if isinstance(value, np.ndarray) and holds_traced(value):
            return self.elem(self.gathered(value))  # np.array([x, 2 * x]): traced elements
        if isinstance(value, np.ndarray) and value.ndim:  # a bound constant
            return self.elem(self.captures.node(self.b, value, self.fn))
        if isinstance(value, list | tuple):
            raise UnsupportedError(f"a {type(value).__name__} cannot be combined with a traced "
                                   "array: make it a NumPy array (np.array([...]), a bound "
                                   "constant) or pass it to the function as an argument")
        return Elem(scalar.operand(value), ())

    def unnamed(self, args: tuple[Any, ...], kwargs: dict[str, Any]
                ) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """The arguments of a NumPy function of traced arrays, named int and boolean arrays
        the arrays themselves (:func:`symdiff.tensor.closed.unnamed`)."""
        return tuple(map(unnamed, args)), {k: unnamed(v) for k, v in kwargs.items()}

    def constant(self, value: Any) -> Any:
        """A constant argument of a NumPy function (``np.interp``'s points, ``np.take``'s
        indices): a named array of real numbers is its numbers, folded; a named int array the
        array (an index)."""
        if isinstance(value, ClosedArray):
            return value.numbers("a NumPy function took it as a constant argument")
        return as_array(value)

    def state(self, value: TracedTensor) -> Elem:
        """The elementwise value of ``value`` as an operand. A value read a second time (a
        loop's state: ``x = r*x*(1 - x)``, ``c = f*c + i*g``) becomes a node, read by its
        placeholder from then on; so does any large value (:func:`large_elementwise`). On its
        first read a sum or product that may be read again is held (``held(u)``), so that the
        reader keeps it whole and it is replaced by the node's placeholder when it becomes
        one (:meth:`~symdiff.tensor.values.Values.release`): both readers then read the same
        node, and no expression multiplies out the steps of a loop."""
        elem = value_of(value)
        again = id(value) in self.read
        self.read[id(value)] = value  # (kept alive: its id stays its own)
        expr = elem.expr
        if reread_elementwise(expr) if again else large_elementwise(expr):
            fresh = self.elem(self.tensor(elem))
            if isinstance(expr, held):
                self.held_nodes[expr] = fresh.expr
            settle(value, fresh)
            return fresh
        if (expr.is_Add or expr.is_Mul) and reread_elementwise(expr):
            elem = Elem(held(expr), elem.shape)
            settle(value, elem)
        return elem

    def gathered(self, value: np.ndarray) -> Node:
        """An object array NumPy built from traced elements and numbers (``np.array([x, 2 *
        x])``, ``np.r_[x, y]``): one node, its elements stacked and reshaped."""
        if value.size == 0:
            raise UnsupportedError("an empty object array cannot be combined with a traced array")
        if value.size > ELEMENT_LIMIT:
            raise UnsupportedError(f"an array of {value.size} traced elements is too large to "
                                   f"build one by one (limit {ELEMENT_LIMIT}); "
                                   f"{no_array(value.size)}")
        items = []
        for item in value.reshape(-1):
            if isinstance(item, np.ndarray) and item.dtype == object:
                raise UnsupportedError("a nested object array cannot be combined with a traced "
                                       "array")
            node = self.node(item)
            if node.shape:
                raise UnsupportedError("an element of an object array is itself an array: use "
                                       "np.stack")
            items.append(node)
        flat = items[0] if len(items) == 1 and not value.shape else stack(self.b, tuple(items))
        return self.b.reshape(flat, value.shape) if value.ndim != 1 else flat

    def node(self, value: object) -> Node:
        """``value`` as a tensor node (a number becomes a constant)."""
        elem = self.operand(value)
        if elem.expr.is_number or not (elem.expr.free_symbols & set(self.nodes)):
            return self.b.fill(elem.expr, elem.shape)
        return self.tensor(elem)

    def wrap(self, node: Node) -> TracedTensor:
        return TracedTensor(self, self.elem(node))

    def elementwise(self, name: str, build: Callable[..., sp.Basic], *args: object) -> Any:
        """``build`` (a SymPy builder, as in :data:`symdiff.trace.UFUNCS`) applied elementwise."""
        values = [self.operand(a) for a in args]
        shape = broadcast(name, *(v.shape for v in values), where=self.where())
        expr = build(*(v.expr for v in values))
        if isinstance(expr, sp.Expr):
            _check(expr)
            return TracedTensor(self, Elem(expr, shape))
        if any(v.expr.has(sp.Piecewise) for v in values):
            # a comparison of a where() (leaky relu after leaky relu): the where() becomes a
            # node of its own, so that the condition reads its values (no gradient flows
            # through a condition) and never holds a Piecewise, which SymPy would solve as sets
            values = [self.elem(self.node(a)) if v.expr.has(sp.Piecewise) else v
                      for a, v in zip(args, values, strict=True)]
            expr = build(*(v.expr for v in values))
        return TensorCondition(self, Elem(expr, shape))

    def condition(self, cond: object) -> Elem:
        """``cond`` as an elementwise condition: a traced comparison (or a join of them), or a
        constant boolean array (a bound constant, 1.0 where True)."""
        cond = as_array(cond)  # a named boolean array: the array
        if isinstance(cond, np.ndarray) and cond.ndim and cond.dtype.kind == "b":
            mask = self.operand(cond)
            return Elem(sp.Ne(mask.expr, 0), mask.shape)
        if isinstance(cond, TensorCondition):
            return value_of(cond)
        raise UnsupportedError("the condition of where(cond, a, b) must be a comparison "
                               "(< <= > >=) of traced arrays, a constant boolean array or "
                               "those joined by &, |, ~ (np.logical_and, ...), not "
                               f"{type(cond).__name__}")

    def join_conditions(self, join: Callable[..., sp.Basic], *conds: object) -> TensorCondition:
        """``join`` (``sp.And``, ``sp.Or``, ``sp.Not``) of conditions, broadcast together."""
        tests = [self.condition(c) for c in conds]
        shape = broadcast(getattr(join, "__name__", "join"), *(t.shape for t in tests),
                          where=self.where())
        return TensorCondition(self, Elem(join(*(t.expr for t in tests)), shape))

    def where_(self, cond: object, a: object, b: object) -> TracedTensor:
        """``np.where(cond, a, b)``: a ``Piecewise`` elementwise."""
        test = self.condition(cond)
        if test.expr.has(sp.Piecewise):
            raise UnsupportedError("a where() inside the condition of a where() is not "
                                   "supported; nest where() in the values instead")
        x, y = self.operand(a), self.operand(b)
        shape = broadcast("where", test.shape, x.shape, y.shape, where=self.where())
        return TracedTensor(self, Elem(sp.Piecewise((x.expr, test.expr), (y.expr, True)), shape))

    def reduce(self, kind: str, a: object, axis: Any = None, keepdims: Any = False,
               **unsupported: Any) -> TracedTensor:
        _refuse_extra(kind, unsupported)
        node = self.b.reduce(kind, self.node(a), _axes(axis), bool(keepdims), self.where())
        return self.wrap(node)

    def matmul(self, a: object, b: object) -> TracedTensor:
        return self.wrap(self.b.matmul(self.node(a), self.node(b), self.where()))

    def transpose(self, a: object, axes: Any = None) -> TracedTensor:
        perm = None if axes is None else tuple(operator.index(p) for p in axes)
        return self.wrap(self.b.transpose(self.node(a), perm, self.where()))

    def reshape(self, a: object, shape: Any) -> TracedTensor:
        items = shape if isinstance(shape, tuple | list) else (shape,)
        return self.wrap(self.b.reshape(self.node(a), [_dim(d) for d in items], self.where()))

    def repeat(self, a: object, repeats: Any, axis: Any = None) -> TracedTensor:
        node = self.node(a)
        if axis is None:  # NumPy flattens first
            node, axis = self.b.reshape(node, (-1,), self.where()), 0
        if isinstance(repeats, list | tuple | np.ndarray):
            raise UnsupportedError("repeat: repeats must be one int (the same count for every "
                                   "element) when tracing")
        return self.wrap(self.b.repeat(node, _dim(repeats), operator.index(axis),
                                       self.where()))

    def index(self, a: TracedTensor, key: Any) -> TracedTensor:
        node = self.node(a)
        key = tuple(map(as_array, key)) if isinstance(key, tuple) else as_array(key)
        items = key if isinstance(key, tuple) else (key,)
        if any(isinstance(item, TensorCondition) for item in items):
            raise UnsupportedError(_NO_MASK + self.where())
        if any(isinstance(item, TracedTensor) for item in items):  # y[np.argmax(x)]
            keys = tuple(self.node(i) if isinstance(i, TracedTensor) else i for i in items)
            if not any(isinstance(k, Node) and quantiles.is_argext(k) for k in keys):
                raise UnsupportedError(
                    "indexing by a traced array is supported only with an index from "
                    "np.argmax / np.argmin (a value-dependent index); for a mask use np.where; "
                    "for an argument of integers used as indices (observations, labels) make "
                    "it static, static='name' (or leave it out of shapes=): the function is "
                    "then built once per value" + self.where())
            return self.wrap(quantiles.index_by(self.b, node, keys, self.where()))
        if gather.wants_gather(key):  # integer arrays, lists, masks: a gather
            return self.wrap(gather.fancy_index(self.b, node, key, self.where()))
        items = list(key) if isinstance(key, tuple) else [key]
        if sum(item is Ellipsis for item in items) > 1:
            raise UnsupportedError("an index can have only one '...'")
        if any(item is Ellipsis for item in items):
            at = next(i for i, item in enumerate(items) if item is Ellipsis)
            real = sum(1 for item in items if item is not None and item is not Ellipsis)
            items[at:at + 1] = [slice(None)] * max(node.ndim - real, 0)
        index: list[Any] = []
        new_axes: list[int] = []
        for item in items:
            if item is None:
                new_axes.append(len(index) - sum(isinstance(i, int) for i in index)
                                + len(new_axes))
            elif isinstance(item, slice):
                index.append(tuple(None if p is None else _integer(p)
                                   for p in (item.start, item.stop, item.step)))
                if index[-1][2] == 0:
                    raise UnsupportedError("slice step cannot be zero")
            else:
                index.append(_integer(item))
        result = self.b.index(node, tuple(index), self.where())
        return self.wrap(self.b.expand(result, tuple(new_axes)))

    def draw(self, call: draws.Call) -> TracedTensor:
        """A random draw the traced function made (:mod:`symdiff.trace.draws`): a parameter
        the compiled function fills with a new draw of the same call at every call. A named
        array among its arguments is its numbers (folded)."""
        call = call.with_arguments(lambda v: numbers_of(v, "an argument of a random draw"))
        if any(isinstance(v, TracedArray | scalar.Symbolic | sp.Basic)
               for v in _leaves((call.args, call.kwargs))):
            raise UnsupportedError(
                f"{call.text}{self.where()} draws with arguments computed from traced values "
                "or named dimensions; a draw's arguments must be fixed numbers and arrays when "
                "traced: draw standard noise of a fixed shape and transform it "
                "(mu + sigma * rs.standard_normal(3)), give named dimensions fixed sizes in "
                f"shapes=, or {draws.PASS_NOISE}")
        try:
            sample = np.asarray(call.sample())
        except (TypeError, ValueError) as exc:
            raise UnsupportedError(f"{call.text}{self.where()} failed: {exc}") from exc
        if sample.dtype.kind != "f":
            raise UnsupportedError(f"{call.text}{self.where()} gave {sample.dtype} values, not "
                                   f"floats; {draws.PASS_NOISE}")
        return self.wrap(self.captures.draw(self.b, call, sample.shape, str(sample.dtype)))

    def softmax(self, a: object, axis: Any = -1) -> TracedTensor:
        return self.wrap(self.b.softmax(self.node(a), operator.index(axis), self.where()))


def _check(expr: sp.Expr) -> None:
    if expr.has(*_NOT_FINITE):
        raise SymdiffError(f"an elementwise expression is not finite: {expr}")
    limit = LIMITS.get("max_exponent", 1000)
    for power in expr.atoms(sp.Pow):
        if power.exp.is_number and abs(power.exp) > limit:
            raise UnsupportedError(f"exponent {power.exp} is larger than {limit} "
                                   "(limit max_exponent)")


def _leaves(value: object) -> Iterator[object]:
    """The items of nested tuples, lists and dicts (the arguments of a call)."""
    if isinstance(value, tuple | list):
        for item in value:
            yield from _leaves(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _leaves(item)
    else:
        yield value


def _integer(value: object) -> int:
    if isinstance(value, bool | TracedArray):
        raise UnsupportedError("indices must be ints, slices of ints, None or '...'")
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise UnsupportedError(
            f"indices must be ints, slices of ints, None or '...', not {type(value).__name__}"
        ) from None


def _axes(axis: Any) -> Any:
    if axis is None:
        return None
    if isinstance(axis, tuple | list):
        return tuple(_integer(a) for a in axis)
    return _integer(axis)


def _dim(value: object) -> Dim:
    if isinstance(value, sp.Expr):
        if value.is_Integer:
            return int(value)
        if all(s.is_integer for s in value.free_symbols):
            return value
    return _integer(value)


def _refuse_extra(name: str, extra: dict[str, Any]) -> None:
    given = [k for k, v in extra.items() if v is not None and v is not np._NoValue]
    if given:
        raise UnsupportedError(f"np.{name}(): the argument(s) {', '.join(given)} are not "
                               "supported when tracing")


# -- symdiff.math --------------------------------------------------------------------------------
def apply(name: str, *args: Any, **kwargs: Any) -> Any:
    """A :mod:`symdiff.math` function of traced arrays (``sd.math.sigmoid(x)``, ...)."""
    tracer = next(tracer_of(a) for a in args if isinstance(a, TracedArray))
    if name == "where":
        return tracer.where_(*args)
    if name in ("logsumexp", "softmax"):
        if name == "softmax":
            return tracer.softmax(*args, **kwargs)
        return tracer.reduce("logsumexp", *args, **kwargs)
    build = scalar.FUNCTIONS[name]
    return tracer.elementwise(name, build, *args)


def holds_traced(value: np.ndarray) -> bool:
    """Whether ``value`` is an object array NumPy built with traced elements."""
    return value.dtype == object and any(isinstance(v, TracedArray) for v in value.flat)

__all__ = ["Tracer", "apply", "holds_traced"]
