"""Scans and reversals: ``cumsum``, ``cumprod``, ``diff`` and ``flip`` (the model family: copy
its shape to add one).

* ``cumsum(a, axis)``: ``A_bar = flip(cumsum(flip(G)))`` along the axis (each element feeds
  every later partial sum); its tangent is the cumsum of the operand's tangent.
* ``flip(a, axis)``: ``A_bar = flip(G)``; linear, so the tangent is flipped too.

* ``cumprod(a, axis)``: ``A_bar_k = sum over i >= k of G_i * prod_{j <= i, j != k} a_j``,
  computed without dividing by zero (:func:`_cumprod_parts`); its tangent likewise.
* ``diff(a, n, axis)``: ``a[1:] - a[:-1]`` along the axis, ``n`` times (slices: their rules).

``axis=None`` flattens first, as NumPy does (``np.cumsum(x)`` of a matrix is a vector).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import sympy as sp

from ...errors import ShapeError
from ..ir import Node, arg_symbol
from ..oprow import OpRow, Param, Spelling
from ..ops import Builder
from ..shapes import normalize_axes

_X0, _X1, _X2, _X3 = (arg_symbol(i) for i in range(4))
_IS_ZERO = sp.Piecewise((1, sp.Eq(_X0, 0)), (0, True))  # only compared: ints are fine
_NONZERO = sp.Piecewise((1, sp.Eq(_X0, 0)), (_X0, True))


def _call_latex(name: str, *parts: str) -> str:
    return rf"\operatorname{{{name}}}\left({', '.join(parts)}\right)"


# -- constructors ------------------------------------------------------------------------------
def cumsum(b: Builder, a: Node, axis: int | None = None, *, where: str = "") -> Node:
    """``np.cumsum(a, axis)``: running sums along ``axis`` (None: of the flattened array)."""
    if axis is None:
        a = b.reshape(a, (-1,), where)
        axis = 0
    (axis,) = normalize_axes("cumsum", axis, a.ndim, where)
    if a.op == "fill" and a.attrs[0] == 0:
        return a
    return b.node("cumsum", (a,), (axis,), a.shape)


def flip(b: Builder, a: Node, axis: int | tuple[int, ...] | None = None, *,
         where: str = "") -> Node:
    """``np.flip(a, axis)``: the order of elements reversed along ``axis`` (None: every axis)."""
    axes = normalize_axes("flip", axis, a.ndim, where)
    if not axes or a.op == "fill":
        return a
    if a.op == "flip" and a.attrs[0] == axes:
        return a.args[0]
    return b.node("flip", (a,), (axes,), a.shape)


def cumprod(b: Builder, a: Node, axis: int | None = None, *, where: str = "") -> Node:
    """``np.cumprod(a, axis)``: running products along ``axis`` (None: of the flattened
    array)."""
    if axis is None:
        a = b.reshape(a, (-1,), where)
        axis = 0
    (axis,) = normalize_axes("cumprod", axis, a.ndim, where)
    return b.node("cumprod", (a,), (axis,), a.shape)


def diff(b: Builder, a: Node, n: int = 1, axis: int = -1, *, where: str = "") -> Node:
    """``np.diff(a, n, axis)``: ``n``-th differences along ``axis``, by slices."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ShapeError(f"diff: the order n must be a non-negative int, not {n!r}{where}")
    if a.ndim == 0:
        raise ShapeError(f"diff: needs at least 1 dimension{where}")
    (axis,) = normalize_axes("diff", axis, a.ndim, where)
    before = ((None, None, None),) * axis
    for _ in range(n):
        if isinstance(a.shape[axis], int) and a.shape[axis] < 2:
            raise ShapeError(f"diff: axis {axis} of shape {a.shape} is too short for order {n}"
                             f"{where}")
        upper = b.index(a, (*before, (1, None, None)), where)
        lower = b.index(a, (*before, (None, -1, None)), where)
        a = b.map(_X0 - _X1, [upper, lower], "diff", where)
    return a


# -- rules -------------------------------------------------------------------------------------
def _cumsum_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    (axis,) = node.attrs
    return (flip(b, cumsum(b, flip(b, g, axis), axis), axis),)


def _cumsum_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
                ) -> Node | None:
    return cumsum(b, tangents[0], node.attrs[0])


def _flip_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    return (flip(b, g, node.attrs[0]),)


def _flip_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
              ) -> Node | None:
    return flip(b, tangents[0], node.attrs[0])


def _cumprod_parts(b: Builder, a: Node, axis: int) -> tuple[Node, Node, Node, Node]:
    """``zero`` (1 where ``a == 0``), ``a1`` (``a`` with its zeros replaced by 1), ``p =
    cumprod(a1)`` and ``z = cumsum(zero)`` (the zeros so far) along ``axis``: the product of
    ``a_j`` for ``j <= i, j != k`` is ``p_i / a1_k`` when ``z_i == zero_k`` (no zero up to ``i``
    but ``a_k`` itself) and 0 otherwise. No division by zero, exact at any number of zeros."""
    zero = b.map(_IS_ZERO, [a])
    a1 = b.map(_NONZERO, [a])
    return zero, a1, b.node("cumprod", (a1,), (axis,), a.shape), cumsum(b, zero, axis)


