"""Stabilising shifts: ``shift(a, axes)``, the maximum of ``a`` along ``axes`` (kept), used only
to shift a ``logsumexp`` or ``softmax`` before its ``exp``: ``exp(a - m) / sum(exp(a - m))``.

The shift cancels from every value it is used in, so it is a *constant* to every derivative:
its VJP and JVP are zero. Differentiating it instead (as a ``max``, with its tie shares) adds
terms that cancel to zero but cost a pass over every tangent: the Hessian of a softmax
regression took twice the work with them. It is printed as the ``max`` it computes
(``_np.maximum.reduce(a, axis=1, keepdims=True)``), and users never write it: the VJP of
``logsumexp`` makes it (:func:`symdiff.tensor.vjp.lse_parts`).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..codetext import reduce_code
from ..ir import Node, format_axes
from ..oprow import OpRow, call_latex
from ..ops import Builder
from ..shapes import reduce_shape


def shift(b: Builder, a: Node, axes: tuple[int, ...], keepdims: bool) -> Node:
    """The maximum of ``a`` over ``axes`` (normalized, sorted) as a stabilising shift: a
    constant to every derivative."""
    if a.op == "fill":
        return b.fill(a.attrs[0], reduce_shape(a.shape, axes, keepdims))
    return b.node("shift", (a,), (axes, keepdims), reduce_shape(a.shape, axes, keepdims))


def _no_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    return (None,)


def _no_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
            ) -> Node | None:
    return None


def _emit(node: Node, codes: list[str], target: str) -> list[tuple[str, str]]:
    axes, keepdims = node.attrs
    (a,) = node.args
    if not keepdims and len(axes) == a.ndim:
        return [(target, reduce_code("max", codes[0], "", a.ndim))]
    keep = ", keepdims=True" if keepdims else ""
    return [(target, reduce_code("max", codes[0], f"axis={format_axes(axes)}{keep}", a.ndim))]


def _arguments(node: Node) -> str:
    axes, keepdims = node.attrs
    return f"axis={format_axes(axes)}" + (", keepdims=True" if keepdims else "")


OPS = (
    OpRow(
        op="shift",
        rule="stabilising shift (constant)",
        identity="A_bar = 0: the shift cancels from the value it stabilises",
        vjp=_no_vjp,
        jvp=_no_jvp,
        emit=_emit,
        text=lambda n, a, r: f"stop_gradient(max({r[0]}, {_arguments(n)}))",
        latex=lambda n, a, r: call_latex("stop\\_gradient", call_latex("max", r[0])),
        numpy_names=frozenset(),
    ),
)

SPELLINGS = ()

__all__ = ["OPS", "SPELLINGS", "shift"]
