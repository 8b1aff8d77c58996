"""Structured Hessians of matrix and vector variables (:mod:`symdiff.tensor.hessians`): a
variable that enters only through ``X @ W`` with a row-local gradient is seeded along its small
axis and contracted with ``X``, never with a ``d*k`` identity; the max-shift of ``logsumexp`` is
a constant to derivatives; the least-squares Hessian is ``2*(A.T @ A)``; Hessian-vector products
never form the Hessian.

Every Hessian is checked against central differences of the gradient and against the general
path (forward over reverse with the identity seed, which a ``wrt`` list still takes)."""

import importlib.util

import numpy as np
import pytest

import symdiff as sd
from symdiff.runtime import _gram
from symdiff.tensor.emit import Program
from symdiff.tensor.families.grams import gram
from symdiff.tensor.hessians import row_local, structured_hessian
from symdiff.tensor.ir import arg_symbol, topological
from symdiff.tensor.module import emit_module
from symdiff.tensor.ops import Builder
from symdiff.tensor.parse import parse_tensor
from symdiff.tensor.shapes import parse_shapes, size
from symdiff.tensor.vjp import TENSOR_VJPS
from symdiff.tensor.walk import backward, forward
from tests.numeric import central
from tests.tensor_cases import MLP, MLP_SHAPES

RNG = np.random.default_rng(16)
SHAPES = {"X": ("n", "d"), "W": ("d", "k"), "Y": ("n", "k"), "A": ("n", "d"), "x": ("d",),
          "b": ("n",), "y": ("n",), "Q": ("d", "d")}
N, D, K = 6, 3, 4
VALUES = {"X": RNG.normal(size=(N, D)), "W": RNG.normal(size=(D, K)),
          "Y": np.eye(K)[RNG.integers(0, K, N)], "A": RNG.normal(size=(N, D)),
          "x": RNG.normal(size=D), "b": RNG.normal(size=N), "y": RNG.choice([-1.0, 1.0], N),
          "Q": RNG.normal(size=(D, D))}
SOFTMAX = "sum(logsumexp(X @ W, axis=1) - sum(Y * (X @ W), axis=1))"
LEAST_SQUARES = "sum((A @ x - b)**2)"

#: (expression, wrt, whether the structured path applies)
CASES = [
    (SOFTMAX, "W", True),
    ("sum(logsumexp(X @ W, axis=1))", "W", True),
    (LEAST_SQUARES, "x", True),
    ("sum(log(1 + exp(-y * (A @ x))))", "x", True),  # logistic loss
    ("sum(tanh(X @ W))", "W", True),
    ("sum(softmax(X @ W, axis=1) * Y)", "W", True),  # two rank-one terms per row
    ("sum((X @ W)**3 * Y)", "W", True),
    ("sum(sum(X @ W, axis=1)**2)", "W", True),
    ("sum(sin(X @ W) * (X @ W)**2) + sum(W * W)", "W", True),  # a penalty added
    (SOFTMAX + " + 0.5*sum(W*W)", "W", True),
    ("sum(log(1 + exp(-y * (A @ x)))) + sum(x**4)", "x", True),
    ("sum(tanh(X @ W)) * sum(W * W)", "W", False),  # not a sum of the two
    ("sum(tanh(X @ W) * (W[0] @ W.T)[0])", "W", False),  # W again inside the rows' function
    ("sum(X @ W)**2", "W", False),  # couples the rows
    ("x @ Q @ x + sum(x * x)", "x", False),  # a quadratic form
    ("logsumexp(A @ x)", "x", False),  # a softmax over the rows: gram(A, p) - outer(g, g)
    ("logsumexp(A @ x) + sum(A @ x)**2 + sum(x**3)", "x", False),
    ("sum(A @ x)**2", "x", False),  # one rank-one term
    ("sum(einsum('nd,dk->nk', X, W)**2)", "W", True),  # an einsum that is a product
    ("trace((X @ W).T @ (X @ W))", "W", False),  # a trace-like contraction over the rows
    ("sum(cumsum(X @ W, axis=0)**2)", "W", False),  # mixes the rows
    ("sum(cumsum(X @ W, axis=1)**2)", "W", False),  # along the columns: not a row rule
]


def _args(f: sd.CompiledFunction) -> dict[str, np.ndarray]:
    return {name: VALUES[name] for name in f.args if name in VALUES}


