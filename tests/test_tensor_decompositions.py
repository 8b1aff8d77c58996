"""Matrix decompositions (:mod:`symdiff.tensor.families.decompositions`): ``cholesky``,
``eigh``/``eigvalsh``, ``svd``/``svdvals`` and the singular-value norms, checked against
central differences in both modes (2-D, stacks, tall, wide), to second order, in float32, from
the string language and with clear refusals. Symmetric inputs are written as autograd's tests
write them: the function of ``(tril(A) + tril(A).T) / 2``."""

from __future__ import annotations

import numpy as np
import pytest

import symdiff as sd
from symdiff.errors import ShapeError, SymdiffError, UnsupportedError
from tests.numeric import central as _central


def _sym(A):
    L = np.tril(A)
    return (L + np.swapaxes(L, -1, -2)) / 2


def _spd(A):
    return _sym(A) + A.shape[-1] * np.eye(A.shape[-1])


def _weights(shape, seed):
    return np.random.default_rng(seed).normal(size=shape)


def _symmetric_cases(W):
    return [
        ("cholesky", lambda A: np.sum(W * np.linalg.cholesky(_spd(A)))),
        ("eigvalsh", lambda A: np.sum(W[..., 0] * np.linalg.eigvalsh(_sym(A)))),
        ("eigh", lambda A: np.sum(W[..., 1] * np.linalg.eigh(_sym(A))[0])
         + np.sum(W * np.linalg.eigh(_sym(A)).eigenvectors ** 2)),
        ("eigh UPLO=U", lambda A: np.sum(
            W * np.linalg.eigh(np.swapaxes(_sym(A), -1, -2), UPLO="U")[1] ** 2)),
    ]


def _svd_cases(Wu, Ws, Wv):
    def full(A):
        U, s, Vh = np.linalg.svd(A, full_matrices=False)
        return np.sum(Wu * U ** 2) + np.sum(Ws * s) + np.sum(Wv * Vh ** 2)

    return [("svd", full),
            ("svdvals", lambda A: np.sum(Ws * np.linalg.svd(A, compute_uv=False)))]


def _cases():
    cases = []
    for shape in [(3, 3), (2, 4, 4)]:
        cases += [(name, shape, fn) for name, fn in _symmetric_cases(_weights(shape, 1))]
    for shape in [(3, 3), (4, 2), (2, 4), (2, 3, 4), (2, 4, 3)]:
        k = min(shape[-2:])
        weights = (_weights((*shape[:-1], k), 2), _weights((*shape[:-2], k), 3),
                   _weights((*shape[:-2], k, shape[-1]), 4))
        cases += [(name, shape, fn) for name, fn in _svd_cases(*weights)]
    return cases


