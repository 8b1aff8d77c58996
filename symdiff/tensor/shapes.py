"""Static shapes of tensor expressions: dimensions, broadcasting and the shape rule of every op.

A dimension is an ``int`` or a SymPy expression in *named dimensions* (positive integer symbols
named as the user wrote them in ``shapes=``): ``n``, ``d*n`` after a reshape, ``n - 1`` after a
slice. A shape is a tuple of dimensions. Every rule here checks its inputs and raises
:class:`~symdiff.errors.ShapeError` naming the operation and both shapes, e.g.
``matmul: shapes (n, d) and (k,) do not align``.

Named dimensions are opaque: ``n`` and ``3`` never broadcast together (``n`` may be 3 at call
time, but the function is built once for every size), only a literal ``1`` broadcasts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import reduce
from typing import Any

import sympy as sp

from ..codegen import naming
from ..errors import ShapeError, SymdiffError
from ..parsing import check_identifier

Dim = int | sp.Expr
Shape = tuple[Dim, ...]
#: An index item: an ``int`` (an integer index) or ``(start, stop, step)`` (a slice, parts or None).
IndexItem = int | tuple[int | None, int | None, int | None]

#: Largest number of axes of one declared shape (NumPy's own limit is 64).
MAX_NDIM = 32
#: Largest integer dimension accepted in ``shapes=``.
MAX_SIZE = 2**62


def dim_symbol(name: str) -> sp.Symbol:
    """The SymPy symbol of a named dimension."""
    return sp.Symbol(name, positive=True, integer=True)


def as_dim(value: Any) -> Dim:
    """``value`` as a dimension: SymPy integers become ``int``."""
    if isinstance(value, sp.Basic):
        value = sp.expand(value)
        return int(value) if value.is_Integer else value
    return int(value)


def format_dim(dim: Dim) -> str:
    """``3``, ``n``, ``d*n``, ``n - 1``."""
    return str(dim) if isinstance(dim, int) else sp.sstr(dim)


def format_shape(shape: Sequence[Dim]) -> str:
    """``()``, ``(n,)``, ``(n, d)``: how shapes appear in messages and docstrings."""
    inner = ", ".join(format_dim(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


def same_dim(a: Dim, b: Dim) -> bool:
    """Whether two dimensions are equal for every value of the named dimensions."""
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    return sp.expand(sp.sympify(a) - sp.sympify(b)) == 0


def same_shape(a: Shape, b: Shape) -> bool:
    """Whether two shapes are equal dimension by dimension."""
    return len(a) == len(b) and all(same_dim(x, y) for x, y in zip(a, b, strict=True))


def size(shape: Iterable[Dim]) -> Dim:
    """The number of elements: the product of the dimensions."""
    return as_dim(reduce(lambda x, y: x * y, shape, sp.Integer(1)))


def dims_of(shape: Iterable[Dim]) -> set[sp.Symbol]:
    """The named dimensions a shape refers to."""
    return {s for d in shape if not isinstance(d, int) for s in d.free_symbols}


# -- the user's shapes= mapping -----------------------------------------------------------------
def parse_shapes(shapes: Any) -> dict[str, Shape]:
    """Validate ``shapes=``: a mapping from variable names to tuples of dimension names or ints.

    ``()`` declares a scalar. Names must be variable names (``check_identifier``); dimensions
    are non-negative ints or identifiers.
    """
    if not isinstance(shapes, Mapping):
        raise SymdiffError(
            f"shapes must be a mapping from names to shapes, not {type(shapes).__name__}"
        )
    parsed: dict[str, Shape] = {}
    for name in sorted(shapes, key=str):
        if not (isinstance(name, str) and naming.CONSTANT.match(name)):  # _c0: a recipe's
            check_identifier(name, "variable name in shapes")  # bound constant (explain)
        parsed[name] = _parse_shape(name, shapes[name])
    return parsed


def _parse_shape(name: str, shape: Any) -> Shape:
    if not isinstance(shape, tuple | list):
        raise ShapeError(
            f"shape of {name!r} must be a tuple of dimension names or ints (() for a scalar), "
            f"not {type(shape).__name__}"
        )
    if len(shape) > MAX_NDIM:
        raise ShapeError(f"shape of {name!r} has more than {MAX_NDIM} dimensions")
    dims: list[Dim] = []
    for dim in shape:
        if isinstance(dim, str):
            dims.append(dim_symbol(check_identifier(dim, f"dimension name of {name!r}")))
        elif isinstance(dim, int) and not isinstance(dim, bool) and 0 <= dim <= MAX_SIZE:
            dims.append(int(dim))
        else:
            raise ShapeError(
                f"dimension {dim!r} of {name!r} must be a name or a non-negative int "
                f"(at most 2**62)"
            )
    return tuple(dims)


# -- broadcasting ---------------------------------------------------------------------------------
def broadcast(op: str, *shapes: Shape, where: str = "") -> Shape:
    """NumPy broadcasting of ``shapes``; a mismatch is a ShapeError naming ``op``."""
    result: list[Dim] = []
    ndim = max((len(s) for s in shapes), default=0)
    for axis in range(-ndim, 0):
        dim: Dim = 1
        for shape in shapes:
            if len(shape) < -axis:
                continue
            d = shape[axis]
            if isinstance(d, int) and d == 1:
                continue
            if isinstance(dim, int) and dim == 1:
                dim = d
            elif not same_dim(dim, d):
                raise ShapeError(f"{op}: shapes {_pair(shapes)} do not broadcast{where}")
        result.append(dim)
    return tuple(result)


def _pair(shapes: Sequence[Shape]) -> str:
    texts = [format_shape(s) for s in shapes]
    return ", ".join(texts[:-1]) + " and " + texts[-1] if len(texts) > 1 else texts[0]


def unbroadcast_axes(source: Shape, target: Shape) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """How to sum a ``source``-shaped array back to ``target`` (which broadcasts to it):
    the leading axes to drop, and the axes (of ``source``) where ``target`` has a 1."""
    lead = len(source) - len(target)
    ones = tuple(
        lead + i
        for i, d in enumerate(target)
        if isinstance(d, int) and d == 1 and not _is_one(source[lead + i])
    )
    return tuple(range(lead)), ones


def _is_one(dim: Dim) -> bool:
    return isinstance(dim, int) and dim == 1


# -- op rules -------------------------------------------------------------------------------------
def normalize_axes(op: str, axis: Any, ndim: int, where: str = "") -> tuple[int, ...]:
    """``axis`` (None, an int or a tuple of ints, negatives from the end) as sorted positive
    axes of an ``ndim``-dimensional operand."""
    if axis is None:
        return tuple(range(ndim))
    items = axis if isinstance(axis, tuple) else (axis,)
    axes = []
    for a in items:
        if not -ndim <= a < ndim:
            raise ShapeError(f"{op}: axis {a} is out of range for {ndim} dimensions{where}")
        axes.append(a % ndim)
    if len(set(axes)) != len(axes):
        raise ShapeError(f"{op}: repeated axis in {axis}{where}")
    return tuple(sorted(axes))


def reduce_shape(shape: Shape, axes: tuple[int, ...], keepdims: bool) -> Shape:
    """The shape after reducing ``axes``."""
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def expand_shape(shape: Shape, axes: tuple[int, ...]) -> Shape:
    """The shape after inserting size-1 axes at ``axes`` (positions in the result)."""
    out: list[Dim] = list(shape)
    for axis in sorted(axes):
        out.insert(axis, 1)
    return tuple(out)


def matmul_shape(a: Shape, b: Shape, where: str = "") -> Shape:
    """The shape of ``a @ b`` under NumPy's rules (vectors are promoted, batches broadcast)."""
    if not a or not b:
        raise ShapeError(
            f"matmul: shapes {format_shape(a)} and {format_shape(b)} do not align "
            f"(an operand is a scalar; use *){where}"
        )
    a2 = (1, *a) if len(a) == 1 else a
    b2 = (*b, 1) if len(b) == 1 else b
    if not same_dim(a2[-1], b2[-2]):
        raise ShapeError(
            f"matmul: shapes {format_shape(a)} and {format_shape(b)} do not align "
            f"({format_dim(a2[-1])} != {format_dim(b2[-2])}){where}"
        )
    batch = broadcast("matmul", a2[:-2], b2[:-2], where=where)
    out = [*batch, *([a2[-2]] if len(a) > 1 else []), *([b2[-1]] if len(b) > 1 else [])]
    return tuple(out)


