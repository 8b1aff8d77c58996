"""The public behaviour of builders with ``shapes=``: what each kind returns, Hessians and
Jacobians, shape errors at build and call time, dtypes, options, readable and deterministic code.
"""

from __future__ import annotations

import ast
import subprocess
import sys

import numpy as np
import pytest

import symdiff as sd
from symdiff.runtime import _check_shapes
from symdiff.verify import check_module

from .tensor_cases import LOGISTIC, LOGISTIC_SHAPES, MLP, MLP_SHAPES


def logistic_data(n=40, d=5, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.choice([-1.0, 1.0], size=n), rng.normal(size=d) * 0.3


def numeric_jacobian(f, x, h=1e-6):
    """Central differences of ``f`` (array-valued) in every entry of ``x``: shape f + x."""
    columns = []
    for index in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[index] += h
        down[index] -= h
        columns.append((np.asarray(f(up)) - np.asarray(f(down))) / (2 * h))
    out = np.stack(columns, axis=-1)
    return out.reshape(out.shape[:-1] + x.shape)


# -- the contract of API.md ------------------------------------------------------------------------
def test_logistic_regression_gradient_and_hessian():
    X, y, w = logistic_data()
    g = sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)
    s = 1 / (1 + np.exp(y * (X @ w)))
    np.testing.assert_allclose(g(X=X, y=y, w=w), -X.T @ (y * s), rtol=1e-12)
    assert g(X, w, y).shape == (5,)  # positionally, in the order of g.args
    assert g.args == ("X", "w", "y") and g.wrt == "w"
    H = sd.hessian(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)
    p = 1 / (1 + np.exp(-y * (X @ w)))
    np.testing.assert_allclose(H(X=X, y=y, w=w), X.T @ (X * (p * (1 - p))[:, None]), rtol=1e-12)
    numeric = numeric_jacobian(lambda v: g(X=X, y=y, w=v), w)
    np.testing.assert_allclose(H(X=X, y=y, w=w), numeric, rtol=1e-6, atol=1e-7)


def test_hessian_of_a_quadratic_form_is_the_symmetrised_matrix():
    A = np.random.default_rng(1).normal(size=(4, 4))
    H = sd.hessian("w @ A @ w + sum(b * w)", wrt="w",
                   shapes={"w": ("d",), "A": ("d", "d"), "b": ("d",)})
    np.testing.assert_allclose(H(A=A, b=np.ones(4), w=np.ones(4)), A + A.T, rtol=1e-15)
    assert "A + A.T" in H.source


def test_hessian_of_a_matrix_variable_and_of_several_variables():
    rng = np.random.default_rng(2)
    X, Y = rng.normal(size=(6, 3)), np.eye(2)[rng.integers(0, 2, size=6)]
    values = {"X": X, "Y": Y, "W1": rng.normal(size=(3, 4)), "b1": rng.normal(size=4),
              "W2": rng.normal(size=(4, 2)), "b2": rng.normal(size=2)}
    g = sd.grad(MLP, wrt=["W2", "b2"], shapes=MLP_SHAPES)
    H = sd.hessian(MLP, wrt=["W2", "b2"], shapes=MLP_SHAPES)
    blocks = H(**values)
    assert [[b.shape for b in row] for row in blocks] == [[(4, 2, 4, 2), (4, 2, 2)],
                                                          [(2, 4, 2), (2, 2)]]
    for j, name in enumerate(["W2", "b2"]):
        for i in range(2):
            numeric = numeric_jacobian(lambda v, i=i, name=name: g(**{**values, name: v})[i],
                                       values[name])
            np.testing.assert_allclose(blocks[i][j], numeric, rtol=1e-6, atol=1e-8)


def test_value_and_grad_and_compile():
    X, y, w = logistic_data()
    vg = sd.value_and_grad(LOGISTIC, wrt=["w"], shapes=LOGISTIC_SHAPES)
    value, (grad,) = vg(X=X, y=y, w=w)
    np.testing.assert_allclose(value, np.sum(np.logaddexp(0, -y * (X @ w))), rtol=1e-13)
    np.testing.assert_allclose(grad, sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)(X, w, y))
    f = sd.compile("X @ w", shapes=LOGISTIC_SHAPES)
    assert f.args == ("X", "w")
    np.testing.assert_allclose(f(X, w), X @ w)


def test_grad_without_wrt_differentiates_every_variable_and_returns_a_tuple():
    X, y, w = logistic_data()
    g = sd.grad(LOGISTIC, shapes=LOGISTIC_SHAPES)
    assert g.wrt == ("X", "w", "y")
    grads = g(X=X, y=y, w=w)
    assert isinstance(grads, tuple) and [a.shape for a in grads] == [(40, 5), (5,), (40,)]


