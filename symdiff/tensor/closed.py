"""The NumPy arrays a traced function reads by name (closed over, or globals), seen so that
what the function computes from them is recomputed when :meth:`CompiledFunction.bind` rebinds
them, or refused by ``bind`` when it cannot be.

``lambda r: np.sum(x) / np.sum(r + x)`` with ``x`` closed over: were ``x`` a plain array while
tracing, NumPy would compute ``np.sum(x)`` at once and the compiled function would hold that
number, so ``g.bind(x=new_x)`` would mix the new ``x`` with the old sum. While the function is
traced (:func:`symdiff.trace.environment.rewired`):

* an array of real numbers (``ndim >= 1``) is a :class:`ClosedArray`, a traced array standing
  for its bound constant (made when first used,
  :meth:`~symdiff.tensor.captures.Captures.node`): ``np.sum(x)``, ``x.mean()``, ``x @ x``,
  ``np.linalg.norm(x)`` are expressions in it (what is computed from such arrays alone is then
  computed once per binding: :mod:`symdiff.tensor.derived`). Its shape, ``len`` and dtype are
  numbers, as before; as a sampler's argument or where NumPy needs its numbers
  (``np.asarray(x)``, ``float(x)``, an argument a NumPy function takes as a constant) it is the
  array, noted *folded*: the compiled function holds numbers computed from it, so ``bind``
  refuses to rebind it;
* an array of ints or booleans (an index, a mask, labels, counts) is a :class:`NamedArray`: the
  array itself, which indexes, selects and meets traced values as before (a bound constant
  ``bind`` rebinds) and notes itself folded when NumPy computes with it alone
  (``np.sum(counts)``, ``labels % 2``) or a short index of it is written into the code.

A function that cannot be traced with its arrays of real numbers symbolic (an operation symdiff
does not trace, Python control flow on their values) is traced again with them as plain arrays,
every one folded (:func:`symdiff.tensor.tracing.trace_tensor`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .traced import TracedTensor
from .values import Elem


def wanted(value: Any) -> bool:
    """Whether a value the function reads by name is a :class:`ClosedArray` while traced."""
    return (type(value) is np.ndarray and value.ndim >= 1 and value.dtype.kind in "biuf"
            and value.size > 0)


class ClosedArray(TracedTensor):
    """A named NumPy array while traced: a traced array whose node, the array's bound constant,
    is made when first used."""

    __slots__ = ("_array", "_label", "_made")

    def __init__(self, tracer: Any, array: np.ndarray, label: str):
        self._tracer = tracer
        self._array = array
        self._label = label
        self._made: Elem | None = None

    @property
    def _value(self) -> Elem:  # type: ignore[override]
        """The bound constant's elementwise value (the constant made now if not yet)."""
        if self._made is None:
            node = self._tracer.captures.node(self._tracer.b, self._array, self._tracer.fn,
                                              label=self._label)
            self._made = self._tracer.elem(node)
        return self._made

    @property
    def shape(self) -> tuple[int, ...]:  # type: ignore[override]
        """The array's shape."""
        return tuple(self._array.shape)

    @property
    def ndim(self) -> int:
        """The array's number of axes."""
        return int(self._array.ndim)

    @property
    def size(self) -> int:  # type: ignore[override]
        """The array's number of elements."""
        return int(self._array.size)

    @property
    def dtype(self) -> np.dtype:
        """The array's dtype."""
        return self._array.dtype

    def __len__(self) -> int:
        return len(self._array)

    def __repr__(self) -> str:
        return f"ClosedArray({self._label}, shape={self.shape})"

    def numbers(self, why: str) -> np.ndarray:
        """The array itself, where its values are needed as numbers (``why``): noted folded."""
        self._tracer.closed.fold(self._label, why)
        return self._array

    def __array__(self, dtype: object = None, copy: object = None) -> np.ndarray:
        array = self.numbers("NumPy converted it to numbers (np.asarray, or a function outside "
                             "NumPy's dispatch)")
        return array if dtype is None else array.astype(dtype)

    def __float__(self) -> float:
        return float(self.numbers("float() read its value"))

    def __int__(self) -> int:
        return int(self.numbers("int() read its value"))

    def __index__(self) -> int:
        return self.numbers("it was used as an int").__index__()

    def __bool__(self) -> bool:
        return bool(self.numbers("Python tested its value (if, and, or, not)"))


