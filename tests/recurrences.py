"""Unrolled recurrences as users write them (a loop over a state), and their references.

Each program is a Python function of its parameters built by :func:`program`, written once
over a namespace of math functions, so that the same loop runs traced by symdiff (NumPy's
functions), in mpmath at 50 digits (the reference) and on dual numbers (forward-mode
derivatives, in float64 as a plain evaluation of the loop would give them, or in mpmath).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import SimpleNamespace

import mpmath
import numpy as np

KINDS = ("fixed point", "logistic map", "newton sqrt", "euler", "rk4 pendulum", "lotka-volterra")


@dataclass(frozen=True)
class Case:
    """One unrolled recurrence: its kind, number of steps and parameter values."""

    kind: str
    steps: int
    params: dict[str, float]


def program(kind: str, steps: int, m: SimpleNamespace) -> Callable[..., object]:
    """The loop of ``kind`` unrolled ``steps`` times, over the math functions of ``m``
    (``m.sin``, ``m.exp``)."""
    if kind == "fixed point":
        def f(a):
            x = 10.0
            for _ in range(steps):
                x = x - 0.05 * (x**2 - a)
            return x
    elif kind == "logistic map":
        def f(r, x0):
            x = x0
            for _ in range(steps):
                x = r * x * (1 - x)
            return x
    elif kind == "newton sqrt":
        def f(a):
            x = 1 + a
            for _ in range(steps):
                x = (x + a / x) / 2
            return x
    elif kind == "euler":
        def f(k, y0):
            y, t, dt = y0, 0.0, 0.1
            for _ in range(steps):
                y = y + dt * (-k * y + m.sin(t))
                t = t + dt
            return y
    elif kind == "rk4 pendulum":
        def f(g, theta0):
            th, om, dt = theta0, 0.0, 0.1

            def rhs(th, om):
                return om, -g * m.sin(th)

            for _ in range(steps):
                k1 = rhs(th, om)
                k2 = rhs(th + dt / 2 * k1[0], om + dt / 2 * k1[1])
                k3 = rhs(th + dt / 2 * k2[0], om + dt / 2 * k2[1])
                k4 = rhs(th + dt * k3[0], om + dt * k3[1])
                th = th + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
                om = om + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
            return th
    elif kind == "lotka-volterra":
        def f(a, b):
            u, v, dt = 1.0, 0.5, 0.05
            for _ in range(steps):
                u, v = u + dt * (a * u - u * v), v + dt * (u * v - b * v)
            return u * m.exp(-v)
    else:
        raise ValueError(kind)
    return f


_RANGES = {
    "fixed point": {"a": (1.0, 3.0)},
    "logistic map": {"r": (1.5, 2.9), "x0": (0.1, 0.9)},
    "newton sqrt": {"a": (0.5, 9.0)},
    "euler": {"k": (0.2, 2.0), "y0": (-1.0, 1.0)},
    "rk4 pendulum": {"g": (1.0, 10.0), "theta0": (0.1, 1.2)},
    "lotka-volterra": {"a": (0.5, 1.5), "b": (0.5, 1.5)},
}


def random_case(kind: str, rng: random.Random, steps: int | None = None) -> Case:
    """A case of ``kind`` with seeded parameters and 1 to 30 steps."""
    params = {name: rng.uniform(lo, hi) for name, (lo, hi) in _RANGES[kind].items()}
    return Case(kind, steps if steps is not None else rng.randint(1, 30), params)


# -- dual numbers: forward-mode derivatives over any number type -----------------------------
class Dual:
    """``value + sum(d[i] e_i)``: a number with its partial derivatives by each parameter."""

    __slots__ = ("d", "v")

    def __init__(self, v, d):
        self.v, self.d = v, tuple(d)

    def _lift(self, other):
        return other if isinstance(other, Dual) else Dual(other, [0 * x for x in self.d])

    def __add__(self, other):
        o = self._lift(other)
        return Dual(self.v + o.v, [a + b for a, b in zip(self.d, o.d, strict=True)])

    __radd__ = __add__

    def __neg__(self):
        return Dual(-self.v, [-a for a in self.d])

    def __sub__(self, other):
        return self + (-self._lift(other))

    def __rsub__(self, other):
        return self._lift(other) - self

    def __mul__(self, other):
        o = self._lift(other)
        return Dual(self.v * o.v, [a * o.v + self.v * b for a, b in zip(self.d, o.d, strict=True)])

    __rmul__ = __mul__

    def __truediv__(self, other):
        o = self._lift(other)
        return Dual(self.v / o.v, [(a * o.v - self.v * b) / (o.v * o.v)
                                   for a, b in zip(self.d, o.d, strict=True)])

    def __rtruediv__(self, other):
        return self._lift(other) / self

    def __pow__(self, k):
        assert not isinstance(k, Dual)
        return Dual(self.v**k, [k * self.v ** (k - 1) * a for a in self.d])


def _dual_namespace(base: SimpleNamespace) -> SimpleNamespace:
    def sin(x):
        return Dual(base.sin(x.v), [base.cos(x.v) * a for a in x.d]) if isinstance(
            x, Dual) else base.sin(x)

    def exp(x):
        if not isinstance(x, Dual):
            return base.exp(x)
        e = base.exp(x.v)
        return Dual(e, [e * a for a in x.d])

    return SimpleNamespace(sin=sin, exp=exp)


FLOAT = SimpleNamespace(sin=math.sin, cos=math.cos, exp=math.exp)
MP = SimpleNamespace(sin=mpmath.sin, cos=mpmath.cos, exp=mpmath.exp)
NUMPY = SimpleNamespace(sin=np.sin, exp=np.exp)


def value_and_gradient(case: Case, high: bool) -> tuple[float, list[float]]:
    """The value and gradient of ``case`` by forward mode on dual numbers: in mpmath at 50
    digits (``high``), or in float64 as a plain evaluation of the loop gives them."""
    if high:
        with mpmath.workdps(50):
            return _dual_run(case, [mpmath.mpf(v) for v in case.params.values()], MP)
    return _dual_run(case, [float(v) for v in case.params.values()], FLOAT)


def _dual_run(case: Case, point: Sequence[object], base: SimpleNamespace):
    n = len(point)
    one, zero = point[0] ** 0, point[0] * 0
    args = [Dual(v, [one if i == j else zero for j in range(n)]) for i, v in enumerate(point)]
    out = program(case.kind, case.steps, _dual_namespace(base))(*args)
    return out.v, list(out.d)


def conditions(case: Case) -> tuple[float, list[float]]:
    """Condition numbers of the value and of each gradient entry with respect to the
    parameters (relative: ``sum |p_j d/dp_j| / |value|``), from 50-digit references (the
    second derivatives by mpmath's numerical differentiation of the dual-number gradient)."""
    with mpmath.workdps(50):
        point = [mpmath.mpf(v) for v in case.params.values()]
        value, grad = _dual_run(case, point, MP)
        kv = sum(abs(p * g) for p, g in zip(point, grad, strict=True)) / max(abs(value), 1e-300)
        kg = []
        for i in range(len(point)):
            total = 0
            for j in range(len(point)):
                def along(t, j=j, i=i):
                    moved = [t if q == j else point[q] for q in range(len(point))]
                    return _dual_run(case, moved, MP)[1][i]
                total += abs(point[j] * mpmath.diff(along, point[j]))
            kg.append(float(total / max(abs(grad[i]), mpmath.mpf("1e-300"))))
        return float(kv), kg


def relative(got: float, want: float) -> float:
    return abs(float(got) - float(want)) / max(abs(float(want)), 1e-300)


def errors(case: Case, got_value: float, got_grad: Sequence[float]) -> tuple[float, list[float]]:
    """Relative errors of a value and gradient against the 50-digit reference."""
    value, grad = value_and_gradient(case, True)
    return relative(got_value, value), [relative(g, w) for g, w in zip(got_grad, grad,
                                                                        strict=True)]
