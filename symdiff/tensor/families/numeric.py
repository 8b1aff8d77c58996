"""NumPy's numeric helpers on traced arrays: ``np.nan_to_num`` and ``np.linspace`` with traced ends.

* ``nan_to_num(a)``: NaN and infinities replaced by numbers in the value (``_np.nan_to_num``);
  the identity on finite values (derivative 1) and a constant where ``a`` is not finite
  (derivative 0, since a nearby NaN or infinity is replaced by the same number), as autograd
  has it: the adjoint is ``where(isfinite(A), G, 0)`` (the ``finite_part`` node), and so is the
  tangent.
* ``linspace(start, stop, num)`` with scalar ``start``/``stop`` (traced or numbers) is
  ``start + (stop - start) * k / (num - 1)`` for ``k = 0 .. num - 1`` (``/ num`` with
  ``endpoint=False``): elementwise in the ends, so every rule is the elementwise one. The ramp
  ``k`` is the cumulative sum of ones (a constant the generated code computes), until constant
  arrays can be passed to the generated module.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
import sympy as sp

from ...errors import SymdiffError, UnsupportedError
from ..ir import Node, arg_symbol
from ..oprow import OpRow, Param, Spelling
from ..ops import Builder
from .scans import cumsum


# -- constructors ------------------------------------------------------------------------------
def nan_to_num(b: Builder, x: Node, copy: bool = True, nan: float = 0.0,
               posinf: float | None = None, neginf: float | None = None, *,
               where: str = "") -> Node:
    """``np.nan_to_num(x)``: the identity on finite values (derivative 1), constants elsewhere
    (derivative 0)."""
    values = tuple(None if v is None else float(v) for v in (nan, posinf, neginf))
    if values[0] is None or not copy:
        raise SymdiffError(f"nan_to_num: nan= must be a number and copy= True{where}")
    if x.op == "fill":
        return x
    return b.node("nan_to_num", (x,), values, x.shape)


def linspace(b: Builder, start: Node, stop: Node, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0, *,
             where: str = "") -> Node:
    """``np.linspace(start, stop, num)`` for scalar ends: ``start + (stop - start) * t``."""
    if start.shape or stop.shape:
        raise SymdiffError(f"linspace: only scalar ends are supported when tracing (got shapes "
                           f"{start.shape} and {stop.shape}){where}")
    if retstep or dtype is not None or axis != 0:
        raise SymdiffError(f"linspace: retstep=, dtype= and axis= are not supported{where}")
    num = operator.index(num)
    if num < 1:
        raise SymdiffError(f"linspace: num must be at least 1 (got {num}){where}")
    ramp = b.map(arg_symbol(0) - 1, [cumsum(b, b.fill(1, (num,)))])  # 0, 1, ..., num - 1
    steps = num - 1 if endpoint else num
    a0, a1, a2 = (arg_symbol(i) for i in range(3))
    scale = a2 / steps if steps else 0 * a2
    return b.map(a0 + (a1 - a0) * scale, [start, stop, ramp], "linspace", where)


def real(b: Builder, val: Node, *, where: str = "") -> Node:
    """``np.real(x)`` of a real array: ``x`` itself."""
    return val


def imag(b: Builder, val: Node, *, where: str = "") -> Node:
    """``np.imag(x)`` of a real array: zeros (no gradient)."""
    return b.fill(0, val.shape)


def real_if_close(b: Builder, a: Node, tol: float = 100, *, where: str = "") -> Node:
    """``np.real_if_close(x)`` of a real array: ``x`` itself."""
    return a


def angle(b: Builder, z: Node, deg: bool = False, *, where: str = "") -> Node:
    """``np.angle(x)`` of a real array: ``pi`` (or 180) where ``x < 0``, else 0 (no gradient)."""
    half_turn = 180 if deg else sp.pi
    return b.map(sp.Piecewise((half_turn, arg_symbol(0) < 0), (0, True)), [z], "angle", where)


def astype(b: Builder, a: Node, dtype: Any, order: str = "K", casting: str = "unsafe",
           subok: bool = True, copy: bool = True, *, where: str = "") -> Node:
    """``x.astype(dtype)`` to a float dtype: ``x`` itself (the generated code computes in the
    arguments' float dtype, as everywhere); to ints or booleans an error (no derivative)."""
    try:
        kind = np.dtype(dtype).kind
    except TypeError:
        kind = "?"
    if kind != "f":
        raise UnsupportedError(f"astype({dtype!r}): a traced array can become a float dtype only "
                               f"(ints and booleans have no derivative; for a mask use a "
                               f"comparison in np.where){where}")
    return a


# -- rules -------------------------------------------------------------------------------------
def finite_part(b: Builder, g: Node, a: Node) -> Node:
    """``where(isfinite(a), g, 0)`` (``a`` broadcast against ``g``)."""
    if g.op == "fill" and g.attrs[0] == 0:
        return g
    return b.node("finite_part", (g, a), (), g.shape)


def _nan_to_num_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    return (finite_part(b, g, node.args[0]),)


def _nan_to_num_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
                    ) -> Node | None:
    t = tangents[0]
    return None if t is None else finite_part(b, t, b.expand(node.args[0], (node.ndim,)))