def test_jacobian_of_a_vector_valued_expression_has_shape_output_plus_wrt():
    rng = np.random.default_rng(3)
    W, x = rng.normal(size=(4, 3)), rng.normal(size=3)
    J = sd.jacobian("tanh(W @ x)", wrt="x", shapes={"W": ("m", "d"), "x": ("d",)})
    assert J(W=W, x=x).shape == (4, 3)
    np.testing.assert_allclose(J(W=W, x=x), (1 - np.tanh(W @ x) ** 2)[:, None] * W, rtol=1e-13)
    JW = sd.jacobian("tanh(W @ x)", wrt="W", shapes={"W": ("m", "d"), "x": ("d",)})
    numeric = numeric_jacobian(lambda v: np.tanh(v @ x), W)
    np.testing.assert_allclose(JW(W=W, x=x), numeric, rtol=1e-7, atol=1e-9)
    assert JW(W=W, x=x).shape == (4, 4, 3)


def test_jacobian_of_a_list_stacks_the_expressions_and_a_wrt_list_gives_a_tuple():
    x = np.array([1.0, 2.0, 3.0])
    J = sd.jacobian(["sum(x**2)", "x @ x + sum(x)"], wrt=["x"], shapes={"x": (3,)})
    (jx,) = J(x=x)
    np.testing.assert_allclose(jx, [2 * x, 2 * x + 1])
    with pytest.raises(sd.ShapeError, match="cannot be stacked"):
        sd.jacobian(["x", "sum(x)"], wrt="x", shapes={"x": (3,)})
    with pytest.raises(sd.UnsupportedError, match="forward mode"):
        sd.jacobian("x * 2", wrt="x", shapes={"x": (3,)}, mode="reverse")


def test_a_wrt_name_that_does_not_occur_is_an_error_but_one_that_cancels_gives_zeros():
    with pytest.raises(sd.ParseError, match="'z' does not occur"):
        sd.grad("sum(x)", wrt=["x", "z"], shapes={"x": (3,), "z": ("k", 2)})
    g = sd.grad("sum(x) + sum(z - z)", wrt=["x", "z"], shapes={"x": (3,), "z": ("k", 2)})
    _, dz = g(x=np.ones(3), z=np.ones((4, 2)))
    np.testing.assert_array_equal(dz, np.zeros((4, 2)))
    assert g.args == ("x", "z")


def test_a_gradient_equal_to_an_argument_is_a_copy():
    v = np.array([1.0, 2.0])
    g = sd.grad("sum(w * v)", wrt="w", shapes={"w": (2,), "v": (2,)})
    out = g(v=v, w=np.zeros(2))
    np.testing.assert_array_equal(out, v)
    assert out is not v and not np.shares_memory(out, v)


@pytest.mark.parametrize(
    ("dtype", "expected"),
    [(np.float32, np.float32), (np.float64, np.float64), (np.int64, np.float64)],
)
def test_dtypes(dtype, expected):
    X, y, w = logistic_data()
    g = sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)
    assert g(X.astype(dtype), w.astype(dtype), y.astype(dtype)).dtype == expected
    gm = sd.grad("sum(max(X, axis=1)) + sum(X[0])", shapes={"X": ("n", "d")})
    assert gm(X.astype(dtype))[0].dtype == expected


def test_options_are_accepted_and_do_not_change_results():
    X, _, _ = logistic_data()
    reference = sd.grad(MLP, wrt="W1", shapes=MLP_SHAPES)
    rng = np.random.default_rng(4)
    values = {"X": X[:, :3], "Y": np.eye(2)[rng.integers(0, 2, 40)],
              "W1": rng.normal(size=(3, 4)), "b1": np.zeros(4), "W2": rng.normal(size=(4, 2)),
              "b2": np.zeros(2)}
    for options in ({"simplify": False}, {"cse": False}, {"mode": "reverse"},
                    {"mode": "forward"}, {"cache": False}):
        g = sd.grad(MLP, wrt="W1", shapes=MLP_SHAPES, **options)
        np.testing.assert_allclose(g(**values), reference(**values), rtol=1e-10, atol=1e-14)
    assert sd.grad(MLP, wrt="W1", shapes=MLP_SHAPES) is reference  # memoised
    with pytest.raises(sd.SymdiffError, match="mode"):
        sd.grad(MLP, wrt="W1", shapes=MLP_SHAPES, mode="sideways")


