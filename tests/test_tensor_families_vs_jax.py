"""Optional: the NumPy operations of the tensor families against JAX (run when ``jax`` is
installed; JAX is not a dependency of symdiff: ``pip install jax``).

Each case is a scalar loss written once with NumPy: symdiff traces it, and JAX runs the same
function with ``np`` rebound to ``jax.numpy`` (in float64); the gradients from ``jax.grad`` and,
for a few, the Hessians from ``jax.hessian`` must agree to 1e-9.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import symdiff as sd

from .jax_peers import traced, with_jax

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("jax") is None,
    reason="optional comparison with JAX: jax is not installed (pip install jax)",
)

_RNG = np.random.default_rng(0)
_SPD = (lambda m: m @ m.T + 4 * np.eye(4))(_RNG.normal(size=(4, 4)))
_IDX = np.array([2, 0, 2, 3])
_BIG = _RNG.integers(0, 6, 500)  # a bound index constant (more than 64 entries)
_MASK = np.array([True, False, True, True, False, True])
_A = _RNG.normal(size=(4, 4)) + 3 * np.eye(4)
_V, _W = _RNG.normal(size=4), _RNG.normal(size=6)
_M = _RNG.normal(size=(3, 5))
_T = _RNG.normal(size=(2, 3, 4))

#: (name, function of NumPy arrays, argument values); symmetric: compare symmetric gradients.
CASES = [
    ("det", lambda A: np.linalg.det(A), [_A]),
    ("slogdet", lambda A: np.linalg.slogdet(A)[1], [_A]),
    ("inv", lambda A: np.sum(np.linalg.inv(A) ** 2), [_A]),
    ("solve", lambda A, b: np.sum(np.linalg.solve(A, b) ** 3), [_A, _V]),
    ("einsum", lambda A, b: np.einsum("ij,j,i->", A, b, b), [_A, _V]),
    ("trace offset", lambda M: np.trace(M, offset=1) ** 2, [_M]),
    ("norm", lambda x: np.linalg.norm(x), [_W]),
    ("nuclear norm", lambda M: np.linalg.norm(M, "nuc"), [_M]),
    ("cholesky", lambda A: np.sum(np.log(np.diagonal(np.linalg.cholesky(A)))) +
     np.sum(np.linalg.cholesky(A) ** 2), [_SPD]),
    ("eigvalsh", lambda A: np.sum(np.linalg.eigvalsh(A) ** 3), [_SPD]),
    ("svd values", lambda M: np.sum(np.linalg.svd(M, compute_uv=False) ** 3), [_M]),
    ("cumsum", lambda x: np.sum(np.cumsum(x) ** 2), [_W]),
    ("cumprod", lambda x: np.sum(np.cumprod(x)), [_W]),
    ("sort", lambda x: np.sum(np.sort(x) * np.arange(6.0)), [_W]),
    ("roll and flip", lambda x: np.sum(np.roll(x, 2) * np.flip(x) ** 2), [_W]),
    ("concatenate", lambda x, y: np.sum(np.sin(np.concatenate([x, y]))), [_V, _W]),
    ("triu", lambda M: np.sum(np.triu(M, 1) ** 2), [_A]),
    ("var ddof", lambda x: np.var(x, ddof=1), [_W]),
    ("std axis", lambda M: np.sum(np.std(M, axis=0) ** 3), [_M]),
    ("gather", lambda x: np.sum(x[_IDX] ** 2), [_V]),
    ("large gather", lambda x: np.sum(np.sin(x[_BIG]) ** 2), [_W]),
    ("where constant mask", lambda x: np.sum(np.where(_MASK, np.sin(x), x ** 2)), [_W]),
    ("tensordot", lambda x, M: np.sum(np.tensordot(x, M, axes=([0], [0])) ** 2), [_T, _M[:2]]),
    ("closure over data", lambda x: np.sum((_A @ x - _V) ** 2), [_V]),
]
_SYMMETRIC = {"cholesky", "eigvalsh"}


@pytest.fixture(scope="module")
def jax():
    import jax

    jax.config.update("jax_enable_x64", True)
    return jax


def _names(count: int) -> list[str]:
    return [f"a{i}" for i in range(count)]


def _sym(a: np.ndarray) -> np.ndarray:
    return (a + np.swapaxes(a, -1, -2)) / 2


def test_every_case_against_jax(jax):
    assert len(CASES) >= 20
    for name, fn, args in CASES:
        names = _names(len(args))
        g = sd.grad(traced(fn, names), wrt=names,
                    shapes={n: a.shape for n, a in zip(names, args, strict=True)})
        theirs = jax.grad(with_jax(fn, jax), argnums=tuple(range(len(args))))(
            *(jax.numpy.asarray(a) for a in args))
        for mine, other in zip(g(*args), theirs, strict=True):
            other = np.asarray(other)
            if name in _SYMMETRIC:  # the symmetric gradient, however each spreads it
                mine, other = _sym(mine), _sym(other)
            np.testing.assert_allclose(mine, other, rtol=1e-9, atol=1e-11, err_msg=name)


@pytest.mark.parametrize("name", ["det", "solve", "cholesky", "cumprod", "sort", "var ddof",
                                  "large gather"])
def test_hessians_against_jax(jax, name):
    _, fn, args = next(c for c in CASES if c[0] == name)
    x = args[0]
    names = _names(len(args))
    H = sd.hessian(traced(fn, names), wrt=names[0],
                   shapes={n: a.shape for n, a in zip(names, args, strict=True)})
    mine = np.asarray(H(*args)).reshape(x.size, x.size)
    rest = [jax.numpy.asarray(a) for a in args[1:]]
    jfn = with_jax(fn, jax)
    theirs = np.asarray(jax.hessian(lambda z: jfn(z.reshape(x.shape), *rest))(
        jax.numpy.asarray(x).reshape(-1)))
    if name in _SYMMETRIC:  # the Hessian along symmetric directions, on both sides
        n = x.shape[-1]
        P = np.zeros((n * n, n * n))  # vec(X) -> vec(sym(X))
        for i in range(n):
            for j in range(n):
                P[i * n + j, i * n + j] += 0.5
                P[i * n + j, j * n + i] += 0.5
        mine, theirs = P @ mine @ P, P @ theirs @ P
    np.testing.assert_allclose(mine, theirs, rtol=1e-8, atol=1e-10, err_msg=name)
