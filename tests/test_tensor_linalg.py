"""The linear-algebra families (:mod:`symdiff.tensor.families.linalg` and
:mod:`~symdiff.tensor.families.contractions`): det, logdet/slogdet, inv, solve, norm, einsum,
trace, diagonal, diag, outer, inner, dot, tensordot. Gradients against central differences in
both modes (batched stacks, 1-element axes, float32), against SymPy's symbolic matrices,
Hessians, the string language against tracing, the closed forms in the emitted code, errors."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import symdiff as sd
from symdiff import verify
from symdiff.errors import ParseError, ShapeError, SymdiffError, UnsupportedError


def _central(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    out = np.zeros(x.shape)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = eps
        out[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return out


def _point(shape: tuple[int, ...], seed: int = 3) -> np.ndarray:
    """Random entries, made diagonally dominant when square (well away from singular)."""
    x = np.random.default_rng(seed).uniform(-1, 1, shape)
    if len(shape) >= 2 and shape[-1] == shape[-2]:
        x = x + 3 * np.eye(shape[-1])
    return x


# (string language, the same in NumPy, shape of x)
CASES = [
    ("det(x)", lambda x: np.linalg.det(x), (3, 3)),
    ("det(x)", lambda x: np.linalg.det(x), (1, 1)),
    ("sum(det(x) ** 2)", lambda x: np.sum(np.linalg.det(x) ** 2), (2, 3, 3)),
    ("logdet(x)", lambda x: np.linalg.slogdet(x)[1], (3, 3)),
    ("sum(logdet(x))", lambda x: np.sum(np.linalg.slogdet(x)[1]), (2, 2, 2)),
    ("sum(sin(inv(x)))", lambda x: np.sum(np.sin(np.linalg.inv(x))), (3, 3)),
    ("sum(sin(inv(x)))", lambda x: np.sum(np.sin(np.linalg.inv(x))), (2, 2, 2)),
    ("sum(sin(solve(x, x[0])))", lambda x: np.sum(np.sin(np.linalg.solve(x, x[0]))), (3, 3)),
    ("sum(sin(solve(x, x[:, 0:2])))",
     lambda x: np.sum(np.sin(np.linalg.solve(x, x[:, 0:2]))), (3, 3)),
    ("sum(sin(solve(x, x[0, 0])))",
     lambda x: np.sum(np.sin(np.linalg.solve(x, x[0, 0]))), (2, 3, 3)),
    ("sum(sin(solve(x, x[:, :, 0:1])))",
     lambda x: np.sum(np.sin(np.linalg.solve(x, x[:, :, 0:1]))), (2, 3, 3)),
    ("trace(x) ** 2", lambda x: np.trace(x) ** 2, (3, 3)),
    ("trace(x @ sin(x).T)", lambda x: np.trace(x @ np.sin(x).T), (2, 3)),
    ("sum(trace(x, axis1=1, axis2=2) ** 2)",
     lambda x: np.sum(np.trace(x, axis1=1, axis2=2) ** 2), (2, 3, 3)),
    ("sum(diagonal(x) ** 3)", lambda x: np.sum(np.diagonal(x) ** 3), (3, 3)),
    ("sum(sin(diag(x)))", lambda x: np.sum(np.sin(np.diag(x))), (4,)),
    ("sum(diag(x) ** 2)", lambda x: np.sum(np.diag(x) ** 2), (3, 3)),
    ("sum(sin(outer(x, x ** 2)))", lambda x: np.sum(np.sin(np.outer(x, x ** 2))), (4,)),
    ("inner(x, sin(x))", lambda x: np.inner(x, np.sin(x)), (4,)),
    ("sum(sin(inner(x, cos(x))))", lambda x: np.sum(np.sin(np.inner(x, np.cos(x)))), (2, 3)),
    ("sum(dot(x[0, 0], x))", lambda x: np.sum(np.dot(x[0, 0], x)), (2, 3)),
    ("sum(sin(dot(x, x.T)))", lambda x: np.sum(np.sin(np.dot(x, x.T))), (2, 3)),
    ("sum(sin(dot(x, reshape(cos(x), (2, 3, 2)))))",
     lambda x: np.sum(np.sin(np.dot(x, np.cos(x).reshape(2, 3, 2)))), (2, 2, 3)),
    ("sum(sin(tensordot(x, cos(x), axes=2)))",
     lambda x: np.sum(np.sin(np.tensordot(x, np.cos(x), axes=2))), (2, 3)),
    ("sum(sin(tensordot(x, cos(x), axes=([0], [0]))))",
     lambda x: np.sum(np.sin(np.tensordot(x, np.cos(x), axes=([0], [0])))), (2, 3)),
    ('sum(sin(einsum("ij,j->i", x, x[0])))',
     lambda x: np.sum(np.sin(np.einsum("ij,j->i", x, x[0]))), (3, 3)),
    ("sum(sin(einsum('ij,jk', x, x)))", lambda x: np.sum(np.sin(np.einsum("ij,jk", x, x))),
     (3, 3)),
    ('sum(sin(einsum("...ij,...j->...i", x, x[:, :, 0])))',
     lambda x: np.sum(np.sin(np.einsum("...ij,...j->...i", x, x[..., 0]))), (2, 3, 3)),
    ('einsum("i,ij,j->", x[0], x, x[1])', lambda x: np.einsum("i,ij,j->", x[0], x, x[1]),
     (3, 3)),
    ('einsum("ii", x) ** 2', lambda x: np.einsum("ii", x) ** 2, (3, 3)),
    ('sum(einsum("bij,bj->bi", x, x[:, 0]) ** 2)',
     lambda x: np.sum(np.einsum("bij,bj->bi", x, x[:, 0]) ** 2), (2, 3, 3)),
    ('sum(einsum("ij->j", x) ** 2)', lambda x: np.sum(np.einsum("ij->j", x) ** 2), (1, 3)),
    ("norm(x)", lambda x: np.linalg.norm(x), (5,)),
    ("norm(x)", lambda x: np.linalg.norm(x), (2, 3)),
    ("norm(x, 1)", lambda x: np.linalg.norm(x, 1), (5,)),
    ("norm(x, inf)", lambda x: np.linalg.norm(x, np.inf), (5,)),
    ("sum(norm(x, axis=1))", lambda x: np.sum(np.linalg.norm(x, axis=1)), (2, 3)),
    ("norm(x, 1)", lambda x: np.linalg.norm(x, 1), (2, 3)),
    ("norm(x, -inf)", lambda x: np.linalg.norm(x, -np.inf), (2, 3)),
    ("norm(x, 3)", lambda x: np.linalg.norm(x, 3), (5,)),
]
IDS = [f"{c[0]}-{c[2]}" for c in CASES]


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("text, fn, shape", CASES, ids=IDS)
def test_gradient_against_central_differences(text, fn, shape, mode):
    x = _point(shape)
    (got,) = sd.grad(fn, shapes={"x": shape}, mode=mode)(x)
    np.testing.assert_allclose(got, _central(fn, x), rtol=1e-6, atol=1e-7)


STRINGS = [c for c in CASES if "inf" not in c[0]]  # (the string language has no inf)


@pytest.mark.parametrize("text, fn, shape", STRINGS, ids=[f"{c[0]}-{c[2]}" for c in STRINGS])
def test_string_language_equals_tracing(text, fn, shape):
    x = _point(shape, seed=4)
    value, (grad,) = sd.value_and_grad(text, shapes={"x": shape})(x)
    np.testing.assert_allclose(value, fn(x), rtol=1e-12)
    traced = sd.value_and_grad(fn, shapes={"x": shape})
    np.testing.assert_allclose(grad, traced(x)[1][0], rtol=1e-12, atol=1e-14)


HESSIANS = [c for c in CASES if "inf" not in c[0] and "norm(x, 1)" not in c[0]][::3]


@pytest.mark.parametrize("text, fn, shape", HESSIANS, ids=[f"{c[0]}-{c[2]}" for c in HESSIANS])
def test_hessian_against_differences_of_the_gradient(text, fn, shape):
    x = _point(shape, seed=5)
    g = sd.grad(fn, shapes={"x": shape})
    H = np.asarray(sd.hessian(fn, shapes={"x": shape})(x)).reshape(x.size, x.size)
    want = np.stack([_central(lambda v, i=i: g(v)[0].ravel()[i], x).ravel()
                     for i in range(x.size)])
    np.testing.assert_allclose(H, want, rtol=1e-5, atol=1e-6)


def _symbolic(n: int) -> tuple[sp.Matrix, list[sp.Symbol]]:
    xs = sp.symbols(f"a0:{n * n}", real=True)
    return sp.Matrix(n, n, xs), list(xs)


@pytest.mark.parametrize("n", [2, 3])
def test_det_gradient_and_hessian_against_sympy(n):
    M, xs = _symbolic(n)
    f = M.det()
    x = _point((n, n), seed=6)
    point = dict(zip(xs, x.ravel(), strict=True))
    grad = np.array([float(sp.diff(f, a).subs(point)) for a in xs]).reshape(n, n)
    hess = np.array([[float(sp.diff(f, a, b).subs(point)) for b in xs] for a in xs])
    (got,) = sd.grad("det(A)", shapes={"A": (n, n)})(x)
    np.testing.assert_allclose(got, grad, rtol=1e-12, atol=1e-12)
    H = sd.hessian(lambda A: np.linalg.det(A), shapes={"A": (n, n)}, mode="forward")
    np.testing.assert_allclose(np.asarray(H(x)).reshape(n * n, n * n), hess, rtol=1e-10,
                               atol=1e-12)


def test_inv_and_solve_against_sympy():
    M, xs = _symbolic(2)
    bs = sp.symbols("b0:2", real=True)
    f_inv = sum(e**2 for e in M.inv())
    f_solve = sum(e**3 for e in M.LUsolve(sp.Matrix(bs)))
    x = _point((2, 2), seed=7)
    b = np.array([0.4, -0.9])
    point = {**dict(zip(xs, x.ravel(), strict=True)), **dict(zip(bs, b, strict=True))}
    want_inv = np.array([float(sp.diff(f_inv, a).subs(point)) for a in xs]).reshape(2, 2)
    (got,) = sd.grad("sum(inv(A) ** 2)", shapes={"A": (2, 2)})(x)
    np.testing.assert_allclose(got, want_inv, rtol=1e-11)
    ga, gb = sd.grad(lambda A, b: np.sum(np.linalg.solve(A, b) ** 3),
                     shapes={"A": (2, 2), "b": (2,)})(x, b)
    np.testing.assert_allclose(ga, np.array([float(sp.diff(f_solve, a).subs(point))
                                             for a in xs]).reshape(2, 2), rtol=1e-11)
    np.testing.assert_allclose(gb, [float(sp.diff(f_solve, v).subs(point)) for v in bs],
                               rtol=1e-11)
    hess = np.array([[float(sp.diff(f_inv, a, c).subs(point)) for c in xs] for a in xs])
    H = sd.hessian("sum(inv(A) ** 2)", shapes={"A": (2, 2)})(x)
    np.testing.assert_allclose(np.asarray(H).reshape(4, 4), hess, rtol=1e-10)


def test_named_dimensions_and_float32():
    g = sd.grad("logdet(A) + sum(solve(A, b) ** 2) + trace(inv(A)) + norm(b)",
                shapes={"A": ("n", "n"), "b": ("n",)})
    for n in (1, 4):
        A = _point((n, n), seed=8).astype(np.float32)
        b = np.linspace(-1, 1, n, dtype=np.float32)
        ga, gb = g(A, b)
        assert ga.dtype == gb.dtype == np.float32

        def f(A, b):
            return (np.linalg.slogdet(A)[1] + np.sum(np.linalg.solve(A, b) ** 2)
                    + np.trace(np.linalg.inv(A)) + np.linalg.norm(b))

        A64, b64 = A.astype(float), b.astype(float)
        np.testing.assert_allclose(ga, _central(lambda v, b=b64: f(v, b), A64),
                                   rtol=2e-4, atol=2e-5)
        np.testing.assert_allclose(gb, _central(lambda v, A=A64: f(A, v), b64),
                                   rtol=2e-4, atol=2e-5)


def test_einsum_with_named_dimensions():
    g = sd.grad('einsum("ij,jk,k->", A, B, x)', shapes={"A": ("n", "m"), "B": ("m", "m"),
                                                          "x": ("m",)})
    rng = np.random.default_rng(9)
    A, B, x = rng.normal(size=(2, 3)), rng.normal(size=(3, 3)), rng.normal(size=3)
    ga, gb, gx = g(A, B, x)
    np.testing.assert_allclose(ga, np.outer(np.ones(2), B @ x))
    np.testing.assert_allclose(gb, np.outer(A.sum(0), x))
    np.testing.assert_allclose(gx, B.T @ A.sum(0))


def test_slogdet_sign_and_tuple():
    def f(A):
        sign, logabsdet = np.linalg.slogdet(A)
        return sign * logabsdet

    A = _point((3, 3), seed=10)
    A[0] *= -1  # negative determinant
    (got,) = sd.grad(f, shapes={"A": (3, 3)})(A)
    np.testing.assert_allclose(got, _central(f, A), rtol=1e-6)
    result = sd.value_and_grad(lambda A: np.linalg.slogdet(A).logabsdet,
                               shapes={"A": (3, 3)})(A)
    np.testing.assert_allclose(result[0], np.linalg.slogdet(A)[1])


@pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")
@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_norm_gradient_at_the_origin_is_zero():
    g = sd.grad("norm(x) + sum(norm(y, axis=0))", shapes={"x": (3,), "y": (2, 2)})
    gx, gy = g(np.zeros(3), np.array([[0.0, 3.0], [0.0, 4.0]]))
    np.testing.assert_array_equal(gx, 0)
    np.testing.assert_allclose(gy, [[0, 0.6], [0, 0.8]])
    H = sd.hessian("norm(x)", shapes={"x": (3,)}, mode="forward")(np.zeros(3))
    assert np.all(np.isfinite(H))


def _body(source: str) -> str:
    """The generated function's statements (no header, no helpers)."""
    return source.split("# Helpers copied")[0].split('"""')[-1]