def transpose_perm(op: str, perm: Any, ndim: int, where: str = "") -> tuple[int, ...]:
    """Validate a permutation of ``range(ndim)`` (negatives allowed); None reverses the axes."""
    if perm is None:
        return tuple(reversed(range(ndim)))
    if not isinstance(perm, tuple) or len(perm) != ndim:
        raise ShapeError(f"{op}: axes {perm} are not a permutation of {ndim} axes{where}")
    normalized = tuple(p % ndim if -ndim <= p < ndim else -1 for p in perm)
    if sorted(normalized) != list(range(ndim)):
        raise ShapeError(f"{op}: axes {perm} are not a permutation of {ndim} axes{where}")
    return normalized


def reshape_target(shape: Shape, target: Sequence[Dim], where: str = "") -> Shape:
    """The validated result shape of reshaping ``shape`` to ``target`` (one entry may be -1)."""
    unknown = [i for i, d in enumerate(target) if isinstance(d, int) and d == -1]
    if len(unknown) > 1:
        raise ShapeError(f"reshape: only one dimension can be -1 in {tuple(target)}{where}")
    total = sp.sympify(size(shape))
    if unknown:
        known = sp.sympify(size(d for d in target if not (isinstance(d, int) and d == -1)))
        missing = sp.cancel(total / known)
        if not (missing.is_polynomial() and sp.denom(missing) == 1 and missing != 0):
            raise ShapeError(
                f"reshape: cannot infer -1 for {format_shape(shape)} -> "
                f"{format_shape(tuple(target))}{where}"
            )
        target = [missing if i == unknown[0] else d for i, d in enumerate(target)]
    result = tuple(as_dim(d) for d in target)
    if not same_dim(size(result), total):
        raise ShapeError(
            f"reshape: cannot reshape {format_shape(shape)} to {format_shape(result)} "
            f"(sizes {format_dim(size(shape))} and {format_dim(size(result))}){where}"
        )
    return result


