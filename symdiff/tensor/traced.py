"""The values a traced function sees with ``shapes=``: :class:`TracedTensor` (an array) and
:class:`TensorCondition` (a comparison), and the NumPy functions they understand
(:data:`ARRAY_FUNCTIONS`). Every operation is handed to the :class:`~symdiff.tensor.trace.Tracer`
of the trace, which builds the graph; see :mod:`symdiff.tensor.trace`.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

import numpy as np
import sympy as sp

from .. import registry
from .. import trace as scalar
from ..errors import ShapeError, SymdiffError, UnsupportedError
from ..parsing.hints import did_you_mean
from ..trace.logic import JoinsConditions
from . import families, numpy_handlers
from .numpy_handlers import clip, reduction, reshape, where
from .oprow import Spelling
from .shapes import Dim, format_shape
from .values import Elem

#: :class:`symdiff.tensor.trace.Tracer`, to which a traced array hands every operation; not
#: imported here (that would be an import cycle: the tracer makes these arrays).
Tracer = Any

_ARRAYS = "when tracing arrays"
_NO_TRUTH = ("a traced array has no truth value: use np.where(cond, a, b) instead of if, & | ~ "
             "instead of and / or / not between comparisons ((x > 0) & (x < 1)), and "
             "np.maximum / np.minimum instead of the built-in max / min; np.max, np.min or "
             "np.sort of np.array([...]) of traced values compare its elements one by one in "
             "Python: build it with np.stack([...]) instead; a while loop on a traced value "
             "cannot be traced: loop a fixed number of times (for _ in range(n))")
_NO_NUMBER = ("a traced array has no numeric value while tracing: float(), int() and the "
              "standard library's math cannot take it; use NumPy or symdiff.math functions. "
              "Assigning it into a NumPy array (y = np.zeros(4); y[1] = x[0]) needs its number "
              "too: build the array from traced pieces instead, with np.concatenate, np.stack, "
              "np.pad or np.where")


# -- traced values -------------------------------------------------------------------------------
class TracedArray:
    """What traced arrays and traced comparisons share: NumPy dispatch and the refusals."""

    __slots__ = ("_tracer", "_value")
    __array_priority__ = 1000.0
    #: :mod:`symdiff.math` recognises a traced value by this, and a traced array by the next.
    _symdiff_symbolic = True
    _symdiff_tensor = True

    def __init__(self, tracer: Tracer, value: Elem):
        self._tracer = tracer
        self._value = value

    @property
    def expr(self) -> sp.Basic:
        """The elementwise SymPy expression (in placeholders of tensor nodes)."""
        return self._value.expr

    @property
    def shape(self) -> tuple[Dim, ...]:
        """The static shape: ints, and SymPy symbols (expressions) for named dimensions."""
        return self._value.shape

    @property
    def ndim(self) -> int:
        """Number of axes."""
        return len(self._value.shape)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(shape={format_shape(self.shape)})"

    def __bool__(self) -> NoReturn:
        raise UnsupportedError(_NO_TRUTH)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        name = getattr(ufunc, "__name__", repr(ufunc))
        if method != "__call__":  # np.add.reduce, np.multiply.outer: numpy_handlers
            return numpy_handlers.ufunc_method(ufunc, method, inputs, kwargs,
                                             supported=scalar.UFUNCS.__contains__)
        if kwargs:
            raise UnsupportedError(f"keyword arguments of numpy function '{name}' "
                                   f"({', '.join(kwargs)}) are not supported when tracing")
        if ufunc is np.matmul:
            return self._tracer.matmul(*inputs)
        build = scalar.ufunc_builder(ufunc)
        if build is None:
            raise UnsupportedError(scalar.unsupported_numpy(ufunc, _supported(), _ARRAYS))
        return self._tracer.elementwise(name, build, *inputs)

    def __array_function__(self, func: Callable[..., Any], types: object,
                           args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        handler = ARRAY_FUNCTIONS.get(func)
        if handler is None:
            raise UnsupportedError(scalar.unsupported_numpy(func, _supported(), _ARRAYS))
        args, kwargs = self._tracer.unnamed(args, kwargs)  # named int arrays: the arrays
        return handler(self._tracer, *args, **kwargs)

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        """An object array of this array's traced elements, so that ``np.array([x, 2 * x])``,
        ``np.r_[...]`` and ``np.asarray`` work as in JAX and autograd: NumPy computes on the
        elements (each a traced scalar), and the tracer stacks such an array back into one node
        where it meets a traced array or is returned. Only for small arrays (one node per
        element): beyond :data:`ELEMENT_LIMIT` elements in a trace, or asked for a numeric
        dtype, it is an error pointing to ``np.stack``."""
        count = 1
        for dim in self.shape:
            count = count * dim if isinstance(dim, int) else ELEMENT_LIMIT + 1
        self._tracer.handed_out += count  # over the whole trace: one node per element
        if self._tracer.handed_out > ELEMENT_LIMIT or (
            dtype is not None and np.dtype(dtype) != object
        ):
            raise UnsupportedError(no_array(self._tracer.handed_out))
        out = np.empty(self.shape, dtype=object)
        if not self.shape:
            out[()] = self
            return out
        for index in np.ndindex(*self.shape):
            out[index] = self[index]
        return out

    __float__ = __int__ = __index__ = __complex__ = scalar.refuse(_NO_NUMBER)
    __round__ = __trunc__ = __floor__ = __ceil__ = scalar.refuse(_NO_NUMBER)
    __setitem__ = scalar.refuse("assigning into a traced array (x[i] = v) is not supported; "
                                "build a new array instead, e.g. np.where(mask, v, x) with a "
                                "constant boolean mask")
    __iter__ = scalar.refuse("iterating over a traced array is not supported; index it "
                              "(x[0], x[:, 1]) or use array operations")
    __eq__ = scalar.refuse("comparison '==' of traced arrays is not supported; "
                            + scalar.CONDITION_ONLY)
    __ne__ = scalar.refuse("comparison '!=' of traced arrays is not supported; "
                            + scalar.CONDITION_ONLY)
    __hash__ = None  # type: ignore[assignment]


#: The most elements a traced array hands NumPy one by one (``np.array([...])`` of traced values).
#: Not raised: NumPy then computes on the object array element by element (``np.array([x, 2 * x])
#: ** 2`` is one traced scalar per element, and ``np.sum`` of it a chain of scalar additions),
#: so the graph grows with the element count: about 10 s to derive 200 elements, minutes for 1000.
ELEMENT_LIMIT = 1024
_NO_ARRAY = (
    "a traced array cannot be converted to a NumPy array here: np.array([...]), np.asarray, "
    "np.r_ and np.c_ of traced arrays hand NumPy their elements one by one (at most "
    f"{ELEMENT_LIMIT} in a trace, each its own node, slow well before that); build the array "
    "with array operations instead, which stay one node whatever the size: "
    "np.stack([x, 2 * x]) (a new first axis; axis=1 for columns), np.concatenate([x, y]) or "
    "np.hstack([x, y]) (along an existing axis, as np.r_[x, y]), np.vstack, np.column_stack "
    "(as np.c_[x, y]); a function outside NumPy's dispatch, such as scipy's, cannot take a "
    "traced array either: use NumPy or symdiff.math functions. Assigning a traced value into "
    "a NumPy array (y = np.zeros(4); y[1:3] = x[:2]) converts it too: build the array from "
    "traced pieces instead, with np.concatenate([np.zeros(1), x[:2], np.zeros(1)]), "
    "np.stack, np.pad(x[:2], (1, 1)) or np.where(mask, x, 0) with a constant mask"
)


def no_array(count: object) -> str:
    """The error for a traced array NumPy asked to convert (``count`` elements so far)."""
    return f"{_NO_ARRAY} ({count} elements handed out in this trace)"


def tracer_of(array: TracedArray) -> Tracer:
    """The tracer ``array`` belongs to (the one that made it)."""
    return array._tracer


def value_of(array: TracedArray) -> Elem:
    """The elementwise value and shape ``array`` stands for."""
    return array._value


def settle(array: TracedArray, value: Elem) -> None:
    """Let ``array`` stand for ``value`` from now on: the placeholder of the node that computes
    its expression (a loop's state, computed once and read by every later use)."""
    array._value = value


class TensorCondition(JoinsConditions, TracedArray):
    """A traced comparison of arrays, or comparisons joined by ``&``, ``|``, ``~`` or
    ``np.logical_and`` / ``np.logical_or`` / ``np.logical_not`` (with constant boolean arrays
    too): only the condition of ``np.where`` / ``sd.math.where``."""

    __slots__ = ()

    def _join(self, join: Callable[..., sp.Basic], *conditions: object) -> TensorCondition:
        return self._tracer.join_conditions(join, *conditions)


def _elementwise(name: str, build: Callable[..., sp.Basic], reflected: bool = False
                 ) -> Callable[..., Any]:
    def method(self: TracedTensor, other: object) -> Any:
        args = (other, self) if reflected else (self, other)
        return self._tracer.elementwise(name, build, *args)

    return method


class TracedTensor(TracedArray):
    """An array seen while tracing with ``shapes=`` (see the module docstring)."""

    __slots__ = ()

    __add__ = _elementwise("add", operator.add)
    __radd__ = _elementwise("add", operator.add, True)
    __sub__ = _elementwise("subtract", operator.sub)
    __rsub__ = _elementwise("subtract", operator.sub, True)
    __mul__ = _elementwise("multiply", operator.mul)
    __rmul__ = _elementwise("multiply", operator.mul, True)
    __truediv__ = _elementwise("divide", scalar.divide)
    __rtruediv__ = _elementwise("divide", scalar.divide, True)
    __rpow__ = _elementwise("power", scalar.power, True)
    __mod__ = _elementwise("remainder", scalar.UFUNCS[np.remainder])
    __rmod__ = _elementwise("remainder", scalar.UFUNCS[np.remainder], True)
    __lt__ = _elementwise("less", sp.Lt)
    __le__ = _elementwise("less_equal", sp.Le)
    __gt__ = _elementwise("greater", sp.Gt)
    __ge__ = _elementwise("greater_equal", sp.Ge)

    def __pow__(self, other: object, modulo: object = None) -> TracedTensor:
        if modulo is not None:
            raise UnsupportedError("pow() with a modulus is not supported when tracing")
        return self._tracer.elementwise("power", scalar.power, self, other)

    def __neg__(self) -> TracedTensor:
        return TracedTensor(self._tracer, Elem(-self._value.expr, self._value.shape))

    def __pos__(self) -> TracedTensor:
        return self

    def __abs__(self) -> TracedTensor:
        return self._tracer.elementwise("absolute", sp.Abs, self)

    def __matmul__(self, other: object) -> TracedTensor:
        return self._tracer.matmul(self, other)

    def __rmatmul__(self, other: object) -> TracedTensor:
        return self._tracer.matmul(other, self)

    def __getitem__(self, key: Any) -> TracedTensor:
        return self._tracer.index(self, key)

    def __len__(self) -> int:
        if not self.shape or not isinstance(self.shape[0], int):
            raise UnsupportedError("len() of a traced array needs a first dimension of fixed "
                                   "size; use x.shape[0]")
        return self.shape[0]

    def __iter__(self) -> Iterator[TracedTensor]:
        """``x[0], x[1], ...`` along a first axis of fixed size (``a, b, c = theta``,
        ``sum(x ** 2)``, ``for row in X``): one node per row, counted against
        :data:`ELEMENT_LIMIT` as ``np.array([...])`` counts its elements."""
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        n = self.shape[0]
        if not isinstance(n, int):
            raise UnsupportedError(f"iterating over a traced array needs a first dimension of "
                                   f"fixed size; here it is {n}, so len() is unknown while "
                                   "tracing: use array operations along axis 0 instead (np.sum("
                                   "x, axis=0), X @ w, broadcasting)")
        self._tracer.handed_out += n
        if self._tracer.handed_out > ELEMENT_LIMIT:
            raise UnsupportedError(
                f"iterating over a traced array of {n} rows makes one node per row (at most "
                f"{ELEMENT_LIMIT} in a trace, {self._tracer.handed_out} handed out so far); "
                "use array operations along axis 0 instead (np.sum(x, axis=0), X @ w, "
                "broadcasting), which stay one node whatever the size")
        return (self[i] for i in range(n))

    @property
    def size(self) -> Dim:
        """The number of elements (a SymPy expression with named dimensions)."""
        total: Dim = 1
        for d in self.shape:
            total = total * d
        return total

    @property
    def T(self) -> TracedTensor:
        """The axes reversed."""
        return self._tracer.transpose(self)

    def sum(self, axis: Any = None, keepdims: bool = False, **extra: Any) -> TracedTensor:
        """``np.sum`` along ``axis``."""
        return self._tracer.reduce("sum", self, axis, keepdims, **extra)

    def mean(self, axis: Any = None, keepdims: bool = False, **extra: Any) -> TracedTensor:
        """``np.mean`` along ``axis``."""
        return self._tracer.reduce("mean", self, axis, keepdims, **extra)

    def max(self, axis: Any = None, keepdims: bool = False, **extra: Any) -> TracedTensor:
        """``np.max`` along ``axis`` (the gradient is split evenly among ties)."""
        return self._tracer.reduce("max", self, axis, keepdims, **extra)

    def min(self, axis: Any = None, keepdims: bool = False, **extra: Any) -> TracedTensor:
        """``np.min`` along ``axis`` (the gradient is split evenly among ties)."""
        return self._tracer.reduce("min", self, axis, keepdims, **extra)

    def prod(self, axis: Any = None, keepdims: bool = False, **extra: Any) -> TracedTensor:
        """``np.prod`` along ``axis``."""
        return self._tracer.reduce("prod", self, axis, keepdims, **extra)

    def transpose(self, *axes: Any) -> TracedTensor:
        """Axes permuted (``x.transpose(1, 0)`` or ``x.transpose((1, 0))``)."""
        perm = axes[0] if len(axes) == 1 and isinstance(axes[0], tuple | list) else axes
        return self._tracer.transpose(self, perm or None)

    def reshape(self, *shape: Any) -> TracedTensor:
        """Reshaped (``x.reshape(n, 3)`` or ``x.reshape((n, 3))``; one ``-1`` allowed)."""
        target = shape[0] if len(shape) == 1 and isinstance(shape[0], tuple | list) else shape
        return self._tracer.reshape(self, target)

    def repeat(self, repeats: Any, axis: Any = None) -> TracedTensor:
        """``np.repeat`` along ``axis``."""
        return self._tracer.repeat(self, repeats, axis)

    def __getattr__(self, name: str) -> Any:
        """The ndarray methods of the family operations (``x.cumsum(axis=0)``) and of
        :data:`FUNCTION_METHODS` (``x.clip(0, 1)``)."""
        spelling = families.METHOD_SPELLINGS.get(name)
        function = FUNCTION_METHODS.get(name)
        if name in IN_PLACE_METHODS:
            raise UnsupportedError(
                f"x.{name}() changes the array in place, which tracing cannot follow (a traced "
                f"array is a value, never changed): write {IN_PLACE_METHODS[name]} instead")
        if name.startswith("_") or (spelling is None and function is None):
            known = frozenset(families.METHOD_SPELLINGS) | frozenset(FUNCTION_METHODS) | {
                n for n in dir(type(self)) if not n.startswith("_")}
            hint = "" if name.startswith("_") else did_you_mean(name, known)
            raise AttributeError(f"'{type(self).__name__}' object has no attribute {name!r}"
                                 f"{hint}")
        if spelling is None:
            return lambda *args, **kwargs: function(self, *args, **kwargs)
        return lambda *args, **kwargs: family_call(self._tracer, spelling, (self, *args), kwargs)

    @property
    def real(self) -> TracedTensor:
        """The array itself (traced arrays are real)."""
        return self

    @property
    def imag(self) -> TracedTensor:
        """Zeros of the array's shape (``np.imag``)."""
        return np.imag(self)  # type: ignore[no-any-return]


#: ndarray methods that change the array in place, with what to write instead.
IN_PLACE_METHODS: dict[str, str] = {
    "sort": "x = np.sort(x, axis)",
    "partition": "x = np.partition(x, kth, axis)",
    "fill": "x = np.full_like(x, value)",
    "resize": "x = x.reshape(shape)",
    "put": "x = np.where(mask, values, x)",
}

#: ndarray methods that are a NumPy function of the array (``x.clip(0, 1)`` is
#: ``np.clip(x, 0, 1)``, ``x.round(2)`` is ``np.round(x, 2)``), traced by that function's handler.
FUNCTION_METHODS: dict[str, Callable[..., Any]] = {
    "clip": np.clip, "round": np.round, "conj": np.conjugate, "conjugate": np.conjugate,
    "copy": lambda a, order="K": a,  # a traced array is never written into: a copy is itself
}


# -- NumPy functions -----------------------------------------------------------------------------
def _np_row(name: str, build: Callable[..., Any]) -> Callable[..., TracedTensor]:
    return lambda tracer, *args: tracer.elementwise(name, build, *args)


def _static(value: Any) -> Any:
    """A non-array argument of a family call: it must be a plain constant."""
    if isinstance(value, TracedArray):
        raise UnsupportedError("this argument must be a constant (an int, tuple or string), "
                               "not a traced array")
    return value


def family_call(tracer: Any, spelling: Spelling, args: tuple[Any, ...],
                kwargs: dict[str, Any]) -> TracedTensor:
    """A family operation (:mod:`symdiff.tensor.families`) called on traced arrays."""
    try:
        node = families.call(spelling, tracer.b, args, kwargs, array=tracer.node,
                             static=lambda value: _static(tracer.constant(value)),
                             where=tracer.where())
    except (ShapeError, UnsupportedError):
        raise
    except SymdiffError as exc:
        raise UnsupportedError(f"{exc}{tracer.where()}") from None
    if isinstance(node, tuple):  # several results (np.linalg.slogdet, np.split)
        items = [tracer.wrap(item) for item in node]
        if type(node) is tuple:
            return items  # type: ignore[return-value]  # np.split returns a list
        return type(node)(*items)  # type: ignore[return-value]  # a named tuple
    return tracer.wrap(node)


def _np_family(spelling: Spelling) -> Callable[..., TracedTensor]:
    return lambda tracer, *args, **kwargs: family_call(tracer, spelling, args, kwargs)


ARRAY_FUNCTIONS: dict[Callable[..., Any], Callable[..., Any]] = {
    np.sum: reduction("sum"),
    np.mean: reduction("mean"),
    np.max: reduction("max"),
    np.amax: reduction("max"),
    np.min: reduction("min"),
    np.amin: reduction("min"),
    np.prod: reduction("prod"),
    np.transpose: lambda tracer, a, axes=None: tracer.transpose(a, axes),
    np.reshape: reshape,
    np.ndim: lambda tracer, a: a.ndim,  # shape queries, for code that branches on shapes
    np.shape: lambda tracer, a: a.shape,
    np.size: lambda tracer, a, axis=None: a.size if axis is None else a.shape[axis],
    np.repeat: lambda tracer, a, repeats, axis=None: tracer.repeat(a, repeats, axis),
    np.where: where,
    np.clip: clip,
    **{  # the rows' NumPy functions that are not ufuncs (np.sinc)
        getattr(np, name): _np_row(name, registry.build_fn(row))
        for name, row in registry.traced_numpy().items()
        if not isinstance(getattr(np, name), np.ufunc)
    },
    **{function: _np_family(spelling) for function, spelling in families.NUMPY_SPELLINGS.items()},
    np.ediff1d: numpy_handlers.ediff1d,
}
#: np.round / np.around with ``decimals`` (their row is rint, of one argument).
ARRAY_FUNCTIONS.update(dict.fromkeys((np.round, np.around), numpy_handlers.rounded(np.rint)))


def _supported() -> list[Any]:
    """Every NumPy function and ufunc a traced array understands (for refusals' suggestions)."""
    return [*ARRAY_FUNCTIONS, *scalar.UFUNCS, np.matmul]


__all__ = [
    "ARRAY_FUNCTIONS", "TensorCondition", "TracedArray", "TracedTensor", "tracer_of", "value_of",
]
