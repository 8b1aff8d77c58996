"""Sparse Jacobians and Hessians of scalar expressions (``sparse=True``): the pattern derived from
the expressions and the values against independent references (SymPy's ``diff``, and the dense
functions), the formats, the lower triangle, the standalone module and the errors."""

from __future__ import annotations

import builtins
import pickle

import numpy as np
import pytest
import scipy.sparse as sps
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import symdiff as sd
from symdiff.errors import SymdiffError
from symdiff.sparse.assemble import SparseDependencyError
from symdiff.sparse.function import SparseFunction


def chained_rosenbrock(n: int) -> str:
    return " + ".join(f"100*(x{i + 1} - x{i}**2)**2 + (1 - x{i})**2" for i in range(n - 1))


def _sympy_hessian(text: str, names: list[str]) -> tuple[sp.Matrix, list[sp.Symbol]]:
    symbols = [sp.Symbol(n, real=True) for n in names]
    expr = sp.sympify(text, locals={n: s for n, s in zip(names, symbols, strict=True)})
    return sp.hessian(expr, symbols), symbols


def _at(matrix: sp.Matrix, symbols: list[sp.Symbol], point: np.ndarray) -> np.ndarray:
    return np.array(sp.lambdify(symbols, matrix, "numpy")(*point), dtype=float)


def _union_of_nonzeros(f, names: list[str], draws: int, rng: np.random.Generator) -> np.ndarray:
    union = None
    for _ in range(draws):
        dense = f(**dict(zip(names, rng.uniform(-2, 2, len(names)), strict=True))).toarray()
        union = dense != 0 if union is None else union | (dense != 0)
    return union


@pytest.mark.parametrize("n", [2, 5, 12])
def test_chained_rosenbrock_hessian_against_sympy(n):
    names = [f"x{i}" for i in range(n)]
    text = chained_rosenbrock(n)
    H = sd.hessian(text, wrt=names, sparse=True)
    assert isinstance(H, SparseFunction)
    reference, symbols = _sympy_hessian(text, names)
    rng = np.random.default_rng(n)
    for _ in range(3):
        point = rng.uniform(-2, 2, n)
        got = H(**dict(zip(names, point, strict=True)))
        assert sps.issparse(got) and got.format == "csr" and got.shape == (n, n)
        np.testing.assert_allclose(got.toarray(), _at(reference, symbols, point), rtol=1e-12,
                                   atol=1e-9)
    # the pattern is exactly the tridiagonal band: the nonzeros of SymPy's Hessian as functions
    rows, cols = H.pattern
    structural = {(i, j) for i in range(n) for j in range(n) if reference[i, j] != 0}
    assert set(zip(rows.tolist(), cols.tolist(), strict=True)) == structural
    assert len(rows) == 3 * n - 2


def test_pattern_is_the_union_of_nonzeros_and_extras_are_structural():
    names = ["a", "b", "c", "d"]
    text = "a*b + sin(c)*d + a**2*c + exp(d) + relu(b - c)"
    H = sd.hessian(text, wrt=names, sparse=True)
    rng = np.random.default_rng(1)
    union = _union_of_nonzeros(H, names, 20, rng)
    rows, cols = H.pattern
    pattern = np.zeros((4, 4), dtype=bool)
    pattern[rows, cols] = True
    assert not (union & ~pattern).any(), "a nonzero value outside the pattern"
    reference, _ = _sympy_hessian("a*b + sin(c)*d + a**2*c + exp(d)", names)
    for i, j in zip(*np.nonzero(pattern & ~union), strict=True):  # zero at every point drawn:
        assert reference[i, j] != 0  # still a nonzero function (structural)
    # relu(b - c) is piecewise linear: its second derivative is 0 (relu'' = 0), no entry
    assert not pattern[1, 2] and not pattern[2, 1]


def test_structural_zero_at_a_point_is_kept():
    H = sd.hessian("x**3 + x*y", wrt=["x", "y"], sparse=True)
    at_zero = H(x=0.0, y=1.0)
    assert at_zero.nnz == 3  # d2/dx2 = 6x is 0 here, and stays an entry
    assert set(zip(*H.pattern, strict=True)) == {(0, 0), (0, 1), (1, 0)}
    assert at_zero[0, 0] == 0


def test_sparse_equals_dense_for_jacobian():
    exprs = ["x*y + z", "sin(y)", "exp(x*z) - w", "y**2"]
    names = ["w", "x", "y", "z"]
    J = sd.jacobian(exprs, wrt=names, sparse=True)
    dense = sd.jacobian(exprs, wrt=names)
    point = {"w": 0.3, "x": -0.7, "y": 1.1, "z": 0.4}
    got = J(**point)
    assert got.shape == (4, 4)
    np.testing.assert_allclose(got.toarray(), dense(**point), rtol=1e-14)
    assert set(zip(*J.pattern, strict=True)) == {
        (0, 1), (0, 2), (0, 3), (1, 2), (2, 0), (2, 1), (2, 3), (3, 2)}


@pytest.mark.parametrize("format", ["csr", "csc", "coo"])
def test_formats_values_and_lower_triangle(format):
    names = [f"x{i}" for i in range(6)]
    H = sd.hessian(chained_rosenbrock(6), wrt=names, sparse=format)
    point = dict(zip(names, np.linspace(-1, 1, 6), strict=True))
    got = H(**point)
    assert got.format == format and H.format == format
    dense = got.toarray()
    np.testing.assert_array_equal(dense, dense.T)
    rows, cols = H.pattern
    np.testing.assert_array_equal(H.values(**point), dense[rows, cols])
    lower = H.tril()
    low = lower(**point)
    np.testing.assert_array_equal(low.toarray(), np.tril(dense))
    lrows, lcols = lower.pattern
    assert (lrows >= lcols).all() and len(lrows) == 2 * 6 - 1
    np.testing.assert_array_equal(lower.values(**point), dense[lrows, lcols])
    assert H.with_format("csr")(**point).format == "csr"


