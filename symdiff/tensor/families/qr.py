"""The QR decomposition ``np.linalg.qr(a)`` (reduced; ``a`` of shape ``(.., m, n)`` with
``m >= n`` and full column rank), with the rules JAX and PyTorch use.

``Q`` and ``R`` are items of one ``qr_factors`` node (one ``_np.linalg.qr`` call). With
``C = Q^T dA R^-1`` (``n x n``), ``L = tril(C, -1)`` and the skew matrix ``W = L - L^T``:

* tangents: ``dQ = Q (W - C) + dA R^-1``, ``dR = (C - W) R``;
* adjoints (the transpose of that linear map): with ``M = Q^T G_Q - G_R R^T`` and
  ``N = tril(M - M^T, -1) - M``, ``A_bar = (G_Q + Q N) R^-T`` (each item adds its part: the
  ``Q`` item with ``G_R = 0``, the ``R`` item with ``G_Q = 0``).

``R^-1`` is an ``inv`` node of ``R`` (upper triangular, well conditioned when ``a`` is), so the
Hessians (forward over reverse) go through ``inv``, ``tril`` and the items' own tangents.
NumPy's signs (LAPACK's Householder QR: ``R``'s diagonal of either sign) are kept: the rules
hold for any QR the routine returns, which is locally smooth where ``R`` has a nonzero
diagonal. A wide ``a`` (``m < n``), ``mode='complete'`` of a non-square ``a`` and
``mode='raw'`` are refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ...errors import ShapeError, UnsupportedError
from ..ir import Node, arg_symbol
from ..oprow import OpRow, Param, Spelling, call_latex
from ..ops import Builder
from ..shapes import format_shape, same_dim
from .contractions import contract
from .linalg import inv
from .rearrange import tril

_X, _Y, _Z = arg_symbol(0), arg_symbol(1), arg_symbol(2)
_LEAD = "ABCDEFGHIJKLMNOPQRSTUVWXY"  # batch letters (Z is the tangents' direction axis)


class QR(NamedTuple):
    """``np.linalg.qr``'s result when traced (NumPy's ``QRResult``)."""

    Q: Any
    R: Any


def _c(b: Builder, spec: str, *operands: Node) -> Node:
    """``einsum`` over matrices, the first operand's batch letters prefixed to every term."""
    terms, out = spec.split("->")
    lead = _LEAD[: operands[0].ndim - len(terms.split(",")[0])]
    return contract(b, [lead + t for t in terms.split(",")], operands, lead + out)


def _swap(b: Builder, a: Node, last: int = 2) -> Node:
    """``a`` with the two axes before its ``last - 2`` trailing ones exchanged."""
    axes = list(range(a.ndim))
    i, j = a.ndim - last, a.ndim - last + 1
    axes[i], axes[j] = j, i
    return b.transpose(a, tuple(axes))


def _factors(b: Builder, a: Node) -> tuple[Node, Node]:
    lead, (m, n) = a.shape[:-2], a.shape[-2:]
    factors = b.node("qr_factors", (a,), (), ())
    return (b.node("qr_q", (a, factors), (), (*lead, m, n)),
            b.node("qr_r", (a, factors), (), (*lead, n, n)))


def qr(b: Builder, a: Node, mode: str = "reduced", *, where: str = "") -> Any:
    """``np.linalg.qr(a, mode)``: ``(Q, R)`` (``mode='reduced'``) or ``R`` (``mode='r'``)."""
    if a.ndim < 2:
        raise ShapeError(f"qr: needs a matrix (or a stack of them), got shape "
                         f"{format_shape(a.shape)}{where}")
    m, n = a.shape[-2:]
    square = same_dim(m, n)
    if not square and not (isinstance(m, int) and isinstance(n, int) and m > n):
        raise UnsupportedError(f"qr: only a tall or square matrix (m >= n, full column rank) "
                               f"is supported, got shape {format_shape(a.shape)}{where}")
    if mode not in ("reduced", "r") and not (mode == "complete" and square):
        raise UnsupportedError(f"qr: mode={mode!r} is not supported (only 'reduced', 'r', and "
                               f"'complete' of a square matrix){where}")
    q, r = _factors(b, a)
    return r if mode == "r" else QR(q, r)