CASES = _cases()


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("name, shape, fn", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_gradient_against_central_differences(name, shape, fn, mode):
    A = np.random.default_rng(5).normal(size=shape)
    (got,) = sd.grad(fn, shapes={"A": shape}, mode=mode)(A)
    np.testing.assert_allclose(got, _central(fn, A), rtol=1e-6, atol=1e-7)


def _logdet_via_cholesky(A):
    return 2 * np.sum(np.log(np.diagonal(np.linalg.cholesky(_spd(A)))))


def _sum_eigvalsh_squared(A):
    return np.sum(np.linalg.eigvalsh(_sym(A)) ** 2) + np.sum(np.linalg.eigvalsh(_sym(A)) ** 3)


def _top_singular(A):
    return np.linalg.norm(A, 2) + np.linalg.norm(A, "nuc") ** 2


def _eigenvector_energy(A):
    return np.sum(np.linalg.eigh(_sym(A))[1][:, 1:] ** 3)


@pytest.mark.parametrize("fn, shape", [(_logdet_via_cholesky, (3, 3)),
                                       (_sum_eigvalsh_squared, (3, 3)),
                                       (_top_singular, (3, 2)),
                                       (_eigenvector_energy, (3, 3))])
def test_hessian_against_differences_of_the_gradient(fn, shape):
    A = np.random.default_rng(6).normal(size=shape)
    g = sd.grad(fn, shapes={"A": shape})
    H = np.asarray(sd.hessian(fn, shapes={"A": shape})(A)).reshape(A.size, A.size)
    want = np.stack([_central(lambda v, i=i: g(v)[0].ravel()[i], A).ravel()
                     for i in range(A.size)])
    np.testing.assert_allclose(H, want, rtol=1e-5, atol=1e-6)


def test_logdet_via_cholesky_equals_slogdet():
    A = np.random.default_rng(7).normal(size=(4, 4))
    (chol,) = sd.grad(_logdet_via_cholesky, shapes={"A": (4, 4)})(A)
    (lu,) = sd.grad(lambda A: np.linalg.slogdet(_spd(A))[1], shapes={"A": (4, 4)})(A)
    np.testing.assert_allclose(chol, lu, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("ord_", ["nuc", 2, -2])
@pytest.mark.parametrize("shape, axis", [((3, 4), None), ((2, 4, 3), (1, 2)),
                                         ((3, 2, 4), (0, 2))])
def test_singular_value_norms(ord_, shape, axis):
    def f(A):
        return np.sum(np.linalg.norm(A, ord_, axis=axis) ** 2)

    A = np.random.default_rng(8).normal(size=shape)
    for mode in ("reverse", "forward"):
        (got,) = sd.grad(f, shapes={"A": shape}, mode=mode)(A)
        np.testing.assert_allclose(got, _central(f, A), rtol=1e-6, atol=1e-7)


def test_string_language_equals_tracing():
    shape = (3, 3)
    A = np.random.default_rng(9).normal(size=shape)
    S = A @ A.T + 3 * np.eye(3)
    for text, fn in [
        ("sum(cholesky(A) ** 2)", lambda A: np.sum(np.linalg.cholesky(A) ** 2)),
        ("sum(eigvalsh(A) ** 3)", lambda A: np.sum(np.linalg.eigvalsh(A) ** 3)),
        ("sum(svdvals(A))", lambda A: np.sum(np.linalg.svd(A, compute_uv=False))),
    ]:
        value, (grad,) = sd.value_and_grad(text, shapes={"A": shape})(S)
        np.testing.assert_allclose(value, fn(S), rtol=1e-12)
        np.testing.assert_allclose(grad, sd.grad(fn, shapes={"A": shape})(S)[0], rtol=1e-10)


def test_symmetric_gradient_convention():
    """On a symmetric point the gradient is the symmetric one (autograd, JAX): V diag(G) V^T."""
    A = np.random.default_rng(10).normal(size=(4, 4))
    S = A + A.T
    (got,) = sd.grad(lambda A: np.linalg.eigvalsh(A)[-1], shapes={"A": (4, 4)})(S)
    v = np.linalg.eigh(S)[1][:, -1]
    np.testing.assert_allclose(got, np.outer(v, v), atol=1e-12)


def test_float32():
    A = np.random.default_rng(11).normal(size=(3, 3)).astype(np.float32)
    for fn in (lambda A: np.sum(np.log(np.diagonal(np.linalg.cholesky(A @ A.T)))),
               _sum_eigvalsh_squared, _top_singular, _eigenvector_energy,
               lambda A: np.sum(np.linalg.svd(A)[2] ** 3)):
        (got,) = sd.grad(fn, shapes={"A": (3, 3)})(A)
        assert got.dtype == np.float32
        want = sd.grad(fn, shapes={"A": (3, 3)})(A.astype(np.float64))[0]
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)


def test_steps_name_the_rules():
    text = str(sd.derive("sum(cholesky(A)) + sum(eigvalsh(A))", wrt="A", shapes={"A": (2, 2)}))
    assert "[Cholesky factor]" in text and "[symmetric eigenvalues]" in text


def test_bad_calls_are_clear():
    with pytest.raises(ShapeError, match="cholesky: needs a square matrix"):
        sd.grad("sum(cholesky(A))", shapes={"A": (2, 3)})
    with pytest.raises(ShapeError, match="eigh: needs a square matrix"):
        sd.grad(lambda A: np.sum(np.linalg.eigh(A)[0]), shapes={"A": (2, 3)})
    with pytest.raises(ShapeError, match="eigvalsh: needs a square matrix"):
        sd.grad(lambda A: np.sum(np.linalg.eigvalsh(A)), shapes={"A": (3,)})
    with pytest.raises(SymdiffError, match="UPLO must be 'L' or 'U'"):
        sd.grad(lambda A: np.sum(np.linalg.eigvalsh(A, UPLO="X")), shapes={"A": (2, 2)})
    with pytest.raises(UnsupportedError, match="hermitian"):
        sd.grad(lambda A: np.sum(np.linalg.svd(A, hermitian=True)[1]), shapes={"A": (2, 2)})
    with pytest.raises(ShapeError, match="svdvals: needs a matrix"):
        sd.grad("sum(svdvals(x))", shapes={"x": (3,)})


def test_square_full_matrices_is_the_reduced_svd():
    A = np.random.default_rng(12).normal(size=(3, 3))

    def f(A):
        U, s, Vh = np.linalg.svd(A)
        return np.sum(U[:, 0] ** 2 * s) + np.sum(Vh ** 4)

    (got,) = sd.grad(f, shapes={"A": (3, 3)})(A)
    np.testing.assert_allclose(got, _central(f, A), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (2, 5, 3)])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_full_matrices_of_a_non_square_matrix(shape, mode):
    """NumPy's default full_matrices=True: U is m x m (tall) or Vh n x n (wide), its values
    NumPy's own; the columns (rows) beyond min(m, n) are an arbitrary basis of the complement,
    so, as in PyTorch, the gradient ignores them: a loss of the reduced parts has the gradient
    of the same loss through full_matrices=False."""
    rng = np.random.default_rng(16)
    A = rng.normal(size=shape)
    k = min(shape[-2:])
    W = rng.normal(size=shape[:-2] + (max(shape[-2:]),) * 2)

    def full(A):
        U, s, Vh = np.linalg.svd(A)
        return (np.sum(U[..., :k] ** 2 * W[..., :shape[-2], :k]) + np.sum(s ** 3)
                + np.sum((Vh[..., :k, :] * W[..., :k, :shape[-1]]) ** 3))

    def reduced(A):
        U, s, Vh = np.linalg.svd(A, full_matrices=False)
        return (np.sum(U ** 2 * W[..., :shape[-2], :k]) + np.sum(s ** 3)
                + np.sum((Vh * W[..., :k, :shape[-1]]) ** 3))

    (got,) = sd.grad(full, shapes={"A": shape}, mode=mode)(A)
    np.testing.assert_allclose(got, _central(reduced, A), rtol=1e-6, atol=1e-7)
    U = sd.compile(lambda A: np.linalg.svd(A)[0] * 1.0, shapes={"A": shape})(A)
    Vh = sd.compile(lambda A: np.linalg.svd(A)[2] * 1.0, shapes={"A": shape})(A)
    np.testing.assert_array_equal(U, np.linalg.svd(A)[0])
    np.testing.assert_array_equal(Vh, np.linalg.svd(A)[2])


