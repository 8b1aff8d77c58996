"""Tracing Python functions with shapes=: NumPy code on arrays gives the string form's code."""

from __future__ import annotations

import numpy as np
import pytest

import symdiff as sd

from .tensor_cases import LOGISTIC, LOGISTIC_SHAPES, MLP, MLP_SHAPES, central_gradient


def logistic(X, w, y):
    return np.sum(np.log(1 + np.exp(-y * (X @ w))))


def mlp(W1, b1, W2, b2, X, Y):
    h = np.tanh(X @ W1 + b1)
    logits = h @ W2 + b2
    return np.mean(sd.math.logsumexp(logits, axis=1) - np.sum(Y * logits, axis=1))


def _body(source: str) -> str:
    """The module without its three header lines (which name the input and the key)."""
    return source.split("\n", 3)[3]


def _logistic_data(seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(9, 4)), rng.normal(size=4), rng.choice([-1.0, 1.0], size=9)


@pytest.mark.parametrize("builder", [sd.grad, sd.hessian, sd.value_and_grad])
def test_traced_logistic_loss_gives_the_string_forms_gradient(builder):
    traced = builder(logistic, wrt="w", shapes=LOGISTIC_SHAPES)
    text = builder(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)
    assert _body(traced.source) == _body(text.source)
    assert traced.args == text.args == ("X", "w", "y")
    X, w, y = _logistic_data()
    got, expected = traced(X, w, y), text(X, w, y)
    if builder is sd.value_and_grad:
        got, expected = np.hstack(got), np.hstack(expected)
    np.testing.assert_array_equal(got, expected)
    assert [str(e) for e in traced.exprs] == [str(e) for e in text.exprs]


def test_traced_logistic_gradient_is_right():
    g = sd.grad(logistic, wrt="w", shapes=LOGISTIC_SHAPES)
    X, w, y = _logistic_data(1)
    np.testing.assert_allclose(g(X, w, y), -X.T @ (y / (1 + np.exp(y * (X @ w)))), rtol=1e-12)


def test_traced_mlp_gives_the_string_forms_code():
    def mlp_sorted(W1, W2, X, Y, b1, b2):  # the string's argument order (sorted by name)
        return mlp(W1, b1, W2, b2, X, Y)

    wrt = ["W1", "b1", "W2", "b2"]
    text = sd.grad(MLP, wrt=wrt, shapes=MLP_SHAPES)
    assert _body(sd.grad(mlp_sorted, wrt=wrt, shapes=MLP_SHAPES).source) == _body(text.source)
    traced = sd.grad(mlp, wrt=wrt, shapes=MLP_SHAPES)  # the def's order: another signature
    assert traced.args == ("W1", "b1", "W2", "b2", "X", "Y")
    assert text.args == ("W1", "W2", "X", "Y", "b1", "b2")
    rng = np.random.default_rng(5)
    sizes = {"n": 5, "d": 3, "h": 4, "k": 2}
    values = {name: rng.normal(size=tuple(sizes[d] for d in shape))
              for name, shape in MLP_SHAPES.items()}
    got = traced(*(values[a] for a in traced.args))
    expected = text(*(values[a] for a in text.args))
    for a, b in zip(got, expected, strict=True):
        np.testing.assert_array_equal(a, b)


def _ops(x, s):
    return (
        np.sum(x[:, 0] * s)
        + np.max(x, axis=1).sum()
        + (x.T @ x)[1:, None].mean()
        + np.sum(np.where(x > 0, x, 0.5 * x))
        + np.sum(sd.math.softmax(x, axis=0) * x)
        + x.reshape(-1).sum() / x.shape[0]
        + np.sum(x[..., 1:] ** 2)
        + np.sum(np.transpose(x) * np.expand_dims(s, 0))
        + np.sum(np.repeat(x, 2, axis=0) * 0.25)
        + np.sum(np.clip(x, -0.5, 0.5))
        + np.dot(s, x[:, 2])
        + np.sum(np.squeeze(x[:, None, :1], axis=1))
        + np.sum(sd.math.sigmoid(x) + sd.math.relu(x - 0.1) + np.maximum(x, 0.2))
        + np.min(x, axis=0, keepdims=True).sum()
        + np.sum(x.T.transpose(1, 0)[-1])
        + sd.math.logsumexp(x)
    )


