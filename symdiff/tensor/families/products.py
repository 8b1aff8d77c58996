"""Running products: ``cumprod``, with rules exact at zeros to second order.

The gradient of ``out = cumprod(a)`` along an axis is
``A_bar_k = sum over i >= k of G_i * prod_{j <= i, j != k} a_j``: the textbook form
``flip(cumsum(flip(G * out))) / a`` divides by zero where an element is 0. Here, with
``zero = (a == 0)``, ``a1 = where(a == 0, 1, a)``, ``p = cumprod(a1)`` and ``z = cumsum(zero)``
(the zeros so far), a product over ``j <= i`` leaving out the elements ``S`` is ``p_i / prod_S
a1`` when ``z_i`` equals the number of zeros in ``S``, and 0 otherwise. So::

    A_bar = where(zero, R1, R0) / a1,   Rc = flip(cumsum(flip(G * p * (z == c))))

The gradient is one ``cumprod_grad`` node (its last line is the ``where`` above), because the
pieces of that formula are piecewise in ``a`` and their own derivatives would be wrong at the
zeros; the node's rules (:func:`_second`, leaving out two elements) keep Hessians (forward over
reverse) and Hessian-vector products (reverse over reverse) exact there too.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import sympy as sp

from ..ir import Node, arg_symbol
from ..oprow import OpRow, Param, Spelling, call_latex
from ..ops import Builder
from ..shapes import normalize_axes
from .scans import cumsum, flip

_X0, _X1, _X2, _X3, _X4 = (arg_symbol(i) for i in range(5))
_IS_ZERO = sp.Piecewise((1, sp.Eq(_X0, 0)), (0, True))  # only compared: ints are fine
_NONZERO = sp.Piecewise((1, sp.Eq(_X0, 0)), (_X0, True))


def _when(expr: sp.Expr, flag: sp.Symbol, value: int) -> sp.Piecewise:
    return sp.Piecewise((expr, sp.Eq(flag, value)), (0, True))


def cumprod(b: Builder, a: Node, axis: int | None = None, *, where: str = "") -> Node:
    """``np.cumprod(a, axis)``: running products along ``axis`` (None: of the flattened
    array)."""
    if axis is None:
        a = b.reshape(a, (-1,), where)
        axis = 0
    (axis,) = normalize_axes("cumprod", axis, a.ndim, where)
    if a.op == "fill" and a.attrs[0] == 0:
        return a
    return b.node("cumprod", (a,), (axis,), a.shape)


def _parts(b: Builder, a: Node, axis: int, lift: bool) -> tuple[Node, Node, Node, Node]:
    """``zero``, ``a1``, ``p``, ``z`` of the module docstring (each given a trailing size-1 axis
    when ``lift``, to line up with batched tangents)."""
    zero = b.map(_IS_ZERO, [a])
    a1 = b.map(_NONZERO, [a])
    parts = (zero, a1, cumprod(b, a1, axis), cumsum(b, zero, axis))
    return tuple(b.expand(n, (n.ndim,)) for n in parts) if lift else parts  # type: ignore


def _reversed_sum(b: Builder, h: Node, axis: int) -> Node:
    return flip(b, cumsum(b, flip(b, h, axis), axis), axis)


def _tangent(b: Builder, a: Node, t: Node, axis: int) -> Node:
    """``sum over k <= i of t_k * prod_{j <= i, j != k} a_j``: the tangent of ``cumprod(a)``
    (and, the same sum, the adjoint of ``cumprod_grad`` with respect to its ``G``)."""
    zero, a1, p, z = _parts(b, a, axis, t.ndim > a.ndim)
    scaled = [cumsum(b, b.map(_when(_X0 / _X1, _X2, flag), [t, a1, zero]), axis)
              for flag in (0, 1)]
    return b.map(_X0 * sp.Piecewise((_X1, sp.Eq(_X3, 0)), (_X2, sp.Eq(_X3, 1)), (0, True)),
                 [p, *scaled, z])


def cumprod_grad(b: Builder, a: Node, g: Node, axis: int) -> Node:
    """The gradient of ``cumprod(a)`` for the adjoint ``g`` (``g`` may carry a trailing batch
    axis)."""
    lift = g.ndim > a.ndim
    _, a1, p, z = _parts(b, a, axis, lift)
    sums = [_reversed_sum(b, b.map(_when(_X0 * _X1, _X2, count), [g, p, z]), axis)
            for count in (0, 1)]
    operand = b.expand(a, (a.ndim,)) if lift else a
    return b.node("cumprod_grad", (operand, g, *sums, a1), (axis,), g.shape)


def _second(b: Builder, a: Node, g: Node, t: Node, axis: int) -> Node:
    """``sum over i >= k of g_i * sum over m <= i, m != k of t_m * prod_{j <= i, j != k, m}
    a_j``: the derivative of ``cumprod_grad(a, g)`` in direction ``t`` of ``a``, and (being
    symmetric in ``k`` and ``m``) its adjoint with respect to ``a``. With ``Cc = cumsum(t / a1 *
    (zero == c))``, ``Ts,c = reversed sums of g * p * (z == s) * Cc`` and ``Qs = reversed sums of
    g * p * (z == s)``::

        where(zero, T1,0 + T2,1 - t * Q2, (T0,0 + T1,1 - t / a1 * Q0) / a1)
    """
    lift = t.ndim > a.ndim
    zero, a1, p, z = _parts(b, a, axis, lift)
    if lift:
        g = b.expand(g, (g.ndim,))
    weighted = b.map(_X0 * _X1, [g, p])
    partial = [cumsum(b, b.map(_when(_X0 / _X1, _X2, flag), [t, a1, zero]), axis)
               for flag in (0, 1)]

    def total(count: int, c: Node | None) -> Node:
        args = [weighted, z] if c is None else [weighted, z, c]
        expr = _X0 if c is None else _X0 * _X2
        return _reversed_sum(b, b.map(_when(expr, _X1, count), args), axis)

    t00, t11 = total(0, partial[0]), total(1, partial[1])
    t10, t21 = total(1, partial[0]), total(2, partial[1])
    q0, q2 = total(0, None), total(2, None)
    at_zero = b.map(_X0 + _X1 - _X2 * _X3, [t10, t21, t, q2])
    elsewhere = b.map((_X0 + _X1 - _X2 / _X4 * _X3) / _X4, [t00, t11, t, q0, a1])
    return b.map(sp.Piecewise((_X1, sp.Eq(_X0, 1)), (_X2, True)), [zero, at_zero, elsewhere])


# -- rules -------------------------------------------------------------------------------------
def _cumprod_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    return (cumprod_grad(b, node.args[0], g, node.attrs[0]),)


def _cumprod_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
                 ) -> Node | None:
    return _tangent(b, node.args[0], tangents[0], node.attrs[0])  # type: ignore[arg-type]


def _grad_vjp(b: Builder, node: Node, u: Node, simplify: bool) -> tuple[Node | None, ...]:
    a, g = node.args[:2]
    (axis,) = node.attrs
    return (_second(b, a, g, u, axis), _tangent(b, a, u, axis), None, None, None)


def _grad_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
              ) -> Node | None:
    a, g = node.args[:2]
    (axis,) = node.attrs
    ta, tg = tangents[:2]
    terms = []
    if tg is not None:
        terms.append(cumprod_grad(b, a, tg, axis))
    if ta is not None:
        terms.append(_second(b, a, g, ta, axis))
    if not terms:
        return None
    return terms[0] if len(terms) == 1 else b.map(_X0 + _X1, terms)


OPS = (
    OpRow(
        op="cumprod",
        rule="cumprod (reversed cumsum without division)",
        identity="A_bar_k = sum over i >= k of G_i * prod_{j <= i, j != k} A_j "
                 "(= flip(cumsum(flip(G * out))) / A without dividing by zero)",
        vjp=_cumprod_vjp,
        jvp=_cumprod_jvp,
        emit=lambda n, c, t: [(t, f"_np.cumprod({c[0]}, axis={n.attrs[0]})")],
        text=lambda n, a, r: f"cumprod({r[0]}, axis={n.attrs[0]})",
        latex=lambda n, a, r: call_latex("cumprod", r[0], rf"\text{{axis}}={n.attrs[0]}"),
        numpy_names=frozenset({"cumprod"}),
    ),
    OpRow(
        op="cumprod_grad",
        rule="gradient of cumprod (products leaving out two elements)",
        identity="d(A_bar)_k = sum over i >= k of G_i * sum over m <= i, m != k of dA_m * "
                 "prod_{j <= i, j != k, m} A_j, zero-safe",
        vjp=_grad_vjp,
        jvp=_grad_jvp,
        emit=lambda n, c, t: [(t, f"_np.where({c[0]} == 0, {c[3]}, {c[2]}) / {c[4]}")],
        text=lambda n, a, r: f"cumprod_grad({r[0]}, {r[1]}, axis={n.attrs[0]})",
        latex=lambda n, a, r: call_latex(r"\overline{cumprod}", r[0], r[1],
                                          rf"\text{{axis}}={n.attrs[0]}"),
        numpy_names=frozenset({"where"}),
    ),
)

SPELLINGS = (
    Spelling("cumprod", cumprod, "cumprod(a, axis=None)", {"a": Param.ARRAY},
             numpy=(np.cumprod,), methods=("cumprod",)),
    Spelling("", cumprod, "cumulative_prod(x, axis=None)", {"a": Param.ARRAY},  # NumPy >= 2.1
             numpy=(np.cumulative_prod,) if hasattr(np, "cumulative_prod") else ()),
)

__all__ = ["OPS", "SPELLINGS", "cumprod", "cumprod_grad"]
