"""Contractions: ``einsum`` (the one node op) and the NumPy functions that are contractions:
``trace``, ``diagonal``, ``diag``, ``outer``, ``inner``, ``dot``, ``tensordot``.

* ``einsum(spec, *operands)``: the adjoint of operand ``k`` is the einsum of the adjoint ``G``
  (output subscripts) with the other operands, to operand ``k``'s subscripts (``"ij,j->i"``:
  ``A_bar = einsum("i,j->ij", G, x)``, ``x_bar = einsum("i,ij->j", G, A)``). A letter repeated
  in an operand (a trace, a diagonal) multiplies the adjoint by an identity matrix on those two
  axes; a letter that only that operand has (summed there) broadcasts the adjoint along it.
  Being multilinear, its tangent is the sum over operands of the einsum with that operand
  replaced by its tangent (the batch axis one more letter).
* The constructor keeps the graph readable and fast: subscripts are renamed in order of first
  appearance (so equal contractions are one node); scalar operands and constants are taken out
  as factors; one operand without repeated letters is a sum and a transpose; two operands that
  are a matrix or vector product are ``@`` (BLAS), an outer product ``a[:, None] * b``; more
  than two operands are emitted with ``optimize=True`` (NumPy picks the pairwise path).
* ``trace(A)`` is ``einsum("ii->", A)`` (its adjoint ``G * eye``), ``trace(A @ B)`` is
  ``einsum("ij,ji->", A, B)``: the product is never formed. ``diagonal`` is ``einsum("ii->i")``,
  ``diag(v)`` of a vector ``v * eye``, ``outer`` ``einsum("a,b->ab")`` (so its adjoints are
  ``G @ b`` and ``a @ G``, not a broadcast product summed back); ``inner``, ``dot`` and
  ``tensordot`` are einsums (so ``@`` where they are matrix products).
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from typing import Any

import numpy as np
import sympy as sp

from ...errors import ShapeError, SymdiffError
from ..ir import Node, arg_symbol
from ..oprow import OpRow, Param, Spelling, call_latex
from ..ops import Builder
from ..shapes import Dim, format_dim, normalize_axes, same_dim

LETTERS = string.ascii_lowercase + string.ascii_uppercase
_X, _Y = arg_symbol(0), arg_symbol(1)


# -- subscripts --------------------------------------------------------------------------------
def parse_spec(spec: str, ndims: Sequence[int], where: str = "") -> tuple[list[str], str]:
    """The subscripts of each operand and of the output, NumPy's way: ``"ij,j->i"``, implicit
    mode (``"ij,j"``: the letters used once, sorted) and ``...`` for leading axes."""
    if not isinstance(spec, str):
        raise SymdiffError(f"einsum: the subscripts must be a string such as 'ij,j->i'{where}")
    spec = spec.replace(" ", "")
    explicit = "->" in spec
    inputs, output = spec.split("->", 1) if explicit else (spec, "")
    terms = inputs.split(",")
    if len(terms) != len(ndims):
        raise SymdiffError(f"einsum: {len(terms)} operand subscripts in {spec!r} for "
                           f"{len(ndims)} operands{where}")
    for part in [*terms, output]:
        if any(c not in LETTERS for c in part.replace("...", "")):
            raise SymdiffError(f"einsum: invalid subscripts {spec!r} (letters, ',', '->' and "
                               f"'...' only){where}")
    free = [c for c in LETTERS if c not in spec]
    widths = [n - len(t.replace("...", "")) for t, n in zip(terms, ndims, strict=True)
              if "..." in t]
    ellipsis = free[: max(widths, default=0)]
    expanded = []
    for term, n in zip(terms, ndims, strict=True):
        if "..." in term:
            width = n - len(term.replace("...", ""))
            term = term.replace("...", "".join(ellipsis[len(ellipsis) - width:]) if width else "")
        if len(term) != n:
            raise ShapeError(f"einsum: subscripts {term!r} for an operand with {n} "
                             f"dimensions{where}")
        expanded.append(term)
    joined = "".join(expanded)
    if explicit:
        output = output.replace("...", "".join(ellipsis))
        if len(set(output)) != len(output) or any(c not in joined for c in output):
            raise SymdiffError(f"einsum: output subscripts {output!r} must be distinct letters "
                               f"of the operands{where}")
    else:
        once = sorted((c for c in set(joined) if joined.count(c) == 1 and c not in ellipsis),
                      key=LETTERS.index)
        output = "".join(ellipsis) + "".join(once)
    return expanded, output


def _canonical(terms: Sequence[str], out: str) -> str:
    """The spec with letters renamed in order of first appearance (so equal contractions are
    one node)."""
    names: dict[str, str] = {}
    for c in "".join(terms):
        names.setdefault(c, LETTERS[len(names)])
    return ",".join("".join(names[c] for c in t) for t in terms) + "->" + "".join(
        names[c] for c in out)


def _split(spec: str) -> tuple[list[str], str]:
    inputs, out = spec.split("->")
    return inputs.split(","), out


def _sizes(name: str, terms: Sequence[str], operands: Sequence[Node], where: str
           ) -> dict[str, Dim]:
    sizes: dict[str, Dim] = {}
    for term, a in zip(terms, operands, strict=True):
        for c, d in zip(term, a.shape, strict=True):
            if c in sizes and not same_dim(sizes[c], d):
                raise ShapeError(f"{name}: subscript {c!r} is {format_dim(sizes[c])} in one "
                                 f"place and {format_dim(d)} in another{where}")
            sizes.setdefault(c, d)
    return sizes


# -- the constructor ---------------------------------------------------------------------------
def contract(b: Builder, terms: Sequence[str], operands: Sequence[Node], out: str,
             name: str = "einsum", where: str = "") -> Node:
    """``einsum(",".join(terms) + "->" + out, *operands)`` with the rewrites of the module
    docstring. Every letter of ``out`` must be a letter of ``terms``."""
    sizes = _sizes(name, terms, operands, where)
    factor: sp.Expr = sp.Integer(1)
    scalars: list[Node] = []
    kept: list[tuple[str, Node]] = []
    for term, a in zip(terms, operands, strict=True):
        if a.op == "fill":
            factor *= a.attrs[0]
        elif not term:
            scalars.append(a)
        else:
            kept.append((term, a))
    present = "".join(t for t, _ in kept)
    for c in dict.fromkeys("".join(terms)):  # summed letters only constants had
        if c not in present and c not in out:
            factor *= sp.sympify(sizes[c])
    inner = "".join(c for c in out if c in present)
    node = _product(b, kept, inner) if kept else None
    if node is None:
        result = b.fill(factor, ())
    else:
        result = node if factor == 1 else b.map(factor * _X, [node])
    for s in scalars:
        result = b.map(_X * _Y, [result, s])
    if len(inner) < len(out):  # letters only constants had: broadcast along them
        result = b.expand(result, tuple(i for i, c in enumerate(out) if c not in inner))
        result = b.broadcast(result, tuple(sizes[c] for c in out))
    return result


def _product(b: Builder, kept: list[tuple[str, Node]], out: str) -> Node:
    terms = [t for t, _ in kept]
    operands = [a for _, a in kept]
    plain = all(len(set(t)) == len(t) for t in terms)
    if len(kept) == 1 and plain:
        (term,), (a,) = terms, operands
        summed = tuple(i for i, c in enumerate(term) if c not in out)
        rest = "".join(c for c in term if c in out)
        reduced = b.reduce_axes("sum", a, summed, False)
        return b.transpose(reduced, tuple(rest.index(c) for c in out))
    if len(kept) == 2 and plain:
        found = _pair(b, terms, operands, out)
        if found is not None:
            return found
    spec = _canonical(terms, out)
    sizes = _sizes("einsum", terms, operands, "")
    return b.node("einsum", operands, (spec,), tuple(sizes[c] for c in out))


def _pair(b: Builder, terms: list[str], operands: list[Node], out: str) -> Node | None:
    """Two operands as ``@`` or an outer product when they are one (no batch letters, no
    letter summed within one operand)."""
    (sx, sy), (x, y) = terms, operands
    common = [c for c in sx if c in sy]
    if any(c in out for c in common) or any(c not in out for c in sx + sy if c not in common):
        return None
    left = "".join(c for c in sx if c not in common)
    right = "".join(c for c in sy if c not in common)
    if not common:  # outer product: x[..., None, ...] * y
        prod = b.map(_X * _Y, [b.expand(x, tuple(range(len(sx), len(sx) + len(sy)))),
                               b.expand(y, tuple(range(len(sx))))])
        order = sx + sy
        return b.transpose(prod, tuple(order.index(c) for c in out))
    if len(common) > 1 or len(left) > 1 or len(right) > 1:
        return None
    xm = b.transpose(x, tuple(sx.index(c) for c in left + common[0]))
    ym = b.transpose(y, tuple(sy.index(c) for c in common[0] + right))
    prod = b.matmul(xm, ym)
    return b.transpose(prod, tuple((left + right).index(c) for c in out))


# -- rules ---------------------------------------------------------------------------------------
def _einsum_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    terms, out = _split(node.attrs[0])
    contributions: list[Node | None] = []
    for k, (term, a) in enumerate(zip(terms, node.args, strict=True)):
        others = [out] + [t for j, t in enumerate(terms) if j != k]
        operands = [g] + [x for j, x in enumerate(node.args) if j != k]
        available = "".join(others)
        firsts = [p for p, c in enumerate(term) if term.index(c) == p and c in available]
        v = contract(b, others, operands, "".join(term[p] for p in firsts))
        v = b.expand(v, tuple(p for p in range(len(term)) if p not in firsts))
        for p, c in enumerate(term):
            q = term.index(c)
            if q != p:  # a repeated letter: the adjoint lives on the diagonal
                eye = b.eye((a.shape[p],))
                eye = b.expand(eye, tuple(i for i in range(len(term)) if i not in (q, p)))
                v = b.map(_X * _Y, [v, eye])
        contributions.append(b.broadcast(v, a.shape))
    return tuple(contributions)


def _einsum_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
                ) -> Node | None:
    terms, out = _split(node.attrs[0])
    batch = next(c for c in LETTERS if c not in node.attrs[0])
    parts = []
    for k, t in enumerate(tangents):
        if t is None:
            continue
        operands = [t if j == k else a for j, a in enumerate(node.args)]
        these = [term + batch if j == k else term for j, term in enumerate(terms)]
        parts.append(contract(b, these, operands, out + batch))
    if not parts:
        return None
    return b.map(sp.Add(*(arg_symbol(i) for i in range(len(parts)))), parts) \
        if len(parts) > 1 else parts[0]


def _einsum_emit(node: Node, code: list[str], target: str) -> list[tuple[str, str]]:
    optimize = ", optimize=True" if len(code) > 2 else ""
    return [(target, f"_np.einsum({node.attrs[0]!r}, {', '.join(code)}{optimize})")]


# -- spellings -----------------------------------------------------------------------------------
def einsum(b: Builder, subscripts: str, *operands: Node, optimize: Any = False,
           where: str = "") -> Node:
    """``np.einsum(subscripts, *operands)`` (``optimize=`` is accepted and left to the emitted
    code, which optimizes contractions of more than two operands)."""
    terms, out = parse_spec(subscripts, [a.ndim for a in operands], where)
    terms, operands = _broadcast_ones(b, terms, operands)
    return contract(b, terms, operands, out, "einsum", where)


def _broadcast_ones(b: Builder, terms: list[str], operands: Sequence[Node]
                    ) -> tuple[list[str], tuple[Node, ...]]:
    """NumPy's einsum broadcasts an axis of length 1 against the same letter's length in
    another operand (``einsum("ij,ij->i", x, w)`` with ``w`` of shape ``(n, 1)``): such an axis is
    dropped from its operand (and its letter from the operand's subscripts)."""
    longer = {c for t, a in zip(terms, operands, strict=True) for c, d in zip(t, a.shape,
                                                                           strict=True)
              if not (isinstance(d, int) and d == 1)}
    new_terms, new_operands = [], []
    for term, a in zip(terms, operands, strict=True):
        ones = [p for p, (c, d) in enumerate(zip(term, a.shape, strict=True))
                if isinstance(d, int) and d == 1 and c in longer and term.count(c) == 1]
        if ones:
            a = b.reshape(a, tuple(d for p, d in enumerate(a.shape) if p not in ones))
            term = "".join(c for p, c in enumerate(term) if p not in ones)
        new_terms.append(term)
        new_operands.append(a)
    return new_terms, tuple(new_operands)


def _diagonal_terms(b: Builder, name: str, a: Node, offset: int, axis1: int, axis2: int,
                    where: str) -> tuple[str, int, int, Node]:
    """The einsum term of ``a``'s diagonal over ``axis1``, ``axis2`` (the two letters equal),
    the two axes, and the operand: ``a`` itself, or for an offset or a non-square block its
    square block ``a[..., :L, k:k + L]`` that holds the diagonal (``L`` its length)."""
    if a.ndim < 2:
        raise ShapeError(f"{name}: needs at least 2 dimensions, got {a.ndim}{where}")
    if not isinstance(offset, int) or isinstance(offset, bool):
        raise SymdiffError(f"{name}: offset must be an integer{where}")
    (i,) = normalize_axes(name, axis1, a.ndim, where)
    (j,) = normalize_axes(name, axis2, a.ndim, where)
    if i == j:
        raise ShapeError(f"{name}: axis1 and axis2 cannot be the same{where}")
    m, n = a.shape[i], a.shape[j]
    if offset != 0 or not same_dim(m, n):
        if not (isinstance(m, int) and isinstance(n, int)):
            raise ShapeError(f"{name}: an offset or a non-square block needs integer lengths, "
                             f"not {format_dim(m)} and {format_dim(n)}{where}")
        rows, cols = (0, offset) if offset >= 0 else (-offset, 0)
        length = max(0, min(m - rows, n - cols))
        index: list = [(None, None, None)] * a.ndim
        index[i] = (rows, rows + length, None)
        index[j] = (cols, cols + length, None)
        a = b.index(a, tuple(index), where)
    term = [LETTERS[p] for p in range(a.ndim)]
    term[j] = term[i]
    return "".join(term), i, j, a


def trace(b: Builder, a: Node, offset: int = 0, axis1: int = 0, axis2: int = 1, *,
          where: str = "") -> Node:
    """``np.trace(a, offset)``: the sum of the diagonal over ``axis1``, ``axis2``."""
    whole = a
    term, i, j, a = _diagonal_terms(b, "trace", a, offset, axis1, axis2, where)
    if a is whole and a.op == "matmul" and (i, j) == (0, 1) and all(
        x.ndim == 2 for x in a.args
    ):
        return contract(b, ["ab", "ba"], a.args, "")  # trace(A @ B): no product formed
    out = "".join(c for p, c in enumerate(term) if p not in (i, j))
    if 0 in (a.shape[i], a.shape[j]):  # an offset past the corner: an empty diagonal
        return b.fill(0, tuple(d for p, d in enumerate(a.shape) if p not in (i, j)))
    return contract(b, [term], [a], out, "trace", where)


def diagonal(b: Builder, a: Node, offset: int = 0, axis1: int = 0, axis2: int = 1, *,
             where: str = "") -> Node:
    """``np.diagonal(a, offset)``: the diagonal of ``axis1``, ``axis2`` as the last axis."""
    term, i, j, a = _diagonal_terms(b, "diagonal", a, offset, axis1, axis2, where)
    if 0 in (a.shape[i], a.shape[j]):
        raise ShapeError(f"diagonal: offset {offset} leaves no diagonal{where}")
    out = "".join(c for p, c in enumerate(term) if p not in (i, j)) + term[i]
    return contract(b, [term], [a], out, "diagonal", where)


def diag(b: Builder, v: Node, k: int = 0, *, where: str = "") -> Node:
    """``np.diag(v)``: a vector on the diagonal of a square matrix, or a matrix's diagonal."""
    if v.ndim == 2:
        return diagonal(b, v, k, where=where)
    if v.ndim != 1:
        raise ShapeError(f"diag: needs a vector or a matrix, got {v.ndim} dimensions{where}")
    square = b.map(_X * _Y, [b.expand(v, (0,)), b.eye(v.shape)])
    if k == 0:
        return square
    if not isinstance(k, int) or isinstance(k, bool) or not isinstance(v.shape[0], int):
        raise ShapeError(f"diag: k must be an integer and the vector's length too{where}")
    n, size = v.shape[0], v.shape[0] + abs(k)
    rows, cols = (0, k) if k > 0 else (-k, 0)
    return b.scatter(square, ((rows, rows + n, None), (cols, cols + n, None)), (size, size))


def outer(b: Builder, a: Node, c: Node, *, where: str = "") -> Node:
    """``np.outer(a, b)``: ``a.ravel()[:, None] * b.ravel()``."""
    a, c = b.reshape(a, (-1,), where), b.reshape(c, (-1,), where)
    if a.op == "fill" or c.op == "fill":
        return b.map(_X * _Y, [b.expand(a, (1,)), b.expand(c, (0,))])
    # an einsum node (not a[:, None] * b): its adjoints are then G @ b and a @ G (BLAS)
    return b.node("einsum", (a, c), ("a,b->ab",), (a.shape[0], c.shape[0]))


def inner(b: Builder, a: Node, c: Node, *, where: str = "") -> Node:
    """``np.inner(a, b)``: the sum over the last axes of both."""
    if a.ndim == 0 or c.ndim == 0:
        return b.map(_X * _Y, [a, c])
    ta = LETTERS[: a.ndim - 1] + "z"
    tc = LETTERS[a.ndim - 1: a.ndim + c.ndim - 2] + "z"
    return contract(b, [ta, tc], [a, c], ta[:-1] + tc[:-1], "inner", where)


def dot(b: Builder, a: Node, c: Node, *, where: str = "") -> Node:
    """``np.dot(a, b)``: a product with a scalar, ``@`` for vectors and matrices, and for
    N-D arrays the sum over the last axis of ``a`` and the second-to-last of ``b``."""
    if a.ndim == 0 or c.ndim == 0:
        return b.map(_X * _Y, [a, c])
    if a.ndim == 1 or c.ndim == 1 or (a.ndim <= 2 and c.ndim <= 2):
        return b.matmul(a, c, where)
    ta = LETTERS[: a.ndim - 1] + "z"
    free = LETTERS[a.ndim - 1: a.ndim + c.ndim - 2]
    tc = free[:-1] + "z" + free[-1]
    return contract(b, [ta, tc], [a, c], ta[:-1] + free, "dot", where)


def tensordot(b: Builder, a: Node, c: Node, axes: int | Sequence[Sequence[int] | int] = 2, *,
              where: str = "") -> Node:
    """``np.tensordot(a, b, axes)``: ``axes=n`` sums the last ``n`` axes of ``a`` with the first
    ``n`` of ``b``; ``axes=(ia, ib)`` the listed pairs."""
    if isinstance(axes, int):
        if not 0 <= axes <= min(a.ndim, c.ndim):
            raise ShapeError(f"tensordot: axes={axes} for operands of {a.ndim} and {c.ndim} "
                             f"dimensions{where}")
        pairs = list(zip(range(a.ndim - axes, a.ndim), range(axes), strict=True))
    else:
        try:
            ia, ib = axes
        except (TypeError, ValueError):
            raise SymdiffError(f"tensordot: axes must be an int or a pair of axis lists{where}"
                               ) from None
        ia = [ia] if isinstance(ia, int) else list(ia)
        ib = [ib] if isinstance(ib, int) else list(ib)
        if len(ia) != len(ib):
            raise ShapeError(f"tensordot: {len(ia)} axes of a and {len(ib)} of b{where}")
        pairs = [(normalize_axes("tensordot", i, a.ndim, where)[0],
                  normalize_axes("tensordot", j, c.ndim, where)[0])
                 for i, j in zip(ia, ib, strict=True)]
    ta = LETTERS[: a.ndim]
    tc = list(LETTERS[a.ndim: a.ndim + c.ndim])
    for i, j in pairs:
        tc[j] = ta[i]
    summed = {i for i, _ in pairs}
    out = "".join(ta[i] for i in range(a.ndim) if i not in summed) + "".join(
        tc[j] for j in range(c.ndim) if j not in {q for _, q in pairs})
    return contract(b, [ta, "".join(tc)], [a, c], out, "tensordot", where)


OPS = (
    OpRow(
        op="einsum",
        rule="einsum (permuted subscripts)",
        identity="A_bar = einsum(out,others->A's subscripts)(G, other operands); a repeated "
                 "letter of A puts it on the diagonal (times eye)",
        vjp=_einsum_vjp,
        jvp=_einsum_jvp,
        emit=_einsum_emit,
        text=lambda n, a, r: f"einsum({n.attrs[0]!r}, {', '.join(r)})",
        latex=lambda n, a, r: call_latex("einsum", rf"\text{{{n.attrs[0]}}}", *r),
        numpy_names=frozenset({"einsum"}),
    ),
)

_TWO = {"a": Param.ARRAY, "c": Param.ARRAY}
SPELLINGS = (
    Spelling("einsum", einsum, "einsum(subscripts, *operands, optimize=False)",
             {"operands": Param.ARRAYS}, numpy=(np.einsum,)),
    Spelling("trace", trace, "trace(a, offset=0, axis1=0, axis2=1)", {"a": Param.ARRAY},
             numpy=(np.trace,), methods=("trace",)),
    Spelling("diagonal", diagonal, "diagonal(a, offset=0, axis1=0, axis2=1)",
             {"a": Param.ARRAY}, numpy=(np.diagonal,), methods=("diagonal",)),
    Spelling("diag", diag, "diag(v, k=0)", {"v": Param.ARRAY}, numpy=(np.diag,)),
    Spelling("outer", outer, "outer(a, b)", _TWO, numpy=(np.outer,)),
    Spelling("inner", inner, "inner(a, b)", _TWO, numpy=(np.inner,)),
    Spelling("dot", dot, "dot(a, b)", _TWO, numpy=(np.dot,), methods=("dot",)),
    Spelling("tensordot", tensordot, "tensordot(a, b, axes=2)", _TWO, numpy=(np.tensordot,)),
)

__all__ = [
    "LETTERS", "OPS", "SPELLINGS", "call_latex", "contract", "diag", "diagonal", "dot", "einsum",
    "inner", "outer", "parse_spec", "tensordot", "trace",
]