def test_emitted_code_reads_like_the_cookbook():
    det = _body(sd.grad("det(A)", shapes={"A": (3, 3)}).source)
    assert "_np.linalg.det(A)" in det and "_np.linalg.inv(A)" in det and ".T" in det
    solve = _body(sd.grad("sum(solve(A, b))", shapes={"A": (3, 3), "b": (3,)}).source)
    assert "_np.linalg.solve(A.T" in solve and "inv" not in solve
    trace = _body(sd.value_and_grad("trace(A @ B)", shapes={"A": (3, 4), "B": (4, 3)}).source)
    assert "@" not in trace  # the product is never formed
    assert "_np.einsum('ab,ba->', A, B)" in trace
    three = _body(sd.value_and_grad('einsum("i,ij,j->", x, A, y)',
                                    shapes={"x": (3,), "A": (3, 4), "y": (4,)}).source)
    assert "optimize=True" in three
    assert "A.T @ x" in three or "x @ A" in three


def test_steps_name_the_rules():
    text = str(sd.derive("det(A) + trace(inv(A))", wrt="A", shapes={"A": (2, 2)}))
    assert "[determinant]" in text and "d det(A) = det(A) tr(A^-1 dA)" in text
    assert "[inverse]" in text and "d A^-1 = -A^-1 dA A^-1" in text
    assert "einsum (permuted subscripts)" in text


