"""Weighted Gram matrices: ``gram(m, w) = m.T @ (w[:, None] * m)``, the sum over the rows of
``m`` (n, c) of ``w_n * outer(m_n, m_n)``; ``gram(m, w, u)`` the same over the rows
``kron(m_n, u_n)`` (``u`` (n, k): rows of c*k, ``(m[:, :, None] * u[:, None, :]).reshape(n, -1)``).

Structured Hessians (:mod:`symdiff.tensor.hessians`) are sums of such terms: the Hessian of
``sum(f(X @ w))`` is ``gram(X, f'')``, and the rank-one part of a softmax Hessian is
``gram(X, -1, P)``. It is printed as the runtime helper ``_gram``, which uses the symmetric BLAS
product (``q.T @ q``, half the work of a general product) when the weights have one sign, with
``sqrt(|w|)`` folded into the rows as they are built.

* VJP (rows ``m``): ``M_bar = (w[:, None] * m) @ (G + G.T)``, ``w_bar = sum((m @ G) * m, 1)``;
  with ``u``, ``M_bar`` of the kron rows is taken back to ``m`` and ``u`` by einsums;
* JVP: ``dm.T @ (w * m) + (w * m).T @ dm + m.T @ (dw * m)``, each an einsum over the rows
  (with ``u``, ``dm`` is the tangent of the kron rows).
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from ..ir import Node, arg_symbol
from ..oprow import OpRow, call_latex
from ..ops import Builder
from .contractions import contract

_X, _Y = arg_symbol(0), arg_symbol(1)


def gram(b: Builder, m: Node, w: Node, u: Node | None = None) -> Node:
    """``m.T @ (w[:, None] * m)`` for a matrix ``m`` (n, c) and weights ``w`` (n,), over the
    rows ``kron(m_n, u_n)`` when ``u`` (n, k) is given; a weight of 1 over rows of ``m`` alone
    is ``m.T @ m`` and a constant ``c`` scales it."""
    if u is None and w.op == "fill":
        product = b.matmul(b.transpose(m), m)
        return product if w.attrs[0] == 1 else b.map(w.attrs[0] * _X, [product])
    width = m.shape[1] if u is None else m.shape[1] * u.shape[1]
    args = (m, w) if u is None else (m, w, u)
    return b.node("gram", args, (), (width, width))


def _rows(b: Builder, node: Node) -> Node:
    """The rows the Gram matrix is of: ``m``, or ``kron(m_n, u_n)`` as an (n, c*k) node."""
    m, _, *u = node.args
    if not u:
        return m
    outer = b.map(_X * _Y, [b.expand(m, (2,)), b.expand(u[0], (1,))])
    return b.reshape(outer, (m.shape[0], node.shape[0]))


def _vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    m, w, *u = node.args
    rows = _rows(b, node)
    weighted = b.map(_X * _Y, [rows, b.expand(w, (1,))])
    rows_bar = b.matmul(weighted, b.map(_X + _Y, [g, b.transpose(g)]))
    w_bar = b.reduce_axes("sum", b.map(_X * _Y, [b.matmul(rows, g), rows]), (1,), False)
    if not u:
        return rows_bar, w_bar
    split = b.reshape(rows_bar, (m.shape[0], m.shape[1], u[0].shape[1]))
    return (contract(b, ["nai", "ni"], [split, u[0]], "na"), w_bar,
            contract(b, ["nai", "na"], [split, m], "ni"))


def _jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
         ) -> Node | None:
    m, w, *u = node.args
    tm, tw, *tu = tangents
    rows = _rows(b, node)
    t_rows = tm
    if u:
        parts = []
        if tm is not None:
            parts.append(contract(b, ["naz", "ni"], [tm, u[0]], "naiz"))
        if tu[0] is not None:
            parts.append(contract(b, ["na", "niz"], [m, tu[0]], "naiz"))
        t_rows = None if not parts else b.reshape(
            parts[0] if len(parts) == 1 else b.map(_X + _Y, parts),
            (m.shape[0], node.shape[0], parts[0].shape[-1]))
    terms = []
    if t_rows is not None:
        weighted = b.map(_X * _Y, [rows, b.expand(w, (1,))])
        terms.append(contract(b, ["naz", "nb"], [t_rows, weighted], "abz"))
        terms.append(contract(b, ["na", "nbz"], [weighted, t_rows], "abz"))
    if tw is not None:
        terms.append(contract(b, ["na", "nz", "nb"], [rows, tw, rows], "abz"))
    if not terms:
        return None
    return terms[0] if len(terms) == 1 else b.map(
        sp.Add(*(arg_symbol(i) for i in range(len(terms)))), terms)


def _emit(node: Node, codes: list[str], target: str) -> list[tuple[str, str]]:
    return [(target, f"_gram({', '.join(codes)})")]


OPS = (
    OpRow(
        op="gram",
        rule="weighted Gram matrix",
        identity="M_bar = (w * M) @ (G + G.T), w_bar = sum((M @ G) * M, axis=1)",
        vjp=_vjp,
        jvp=_jvp,
        emit=_emit,
        text=lambda n, a, r: f"gram({', '.join(r)})",
        latex=lambda n, a, r: call_latex("gram", *r),
        helpers=frozenset({"_gram"}),
    ),
)

SPELLINGS = ()

__all__ = ["OPS", "SPELLINGS", "gram"]