# -- rules -------------------------------------------------------------------------------------
def _parts(b: Builder, node: Node) -> tuple[Node, Node, Node]:
    """``Q``, ``R`` and ``R^-1`` of an item's matrix."""
    q, r = _factors(b, node.args[0])
    return q, r, inv(b, r)


def _adjoint(b: Builder, q: Node, r_inv: Node, m: Node, g_q: Node | None) -> Node:
    """``(G_Q + Q N) R^-T`` with ``N = tril(M - M^T, -1) - M``."""
    skew = tril(b, b.map(_X - _Y, [m, _swap(b, m)]), -1)
    n = b.map(_X - _Y, [skew, m])
    inner = b.matmul(q, n)
    if g_q is not None:
        inner = b.map(_X + _Y, [g_q, inner])
    return b.matmul(inner, _swap(b, r_inv))


def _q_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    q, _, r_inv = _parts(b, node)
    return (_adjoint(b, q, r_inv, b.matmul(_swap(b, q), g), g), None)


def _r_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    q, r, r_inv = _parts(b, node)
    m = b.map(-_X, [b.matmul(g, _swap(b, r))])
    return (_adjoint(b, q, r_inv, m, None), None)


def _tangent_parts(b: Builder, node: Node, t: Node) -> tuple[Node, Node, Node, Node, Node]:
    """``Q``, ``R``, ``R^-1``, ``C = Q^T dA R^-1`` and ``W - C`` for tangents ``t``."""
    q, r, r_inv = _parts(b, node)
    c = _c(b, "ji,jkZ,kl->ilZ", q, t, r_inv)
    n = r.shape[-1]
    below = b.expand(tril(b, b.fill(1, (n, n)), -1), (2,))  # strictly lower, per direction
    low = b.map(_X * _Y, [c, below])
    w_minus_c = b.map(_X - _Y - _Z, [low, _swap(b, low, 3), c])
    return q, r, r_inv, c, w_minus_c


def _q_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
           ) -> Node | None:
    t = tangents[0]
    if t is None:
        return None
    q, _, r_inv, _, w_minus_c = _tangent_parts(b, node, t)
    return b.map(_X + _Y, [_c(b, "ij,jkZ->ikZ", q, w_minus_c), _c(b, "ijZ,jk->ikZ", t, r_inv)])


def _r_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
           ) -> Node | None:
    t = tangents[0]
    if t is None:
        return None
    _, r, _, _, w_minus_c = _tangent_parts(b, node, t)
    return b.map(-_X, [_c(b, "ijZ,jk->ikZ", w_minus_c, r)])


def _no_tangent(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
                ) -> Node | None:
    return None


def _item(index: int) -> Any:
    return lambda n, c, t: [(t, f"{c[1]}[{index}]")]


def _row(op: str, rule: str, identity: str, vjp: Any, jvp: Any, emit: Any, text: str,
         names: frozenset[str] = frozenset()) -> OpRow:
    return OpRow(op=op, rule=rule, identity=identity, vjp=vjp, jvp=jvp, emit=emit,
                 text=lambda n, a, r: f"{text}({r[0]})",
                 latex=lambda n, a, r: call_latex(text, r[0]), numpy_names=names)


OPS = (
    _row("qr_factors", "QR decomposition", "(Q, R) = qr(A)", lambda b, n, g, s: (None,),
         _no_tangent, lambda n, c, t: [(t, f"_np.linalg.qr({c[0]})")], "qr",
         frozenset({"linalg.qr"})),
    _row("qr_q", "QR orthonormal factor",
         "dQ = Q (W - C) + dA R^-1, C = Q^T dA R^-1, W = tril(C, -1) - tril(C, -1)^T: "
         "A_bar = (G + Q N) R^-T, N = tril(M - M^T, -1) - M, M = Q^T G",
         _q_vjp, _q_jvp, _item(0), "qr_Q"),
    _row("qr_r", "QR triangular factor",
         "dR = (C - W) R: A_bar = Q N R^-T, N = tril(M - M^T, -1) - M, M = -G R^T",
         _r_vjp, _r_jvp, _item(1), "qr_R"),
)

SPELLINGS = (
    Spelling("", qr, "qr(a, mode='reduced')", {"a": Param.ARRAY}, numpy=(np.linalg.qr,)),
)

__all__ = ["OPS", "QR", "SPELLINGS", "qr"]