def test_verifier_allows_only_subscripts_strings():
    assert verify.allowed.EINSUM.match("ab,b->a")
    assert verify.allowed.EINSUM.match("->")
    for bad in ("__import__", "a b->a", "ab;b->a", "ab,b->a\n"):
        assert not verify.allowed.EINSUM.match(bad), bad


def test_bad_calls_are_clear():
    with pytest.raises(ShapeError, match="det: needs a square matrix"):
        sd.grad("det(A)", shapes={"A": (2, 3)})
    with pytest.raises(ShapeError, match="det: needs a square matrix"):
        sd.grad(lambda A: np.linalg.det(A), shapes={"A": ("n", "m")})
    with pytest.raises(ShapeError, match="solve: a of shape"):
        sd.grad("sum(solve(A, b))", shapes={"A": (3, 3), "b": (4,)})
    with pytest.raises(ShapeError, match="einsum: subscript 'j'"):
        sd.grad('sum(einsum("ij,jk->ik", A, B))', shapes={"A": (2, 3), "B": (2, 3)})
    with pytest.raises((ParseError, SymdiffError), match="output subscripts"):
        sd.grad('sum(einsum("ij->k", A))', shapes={"A": (2, 3)})
    with pytest.raises(ShapeError, match="trace: an offset or a non-square block needs integer"):
        sd.grad("trace(A)", shapes={"A": ("n", "m")})
    with pytest.raises(UnsupportedError, match="matrix norm ord=3"):
        sd.grad(lambda A: np.linalg.norm(A, 3), shapes={"A": (3, 3)})
    with pytest.raises(ShapeError, match="diagonal: offset 5 leaves no diagonal"):
        sd.grad(lambda A: np.sum(np.diagonal(A, 5)), shapes={"A": (3, 3)})
    with pytest.raises(ParseError, match="string literals"):
        sd.grad('sum(A) + len("x")', shapes={"A": (2,)})


