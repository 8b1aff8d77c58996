"""Sorting: ``sort`` and ``partition``, each a permutation of its operand along an axis.

A sort is two nodes: ``order`` (the permutation, ``_np.argsort(a, axis=k)`` or
``_np.argpartition(a, kth, axis=k)``: integers, with no derivative: a small change of ``a``
keeps the order, ties aside) and ``take`` (``_np.take_along_axis(a, order, axis=k)``). The
permutation is computed once and shared by the value and its derivatives:

* ``take``: ``A_bar``: ``G`` put back where each element came from, a ``put_back`` node
  (``_np.put_along_axis`` into a new array: one scatter, about 3x faster at 1e6 elements than
  ``take_along_axis(G, argsort(order))``, which sorted the permutation again to invert it); its
  tangent is the tangent taken the same way (the permutation broadcast over the batch axis).
* ``put_back``: its adjoint is the take, its tangent the tangent put back the same way.

Ties: argsort gives each of the equal elements one position; the derivative follows that choice
(a one-sided derivative at a tie).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...errors import ShapeError
from ..codetext import shape_code
from ..ir import Node
from ..oprow import OpRow, Param, Spelling, call_latex
from ..ops import Builder
from ..shapes import normalize_axes


def _order(b: Builder, a: Node, axis: int, kth: tuple[int, ...] | None) -> Node:
    return b.node("order", (a,), (axis, kth), a.shape)


def take_along(b: Builder, a: Node, order: Node, axis: int) -> Node:
    """``np.take_along_axis(a, order, axis)`` for a permutation ``order`` of ``a``'s axis."""
    if a.op == "fill":
        return a
    return b.node("take", (a, order), (axis,), a.shape)


def put_back(b: Builder, g: Node, order: Node, axis: int) -> Node:
    """``out`` with ``take_along_axis(out, order, axis) == g``: ``g`` put back where each element
    came from (``order`` a permutation along ``axis``)."""
    if g.op == "fill":
        return g
    return b.node("put_back", (g, order), (axis,), g.shape)


def _prepare(b: Builder, a: Node, axis: int | None, name: str, where: str) -> tuple[Node, int]:
    if axis is None:
        return b.reshape(a, (-1,), where), 0
    if a.ndim == 0:
        raise ShapeError(f"{name}: needs at least one dimension{where}")
    (axis,) = normalize_axes(name, axis, a.ndim, where)
    return a, axis


def sort(b: Builder, a: Node, axis: int | None = -1, kind: str | None = None,
         order: None = None, *, where: str = "") -> Node:
    """``np.sort(a, axis)`` (None: of the flattened array); ``kind`` is accepted and ignored
    (every kind gives the same sorted values)."""
    a, axis = _prepare(b, a, axis, "sort", where)
    return take_along(b, a, _order(b, a, axis, None), axis)


def partition(b: Builder, a: Node, kth: int | Sequence[int], axis: int | None = -1,
              kind: str = "introselect", order: None = None, *, where: str = "") -> Node:
    """``np.partition(a, kth, axis)``: the arrangement of ``np.argpartition``."""
    a, axis = _prepare(b, a, axis, "partition", where)
    kths = (kth,) if isinstance(kth, int) else tuple(kth)
    length = a.shape[axis]
    if not all(isinstance(k, int) for k in kths) or not isinstance(length, int):
        raise ShapeError(f"partition: kth must be integers and the axis of integer length{where}")
    if not all(-length <= k < length for k in kths):
        raise ShapeError(f"partition: kth {kth} is out of range for length {length}{where}")
    return take_along(b, a, _order(b, a, axis, tuple(sorted(k % length for k in kths))), axis)


# -- rules -------------------------------------------------------------------------------------
def _order_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    return (None,)


def _order_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
               ) -> Node | None:
    return None


def _take_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    a, order = node.args
    (axis,) = node.attrs
    if g.ndim != a.ndim:  # (the tangent's batch axis: order was expanded by the JVP)
        raise ShapeError("take: adjoint of a batched take")
    return (put_back(b, g, order, axis), None)


def _put_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    g_in, order = node.args
    if g.ndim != g_in.ndim:
        raise ShapeError("put_back: adjoint of a batched put_back")
    return (take_along(b, g, order, node.attrs[0]), None)


def _put_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
             ) -> Node | None:
    t = tangents[0]
    if t is None:
        return None
    return b.node("put_back", (t, b.expand(node.args[1], (node.ndim,))), node.attrs, t.shape)


def _put_code(node: Node, c: list[str], target: str) -> list[tuple[str, str]]:
    return [(target, f"_np.empty({shape_code(node.shape)}, dtype=_dtype)"),
            ("", f"_np.put_along_axis({target}, {c[1]}, {c[0]}, axis={node.attrs[0]})")]


def _take_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
              ) -> Node | None:
    t = tangents[0]
    if t is None:
        return None
    return b.node("take", (t, b.expand(node.args[1], (node.ndim,))), node.attrs, t.shape)


def _order_code(node: Node, c: list[str], target: str) -> list[tuple[str, str]]:
    axis, kth = node.attrs
    if kth is None:
        return [(target, f"_np.argsort({c[0]}, axis={axis})")]
    return [(target, f"_np.argpartition({c[0]}, {kth}, axis={axis})")]


def _order_text(node: Node, r: list[str]) -> str:
    axis, kth = node.attrs
    if kth is None:
        return f"argsort({r[0]}, axis={axis})"
    return f"argpartition({r[0]}, {list(kth)}, axis={axis})"


OPS = (
    OpRow(
        op="order", rule="sort order (no derivative)",
        identity="a permutation: locally constant",
        vjp=_order_vjp, jvp=_order_jvp, emit=_order_code,
        text=lambda n, a, r: _order_text(n, r),
        latex=lambda n, a, r: call_latex("argsort", r[0]),
        numpy_names=frozenset({"argsort", "argpartition"}),
    ),
    OpRow(
        op="take", rule="sort (permute back)",
        identity="A_bar = take_along_axis(G, argsort(order)): G put back where each came from",
        vjp=_take_vjp, jvp=_take_jvp,
        emit=lambda n, c, t: [(t, f"_np.take_along_axis({c[0]}, {c[1]}, axis={n.attrs[0]})")],
        text=lambda n, a, r: f"take_along_axis({r[0]}, {r[1]}, axis={n.attrs[0]})",
        latex=lambda n, a, r: call_latex("take", r[0], r[1]),
        numpy_names=frozenset({"take_along_axis"}),
    ),
    OpRow(
        op="put_back", rule="unsort (put back)",
        identity="take_along_axis(out, order) = G: G_bar = take_along_axis(G, order)",
        vjp=_put_vjp, jvp=_put_jvp, emit=_put_code,
        text=lambda n, a, r: f"put_along_axis({r[0]}, {r[1]}, axis={n.attrs[0]})",
        latex=lambda n, a, r: call_latex("put", r[0], r[1]),
        numpy_names=frozenset({"put_along_axis"}),
    ),
)

SPELLINGS = (
    Spelling("sort", sort, "sort(a, axis=-1)", {"a": Param.ARRAY}, numpy=(np.sort,)),
    Spelling("partition", partition, "partition(a, kth, axis=-1)", {"a": Param.ARRAY},
             numpy=(np.partition,)),
)

__all__ = ["OPS", "SPELLINGS", "partition", "put_back", "sort", "take_along"]
