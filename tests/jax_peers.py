"""Helpers of the optional comparisons with JAX (``tests/test_*_vs_jax.py``): one NumPy loss,
traced by symdiff under named parameters and run by JAX with ``np`` rebound to ``jax.numpy``."""

from __future__ import annotations

import types


def traced(fn, names: list[str]):
    """``fn`` as a function whose parameters are ``names`` (symdiff names its arguments by
    the parameters of the function it traces)."""
    namespace = {"fn": fn}
    exec(f"def f({', '.join(names)}):\n    return fn({', '.join(names)})", namespace)
    return namespace["f"]


def with_jax(fn, jax):
    """``fn`` with its global ``np`` rebound to ``jax.numpy``."""
    return types.FunctionType(fn.__code__, {**fn.__globals__, "np": jax.numpy}, fn.__name__,
                              fn.__defaults__, fn.__closure__)