def test_dot_method_and_np_dot_of_stacks():
    def f(x, y):
        return np.sum(np.sin(x.dot(y))) + np.sum(np.dot(x[None], y) ** 2)

    rng = np.random.default_rng(11)
    x, y = rng.normal(size=(2, 3)), rng.normal(size=(3, 2))
    gx, gy = sd.grad(f, shapes={"x": (2, 3), "y": (3, 2)})(x, y)
    np.testing.assert_allclose(gx, _central(lambda v: f(v, y), x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gy, _central(lambda v: f(x, v), y), rtol=1e-6, atol=1e-8)


def test_only_einsum_subscripts_are_read_as_strings():
    for text in ('einsum("ij;x", A)', 'einsum("ij", "x")', "einsum('ij\\n', A)",
                 'sum(A, "x")', 'einsum(A, "ij")'):
        with pytest.raises(ParseError, match="string literals"):
            sd.grad(text, shapes={"A": (2, 2)})


def test_einsum_accepts_optimize():
    def f(x):
        return np.sum(np.einsum("ij,j->i", x, x[0], optimize=True) ** 2)

    x = _point((3, 3), seed=12)
    (got,) = sd.grad(f, shapes={"x": (3, 3)})(x)
    np.testing.assert_allclose(got, _central(f, x), rtol=1e-6, atol=1e-8)


def _trace_of(offset: int):
    def f(x):
        return np.sum(np.trace(x, offset=offset) ** 2)
    return f


@pytest.mark.parametrize("shape, offset", [
    ((10, 11), 3), ((11, 10), -4), ((10, 11), -9), ((5, 6, 4, 3), 2), ((3, 5), 4), ((3, 5), 7),
    ((2, 3), 0),
])
def test_trace_with_offsets_and_non_square_blocks(shape, offset):
    """autograd's own cases: np.trace(x, offset) of non-square and 4-D arrays."""
    f = _trace_of(offset)
    x = np.random.default_rng(abs(offset)).normal(size=shape)
    (got,) = sd.grad(f, shapes={"x": shape})(x)
    np.testing.assert_allclose(got, _central(f, x), rtol=1e-6, atol=1e-8)


def _diag_of(k: int):
    def f(v):
        return np.sum(np.diag(v, k) ** 3) + np.sum(np.diagonal(np.outer(v, v), abs(k)))
    return f


@pytest.mark.parametrize("k", [0, 2, -1])
def test_diag_and_diagonal_off_the_main_diagonal(k):
    f = _diag_of(k)
    v = np.random.default_rng(7).normal(size=4)
    (got,) = sd.grad(f, shapes={"v": (4,)})(v)
    np.testing.assert_allclose(got, _central(f, v), rtol=1e-6, atol=1e-8)
    H = np.asarray(sd.hessian(f, shapes={"v": (4,)})(v)).reshape(4, 4)
    g = sd.grad(f, shapes={"v": (4,)})
    numeric = np.stack([_central(lambda w, i=i: g(w)[0][i], v) for i in range(4)])
    np.testing.assert_allclose(H, numeric, rtol=1e-5, atol=1e-6)
