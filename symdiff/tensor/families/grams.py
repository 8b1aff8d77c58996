"""Weighted Gram matrices: ``gram(m, w) = m.T @ (w[:, None] * m)``, the sum over the rows of
``m`` (n, c) of ``w_n * outer(m_n, m_n)``.

Structured Hessians (:mod:`symdiff.tensor.hessians`) are sums of such terms: the Hessian of
``sum(f(X @ w))`` is ``gram(X, f'')``, and the rank-one part of a softmax Hessian is one over
the rows of ``X`` times the probabilities. It is printed as the runtime helper ``_gram``, which
uses the symmetric BLAS product (``q.T @ q``, half the work of a general product) when the
weights have one sign.

* VJP: ``M_bar = (w[:, None] * m) @ (G + G.T)``, ``w_bar = sum((m @ G) * m, axis=1)``;
* JVP: ``dm.T @ (w * m) + (w * m).T @ dm + m.T @ (dw * m)``, each an einsum over the rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from ..ir import Node, arg_symbol
from ..oprow import OpRow, call_latex
from ..ops import Builder
from .contractions import contract

_X, _Y = arg_symbol(0), arg_symbol(1)


def gram(b: Builder, m: Node, w: Node) -> Node:
    """``m.T @ (w[:, None] * m)`` for a matrix ``m`` (n, c) and weights ``w`` (n,); a
    constant weight ``c`` gives ``c * (m.T @ m)``."""
    if w.op == "fill":
        product = b.matmul(b.transpose(m), m)
        return product if w.attrs[0] == 1 else b.map(w.attrs[0] * _X, [product])
    return b.node("gram", (m, w), (), (m.shape[1], m.shape[1]))


def _weighted(b: Builder, m: Node, w: Node) -> Node:
    return b.map(_X * _Y, [m, b.expand(w, (1,))])


def _vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    m, w = node.args
    both = b.map(_X + _Y, [g, b.transpose(g)])
    return b.matmul(_weighted(b, m, w), both), b.reduce_axes(
        "sum", b.map(_X * _Y, [b.matmul(m, g), m]), (1,), False)


def _jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
         ) -> Node | None:
    m, w = node.args
    tm, tw = tangents
    terms = []
    if tm is not None:
        weighted = _weighted(b, m, w)
        terms.append(contract(b, ["naz", "nb"], [tm, weighted], "abz"))
        terms.append(contract(b, ["na", "nbz"], [weighted, tm], "abz"))
    if tw is not None:
        terms.append(contract(b, ["na", "nz", "nb"], [m, tw, m], "abz"))
    if not terms:
        return None
    return terms[0] if len(terms) == 1 else b.map(
        sp.Add(*(arg_symbol(i) for i in range(len(terms)))), terms)


OPS = (
    OpRow(
        op="gram",
        rule="weighted Gram matrix",
        identity="M_bar = (w * M) @ (G + G.T), w_bar = sum((M @ G) * M, axis=1)",
        vjp=_vjp,
        jvp=_jvp,
        emit=lambda n, c, t: [(t, f"_gram({c[0]}, {c[1]})")],
        text=lambda n, a, r: f"gram({r[0]}, {r[1]})",
        latex=lambda n, a, r: call_latex("gram", r[0], r[1]),
        helpers=frozenset({"_gram"}),
    ),
)

SPELLINGS = ()

__all__ = ["OPS", "SPELLINGS", "gram"]