def _finite_part_vjp(b: Builder, node: Node, g: Node, simplify: bool
                     ) -> tuple[Node | None, ...]:
    return (finite_part(b, g, node.args[1]), None)  # linear in g; a mask of a: no derivative


def _finite_part_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
                     ) -> Node | None:
    t = tangents[0]
    return None if t is None else finite_part(b, t, b.expand(node.args[1], (node.ndim,)))


def _emit_nan_to_num(node: Node, c: list[str], target: str) -> list[tuple[str, str]]:
    names = ("nan", "posinf", "neginf")
    defaults = (0.0, None, None)
    given = [f"{k}={v!r}" for k, v, d in zip(names, node.attrs, defaults, strict=True) if v != d]
    return [(target, f"_np.nan_to_num({', '.join([c[0], *given])})")]


OPS = (
    OpRow(
        op="nan_to_num",
        rule="nan_to_num (identity on finite values)",
        identity="A_bar = where(isfinite(A), G, 0): 1 where A is finite, 0 where replaced",
        vjp=_nan_to_num_vjp,
        jvp=_nan_to_num_jvp,
        emit=_emit_nan_to_num,
        text=lambda n, a, r: f"nan_to_num({r[0]})",
        latex=lambda n, a, r: rf"\operatorname{{nan\_to\_num}}\left({r[0]}\right)",
        numpy_names=frozenset({"nan_to_num"}),
    ),
    OpRow(
        op="finite_part",
        rule="finite part",
        identity="A_bar = where(isfinite(M), G, 0) (linear in G; M gets no gradient)",
        vjp=_finite_part_vjp,
        jvp=_finite_part_jvp,
        emit=lambda n, c, t: [(t, f"_np.where(_np.isfinite({c[1]}), {c[0]}, 0.0)")],
        text=lambda n, a, r: f"where(isfinite({r[1]}), {r[0]}, 0)",
        latex=lambda n, a, r: rf"\left[{r[1]} \text{{ finite}}\right] {a[0]}",
        numpy_names=frozenset({"where", "isfinite"}),
    ),
)

SPELLINGS = (
    Spelling("nan_to_num", nan_to_num, "nan_to_num(x, nan=0.0, posinf=None, neginf=None)",
             {"x": Param.ARRAY}, numpy=(np.nan_to_num,)),
    Spelling("", real, "real(x)", {"val": Param.ARRAY}, numpy=(np.real,)),
    Spelling("", imag, "imag(x)", {"val": Param.ARRAY}, numpy=(np.imag,)),
    Spelling("", real_if_close, "real_if_close(a, tol=100)", {"a": Param.ARRAY},
             numpy=(np.real_if_close,)),
    Spelling("", angle, "angle(z, deg=False)", {"z": Param.ARRAY}, numpy=(np.angle,)),
    Spelling("", astype, "x.astype(dtype)", {"a": Param.ARRAY}, methods=("astype",)),
    Spelling("linspace", linspace, "linspace(start, stop, num=50, endpoint=True)",
             {"start": Param.ARRAY, "stop": Param.ARRAY}, numpy=(np.linspace,)),
)

__all__ = ["OPS", "SPELLINGS", "angle", "astype", "finite_part", "imag", "linspace",
           "nan_to_num", "real", "real_if_close"]