def test_results_share_read_only_index_arrays():
    H = sd.hessian("x*y + y**2*z", wrt=["x", "y", "z"], sparse=True)
    first = H(1.0, 2.0, 3.0)
    assert first.has_canonical_format and not first.indices.flags.writeable
    with pytest.raises(ValueError):
        first.indices[:] = 0  # the pattern is every call's: it cannot be changed in place
    first.data[:] = 0  # the values are this call's own
    own = first.copy()
    own.eliminate_zeros()
    assert own.nnz == 0
    np.testing.assert_allclose(H(1.0, 2.0, 3.0).toarray(),
                               [[0, 1, 0], [1, 6, 4], [0, 4, 0]])
    square = (H(1.0, 2.0, 3.0) @ H(1.0, 2.0, 3.0)).toarray()
    for fmt in ("csc", "coo"):
        again = H.with_format(fmt)(1.0, 2.0, 3.0)
        np.testing.assert_allclose((again @ again).toarray(), square)


def test_standalone_module_gives_values_and_pattern(tmp_path):
    names = [f"x{i}" for i in range(5)]
    H = sd.hessian(chained_rosenbrock(5), wrt=names, sparse=True)
    path = H.save(tmp_path / "hess.py")
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    point = np.linspace(0.1, 0.9, 5)
    values = namespace["hessian_f"](*point)
    rows, cols, shape = namespace["_pattern"]()
    assembled = sps.coo_array((values, (rows, cols)), shape=shape).toarray()
    np.testing.assert_allclose(assembled, H(*point).toarray(), rtol=1e-15)


def test_pickles_and_loads_from_the_disk_cache():
    from symdiff.pipeline import clear_memo
    from symdiff.request_index import forget

    names = [f"x{i}" for i in range(4)]
    H = sd.hessian(chained_rosenbrock(4), wrt=names, sparse="coo").tril()
    again = pickle.loads(pickle.dumps(H))
    point = np.arange(4.0)
    assert type(again) is SparseFunction and again.format == "coo"
    np.testing.assert_array_equal(again(*point).toarray(), H(*point).toarray())
    clear_memo()
    forget()
    loaded = sd.hessian(chained_rosenbrock(4), wrt=names, sparse=True)
    assert type(loaded) is SparseFunction
    np.testing.assert_array_equal(np.tril(loaded(*point).toarray()), H(*point).toarray())


def test_errors():
    H = sd.hessian("x*y", wrt=["x", "y"], sparse=True)
    with pytest.raises(SymdiffError, match="one point"):
        H(np.ones(3), np.ones(3))
    with pytest.raises(SymdiffError, match="format"):
        sd.hessian("x*y", wrt=["x", "y"], sparse="dia")
    with pytest.raises(SymdiffError, match="backend='numpy'"):
        sd.jacobian(["x*y"], wrt=["x", "y"], sparse=True, backend="array_api")
    with pytest.raises(SymdiffError, match="tril"):
        sd.jacobian(["x*y"], wrt=["x", "y"], sparse=True).tril()
    with pytest.raises(TypeError):
        sd.grad("x*y", wrt=["x", "y"], sparse=True)


def test_missing_scipy_names_the_extra(monkeypatch):
    H = sd.hessian("x*y + x**2", wrt=["x", "y"], sparse=True)
    real_import = builtins.__import__

    def no_scipy(name, *args, **kwargs):
        if name == "scipy" or name.startswith("scipy."):
            raise ImportError("No module named 'scipy'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_scipy)
    with pytest.raises(SparseDependencyError, match=r"symdiff\[sparse\]") as raised:
        H(1.0, 2.0)
    assert isinstance(raised.value, ImportError)


def test_decorator_passes_sparse():
    @sd.hessian(wrt=["x", "y"], sparse=True)
    def f(x, y):
        return x**2 * y + y

    assert isinstance(f, SparseFunction)
    np.testing.assert_allclose(f(1.0, 2.0).toarray(), [[4.0, 2.0], [2.0, 0.0]])


_TERMS = ["{a}*{b}", "sin({a})", "exp({a}*{b})", "({a} - {b})**2", "{a}**3", "{a}",
          "log(1 + {a}**2)*{b}", "cos({a} + {b})"]


@settings(max_examples=15)
@given(st.lists(st.tuples(st.sampled_from(_TERMS), st.integers(0, 5), st.integers(0, 5)),
                min_size=1, max_size=6),
       st.integers(0, 2**32 - 1))
def test_random_sums_sparse_equals_dense(terms, seed):
    names = [f"v{i}" for i in range(6)]
    text = " + ".join(t.format(a=names[a], b=names[b]) for t, a, b in terms)
    used = sorted({names[a] for _, a, _ in terms} | {names[b] for t, _, b in terms if "{b}" in t})
    H = sd.hessian(text, wrt=used, sparse=True)
    dense = sd.hessian(text, wrt=used)
    rng = np.random.default_rng(seed)
    point = dict(zip(used, rng.uniform(-1, 1, len(used)), strict=True))
    np.testing.assert_allclose(H(**point).toarray(), np.asarray(dense(**point)).reshape(
        len(used), len(used)), rtol=1e-10, atol=1e-12)
    reference, _ = _sympy_hessian(text, used)
    structural = {(i, j) for i in range(len(used)) for j in range(len(used))
                  if sp.simplify(reference[i, j]) != 0}
    assert set(zip(*H.pattern, strict=True)) == structural
