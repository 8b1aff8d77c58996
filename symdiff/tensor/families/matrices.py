"""Products and matrix functions built from existing ops (their rules, Hessians and code come
with them): ``vdot``, ``kron``, ``cross``, ``linalg.multi_dot``, ``linalg.matrix_power``,
``linalg.pinv``, ``linalg.lstsq`` and ``linalg.cond``.

* ``vdot(a, b)``: ``sum(ravel(a) * ravel(b))`` (real arrays: no conjugate).
* ``kron(a, b)``: ``a[:, None, :, None] * b[None, :, None, :]`` reshaped (any number of axes,
  the shorter operand given leading size-1 axes, as NumPy does); its adjoint sums the blocks.
* ``cross(a, b, axis=-1)``: the components ``a1 b2 - a2 b1`` ... stacked along the axis
  (3-vectors; 2-vectors give NumPy's scalar ``a0 b1 - a1 b0``).
* ``multi_dot(arrays)``: the products left to right (NumPy picks the cheapest order; the value
  is the same up to rounding).
* ``matrix_power(a, n)`` (``n`` a static int): repeated squaring by ``@``; ``n = 0`` the
  identity; ``n < 0`` the power of ``inv(a)``.
* ``pinv(a)`` for a **full-rank** ``a`` (the case with a derivative): ``solve(A^T A, A^T)``
  (tall or square) or ``A^T solve(A A^T, I)`` transposed the same way (wide), whose rules are
  ``solve``'s. A rank-deficient ``a`` gives a singular system, not NumPy's cut-off at
  ``rcond``.
* ``lstsq(a, b)`` for a **full-rank tall** ``a`` (``m >= n``): ``x = solve(A^T A, A^T b)`` (the
  normal equations: fine for well-conditioned ``a``; the error grows with ``cond(a)**2``),
  with NumPy's four results ``(x, residuals, rank, s)``: the residuals ``sum((b - a x)**2)``
  per column when ``m > n`` (else empty), the rank ``n`` (a constant) and the singular values.
* ``cond(x, p=None)``: ``s_max / s_min`` from the singular values for ``p`` None, 2 (and
  ``s_min / s_max`` for -2); for ``'fro'``, ``'nuc'``, 1, -1, ``inf``, ``-inf``
  ``norm(x, p) * norm(inv(x), p)``, as NumPy computes it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import ShapeError, UnsupportedError
from ..ir import Node, arg_symbol
from ..oprow import Param, Spelling
from ..ops import Builder
from ..shapes import format_shape, normalize_axes, same_dim
from .building import stack
from .contractions import dot
from .decompositions import svdvals
from .linalg import inv, norm, solve

_X0, _X1, _X2, _X3 = (arg_symbol(i) for i in range(4))


def vdot(b: Builder, a: Node, c: Node, *, where: str = "") -> Node:
    """``np.vdot(a, b)``: the dot product of the flattened arrays."""
    return dot(b, b.reshape(a, (-1,), where), b.reshape(c, (-1,), where), where=where)


def kron(b: Builder, a: Node, c: Node, *, where: str = "") -> Node:
    """``np.kron(a, b)``: the Kronecker product (blocks ``a[i, j] * b``)."""
    ndim = max(a.ndim, c.ndim)
    a = b.reshape(a, (1,) * (ndim - a.ndim) + a.shape, where) if a.ndim < ndim else a
    c = b.reshape(c, (1,) * (ndim - c.ndim) + c.shape, where) if c.ndim < ndim else c
    # a's axes at even positions, c's at odd ones: (a0, c0, a1, c1, ...)
    left = b.expand(a, tuple(2 * k + 1 for k in range(ndim)))
    right = b.expand(c, tuple(2 * k for k in range(ndim)))
    product = b.map(_X0 * _X1, [left, right], "kron", where)
    return b.reshape(product, tuple(p * q for p, q in zip(a.shape, c.shape, strict=True)),
                     where)


def cross(b: Builder, a: Node, c: Node, axisa: int = -1, axisb: int = -1, axisc: int = -1,
          axis: int | None = None, *, where: str = "") -> Node:
    """``np.cross(a, b, axis=-1)``: the cross product of 3-vectors (or the scalar of
    2-vectors) along ``axis``."""
    if axis is not None:
        axisa = axisb = axisc = axis
    if a.ndim == 0 or c.ndim == 0:
        raise ShapeError(f"cross: needs vectors, got shapes {format_shape(a.shape)} and "
                         f"{format_shape(c.shape)}{where}")
    (ka,) = normalize_axes("cross", axisa, a.ndim, where)
    (kb,) = normalize_axes("cross", axisb, c.ndim, where)
    a = b.transpose(a, (*(i for i in range(a.ndim) if i != ka), ka), where)
    c = b.transpose(c, (*(i for i in range(c.ndim) if i != kb), kb), where)
    na, nc = a.shape[-1], c.shape[-1]
    if (na, nc) not in ((3, 3), (2, 2)):
        raise UnsupportedError(f"cross: only 3-vectors with 3-vectors or 2-vectors with "
                               f"2-vectors are supported, got lengths {na} and {nc}{where}")

    def part(x: Node, k: int) -> Node:
        return b.index(x, (*((None, None, None),) * (x.ndim - 1), k), where)

    def minor(i: int, j: int) -> Node:
        return b.map(_X0 * _X1 - _X2 * _X3, [part(a, i), part(c, j), part(a, j), part(c, i)],
                     "cross", where)

    if na == 2:
        return minor(0, 1)
    out = stack(b, (minor(1, 2), minor(2, 0), minor(0, 1)), axis=-1, where=where)
    (kc,) = normalize_axes("cross", axisc, out.ndim, where)
    return b.transpose(out, (*range(kc), out.ndim - 1, *range(kc, out.ndim - 1)), where)


def multi_dot(b: Builder, arrays: tuple[Node, ...], *, out: Any = None,
              where: str = "") -> Node:
    """``np.linalg.multi_dot(arrays)``: ``arrays[0] @ arrays[1] @ ...``."""
    if out is not None:
        raise UnsupportedError(f"multi_dot: out= is not supported when differentiating{where}")
    if len(arrays) < 2:
        raise ShapeError(f"multi_dot: needs at least two arrays{where}")
    if any(x.ndim > 2 for x in arrays) or any(x.ndim < 2 for x in arrays[1:-1]):
        raise ShapeError("multi_dot: the arrays must be 2-D (the first and the last may be "
                         f"1-D), got shapes {', '.join(format_shape(x.shape) for x in arrays)}"
                         f"{where}")
    result = arrays[0]
    for x in arrays[1:]:
        result = b.matmul(result, x, where)
    return result


def _square(name: str, a: Node, where: str) -> None:
    if a.ndim < 2 or not same_dim(a.shape[-1], a.shape[-2]):
        raise ShapeError(f"{name}: needs a square matrix (or a stack of them), got shape "
                         f"{format_shape(a.shape)}{where}")


def matrix_power(b: Builder, a: Node, n: int, *, where: str = "") -> Node:
    """``np.linalg.matrix_power(a, n)``: ``a @ a @ ...`` (``n`` times) by repeated squaring;
    the identity for ``n = 0``, powers of ``inv(a)`` for ``n < 0``."""
    if not isinstance(n, int | np.integer) or isinstance(n, bool):
        raise UnsupportedError(f"matrix_power: the exponent n must be an int, not {n!r}{where}")
    _square("matrix_power", a, where)
    n = int(n)
    if n == 0:
        return b.broadcast(b.eye(a.shape[-1:]), a.shape)
    if n < 0:
        a, n = inv(b, a, where=where), -n
    result: Node | None = None
    power = a
    while True:
        if n & 1:
            result = power if result is None else b.matmul(result, power, where)
        n >>= 1
        if not n:
            assert result is not None
            return result
        power = b.matmul(power, power, where)


def _swap(b: Builder, a: Node) -> Node:
    return b.transpose(a, (*range(a.ndim - 2), a.ndim - 1, a.ndim - 2))


def _gram(b: Builder, a: Node, tall: bool) -> Node:
    """``A^T A`` (tall) or ``A A^T`` (wide)."""
    return b.matmul(_swap(b, a), a) if tall else b.matmul(a, _swap(b, a))


def _tall(name: str, a: Node, where: str) -> bool:
    if a.ndim < 2:
        raise ShapeError(f"{name}: needs a matrix (or a stack of them), got shape "
                         f"{format_shape(a.shape)}{where}")
    m, n = a.shape[-2:]
    if same_dim(m, n):
        return True
    if not (isinstance(m, int) and isinstance(n, int)):
        raise ShapeError(f"{name}: a non-square matrix needs integer sizes, got "
                         f"{format_shape(a.shape)}{where}")
    return m > n


def pinv(b: Builder, a: Node, rcond: Any = None, hermitian: bool = False, *, rtol: Any = None,
         where: str = "") -> Node:
    """``np.linalg.pinv(a)`` of a full-rank matrix: ``(A^T A)^-1 A^T`` (tall) or
    ``A^T (A A^T)^-1`` (wide), by ``solve``."""
    if rcond is not None or rtol is not None:
        raise UnsupportedError(f"pinv: rcond= and rtol= are not supported (the matrix is taken "
                               f"to have full rank){where}")
    if hermitian:
        raise UnsupportedError(f"pinv: hermitian=True is not supported{where}")
    tall = _tall("pinv", a, where)
    if tall:
        return solve(b, _gram(b, a, True), _swap(b, a), where=where)
    return _swap(b, solve(b, _gram(b, a, False), a, where=where))


def lstsq(b: Builder, a: Node, c: Node, rcond: Any = None, *, where: str = ""
          ) -> tuple[Node, Node, Node, Node]:
    """``np.linalg.lstsq(a, b)`` of a full-rank tall ``a``: ``(x, residuals, rank, s)``."""
    if rcond is not None:
        raise UnsupportedError(f"lstsq: rcond= is not supported (a is taken to have full "
                               f"rank){where}")
    if a.ndim != 2 or c.ndim not in (1, 2) or not same_dim(a.shape[0], c.shape[0]):
        raise ShapeError(f"lstsq: needs a 2-D a and a 1-D or 2-D b with as many rows, got "
                         f"{format_shape(a.shape)} and {format_shape(c.shape)}{where}")
    if not _tall("lstsq", a, where):
        raise UnsupportedError(f"lstsq: only a tall or square a (m >= n, full rank) is "
                               f"supported, got shape {format_shape(a.shape)}{where}")
    at = _swap(b, a)
    x = solve(b, b.matmul(at, a), b.matmul(at, c), where=where)
    m, n = a.shape
    if isinstance(m, int) and isinstance(n, int) and m == n:
        residuals = b.fill(0, (0,))
    else:
        error = b.map((_X0 - _X1) ** 2, [b.matmul(a, x), c], "lstsq", where)
        residuals = b.reduce("sum", error, 0, c.ndim == 1, where)
    return x, residuals, b.fill(n, ()), svdvals(b, a, where=where)


def cond(b: Builder, x: Node, p: Any = None, *, where: str = "") -> Node:
    """``np.linalg.cond(x, p)``: the condition number (2-norm: from the singular values)."""
    if p is None or p in (2, -2):
        s = svdvals(b, x, where=where)
        last = s.ndim - 1
        first = b.index(s, (*((None, None, None),) * last, 0), where)
        final = b.index(s, (*((None, None, None),) * last, -1), where)
        pair = [first, final] if p != -2 else [final, first]
        return b.map(_X0 / _X1, pair, "cond", where)
    if p not in ("fro", "nuc", 1, -1, np.inf, -np.inf):
        raise UnsupportedError(f"cond: p={p!r} is not supported (None, 2, -2, 'fro', 'nuc', 1, "
                               f"-1, inf, -inf){where}")
    _square("cond", x, where)
    axes = (x.ndim - 2, x.ndim - 1)
    return b.map(_X0 * _X1, [norm(b, x, p, axes, where=where),
                             norm(b, inv(b, x, where=where), p, axes, where=where)],
                 "cond", where)


OPS = ()  # no node op of its own

_TWO = {"a": Param.ARRAY, "c": Param.ARRAY}
SPELLINGS = (
    Spelling("vdot", vdot, "vdot(a, b)", _TWO, numpy=(np.vdot,)),
    Spelling("kron", kron, "kron(a, b)", _TWO, numpy=(np.kron,),
             identity="block (i, j) of kron(A, B) is A[i, j] * B: A_bar[i, j] = sum(G block "
                      "(i, j) * B), B_bar = the sum over blocks of A[i, j] * G block (i, j)"),
    Spelling("cross", cross, "cross(a, b, axis=-1)", _TWO, numpy=(np.cross,),
             identity="cross(A, B) is bilinear: A_bar = cross(B, G), B_bar = cross(G, A) "
                      "(for 2-vectors, the scalar A0 B1 - A1 B0: A_bar = G (B1, -B0), "
                      "B_bar = G (-A1, A0))"),
    Spelling("multi_dot", multi_dot, "multi_dot(arrays)", {"arrays": Param.ARRAYS},
             numpy=(np.linalg.multi_dot,)),
    Spelling("matrix_power", matrix_power, "matrix_power(a, n)", {"a": Param.ARRAY},
             numpy=(np.linalg.matrix_power,)),
    Spelling("pinv", pinv, "pinv(a)", {"a": Param.ARRAY}, numpy=(np.linalg.pinv,)),
    Spelling("", lstsq, "lstsq(a, b, rcond=None)", _TWO, numpy=(np.linalg.lstsq,)),
    Spelling("cond", cond, "cond(x, p=None)", {"x": Param.ARRAY}, numpy=(np.linalg.cond,)),
)

__all__ = [
    "SPELLINGS", "cond", "cross", "kron", "lstsq", "matrix_power", "multi_dot", "pinv", "vdot",
]