# -- shapes ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("expr", "shapes", "message"),
    [
        ("X @ v", {"X": ("n", "d"), "v": ("k",)},
         r"matmul: shapes \(n, d\) and \(k,\) do not align .*'X @ v'"),
        ("X + v", {"X": ("n", "d"), "v": ("n",)},
         r"add: shapes \(n, d\) and \(n,\) do not broadcast"),
        ("sin(X) * Y", {"X": (2, 3), "Y": (3, 2)}, r"multiply: shapes \(2, 3\) and \(3, 2\)"),
        ("sum(X, axis=2)", {"X": ("n", "d")}, r"sum: axis 2 is out of range for 2 dimensions"),
        ("reshape(X, (n, 4))", {"X": ("n", "d")},
         r"reshape: cannot reshape \(n, d\) to \(n, 4\)"),
        ("transpose(X, (0, 0))", {"X": ("n", "d")}, r"transpose: axes \(0, 0\)"),
        ("X[5]", {"X": (3, 2)}, r"index: 5 is out of range for a dimension of 3"),
        ("X[1, 2, 3]", {"X": (3, 2)}, r"index: 3 indices for shape \(3, 2\)"),
        ("max(X, Y)", {"X": ("n",), "Y": ("m",)}, r"max: shapes \(n,\) and \(m,\)"),
        ("x @ 2", {"x": (3,)}, r"matmul: .*scalar"),
        ("sum(x * q)", {"x": (3,)}, r"variable 'q' has no shape"),
    ],
)
def test_shape_errors_name_the_operation_and_both_shapes(expr, shapes, message):
    with pytest.raises(sd.ShapeError, match=message):
        sd.compile(expr, shapes=shapes)


def test_grad_and_hessian_need_a_scalar_expression():
    with pytest.raises(sd.ShapeError, match=r"shape \(n,\); sum it, or use jacobian"):
        sd.grad("X @ w", wrt="w", shapes=LOGISTIC_SHAPES)
    with pytest.raises(sd.ShapeError, match="scalar"):
        sd.hessian("X @ w", wrt="w", shapes=LOGISTIC_SHAPES)


@pytest.mark.parametrize(
    ("shapes", "error"),
    [
        ({"x": "n"}, sd.ShapeError),
        ({"x": ("n", -1)}, sd.ShapeError),
        ({"x": ("n", 2.5)}, sd.ShapeError),
        ({"x": ("n", True)}, sd.ShapeError),
        ({"x": ("_n",)}, sd.ParseError),
        ({"x": ("n m",)}, sd.ParseError),
        ({"_x": ("n",)}, sd.ParseError),
        ([("x", ("n",))], sd.SymdiffError),
    ],
)
def test_bad_shapes_are_refused(shapes, error):
    with pytest.raises(error):
        sd.compile("sum(x)", shapes=shapes)


@pytest.mark.parametrize(
    ("wrt", "message"),
    [({"w"}, "not a set"), ([], "empty"), (["w", "w"], "duplicate"), ("q", "does not occur"),
     ("1w", "must start with an ASCII letter")],
)
def test_bad_wrt_is_refused(wrt, message):
    with pytest.raises(sd.SymdiffError, match=message):
        sd.grad(LOGISTIC, wrt=wrt, shapes=LOGISTIC_SHAPES)


def test_call_time_shape_checks_name_the_argument_and_the_shapes():
    X, y, w = logistic_data()
    g = sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)
    with pytest.raises(ValueError, match=r"argument 'w' has shape \(4,\), expected \(d,\), "
                                         r"but dimension 'd' is 5 \(from argument 'X'\)"):
        g(X=X, y=y, w=w[:4])
    with pytest.raises(ValueError, match=r"argument 'y' has shape \(40, 1\), expected \(n,\)"):
        g(X=X, y=y[:, None], w=w)
    with pytest.raises(TypeError):
        g(X=X, y=y)
    fixed = sd.compile("sum(X[3])", shapes={"X": ("n", 2)})
    with pytest.raises(ValueError, match=r"expected \(n, 2\)"):
        fixed(np.ones((4, 3)))
    with pytest.raises(ValueError, match=r"dimension 'n' is 2 .* indexes it up to 4"):
        fixed(np.ones((2, 2)))
    assert fixed(np.ones((4, 2))) == 2.0


def test_check_shapes_helper():
    x = np.zeros((3, 2))
    assert _check_shapes(("x", "y"), (x, x[0]), (("n", 2), (2,)), ()) == (3,)
    assert _check_shapes(("x",), (x,), (("n", "m"),), (("m", 2),)) == (3, 2)
    with pytest.raises(ValueError, match="expected"):
        _check_shapes(("x",), (x,), ((3,),), ())


def test_named_dimensions_used_in_reshape_must_belong_to_an_argument():
    with pytest.raises(sd.ShapeError, match="not dimensions of any argument"):
        sd.compile("repeat(x, m, axis=0)", shapes={"x": ("n",), "z": ("m",)})
    with pytest.raises(sd.ParseError, match="not a dimension name"):
        sd.compile("reshape(x, (q, -1))", shapes={"x": ("n",)})
    f = sd.compile("reshape(X, (n * d,))", shapes={"X": ("n", "d")})
    np.testing.assert_array_equal(f(np.arange(6.0).reshape(2, 3)), np.arange(6.0))


