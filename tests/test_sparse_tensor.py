"""Sparse Jacobians and Hessians of tensor expressions (``shapes=``, ``sparse=True``): the pattern
read from the index structure of the operations, against the dense functions at random points
(the sparse matrix equals the dense one; the pattern is the union of the dense nonzeros over the
points, every other entry justified), on fixed cases, the benchmark problems at n = 100 and
random expressions drawn by hypothesis; and what the generated module holds."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sps
from hypothesis import given, settings
from hypothesis import strategies as st

import symdiff as sd
from symdiff.errors import SymdiffError
from symdiff.sparse.function import SparseFunction
from symdiff.sparse.tensor_build import DenseFallbackWarning

ROSENBROCK = "sum(100*(x[1:] - x[:-1]**2)**2 + (1 - x[:-1])**2)"
#: The 2-D Bratu problem's energy on an m x m grid (zero boundary); its gradient is the
#: residual of the 5-point discretisation of -Laplace(u) = c*exp(u) (times h**2).
BRATU = ("0.5*(sum((u[1:, :] - u[:-1, :])**2) + sum((u[:, 1:] - u[:, :-1])**2)"
         " + sum(u[0, :]**2) + sum(u[-1, :]**2) + sum(u[:, 0]**2) + sum(u[:, -1]**2))"
         " - c*sum(exp(u))")
LAPLACE = ("roll({0}, 1, axis=0) + roll({0}, -1, axis=0) + roll({0}, 1, axis=1)"
           " + roll({0}, -1, axis=1) - 4*{0}")
#: The 2-D Brusselator's right-hand side on a periodic m x m grid.
BRUSSELATOR = [f"1 + u**2*v - 4.4*u + a*({LAPLACE.format('u')})",
               f"3.4*u - u**2*v + a*({LAPLACE.format('v')})"]
#: Least squares with a constant sparse (banded) matrix: residuals of a second difference
#: operator and a data term.
LEAST_SQUARES = "concatenate([x[2:] - 2*x[1:-1] + x[:-2], 0.1*(x**3 - y)])"


def _draw(shapes: dict, sizes: dict, rng: np.random.Generator) -> dict:
    return {name: rng.normal(size=tuple(sizes.get(d, d) for d in shape))
            for name, shape in shapes.items()}


def _check(kind, expr, shapes, wrt, sizes, points=4, seed=0, extras=None):
    """The sparse function equals the dense one at ``points`` random points and its pattern is
    the union of the dense nonzeros there; entries that were zero at every point must be
    listed in ``extras`` (a function of the dense pattern: the entries it justifies)."""
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DenseFallbackWarning)
        sparse = getattr(sd, kind)(expr, wrt=wrt, shapes=shapes, sparse=True)
    dense = getattr(sd, kind)(expr, wrt=wrt, shapes=shapes)
    assert isinstance(sparse, SparseFunction)
    union = None
    names = [wrt] if isinstance(wrt, str) else list(wrt)
    for _ in range(points):
        args = _draw(shapes, sizes, rng)
        got = sparse(**args)
        want = _dense_matrix(kind, dense(**args), args, names, isinstance(expr, list))
        assert got.shape == want.shape
        np.testing.assert_allclose(got.toarray(), want, rtol=1e-12, atol=1e-12)
        union = want != 0 if union is None else union | (want != 0)
    rows, cols = sparse.pattern_for(**{d: sizes[d] for d in sparse.dims})
    pattern = np.zeros(union.shape, dtype=bool)
    pattern[rows, cols] = True
    assert not (union & ~pattern).any(), "a nonzero outside the pattern"
    extra = pattern & ~union
    justified = extras(union) if extras is not None else np.zeros_like(extra)
    # an entry two blocks reach is structural even where their values cancel
    # (x[1:-1] - 0.5*flip(x)[1:-1] - 0.5*x[1:-1] at the middle of an odd length)
    raw_rows, raw_cols, _ = sparse._pattern_function()(*(sizes[d] for d in sparse.dims))
    reached = np.zeros(union.shape, dtype=np.int64)
    np.add.at(reached, (raw_rows, raw_cols), 1)
    # and so is every entry of an output that is zero wherever it is evaluated (that middle
    # output times another factor: the product rule's term of that factor keeps its entry)
    cancelled = ~union.any(axis=1, keepdims=True) if kind == "jacobian" else False
    assert not (extra & ~justified & (reached < 2) & ~cancelled).any(), \
        f"{extra.sum()} unexplained entries"
    return sparse


def _dense_matrix(kind, value, args, names, many):
    """A dense Jacobian or Hessian as the matrix of the flattened outputs and variables."""
    sizes = [args[n].size for n in names]
    if kind == "hessian":
        blocks = [[value] if len(names) == 1 else list(row) for row in (
            [value] if len(names) == 1 else value)]
        return np.block([[np.reshape(b, (sizes[i], sizes[j])) for j, b in enumerate(row)]
                         for i, row in enumerate(blocks)])
    per_name = [value] if len(names) == 1 else list(value)
    columns = []
    for j, block in enumerate(per_name):
        block = np.asarray(block)
        if many:
            columns.append(np.concatenate([np.reshape(b, (-1, sizes[j])) for b in block]))
        else:
            columns.append(np.reshape(block, (-1, sizes[j])))
    return np.concatenate(columns, axis=1)


CASES = [
    ("hessian", ROSENBROCK, {"x": ("n",)}, "x", {"n": 9}),
    ("jacobian", "x[1:] - x[:-1]", {"x": ("n",)}, "x", {"n": 9}),
    ("jacobian", "x[2:] - 2*x[1:-1] + x[:-2] + exp(x[1:-1])", {"x": ("n",)}, "x", {"n": 9}),
    ("jacobian", "x[2:, 1:-1] + x[:-2, 1:-1] + x[1:-1, 2:] + x[1:-1, :-2] - 4*x[1:-1, 1:-1]"
     " + exp(x[1:-1, 1:-1])", {"x": ("m", "k")}, "x", {"m": 5, "k": 6}),
    ("hessian", "sum((x[1:, :] - x[:-1, :])**2) + sum((x[:, 1:] - x[:, :-1])**2)"
     " - sum(exp(x))", {"x": ("m", "k")}, "x", {"m": 4, "k": 5}),
    ("jacobian", "sin(x) * y", {"x": ("n",), "y": ("n",)}, "x", {"n": 6}),
    ("jacobian", "A @ x", {"x": ("n",), "A": ("m", "n")}, "x", {"n": 5, "m": 3}),
    ("jacobian", "A @ sin(x)", {"x": ("n",), "A": ("m", "n")}, "x", {"n": 5, "m": 3}),
    ("jacobian", "sin(x) @ A", {"x": ("n",), "A": ("n", "m")}, "x", {"n": 5, "m": 3}),
    ("hessian", "sum(x)**2 + sum(x**3)", {"x": ("n",)}, "x", {"n": 5}),
    ("hessian", "sum(log(1 + exp(-y * (X @ w))))", {"X": ("n", "d"), "y": ("n",), "w": ("d",)},
     "w", {"n": 7, "d": 3}),
    ("jacobian", "x * sum(x)", {"x": ("n",)}, "x", {"n": 5}),
    ("jacobian", "x[::2] * x[1::2]", {"x": (8,)}, "x", {}),
    ("jacobian", "x[1::3] * x[:-1:3]", {"x": (10,)}, "x", {}),
    ("jacobian", "roll(x, 1) - x", {"x": ("n",)}, "x", {"n": 6}),
    ("jacobian", "roll(x, -2) * x", {"x": (7,)}, "x", {}),
    ("jacobian", "flip(x) * x", {"x": ("n",)}, "x", {"n": 6}),
    ("jacobian", "concatenate([x[:1], x[1:] - x[:-1]])", {"x": (7,)}, "x", {}),
    ("jacobian", "x.T[1:] * 3", {"x": ("m", "k")}, "x", {"m": 3, "k": 4}),
    ("jacobian", "mean(x, axis=1)", {"x": ("m", "k")}, "x", {"m": 3, "k": 4}),
    ("jacobian", "diag(x)", {"x": ("n",)}, "x", {"n": 4}),
    ("jacobian", "diag(exp(x)) @ x", {"x": ("n",)}, "x", {"n": 4}),
    ("jacobian", "x[2] * x", {"x": ("n",)}, "x", {"n": 4}),
    ("hessian", "sum(flip(exp(x)) * x[::-1]**2)", {"x": (7,)}, "x", {}),
    ("hessian", "sum(x[-2::-3] * exp(x[1::3]))", {"x": (9,)}, "x", {}),
    ("hessian", "sum(x[5:1:-1] * exp(x[1:5]))", {"x": (9,)}, "x", {}),
    ("hessian", "sum(roll(flip(x), -3) * x**2)", {"x": ("n",)}, "x", {"n": 8}),
    ("jacobian", "reshape(x, (m*k,)) * 2", {"x": ("m", "k")}, "x", {"m": 3, "k": 4}),
    ("jacobian", "reshape(x[1:], (5, 2))[1:, 0] * x[:4]", {"x": (11,)}, "x", {}),
    ("jacobian", "repeat(x, 2, axis=0) * 2", {"x": ("n",)}, "x", {"n": 4}),
    ("jacobian", "reshape(x, (1, n)) * reshape(y, (m, 1))", {"x": ("n",), "y": ("m",)}, ["x", "y"],
     {"n": 3, "m": 4}),
    ("hessian", "sum(x[1:] * y[:-1]) + sum(x**2 * y)", {"x": ("n",), "y": ("n",)},
     ["x", "y"], {"n": 5}),
    ("jacobian", ["x[1:] * y[:-1]", "x[:-1] + y[1:]**2"], {"x": ("n",), "y": ("n",)},
     ["x", "y"], {"n": 5}),
]


@pytest.mark.parametrize(("kind", "expr", "shapes", "wrt", "sizes"), CASES,
                         ids=[str(c[1])[:40] for c in CASES])
def test_sparse_equals_dense_and_pattern_is_exact(kind, expr, shapes, wrt, sizes):
    _check(kind, expr, shapes, wrt, sizes)


def test_softmax_hessian_is_structurally_dense():
    """sum(softmax(x)) is 1 everywhere: its Hessian is 0 in value, but every entry of its
    structure is reached (each softmax output depends on every input)."""
    _check("hessian", "sum(softmax(x))", {"x": ("n",)}, "x", {"n": 4},
           extras=lambda union: np.ones_like(union))


def test_an_op_without_structure_is_dense_and_named():
    with pytest.warns(DenseFallbackWarning, match="cumsum"):
        J = sd.jacobian("cumsum(x)", wrt="x", shapes={"x": ("n",)}, sparse=True,
                        cache=False)  # (a build warns; a cached function was built)
    rows, _cols = J.pattern_for(n=5)
    assert len(rows) == 25  # every entry, the upper triangle's zeros included
    np.testing.assert_array_equal(J(np.arange(5.0)).toarray(), np.tril(np.ones((5, 5))))
    assert J.recorded.dense and J.recorded.dense[0][0] == "cumsum"


def test_chained_rosenbrock_hessian_is_three_vectors():
    H = sd.hessian(ROSENBROCK, wrt="x", shapes={"x": ("n",)}, sparse=True)
    body = H.source[H.source.index("def hessian_f"):H.source.index("def _pattern")]
    assert "eye" not in body and "_n_dim, _n_dim" not in body  # no n x n temporary
    pattern = H.source[H.source.index("def _pattern"):]
    assert pattern.split("    return")[0].count("_affine_grid(") == 6  # three blocks: rows, cols
    rows, cols = H.pattern_for(n=1000)
    assert len(rows) == 3 * 1000 - 2 and set(np.unique(cols - rows)) == {-1, 0, 1}
    x = np.random.default_rng(2).normal(size=50)
    got = H(x)
    diag = np.zeros(50)
    diag[:-1] = 1200 * x[:-1] ** 2 - 400 * x[1:] + 2
    diag[1:] += 200
    off = -400 * x[:-1]
    want = sps.diags_array([off, diag, off], offsets=[-1, 0, 1]).toarray()
    np.testing.assert_allclose(got.toarray(), want, rtol=1e-13)


def _laplacian(w):
    return (np.roll(w, 1, axis=0) + np.roll(w, -1, axis=0) + np.roll(w, 1, axis=1)
            + np.roll(w, -1, axis=1) - 4 * w)


def _brusselator(y, alpha):
    """The 2-D Brusselator as benchmarks/bench_sparse.py traces it: y[0] = u, y[1] = v."""
    u, v = y[0], y[1]
    du = 1 + u**2 * v - 4.4 * u + alpha * _laplacian(u)
    dv = 3.4 * u - u**2 * v + alpha * _laplacian(v)
    return np.stack([du, dv])


BENCHMARK_PROBLEMS = {
    "rosenbrock": ("hessian", ROSENBROCK, {"x": ("n",)}, "x", {"n": 100}),
    "bratu": ("hessian", BRATU, {"u": ("m", "m"), "c": ()}, "u", {"m": 10}),
    "brusselator": ("jacobian", BRUSSELATOR, {"u": ("m", "m"), "v": ("m", "m"), "a": ()},
                    ["u", "v"], {"m": 7}),
    "traced brusselator": ("jacobian", _brusselator, {"y": (2, "m", "m"), "alpha": ()}, "y",
                           {"m": 7}),
    "least squares": ("jacobian", LEAST_SQUARES, {"x": (100,), "y": (100,)}, "x", {}),
}


@pytest.mark.parametrize("problem", sorted(BENCHMARK_PROBLEMS))
def test_benchmark_problems_at_n_100(problem):
    kind, expr, shapes, wrt, sizes = BENCHMARK_PROBLEMS[problem]
    _check(kind, expr, shapes, wrt, sizes, points=3)


def test_outputs_of_different_shapes_are_laid_end_to_end():
    listed = sd.jacobian(["x[2:] - 2*x[1:-1] + x[:-2]", "0.1*(x**3 - y)"], wrt="x",
                         shapes={"x": ("n",), "y": ("n",)}, sparse=True)
    joined = sd.jacobian(LEAST_SQUARES, wrt="x", shapes={"x": (9,), "y": (9,)}, sparse=True)
    x, y = np.linspace(-1, 1, 9), np.ones(9)
    np.testing.assert_array_equal(listed(x, y).toarray(), joined(x, y).toarray())


def test_brusselator_pattern_is_the_five_point_stencil_and_the_coupling():
    _kind, expr, shapes, wrt, _sizes = BENCHMARK_PROBLEMS["brusselator"]
    J = sd.jacobian(expr, wrt=wrt, shapes=shapes, sparse=True)
    m = 6
    rows, _cols = J.pattern_for(m=m)
    assert J.shape_for(m=m) == (2 * m * m, 2 * m * m)
    # each of u's and v's rows: itself, four periodic neighbours, and the other field
    assert np.all(np.bincount(rows, minlength=2 * m * m) == 6)


def test_module_runs_on_its_own(tmp_path):
    H = sd.hessian(ROSENBROCK, wrt="x", shapes={"x": ("n",)}, sparse=True)
    path = H.save(tmp_path / "hess.py")
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    x = np.linspace(-1, 1, 8)
    rows, cols, shape = namespace["_pattern"](8)
    assembled = sps.coo_array((namespace["hessian_f"](x), (rows, cols)), shape=shape)
    np.testing.assert_allclose(assembled.toarray(), H(x).toarray(), rtol=1e-15)


def test_pattern_needs_the_sizes_of_named_dimensions():
    H = sd.hessian(ROSENBROCK, wrt="x", shapes={"x": ("n",)}, sparse=True, cache=False)
    assert H.dims == ("n",)
    with pytest.raises(SymdiffError, match=r"pattern_for\(n=\.\.\.\)"):
        H.pattern  # noqa: B018
    with pytest.raises(SymdiffError, match="missing n"):
        H.pattern_for()
    H(np.ones(7))  # then: the pattern at the sizes of the last call
    assert len(H.pattern[0]) == 3 * 7 - 2
    fixed = sd.hessian(ROSENBROCK, wrt="x", shapes={"x": (6,)}, sparse=True)
    rows, _cols = fixed.pattern
    assert len(rows) == 16
    lower = fixed.tril()
    assert (lower.pattern[0] >= lower.pattern[1]).all()


def test_a_loaded_function_has_its_exprs():
    from symdiff.pipeline import clear_memo
    from symdiff.request_index import forget

    H = sd.hessian(ROSENBROCK, wrt="x", shapes={"x": ("n",)}, sparse=True)
    fresh = [str(e) for e in H.exprs]
    clear_memo()
    forget()
    again = sd.hessian(ROSENBROCK, wrt="x", shapes={"x": ("n",)}, sparse=True)
    assert [str(e) for e in again.exprs] == fresh and len(fresh) == 3


# -- random expressions ----------------------------------------------------------------------
_VIEWS_1D = ["x[2:]", "x[1:-1]", "x[:-2]", "roll(x, 1)[1:-1]", "flip(x)[1:-1]", "x[1:-1]*x[0]",
             "sum(x[1:-1])*x[2:]", "x[:-2:1]*2.5"]
_VIEWS_2D = ["u[1:-1, 1:-1]", "u[2:, 1:-1]", "u[:-2, 1:-1]", "u[1:-1, 2:]", "u[1:-1, :-2]",
             "sum(u[1:-1, 1:-1], axis=0)", "u.T[1:-1, 1:-1].T", "u[1:-1, 1:-1]*u[0, 0]"]
_VIEWS_STRIDED = ["x[::3]", "x[1::3]", "x[2::3]", "x[::-3]", "x[-2::-3]", "x[3:6]",
                  "roll(x, 2)[::3]", "flip(x)[1::3]", "x[7:1:-2]"]
_UNARY = ["sin({})", "exp(0.3*{})", "({})**2", "tanh({})", "log(1 + ({})**2)", "1.5*{}"]
#: (0.7, not 0.5: a - 0.5*(a + b) cancels exactly wherever two views meet the same element, an
#: entry the pattern keeps, as it must, but which only a symbolic check could tell from a stray)
_BINARY = ["({}) * ({})", "({}) + ({})", "({}) - 0.7*({})"]


def _expression(draw, views, depth):
    if depth == 0 or draw(st.booleans()):
        return draw(st.sampled_from(views))
    if draw(st.booleans()):
        return draw(st.sampled_from(_UNARY)).format(_expression(draw, views, depth - 1))
    return draw(st.sampled_from(_BINARY)).format(_expression(draw, views, depth - 1),
                                                 _expression(draw, views, depth - 1))


@st.composite
def _tensor_problems(draw):
    family = draw(st.sampled_from(["1d", "2d", "strided"]))
    views = {"1d": _VIEWS_1D, "2d": _VIEWS_2D, "strided": _VIEWS_STRIDED}[family]
    expr = _expression(draw, views, 3)
    kind = draw(st.sampled_from(["jacobian", "hessian"]))
    if kind == "hessian":
        expr = f"sum({expr})"
    if family == "2d":
        return kind, expr, {"u": ("m", "k")}, "u", {"m": 4, "k": 5}
    if family == "strided":
        return kind, expr, {"x": (9,)}, "x", {}
    return kind, expr, {"x": ("n",)}, "x", {"n": 7}


@settings(max_examples=25)
@given(_tensor_problems(), st.integers(0, 2**32 - 1))
def test_random_tensor_expressions(problem, seed):
    kind, expr, shapes, wrt, sizes = problem
    _check(kind, expr, shapes, wrt, sizes, points=4, seed=seed)


def test_explain_shows_the_pattern_and_the_values():
    H = sd.hessian(ROSENBROCK, wrt="x", shapes={"x": ("n",)}, sparse=True)
    text = H.explain()
    assert "def _pattern(_n_dim):" in text and "row i + 1, column i for i < n - 1" in text
    assert "  block 0: -400*x[:-1]" in text.splitlines()
    scalar = sd.hessian("x*y + sin(y)", wrt=["x", "y"], sparse=True)
    lines = scalar.explain().splitlines()
    assert "  [1, 1] = -sin(y)" in lines and "  [1, 0] = 1" in lines


def test_pattern_svg_is_a_spy_plot():
    H = sd.hessian(ROSENBROCK, wrt="x", shapes={"x": ("n",)}, sparse=True)
    small = H.pattern_svg(n=6)
    assert small.startswith("<svg") and small.rstrip().endswith("</svg>")
    assert small.count("<rect") == 1 + 16  # the frame and one cell per entry
    assert "6 x 6, 16 entries" in small
    large = H.pattern_svg(n=10_000)
    assert large.count("<rect") <= 1 + 3 * 120  # binned: the three diagonals' cells