def index_shape(
    shape: Shape, index: tuple[IndexItem, ...], where: str = ""
) -> tuple[Shape, dict[sp.Symbol, int]]:
    """The shape of ``a[index]`` and the least size each named dimension needs for it."""
    if len(index) > len(shape):
        raise ShapeError(
            f"index: {len(index)} indices for shape {format_shape(shape)}{where}"
        )
    out: list[Dim] = []
    needs: dict[sp.Symbol, int] = {}
    for item, dim in zip(index, shape, strict=False):
        least, kept = _index_one(item, dim, where)
        if least and not isinstance(dim, int):
            if not dim.is_Symbol:
                raise ShapeError(
                    f"index: cannot check bounds on the derived dimension {format_dim(dim)}{where}"
                )
            needs[dim] = max(needs.get(dim, 0), least)
        if kept is not None:
            out.append(kept)
    out.extend(shape[len(index):])
    return tuple(out), needs


def _index_one(item: IndexItem, dim: Dim, where: str) -> tuple[int, Dim | None]:
    """(least size of ``dim`` needed, resulting dim or None for an integer index)."""
    if isinstance(item, int):
        if isinstance(dim, int):
            if not -dim <= item < dim:
                raise ShapeError(f"index: {item} is out of range for a dimension of {dim}{where}")
            return 0, None
        return (item + 1 if item >= 0 else -item), None
    start, stop, step = item
    step = 1 if step is None else step
    if isinstance(dim, int):
        return 0, len(range(dim)[slice(start, stop, step)])
    if step < 0:
        raise ShapeError(f"index: negative steps need an integer dimension, not {dim}{where}")
    least = max((abs(b) if b < 0 else b) for b in (start or 0, stop or 0))
    lo = sp.Integer(0) if start is None else (start if start >= 0 else dim + start)
    hi = dim if stop is None else (stop if stop >= 0 else dim + stop)
    length = sp.expand(sp.sympify(hi) - lo)
    if length.is_number:
        return least, max(0, -(-int(length) // step))
    if step != 1:
        raise ShapeError(
            f"index: a step of {step} over the named dimension {dim} needs integer bounds{where}"
        )
    return least, as_dim(length)


def repeat_shape(shape: Shape, repeats: Dim, axis: int) -> Shape:
    """The shape of ``np.repeat(a, repeats, axis=axis)``."""
    return tuple(as_dim(d * repeats) if i == axis else d for i, d in enumerate(shape))