# -- the generated code ---------------------------------------------------------------------------
def test_logistic_gradient_reads_like_what_a_person_writes():
    g = sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)
    body = g.source[g.source.index("_check_shapes((") :]
    lines = [line.strip() for line in body.splitlines()[1:] if line.strip()]
    assert lines == [
        "_t0 = X @ w",
        "_t1 = -y/(_np.exp(_np.minimum(88.0, _t0*y)) + 1.0)",  # sigmoid(-_t0*y), overflow-free
        "_w_bar = X.T @ _t1",
        "return _w_bar",
    ]
    assert g.exprs == ["X.T @ (-y*sigmoid(-(X @ w)*y))"]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_the_emitted_sigmoid_is_stable_and_warning_free(dtype):
    f = sd.compile("sigmoid(x)", shapes={"x": ("n",)})
    x = np.array([-1000.0, -80.0, -50.0, -1.0, 0.0, 1.0, 50.0, 1000.0], dtype=dtype)
    with np.errstate(over="raise", divide="raise", invalid="raise"):  # overflow would raise
        value = f(x)
        g = sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)
        X = np.array([[1000.0], [-1000.0], [0.5]], dtype=dtype)
        grad = g(X, np.ones(1, dtype=dtype), np.ones(3, dtype=dtype))
    assert value.dtype == dtype and grad.dtype == dtype
    exact = np.exp(-np.logaddexp(0, -x.astype(np.float64)))  # the reference, overflow-free
    rtol = 1e-15 if dtype == np.float64 else 1e-6
    np.testing.assert_allclose(value[1:], exact[1:], rtol=rtol)  # exact down to sigmoid(-88)
    assert 0 <= value[0] <= 6.1e-39  # below it, the value stays under 6.1e-39
    np.testing.assert_allclose(grad, [1000.0 - 0.5 / (1 + np.exp(0.5))], rtol=rtol)


def test_mlp_gradient_is_backpropagation():
    g = sd.grad(MLP, wrt=["W1", "b1", "W2", "b2"], shapes=MLP_SHAPES)
    source = g.source
    for line in ("_W1_bar = X.T @ ", "_W2_bar = _t1.T @ ", "_b1_bar = _np.add.reduce(_t9, axis=0)",
                 "@ W2.T", "_t5 = _t3 - _t4\n    _t5 = _np.exp(_t5, out=_t5)",
                 "_t7 = (_t5/_t6 - Y)/_n_dim"):
        assert line in source, line
    assert "for " not in source.split("def grad_f")[1]


@pytest.mark.parametrize("kind", ["compile", "grad", "value_and_grad", "hessian"])
def test_generated_modules_pass_verification_and_are_deterministic(kind):
    build = getattr(sd, kind)
    kwargs = {} if kind == "compile" else {"wrt": "W2"}
    first = build(MLP, shapes=MLP_SHAPES, cache=False, **kwargs).source
    second = build(MLP, shapes=MLP_SHAPES, cache=False, **kwargs).source
    assert first == second
    check_module(first)
    ast.parse(first)
    imports = [line for line in first.splitlines() if line.startswith(("import", "from"))]
    assert imports[0] == "import numpy as _np" and len(imports) == 2
    assert imports[1].startswith("from symdiff.runtime import _check_shapes, _float_arrays")


def test_source_is_byte_identical_in_a_fresh_process():
    code = (
        "import symdiff as sd; import sys; sys.stdout.write(sd.grad("
        f"{MLP!r}, wrt=['W1', 'b2'], shapes={MLP_SHAPES!r}).source)"
    )
    here = sd.grad(MLP, wrt=["W1", "b2"], shapes=MLP_SHAPES).source
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout
    assert there == here


def test_saved_module_runs_without_symdiff(tmp_path):
    g = sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)
    path = g.save(tmp_path / "grad_logistic.py")
    X, _, _ = logistic_data()
    np.save(tmp_path / "X.npy", X)
    script = (
        "import sys, numpy as np; sys.modules['symdiff'] = None\n"
        "import grad_logistic\n"
        f"X = np.load({str(tmp_path / 'X.npy')!r})\n"
        f"print(grad_logistic.grad_f(X, np.zeros({X.shape[1]}), np.ones({X.shape[0]})).shape)"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=path.parent, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "(5,)"


def test_tensor_modules_need_the_shape_check_helper_for_tensor_syntax():
    source = sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES).source
    imported = "from symdiff.runtime import _check_shapes, _float_arrays"
    assert imported in source
    shape_test = source[source.index("    if X.ndim != 2"):source.index("    _t0 = ")]
    tampered = source.replace(imported, "from symdiff.runtime import _float_arrays")
    with pytest.raises(sd.SymdiffError):  # without the helper, '@' and '.T' are refused
        check_module(tampered.replace(shape_test, ""))