def test_one_decomposition_per_matrix():
    """U, s, Vh (and w, V) are items of one ``np.linalg.svd`` (``eigh``) call, reused by the
    gradient: the nuclear norm's gradient is one svd and ``U @ Vh``."""
    nuclear = sd.grad(lambda W: np.linalg.norm(W, "nuc"), shapes={"W": (3, 4)}).source
    assert nuclear.count("_np.linalg.svd(") == 1 and "compute_uv" not in nuclear

    def eigen(A):
        w, V = np.linalg.eigh(A)
        return np.sum(w * V[0] ** 2)

    assert sd.grad(eigen, shapes={"A": (3, 3)}).source.count("_np.linalg.eigh(") == 1


def test_pca_hessian_and_a_jacobian():
    def pca(X):
        _, _, Vh = np.linalg.svd(X - np.mean(X, axis=0), full_matrices=False)
        return np.sum((X @ Vh[:1].T) ** 2)

    X = np.random.default_rng(13).normal(size=(4, 3))
    g = sd.grad(pca, shapes={"X": (4, 3)})
    H = np.asarray(sd.hessian(pca, shapes={"X": (4, 3)})(X)).reshape(12, 12)
    want = np.stack([_central(lambda v, i=i: g(v)[0].ravel()[i], X).ravel() for i in range(12)])
    np.testing.assert_allclose(H, want, rtol=1e-5, atol=1e-5)

    def vectors(A):
        return np.linalg.svd(A, full_matrices=False)[2] ** 2

    A = np.random.default_rng(14).normal(size=(2, 3))
    J = np.asarray(sd.jacobian(vectors, shapes={"A": (2, 3)})(A)).reshape(6, 6)
    want = np.stack([_central(lambda v, i=i: vectors(v).ravel()[i], A).ravel() for i in range(6)])
    np.testing.assert_allclose(J, want, rtol=1e-6, atol=1e-7)


