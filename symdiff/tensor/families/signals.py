"""1-D signal functions built from existing ops: ``convolve``, ``correlate`` and ``interp``.

* ``correlate(a, v, mode='valid')``: ``c[k] = sum_n a[n + k] v[n]``, as the sliding windows of
  ``a`` (zero-padded for ``'full'`` and ``'same'``) times ``v`` (``windows(a) @ v``); its
  adjoints are the windows' overlap-add of ``G v^T`` and ``windows(a)^T G``. When ``v`` is
  longer than ``a``, NumPy swaps them and reverses the result; so does this.
* ``convolve(a, v, mode='full')``: ``correlate(a, flip(v))`` with the longer operand first,
  as NumPy computes it.
* ``interp(x, xp, fp, left=None, right=None)``: piecewise linear, written as the hat functions
  of the knots ``xp``: ``interp(x) = sum_k fp[k] * hat_k(x)`` with ``hat_k(x) = max(0,
  min((x - xp[k-1]) / (xp[k] - xp[k-1]), (xp[k+1] - x) / (xp[k+1] - xp[k])))`` (the first and
  last hats are 1 beyond the ends, giving NumPy's ``fp[0]`` and ``fp[-1]`` there). So the
  gradient with respect to ``fp`` is the hat weights, with respect to ``x`` the slope of the
  segment (0 beyond the ends; at a knot, one side's slope), and with respect to ``xp`` (if
  traced) that of the formula. ``xp`` must be increasing with distinct values, as for NumPy.
  The weights are a dense ``x.shape + (len(xp),)`` array: fine for the tables of a loss
  function (tens to thousands of knots), not for a million knots.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import sympy as sp

from ...errors import ShapeError, UnsupportedError
from ..ir import Node, arg_symbol
from ..oprow import Param, Spelling
from ..ops import Builder
from ..shapes import format_shape, same_dim
from .building import concatenate
from .conv import pad
from .scans import flip
from .windows import windows

_X0, _X1, _X2, _X3 = (arg_symbol(i) for i in range(4))
_MODES = ("full", "same", "valid")


def _vector(name: str, what: str, a: Node, where: str) -> int:
    if a.ndim != 1 or not isinstance(a.shape[0], int) or not a.shape[0]:
        raise ShapeError(f"{name}: {what} must be a non-empty 1-D array of a fixed length, got "
                         f"shape {format_shape(a.shape)}{where}")
    return a.shape[0]


def _correlate(b: Builder, a: Node, v: Node, mode: str, name: str, where: str) -> Node:
    if mode not in _MODES:
        raise UnsupportedError(f"{name}: mode must be 'full', 'same' or 'valid', not {mode!r}"
                               f"{where}")
    m, n = _vector(name, "a", a, where), _vector(name, "v", v, where)
    if m < n:  # NumPy swaps the operands and reverses the result
        return flip(b, _correlate(b, v, a, mode, name, where), 0)
    before = {"full": n - 1, "same": n // 2, "valid": 0}[mode]
    after = {"full": n - 1, "same": n - 1 - n // 2, "valid": 0}[mode]
    if before or after:
        a = pad(b, a, ((before, after),), where=where)
    if n == 1:
        return b.map(_X0 * _X1, [a, v], name, where)
    return b.matmul(windows(b, a, (0,), (n,), (1,), (1,), name, where), v, where)


def correlate(b: Builder, a: Node, v: Node, mode: str = "valid", *, where: str = "") -> Node:
    """``np.correlate(a, v, mode)``: ``c[k] = sum_n a[n + k] v[n]`` (real arrays)."""
    return _correlate(b, a, v, mode, "correlate", where)


def convolve(b: Builder, a: Node, v: Node, mode: str = "full", *, where: str = "") -> Node:
    """``np.convolve(a, v, mode)``: ``c[k] = sum_n a[n] v[k - n]``."""
    m, n = _vector("convolve", "a", a, where), _vector("convolve", "v", v, where)
    if n > m:
        a, v = v, a
    return _correlate(b, a, flip(b, v, 0), mode, "convolve", where)


def interp(b: Builder, x: Node, xp: Node, fp: Node, left: Node | None = None,
           right: Node | None = None, period: Any = None, *, where: str = "") -> Node:
    """``np.interp(x, xp, fp, left, right)``: piecewise linear interpolation (see the module
    docstring: a sum of hat functions, differentiable in ``x``, ``fp`` and ``xp``)."""
    if period is not None:
        raise UnsupportedError(f"interp: period= is not supported when differentiating{where}")
    k = _vector("interp", "xp", xp, where)
    if fp.ndim != 1 or not same_dim(fp.shape[0], k):
        raise ShapeError(f"interp: fp of shape {format_shape(fp.shape)} must be 1-D of xp's "
                         f"length {k}{where}")
    if k < 2:
        raise UnsupportedError(f"interp: needs at least two points in xp{where}")
    for edge, value in (("left", left), ("right", right)):
        if value is not None and value.ndim:
            raise ShapeError(f"interp: {edge} must be a scalar{where}")
    column = b.expand(x, (x.ndim,))  # x.shape + (1,), against the knots
    start = b.index(xp, ((None, -1, None),), where)  # xp[k] of each segment
    stop = b.index(xp, ((1, None, None),), where)  # xp[k + 1]
    rising = b.map((_X0 - _X1) / (_X2 - _X1), [column, start, stop], "interp", where)
    falling = b.map((_X2 - _X0) / (_X2 - _X1), [column, start, stop], "interp", where)
    ones = b.fill(1, (*x.shape, 1))
    lower = concatenate(b, (ones, rising), -1, where=where)  # hat k rises over segment k - 1
    upper = concatenate(b, (falling, ones), -1, where=where)  # and falls over segment k
    hats = b.map(sp.Max(0, sp.Min(_X0, _X1)), [lower, upper], "interp", where)
    y = b.matmul(hats, fp, where)
    if left is not None:
        first = b.index(xp, (0,), where)
        y = b.map(sp.Piecewise((_X3, _X0 < _X1), (_X2, True)), [x, first, y, left], "interp",
                  where)
    if right is not None:
        last = b.index(xp, (-1,), where)
        y = b.map(sp.Piecewise((_X3, _X0 > _X1), (_X2, True)), [x, last, y, right], "interp",
                  where)
    return y


OPS = ()  # no node op of its own

_TWO = {"a": Param.ARRAY, "v": Param.ARRAY}
SPELLINGS = (
    Spelling("convolve", convolve, "convolve(a, v, mode='full')", _TWO, numpy=(np.convolve,)),
    Spelling("correlate", correlate, "correlate(a, v, mode='valid')", _TWO,
             numpy=(np.correlate,)),
    Spelling("interp", interp, "interp(x, xp, fp, left=None, right=None)",
             {"x": Param.ARRAY, "xp": Param.ARRAY, "fp": Param.ARRAY, "left": Param.ARRAY,
              "right": Param.ARRAY}, numpy=(np.interp,)),
)

__all__ = ["OPS", "SPELLINGS", "convolve", "correlate", "interp"]