def test_many_operations_trace_to_the_right_gradient():
    g = sd.grad(_ops, wrt=["x", "s"], shapes={"x": ("n", 3), "s": ("n",)})
    f = sd.compile(_ops, shapes={"x": ("n", 3), "s": ("n",)})
    rng = np.random.default_rng(3)
    args = {"x": rng.normal(size=(5, 3)), "s": rng.normal(size=5)}
    assert f(**args) == pytest.approx(_ops(**args), rel=1e-12)  # the function runs on arrays too
    dx, ds = g(**args)
    np.testing.assert_allclose(dx, central_gradient(_ops, args, "x"), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(ds, central_gradient(_ops, args, "s"), rtol=1e-6, atol=1e-7)


def test_every_parameter_is_an_argument_and_wrt_none_means_all():
    g = sd.grad(lambda x, unused: np.sum(x**2), shapes={"x": (3,), "unused": ("k",)})
    assert g.args == ("x", "unused") and g.wrt == ("x", "unused")
    dx, d_unused = g(np.arange(3.0), np.ones(2))
    np.testing.assert_array_equal(d_unused, np.zeros(2))
    np.testing.assert_array_equal(dx, 2 * np.arange(3.0))


def test_jacobian_of_a_traced_vector_function():
    J = sd.jacobian(lambda A, x: np.tanh(A @ x), wrt="x", shapes={"A": (2, 3), "x": (3,)})
    A, x = np.arange(6.0).reshape(2, 3) / 10, np.array([0.1, -0.2, 0.3])
    np.testing.assert_allclose(J(A, x), (1 - np.tanh(A @ x) ** 2)[:, None] * A, rtol=1e-12)


def test_derive_a_traced_function():
    d = sd.derive(logistic, wrt="w", shapes=LOGISTIC_SHAPES)
    assert [s.rule for s in d.steps] == ["sum (broadcast back)", "elementwise chain", "matmul"]


def test_shape_errors_name_the_operation_and_the_line():
    def bad(X, v):
        return np.sum(X @ v)

    with pytest.raises(sd.ShapeError, match=r"matmul: shapes \(n, d\) and \(k,\) do not align"
                                           r".*in bad, line \d+: 'return np.sum\(X @ v\)'"):
        sd.grad(bad, wrt="v", shapes={"X": ("n", "d"), "v": ("k",)})
    g = sd.grad(bad, wrt="X", shapes={"X": ("n", "d")})  # v, without a shape, is static
    with pytest.raises(sd.ShapeError, match=r"'v' of bad is static .* give it a shape in shapes="):
        g(np.ones((2, 3)), np.ones(3))


def _if(x):
    return np.sum(x) if np.sum(x) > 0 else 0.0


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (_if, "no truth value"),
        (lambda x: float(x[0]), "no numeric value"),
        (lambda x: np.sum(x * np.ones(3, dtype=complex)), "constant array _c0 .* complex"),
        (lambda x: np.sum(np.nextafter(x, 2.0)), "'nextafter' is not supported"),
        (lambda x: np.sum(np.unique(x)), "'unique' is not supported"),
        (lambda x: sum(v for v in x), "iterating"),
        (lambda x: len(x), "len()"),
        (lambda x: (np.sum(x), np.sum(x)), "returned a tuple"),
        (lambda x: x > 0, "returned a comparison"),
        (lambda x: np.sum(x == 1), "'=='"),
        (lambda x: np.sum(np.add.reduceat(x, [0, 2])), "'np.add.reduceat' is not supported"),
        (lambda x: np.sum(x, dtype=np.float32), "dtype"),
        (lambda x: np.sum(np.exp(x, dtype=float)), "keyword arguments"),
        (lambda x: np.sum(x[np.array([0, 1]), None]), "together with an index array"),
        (lambda x: np.sum(x[x > 0]), "mask from a traced comparison"),
        (lambda x: np.sum(np.repeat(x, [1, 2])), "repeats must be one int"),
        (lambda x: np.sum(x) / 0, "ZeroDivisionError"),
        (lambda x: sd.math.logsumexp(np.sum(x)) + np.asarray(x).sum(), "cannot be converted"),
    ],
)
def test_what_cannot_be_traced_is_a_clear_error(fn, message):
    with pytest.raises(sd.UnsupportedError, match=message) as error:
        sd.grad(fn, wrt="x", shapes={"x": ("n",)})
    assert isinstance(error.value, sd.SymdiffError)


def test_math_functions_on_plain_arrays():
    a = np.array([[1000.0, 1000.0], [-1.0, 2.0]])
    np.testing.assert_allclose(sd.math.logsumexp(a, axis=1),
                               [1000 + np.log(2), np.log(np.exp(-1) + np.exp(2))])
    assert sd.math.logsumexp(a, axis=1, keepdims=True).shape == (2, 1)
    assert np.ndim(sd.math.logsumexp(a)) == 0
    s = sd.math.softmax(a, axis=1)
    np.testing.assert_allclose(s.sum(axis=1), [1.0, 1.0])
    np.testing.assert_allclose(s[0], [0.5, 0.5])
    with pytest.raises(sd.UnsupportedError, match="shapes="):
        sd.grad(lambda x: sd.math.logsumexp(x), wrt="x")  # a scalar trace has no axes


def test_traced_source_and_steps_are_identical_across_processes(tmp_path):
    import os
    import subprocess
    import sys
    import textwrap

    from .conftest import ROOT

    code = textwrap.dedent("""
        import sys
        import numpy as np
        import symdiff as sd

        def loss(X, w, y):
            return np.mean(np.log(1 + np.exp(-y * (X @ w)))) + 0.1 * np.sum(w[1:] ** 2)

        shapes = {"X": ("n", "d"), "y": ("n",), "w": ("d",)}
        sys.stdout.write(sd.hessian(loss, wrt="w", shapes=shapes, cache=False).source)
        sys.stdout.write(str(sd.derive(loss, wrt="w", shapes=shapes)))
        sys.stdout.write(sd.derive(loss, wrt="w", shapes=shapes).latex())
    """)
    outputs = set()
    for seed in ("1", "2"):
        environment = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT),
                       "SYMDIFF_CACHE_DIR": str(tmp_path / seed)}
        outputs.add(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                   check=True, env=environment, cwd=ROOT).stdout)
    assert len(outputs) == 1