def test_repeated_eigenvalues_give_non_finite_vector_gradients():
    """As in autograd and JAX: eigenvalues stay finite, eigenvectors divide by 0 gaps."""
    identity = np.eye(3)
    (values,) = sd.grad(lambda A: np.sum(np.linalg.eigvalsh(A) ** 2), shapes={"A": (3, 3)})(
        identity)
    np.testing.assert_allclose(values, 2 * identity, atol=1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        (vectors,) = sd.grad(lambda A: np.sum(np.linalg.eigh(A)[1] ** 3),
                             shapes={"A": (3, 3)})(identity)
    assert not np.all(np.isfinite(vectors))


def test_named_dimensions():
    g = sd.grad("sum(eigvalsh(A) ** 2) + sum(svdvals(A))", shapes={"A": ("n", "n")})
    for n in (1, 3):
        A = np.random.default_rng(n).normal(size=(n, n))
        S = A + A.T
        (got,) = g(S)
        U, _, Vh = np.linalg.svd(S)
        np.testing.assert_allclose(got, 2 * S + U @ Vh, atol=1e-10)
    with pytest.raises(ShapeError, match="non-square matrix needs integer sizes"):
        sd.grad("sum(svdvals(A))", shapes={"A": ("m", "n")})


def test_cholesky_gradient_uses_the_blocked_triangular_inverse():
    """``L^-1`` is ``_tril_inv`` (matrix products by blocks of 64 rows; no LU, no solve): the
    gradient equals the closed form with NumPy's solves at a size with two blocks, for a matrix
    and a stack of them."""
    rng = np.random.default_rng(15)
    n = 70
    B = rng.normal(size=(2, n, n))
    A = B @ np.swapaxes(B, -1, -2) + n * np.eye(n)
    W = rng.normal(size=(n, n))

    def f(A):
        return np.sum(np.linalg.cholesky(A) * W)

    g = sd.grad(f, shapes={"A": (2, n, n)})
    assert "_tril_inv(" in g.source and "_np.linalg.solve" not in g.source
    L = np.linalg.cholesky(A)
    phi = (np.swapaxes(L, -1, -2) @ W) * (np.tril(np.ones((n, n))) - np.eye(n) / 2)
    Lt = np.swapaxes(L, -1, -2)
    S = np.linalg.solve(Lt, np.swapaxes(np.linalg.solve(Lt, phi), -1, -2))
    np.testing.assert_allclose(g(A)[0], (S + np.swapaxes(S, -1, -2)) / 2, rtol=1e-9, atol=1e-12)


def test_eigh_upper_gives_numpys_eigenvectors():
    """UPLO='U' is passed to NumPy: emulating it by the lower triangle of A.T gave other signs of
    some eigenvectors than np.linalg.eigh(A, 'U') (a wrong value, found by autograd's case)."""
    f = sd.compile(lambda A: np.linalg.eigh(A, "U")[1] + np.linalg.eigvalsh(A, UPLO="U"),
                   shapes={"A": (6, 6)})
    assert "UPLO='U'" in f.source
    for seed in range(5):
        B = np.random.default_rng(seed).normal(size=(6, 6))
        A = B @ B.T
        want = np.linalg.eigh(A, "U")[1] + np.linalg.eigvalsh(A, UPLO="U")
        np.testing.assert_allclose(f(A), want, rtol=1e-12, atol=1e-12)