def _cumprod_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    """``A_bar_k = R_k / a1_k`` with ``R = flip(cumsum(flip(G * p * [z == zero_k])))``: the
    reversed cumsum of ``G * out / A`` made zero-safe."""
    (axis,) = node.attrs
    (a,) = node.args
    _, a1, p, z = _cumprod_parts(b, a, axis)
    sums = [flip(b, cumsum(b, flip(b, b.map(
        sp.Piecewise((_X0 * _X1, sp.Eq(_X2, count)), (0, True)), [g, p, z]), axis), axis), axis)
        for count in (0, 1)]
    return (b.map(sp.Piecewise((_X1, sp.Eq(_X3, 0)), (_X0, True)) / _X2, [*sums, a1, a]),)


def _cumprod_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
                 ) -> Node | None:
    """``p_i * sum over k <= i, z_i == zero_k of t_k / a1_k``: two cumsums, split by whether
    ``a_k`` is zero."""
    (t,) = tangents
    (axis,) = node.attrs
    zero, a1, p, z = (b.expand(n, (n.ndim,)) for n in _cumprod_parts(b, node.args[0], axis))
    scaled = [cumsum(b, b.map(sp.Piecewise((_X0 / _X1, sp.Eq(_X2, flag)), (0, True)),
                              [t, a1, zero]), axis) for flag in (0, 1)]
    return b.map(_X0 * sp.Piecewise((_X1, sp.Eq(_X3, 0)), (_X2, sp.Eq(_X3, 1)), (0, True)),
                 [p, *scaled, z])


def _axis_keyword(axes: tuple[int, ...]) -> str:
    return str(axes[0]) if len(axes) == 1 else str(axes)


OPS = (
    OpRow(
        op="cumsum",
        rule="cumsum (reversed cumsum)",
        identity="A_bar = flip(cumsum(flip(G))) along the axis",
        vjp=_cumsum_vjp,
        jvp=_cumsum_jvp,
        emit=lambda n, c, t: [(t, f"_np.cumsum({c[0]}, axis={n.attrs[0]})")],
        text=lambda n, a, r: f"cumsum({r[0]}, axis={n.attrs[0]})",
        latex=lambda n, a, r: _call_latex("cumsum", r[0], rf"\text{{axis}}={n.attrs[0]}"),
        numpy_names=frozenset({"cumsum"}),
    ),
    OpRow(
        op="cumprod",
        rule="cumprod (reversed cumsum, zero-safe)",
        identity="A_bar_k = sum over i >= k of G_i * prod_{j <= i, j != k} A_j "
                 "(= flip(cumsum(flip(G * out))) / A without dividing by zero)",
        vjp=_cumprod_vjp,
        jvp=_cumprod_jvp,
        emit=lambda n, c, t: [(t, f"_np.cumprod({c[0]}, axis={n.attrs[0]})")],
        text=lambda n, a, r: f"cumprod({r[0]}, axis={n.attrs[0]})",
        latex=lambda n, a, r: _call_latex("cumprod", r[0], rf"\text{{axis}}={n.attrs[0]}"),
        numpy_names=frozenset({"cumprod"}),
    ),
    OpRow(
        op="flip",
        rule="flip",
        identity="A_bar = flip(G) along the same axes",
        vjp=_flip_vjp,
        jvp=_flip_jvp,
        emit=lambda n, c, t: [(t, f"_np.flip({c[0]}, axis={_axis_keyword(n.attrs[0])})")],
        text=lambda n, a, r: f"flip({r[0]}, axis={_axis_keyword(n.attrs[0])})",
        latex=lambda n, a, r: _call_latex("flip", r[0],
                                          rf"\text{{axis}}={_axis_keyword(n.attrs[0])}"),
        numpy_names=frozenset({"flip"}),
    ),
)

SPELLINGS = (
    Spelling("cumsum", cumsum, "cumsum(a, axis=None)", {"a": Param.ARRAY},
             numpy=(np.cumsum,), methods=("cumsum",)),
    Spelling("cumprod", cumprod, "cumprod(a, axis=None)", {"a": Param.ARRAY},
             numpy=(np.cumprod,), methods=("cumprod",)),
    Spelling("diff", diff, "diff(a, n=1, axis=-1)", {"a": Param.ARRAY}, numpy=(np.diff,)),
    Spelling("flip", flip, "flip(a, axis=None)", {"a": Param.ARRAY},
             numpy=(np.flip,)),
)

__all__ = ["OPS", "SPELLINGS", "cumprod", "cumsum", "diff", "flip"]
