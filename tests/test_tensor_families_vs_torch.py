"""Optional: the NumPy operations of the tensor families against PyTorch's autograd (run when
``torch`` is installed; PyTorch is not a dependency of symdiff: ``pip install torch``).

Each case is a scalar loss written twice, once with NumPy (traced by symdiff) and once with
torch; the gradients and, for a few, the Hessians must agree to 1e-9.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import symdiff as sd

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None,
    reason="optional comparison with PyTorch: torch is not installed (pip install torch)",
)

_RNG = np.random.default_rng(0)
_SPD = (lambda m: m @ m.T + 4 * np.eye(4))(_RNG.normal(size=(4, 4)))
_IDX = np.array([2, 0, 2, 3])


def _cases(t):
    """(name, numpy function, torch function, argument values)."""
    a = _RNG.normal(size=(4, 4)) + 3 * np.eye(4)
    v, w = _RNG.normal(size=4), _RNG.normal(size=6)
    m = _RNG.normal(size=(3, 5))
    return [
        ("det", lambda A: np.linalg.det(A), lambda A: t.linalg.det(A), [a]),
        ("slogdet", lambda A: np.linalg.slogdet(A)[1], lambda A: t.linalg.slogdet(A)[1], [a]),
        ("inv", lambda A: np.sum(np.linalg.inv(A) ** 2), lambda A: (t.linalg.inv(A) ** 2).sum(),
         [a]),
        ("solve", lambda A, b: np.sum(np.linalg.solve(A, b) ** 3),
         lambda A, b: (t.linalg.solve(A, b) ** 3).sum(), [a, v]),
        ("einsum", lambda A, b: np.einsum("ij,j,i->", A, b, b),
         lambda A, b: t.einsum("ij,j,i->", A, b, b), [a, v]),
        ("trace offset", lambda M: np.trace(M, offset=1) ** 2,
         lambda M: t.diagonal(M, offset=1).sum() ** 2, [m]),
        ("norm", lambda x: np.linalg.norm(x), lambda x: t.linalg.norm(x), [w]),
        ("nuclear norm", lambda M: np.linalg.norm(M, "nuc"),
         lambda M: t.linalg.matrix_norm(M, "nuc"), [m]),
        ("cholesky", lambda A: np.sum(np.log(np.diagonal(np.linalg.cholesky(A)))),
         lambda A: t.log(t.diagonal(t.linalg.cholesky(A))).sum(), [_SPD]),
        ("eigvalsh", lambda A: np.sum(np.linalg.eigvalsh(A) ** 3),
         lambda A: (t.linalg.eigvalsh(A) ** 3).sum(), [_SPD]),
        ("svd values", lambda M: np.sum(np.linalg.svd(M, compute_uv=False) ** 3),
         lambda M: (t.linalg.svdvals(M) ** 3).sum(), [m]),
        ("cumsum", lambda x: np.sum(np.cumsum(x) ** 2), lambda x: (t.cumsum(x, 0) ** 2).sum(),
         [w]),
        ("cumprod", lambda x: np.sum(np.cumprod(x)), lambda x: t.cumprod(x, 0).sum(), [w]),
        ("sort", lambda x: np.sum(np.sort(x) * np.arange(6.0)),
         lambda x: (t.sort(x).values * t.arange(6.0)).sum(), [w]),
        ("roll and flip", lambda x: np.sum(np.roll(x, 2) * np.flip(x) ** 2),
         lambda x: (t.roll(x, 2) * t.flip(x, (0,)) ** 2).sum(), [w]),
        ("concatenate", lambda x, y: np.sum(np.sin(np.concatenate([x, y]))),
         lambda x, y: t.sin(t.cat([x, y])).sum(), [v, w]),
        ("triu", lambda M: np.sum(np.triu(M, 1) ** 2), lambda M: (t.triu(M, 1) ** 2).sum(), [a]),
        ("var ddof", lambda x: np.var(x, ddof=1), lambda x: t.var(x, correction=1), [w]),
        ("gather", lambda x: np.sum(x[_IDX] ** 2),
         lambda x: (x[t.as_tensor(_IDX)] ** 2).sum(), [v]),
        ("closure over data", lambda x: np.sum((a @ x - v) ** 2),
         lambda x: ((t.as_tensor(a) @ x - t.as_tensor(v)) ** 2).sum(), [v]),
    ]


@pytest.fixture(scope="module")
def torch():
    import torch

    torch.set_default_dtype(torch.float64)
    return torch


def _names(count: int) -> list[str]:
    return [f"a{i}" for i in range(count)]


def _traced(fn, names):
    namespace = {"fn": fn}
    exec(f"def f({', '.join(names)}):\n    return fn({', '.join(names)})", namespace)
    return namespace["f"]


def test_every_case_against_torch(torch):
    for name, fn, torch_fn, args in _cases(torch):
        names = _names(len(args))
        g = sd.grad(_traced(fn, names), wrt=names,
                    shapes={n: a.shape for n, a in zip(names, args, strict=True)})
        tensors = [torch.tensor(a, requires_grad=True) for a in args]
        theirs = torch.autograd.grad(torch_fn(*tensors), tensors)
        for mine, other in zip(g(*args), theirs, strict=True):
            if name in ("cholesky", "eigvalsh"):  # symmetric gradient, as torch gives it
                other = (other + other.T) / 2
                mine = (mine + mine.T) / 2
            np.testing.assert_allclose(mine, other.numpy(), rtol=1e-9, atol=1e-11,
                                       err_msg=name)


@pytest.mark.parametrize("name", ["det", "solve", "cumprod", "sort", "var ddof"])
def test_hessians_against_torch(torch, name):
    case = {c[0]: c for c in _cases(torch)}[name]
    _, fn, torch_fn, args = case
    x = args[0]
    rest = [torch.tensor(a) for a in args[1:]]
    names = _names(len(args))
    H = sd.hessian(_traced(fn, names), wrt=names[0],
                   shapes={n: a.shape for n, a in zip(names, args, strict=True)})
    mine = np.asarray(H(*args)).reshape(x.size, x.size)
    theirs = torch.autograd.functional.hessian(
        lambda z: torch_fn(z.reshape(x.shape), *rest), torch.tensor(x).reshape(-1))
    np.testing.assert_allclose(mine, theirs.numpy(), rtol=1e-8, atol=1e-10, err_msg=name)