def _differences(expr: str, wrt: str) -> np.ndarray:
    """Central differences of the gradient: the reference Hessian."""
    grad = sd.grad(expr, wrt=wrt, shapes=SHAPES)
    values = _args(grad)
    v = values[wrt]
    out = np.zeros(v.shape + v.shape)
    for index in np.ndindex(v.shape):
        step = np.zeros_like(v)
        step[index] = 1e-6
        up = grad(**{**values, wrt: v + step})
        down = grad(**{**values, wrt: v - step})
        out[(Ellipsis, *index)] = (up - down) / 2e-6
    return out


def _is_structured(source: str) -> bool:
    """Whether the Hessian's code pushes no identity seed through ``X @`` (a batch of ``d*k``
    products, ``X @ _np.transpose(seed)``) and contracts no (n, d, k, k) array."""
    return "X @ _np.transpose" not in source and "_k_dim**2" not in source


@pytest.mark.parametrize("expr, wrt, structured", CASES, ids=[c[0] for c in CASES])
def test_against_differences_and_the_general_path(expr, wrt, structured):
    hessian = sd.hessian(expr, wrt=wrt, shapes=SHAPES)
    general = sd.hessian(expr, wrt=[wrt], shapes=SHAPES)  # blocks: the identity seed
    got = hessian(**_args(hessian))
    np.testing.assert_allclose(got, general(**_args(general))[0][0], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got, _differences(expr, wrt), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, np.moveaxis(got.reshape(got.shape), range(got.ndim),
                                                [*range(got.ndim // 2, got.ndim),
                                                 *range(got.ndim // 2)]), atol=1e-10)
    if structured:
        assert _is_structured(hessian.source), hessian.source
    if wrt == "W" and not structured:
        assert "X @ _np.transpose" in hessian.source  # the general path, as it was


def test_an_mlp_hessian_in_its_first_layer():
    """Two layers: ``W1`` enters through ``X @ W1`` and the rest is row by row."""
    values = {"X": RNG.normal(size=(5, 3)), "Y": np.eye(2)[RNG.integers(0, 2, 5)],
              "W1": RNG.normal(size=(3, 4)), "b1": RNG.normal(size=4),
              "W2": RNG.normal(size=(4, 2)), "b2": RNG.normal(size=2)}
    hessian = sd.hessian(MLP, wrt="W1", shapes=MLP_SHAPES)
    general = sd.hessian(MLP, wrt=["W1"], shapes=MLP_SHAPES)
    assert "_np.eye(_d_dim*_h_dim" not in hessian.source
    np.testing.assert_allclose(hessian(**values), general(**values)[0][0], atol=1e-12)


def _graph(expr: str, wrt: str, shapes: dict) -> tuple[Builder, list]:
    b = Builder()
    root = parse_tensor(expr, parse_shapes(shapes), b)
    var = b.var(wrt, parse_shapes(shapes)[wrt])
    return b, topological([structured_hessian(b, root, var)])


def test_softmax_hessian_forms_nothing_bigger_than_its_closed_form():
    """At n=30, d=4, k=3 no node exceeds the closed form's largest array, max(n*d*k, (d*k)^2):
    an identity seed through ``X @`` would make (n, k, d*k), a direct contraction (n, d, k, k);
    one symmetric weighted Gram matrix and one product for the block diagonal."""
    n, d, k = 30, 4, 3
    _, nodes = _graph(SOFTMAX, "W", {"X": (n, d), "W": (d, k), "Y": (n, k)})
    biggest = max(size(node.shape) for node in nodes)
    assert biggest <= max(n * d * k, (d * k) ** 2)
    ops = [node.op for node in nodes]
    assert ops.count("gram") == 1
    assert ops.count("matmul") == 2  # X @ W, and X.T @ kron-rows(X, P) for the diagonal
    assert "eye" in ops and all(node.shape == (k, k) for node in nodes if node.op == "eye")
    assert "share" not in ops and "max" not in ops  # the shift is not differentiated


def test_least_squares_hessian_is_two_times_a_gram_matrix_computed_once():
    hessian = sd.hessian(LEAST_SQUARES, wrt="x", shapes=SHAPES)
    body = hessian.source.split("def hessian_f")[1].split("# Helpers")[0]
    assert body.count("@") == 1 and "A.T @ A" in body  # one symmetric product (BLAS syrk)
    assert "2.0*A" not in body
    np.testing.assert_allclose(hessian(**_args(hessian)), 2 * VALUES["A"].T @ VALUES["A"])


def test_a_softmax_over_the_rows_is_a_gram_matrix_minus_an_outer_product():
    """``logsumexp(A @ x)``: the general path's last product ``A.T @ (w*A + c r^T)`` is split,
    so no rank-one (n, d) array is formed and ``A.T @ (w*A)`` is one symmetric product."""
    hessian = sd.hessian("logsumexp(A @ x)", wrt="x", shapes=SHAPES)
    body = hessian.source.split("def hessian_f")[1].split("# Helpers")[0]
    assert "_gram(A, " in body and body.count("A.T @") == 1
    a, x = VALUES["A"], VALUES["x"]
    p = np.exp(a @ x - (a @ x).max())
    p /= p.sum()
    g = a.T @ p
    np.testing.assert_allclose(hessian(A=a, x=x), a.T @ (p[:, None] * a) - np.outer(g, g),
                               atol=1e-12)


def test_hvp_never_forms_the_hessian():
    """The HVP of softmax regression: no identity, nothing of the Hessian's (d, k, d, k)."""
    hvp = sd.hvp(SOFTMAX, wrt="W", shapes=SHAPES)
    body = hvp.source.split("def hvp_f")[1].split("# Helpers")[0]
    assert "eye" not in body and "_gram" not in body and "_k_dim, _d_dim" not in body
    assert body.count("@") == 3  # X @ W, X @ _v, X.T @ (...)
    v = RNG.normal(size=(D, K))
    hessian = sd.hessian(SOFTMAX, wrt="W", shapes=SHAPES)(**_args(hvp))
    np.testing.assert_allclose(hvp(**_args(hvp), _v=v),
                               np.tensordot(hessian, v, axes=2), atol=1e-12)


def test_the_max_shift_is_a_constant_to_every_derivative():
    """The Hessian of logsumexp in its own argument (the general path) compares no element with
    the maximum: the shift's tie shares are not differentiated."""
    hessian = sd.hessian("sum(logsumexp(Z, axis=1))", wrt="Z", shapes={"Z": ("n", "k")})
    assert "==" not in hessian.source.split("# Helpers")[0]
    z = RNG.normal(size=(3, 4))
    z[0, 1] = z[0, 2] = z[0].max() + 1  # a tie at the maximum
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    expected = np.zeros((3, 4, 3, 4))
    for m in range(3):
        expected[m, :, m, :] = np.diag(p[m]) - np.outer(p[m], p[m])
    np.testing.assert_allclose(hessian(Z=z), expected, atol=1e-12)
    b = Builder()
    a = b.var("a", (3,))
    (shift_rule,) = [TENSOR_VJPS[op] for op in TENSOR_VJPS if op == "shift"]
    assert shift_rule.apply(b, b.node("shift", (a,), ((0,), True), (1,)), a, True) == (None,)


def test_row_locality():
    b = Builder()
    shapes = parse_shapes({"X": ("n", "d"), "W": ("d", "k")})
    z = parse_tensor("X @ W", shapes, b)
    for text, local in [("sum(logsumexp(X @ W, axis=1))", True),
                        ("sum(tanh(X @ W) @ W.T)", True),  # W is a constant to z
                        ("sum((X @ W).T @ (X @ W))", True),  # sum_m (sum_i z_mi)^2
                        ("sum((X @ W) @ (X @ W).T)", False),  # z_m . z_l for every pair
                        ("sum(sum(X @ W, axis=0)**2)", False),
                        ("sum(softmax(X @ W, axis=1) * X[:, :1])", True),
                        ("sum(softmax(X @ W, axis=0) * X[:, :1])", False)]:  # along the rows
        root = parse_tensor(text, shapes, b)
        (g,) = backward(b, root, [z])
        assert row_local(g, z) is local, text


def test_named_and_fixed_dimensions_and_float32():
    fixed = {"X": (N, D), "W": (D, K), "Y": (N, K)}
    hessian = sd.hessian(SOFTMAX, wrt="W", shapes=fixed)
    named = sd.hessian(SOFTMAX, wrt="W", shapes=SHAPES)
    values = {k: VALUES[k] for k in ("X", "W", "Y")}
    np.testing.assert_allclose(hessian(**values), named(**values), atol=1e-12)
    single = hessian(**{k: v.astype(np.float32) for k, v in values.items()})
    assert single.dtype == np.float32
    np.testing.assert_allclose(single, named(**values), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("weights", [[1.0, 2.0, 0.0], [-1.0, -3.0, 0.0], [1.0, -2.0, 3.0]])
def test_gram_helper(weights):
    m, u = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 2))
    w = np.array(weights)
    np.testing.assert_allclose(_gram(m, w), m.T @ (w[:, None] * m), atol=1e-12)
    rows = (m[:, :, None] * u[:, None, :]).reshape(3, 8)
    np.testing.assert_allclose(_gram(m, w, u), rows.T @ (w[:, None] * rows), atol=1e-12)
    np.testing.assert_allclose(_gram(m, -2.0, u), -2 * rows.T @ rows, atol=1e-12)
    assert _gram(m.astype(np.float32), w.astype(np.float32)).dtype == np.float32
    assert _gram(m.astype(np.float32), 2.0, u.astype(np.float32)).dtype == np.float32
    assert np.isnan(_gram(m, np.array([1.0, np.nan, 2.0]))).all()


@pytest.mark.skipif(importlib.util.find_spec("jax") is None,
                    reason="optional comparison with JAX: jax is not installed (pip install jax)")
def test_against_jax_hessian():
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)

    def loss(W, X, Y):
        Z = X @ W
        return jnp.sum(jax.nn.logsumexp(Z, axis=1) - jnp.sum(Y * Z, axis=1))

    values = {k: VALUES[k] for k in ("W", "X", "Y")}
    expected = np.asarray(jax.hessian(loss)(values["W"], values["X"], values["Y"]))
    got = sd.hessian(SOFTMAX, wrt="W", shapes=SHAPES)(**values)
    np.testing.assert_allclose(got, expected, atol=1e-10)


def _run(outputs: list, shapes: dict, values: dict) -> tuple:
    """Emit and call a function computing ``outputs`` (name, node) of ``shapes``' parameters."""
    names = ", ".join(name for name, _ in outputs)
    program = Program(name="f", title="t", expression="e", params=tuple(shapes), shapes=shapes,
                      outputs=outputs, result=f"({names},)")
    namespace: dict = {}
    exec(emit_module(program), namespace)
    return namespace["f"](**values)


@pytest.mark.parametrize("kron", [False, True])
def test_gram_rules_against_differences(kron):
    """The VJP and JVP of the ``gram`` op (rows ``m``, or ``kron(m_n, u_n)``)."""
    n, c, k = 5, 3, 2
    width = c * k if kron else c
    shapes = {"m": (n, c), "w": (n,), "u": (n, k), "C": (width, width)}
    values = {name: RNG.normal(size=shape) for name, shape in shapes.items()}
    b = Builder()
    m, w, u, weights = (b.var(name, shape) for name, shape in shapes.items())
    node = gram(b, m, w, u if kron else None)

    def value(**v):
        rows = (v["m"][:, :, None] * v["u"][:, None, :]).reshape(n, -1) if kron else v["m"]
        return rows.T @ (v["w"][:, None] * rows)

    wrt = [m, w, u] if kron else [m, w]
    root = b.reduce_axes("sum", b.map(arg_symbol(0) * arg_symbol(1), [node, weights]), (0, 1),
                         False)
    grads = _run([(f"_g{i}", g) for i, g in enumerate(backward(b, root, wrt))], shapes, values)
    for var, got in zip(wrt, grads, strict=True):
        expected = central(lambda x, var=var: np.sum(value(**{**values, var.name: x})
                                                     * values["C"]), values[var.name])
        np.testing.assert_allclose(got, expected, atol=1e-7)
        (tangent,) = forward(b, [node], var)
        (jacobian,) = _run([("_j", tangent)], shapes, values)
        x = values[var.name]
        for j, index in enumerate(np.ndindex(x.shape)):
            step = np.zeros_like(x)
            step[index] = 1e-6
            column = (value(**{**values, var.name: x + step})
                      - value(**{**values, var.name: x - step})) / 2e-6
            np.testing.assert_allclose(jacobian[..., j], column, atol=1e-7)