class NamedArray(np.ndarray):
    """A named array of ints or booleans (an index, a mask, labels), while traced: the array
    itself, as before, so that it indexes and selects as NumPy does; a NumPy computation on it
    that no traced value takes part in (``np.sum(mask)``, ``labels % 2``, ``idx[:5]``, reading
    its values) notes it folded. Used with a traced value (``x[idx]``, ``mask * x``,
    ``np.where(mask, x, 0)``) it is the original array, a bound constant ``bind`` rebinds."""

    _symdiff_label: str
    _symdiff_closed: ClosedArrays
    _symdiff_original: np.ndarray | None

    def __array_finalize__(self, obj: Any) -> None:
        if isinstance(obj, NamedArray):  # a view or copy NumPy made of it: derived
            self._symdiff_label = obj._symdiff_label
            self._symdiff_closed = obj._symdiff_closed
            self._symdiff_original = None
            self._symdiff_closed.fold(self._symdiff_label, "a view or copy of it was made")

    def _numbers(self, why: str) -> np.ndarray:
        self._symdiff_closed.fold(self._symdiff_label, why)
        return self.view(np.ndarray)

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if _traced_among(inputs, kwargs):
            return NotImplemented  # the traced operand computes it
        name = getattr(ufunc, "__name__", "a ufunc")
        inputs = tuple(_numbers(v, f"np.{name} computed with it") for v in inputs)
        if "out" in kwargs:
            kwargs["out"] = tuple(_numbers(v, "written into") for v in kwargs["out"])
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        if _traced_among(args, kwargs):
            return NotImplemented
        name = getattr(func, "__name__", "a NumPy function")
        why = f"np.{name} computed with it"
        args = tuple(_numbers(v, why) for v in args)
        kwargs = {k: _numbers(v, why) for k, v in kwargs.items()}
        return func(*args, **kwargs)

    def __getitem__(self, key: Any) -> Any:
        return self._numbers("an element or part of it was taken")[key]

    def __iter__(self) -> Any:
        return iter(self._numbers("Python iterated over it"))

    def __bool__(self) -> bool:
        return bool(self._numbers("Python tested its value"))

    def __float__(self) -> float:
        return float(self._numbers("float() read its value"))

    def __int__(self) -> int:
        return int(self._numbers("int() read its value"))

    def __index__(self) -> int:
        return self._numbers("it was used as an int").__index__()

    def item(self, *args: Any) -> Any:
        """The element, as ``ndarray.item`` (noted folded)."""
        return self._numbers("item() read its value").item(*args)

    def tolist(self) -> Any:
        """The elements, as ``ndarray.tolist`` (noted folded)."""
        return self._numbers("tolist() read its values").tolist()


def _named(array: np.ndarray, label: str, closed: ClosedArrays) -> NamedArray:
    view = array.view(NamedArray)
    view._symdiff_label = label
    view._symdiff_closed = closed
    view._symdiff_original = array
    return view


def _traced_among(args: Any, kwargs: Any) -> bool:
    from .traced import TracedArray

    def traced(value: Any) -> bool:
        if isinstance(value, tuple | list):
            return any(traced(v) for v in value)
        return isinstance(value, TracedArray) or (
            isinstance(value, np.ndarray) and value.dtype == object)

    return traced(args) or traced(list(kwargs.values()))


def _numbers(value: Any, why: str) -> Any:
    if isinstance(value, NamedArray):
        return value._numbers(why)
    if isinstance(value, tuple | list):
        return type(value)(_numbers(v, why) for v in value)
    return value


def numbers_of(value: Any, why: str) -> Any:
    """``value`` itself, or the numbers of a named array, where they are needed as numbers
    (``why``): noted folded."""
    if isinstance(value, ClosedArray):
        return value.numbers(why)
    return _numbers(value, why)


def unnamed(value: Any) -> Any:
    """``value``, with a :class:`NamedArray` (or one in a list or tuple) the original array,
    as a NumPy function of traced values takes it (``np.where(mask, x, 0)``)."""
    if isinstance(value, NamedArray):
        return as_array(value)
    if isinstance(value, list | tuple) and any(isinstance(v, NamedArray) for v in value):
        return type(value)(map(unnamed, value))
    return value


def as_array(value: Any) -> Any:
    """``value`` itself, or the array a :class:`ClosedArray` or :class:`NamedArray` stands for
    (an index, a condition of ``np.where``, a constant meeting a traced value): the original
    array, a bound constant ``bind`` rebinds (a view or copy of a named array, already noted
    folded, is a plain array of its own)."""
    if isinstance(value, ClosedArray):
        return value._array
    if isinstance(value, NamedArray):
        original = value._symdiff_original
        if original is None:
            return value.view(np.ndarray)
        value._symdiff_closed.used.add(value._symdiff_label)
        return original
    return value


class ClosedArrays:
    """The arrays one trace sees as :class:`ClosedArray` (real numbers; only when
    ``symbolic``) or :class:`NamedArray` values (ints and booleans), and those folded: the
    compiled function holds numbers computed from them, by label, with why."""

    def __init__(self, folded: dict[str, str], symbolic: bool = True):
        self.tracer: Any = None  # the trace's (set by it)
        self.symbolic = symbolic
        self.made: dict[int, tuple[np.ndarray, str]] = {}  # id of the array -> (it, label)
        self.named: dict[int, tuple[np.ndarray, str]] = {}  # the same for NamedArray values
        self.used: set[str] = set()  # labels of NamedArray values used as their array
        self.folded = folded

    def replace(self, value: Any, label: str) -> Any:
        """What a traced function reads instead of the array ``value`` (for
        :func:`symdiff.trace.environment.rewired`), else None."""
        if self.tracer is None or not wanted(value):
            return None
        if value.dtype.kind in "biu":
            self.named[id(value)] = (value, label)
            return _named(value, label, self)
        if not self.symbolic:
            return None
        self.made[id(value)] = (value, label)
        return ClosedArray(self.tracer, value, label)

    def label_of(self, value: Any) -> str | None:
        """The label of ``value`` if it is an array seen as a :class:`NamedArray`."""
        found = self.named.get(id(value))
        return found[1] if found is not None and found[0] is value else None

    def settle(self, labels: set[str]) -> None:
        """After the trace: a named array used as its array (an index, a mask) that is no
        bound constant (``labels``) is written into the code (a short index): folded."""
        for label in sorted(self.used - labels):
            self.fold(label, "its values are written into the generated code (a short index "
                             "or mask)")

    def fold(self, label: str, why: str) -> None:
        """Note that the compiled function holds numbers computed from the array ``label``."""
        self.folded.setdefault(label, why)


__all__ = ["ClosedArray", "ClosedArrays", "NamedArray", "as_array", "numbers_of", "unnamed",
           "wanted"]
