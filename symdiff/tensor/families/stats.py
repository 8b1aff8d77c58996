"""Statistics: ``var`` (one node op) and ``std`` (``sqrt`` of it), with ``axis``, ``ddof`` and
``keepdims``.

* ``var(a, axes, ddof)``: ``A_bar = 2 * (A - mean(A)) * G / (N - ddof)`` with ``N`` the number
  of elements reduced (a product of named dimensions too). The textbook chain through
  ``mean`` adds ``- mean(that)``, which is zero since the centred values sum to zero, so the
  rule leaves it out (one reduction fewer). Its tangent is ``2 * sum((A - mean(A)) * dA) /
  (N - ddof)`` (the ``mean(dA)`` term vanishes the same way).
* ``std = sqrt(var)``: the gradient ``(A - mean) * G / ((N - ddof) * std)`` is not finite where
  the variance is 0 (every element equal), as for ``sqrt`` at 0, in NumPy, JAX and PyTorch
  alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sympy as sp

from ...errors import ShapeError
from ..codetext import dim_code
from ..ir import Node, arg_symbol, format_axes
from ..oprow import OpRow, Param, Spelling
from ..ops import Builder
from ..shapes import normalize_axes, reduce_shape

_X0, _X1 = arg_symbol(0), arg_symbol(1)


def _count(a: Node, axes: tuple[int, ...]) -> sp.Expr:
    return sp.Mul(*(sp.sympify(a.shape[i]) for i in axes))


def var(b: Builder, a: Node, axis: int | tuple[int, ...] | None = None, ddof: Any = 0,
        keepdims: bool = False, *, where: str = "") -> Node:
    """``np.var(a, axis, ddof=ddof, keepdims=keepdims)``."""
    axes = normalize_axes("var", axis, a.ndim, where)
    if isinstance(ddof, bool) or not isinstance(ddof, int | float):
        raise ShapeError(f"var: ddof must be a number, not {ddof!r}{where}")
    count = _count(a, axes)
    if count.is_number and count - ddof <= 0:
        raise ShapeError(f"var: ddof={ddof} leaves no degrees of freedom for {count} "
                         f"elements{where}")
    shape = reduce_shape(a.shape, axes, bool(keepdims))
    if not axes or a.op == "fill":
        return b.fill(0, shape)
    return b.node("variance", (a,), (axes, sp.nsimplify(ddof), bool(keepdims)), shape)


def std(b: Builder, a: Node, axis: int | tuple[int, ...] | None = None, ddof: Any = 0,
        keepdims: bool = False, *, where: str = "") -> Node:
    """``np.std(a, axis, ddof=ddof, keepdims=keepdims)``: ``sqrt(var)``."""
    return b.map(sp.sqrt(_X0), [var(b, a, axis, ddof, keepdims, where=where)])


def _centred(b: Builder, node: Node) -> tuple[Node, sp.Expr]:
    """``A - mean(A)`` over the node's axes, and ``2 / (N - ddof)``."""
    (a,) = node.args
    axes, ddof, _ = node.attrs
    centred = b.map(_X0 - _X1, [a, b.reduce_axes("mean", a, axes, True)])
    return centred, 2 / (_count(a, axes) - ddof)


def _var_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    axes, _, keepdims = node.attrs
    centred, scale = _centred(b, node)
    return (b.map(scale * _X0 * _X1, [centred, g if keepdims else b.expand(g, axes)]),)


def _var_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
             ) -> Node | None:
    (t,) = tangents
    axes, _, keepdims = node.attrs
    centred, scale = _centred(b, node)
    lifted = b.expand(centred, (centred.ndim,))
    return b.reduce_axes("sum", b.map(scale * _X0 * _X1, [lifted, t]), axes, keepdims)


def _var_code(node: Node, c: list[str], target: str) -> list[tuple[str, str]]:
    (a,) = node.args
    axes, ddof, keepdims = node.attrs
    arguments = "" if len(axes) == a.ndim and not keepdims else f", axis={format_axes(axes)}"
    arguments += ", keepdims=True" if keepdims else ""
    code = f"_np.var({c[0]}{arguments})"
    if ddof:
        count = _count(a, axes)
        code += f" * ({dim_code(count)} / ({dim_code(count - ddof)}))"
    return [(target, code)]


def _var_text(node: Node, r: list[str]) -> str:
    axes, ddof, keepdims = node.attrs
    extra = f", ddof={ddof if ddof.is_Integer else float(ddof)}" if ddof else ""
    extra += ", keepdims=True" if keepdims else ""
    return f"var({r[0]}, axis={format_axes(axes)}{extra})"


OPS = (
    OpRow(
        op="variance",
        rule="variance (centred)",
        identity="A_bar = 2 * (A - mean(A)) * G / (N - ddof), N the number of elements reduced",
        vjp=_var_vjp,
        jvp=_var_jvp,
        emit=_var_code,
        text=lambda n, a, r: _var_text(n, r),
        latex=lambda n, a, r: (rf"\operatorname{{var}}\left({r[0]}, "
                               rf"\text{{axis}}={format_axes(n.attrs[0])}\right)"),
        numpy_names=frozenset({"var"}),
    ),
)

SPELLINGS = (
    Spelling("var", var, "var(a, axis=None, ddof=0, keepdims=False)", {"a": Param.ARRAY},
             numpy=(np.var,), methods=("var",)),
    Spelling("std", std, "std(a, axis=None, ddof=0, keepdims=False)", {"a": Param.ARRAY},
             numpy=(np.std,), methods=("std",),
             identity="A_bar = (A - mean(A)) * G / ((N - ddof) * std(A)), N the number of "
                      "elements reduced"),
)

__all__ = ["OPS", "SPELLINGS", "std", "var"]
