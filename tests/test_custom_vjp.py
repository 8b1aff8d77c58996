"""Functions with their own derivative rule (``@sd.custom_vjp``, ``defvjp``): the rule is what
the gradient computes (checked with a rule that differs from the body's derivative on purpose),
the generated module computes it with NumPy, derivations show it, Hessians differentiate the
body; autograd's and JAX's spellings of the rule; the refusals."""

from __future__ import annotations

import numpy as np
import pytest

import symdiff as sd
from symdiff.verify import check_module

from .numeric import central


@sd.custom_vjp
def _logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


@_logsumexp.defvjp
def _logsumexp_vjp(ans, x):
    return lambda g: g * np.exp(x - ans)


def _model(y):
    return 2.0 * _logsumexp(y**2)


Y = np.array([0.1, -0.5, 1.2, 0.3])


def test_the_rule_gives_the_gradient():
    g = sd.grad(_model, wrt="y", shapes={"y": (4,)})
    np.testing.assert_allclose(g(Y), central(_model, Y), rtol=1e-7)
    assert float(sd.compile(_model, shapes={"y": (4,)})(Y)) == pytest.approx(_model(Y))
    check_module(g.source)  # NumPy only, and the verifier accepts it
    assert "import scipy" not in g.source


def test_a_rule_that_differs_from_the_body_is_the_one_used():
    @sd.custom_vjp
    def clipped_identity(x):  # straight-through: the value clips, the gradient passes
        return np.clip(x, -1.0, 1.0)

    clipped_identity.defvjp(lambda ans, x: lambda g: g)

    g = sd.grad(lambda x: np.sum(clipped_identity(x) * np.array([1.0, 2.0, 3.0])),
                wrt="x", shapes={"x": (3,)})
    np.testing.assert_allclose(g(np.array([-4.0, 0.2, 9.0])), [1.0, 2.0, 3.0])


def test_several_arguments_autograd_spelling_and_none():
    def body(x, y):
        return x * y

    scaled = sd.custom_vjp(body)
    sd.defvjp(scaled, lambda ans, x, y: lambda g: 10 * g * y, None)  # no gradient for y

    g = sd.grad(lambda x, y: np.sum(scaled(x, y)), wrt=["x", "y"],
                shapes={"x": (2,), "y": (2,)})
    dx, dy = g(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    np.testing.assert_allclose(dx, [30.0, 40.0])
    np.testing.assert_allclose(dy, [0.0, 0.0])


def test_jax_spelling_fwd_and_bwd():
    @sd.custom_vjp
    def softplus(x):
        return np.log1p(np.exp(x))

    def fwd(x):
        return np.log1p(np.exp(x)), x

    def bwd(x, g):
        return (g / (1 + np.exp(-x)),)

    softplus.defvjp(fwd=fwd, bwd=bwd)
    x = np.array([-3.0, 0.0, 2.0])
    g = sd.grad(lambda x: np.sum(softplus(x)), wrt="x", shapes={"x": (3,)})
    np.testing.assert_allclose(g(x), 1 / (1 + np.exp(-x)), rtol=1e-12)


def test_derivations_show_the_rule_and_hessians_differentiate_the_body():
    text = str(sd.derive(_model, wrt="y", shapes={"y": (4,)}))
    assert "[custom VJP]" in text and "_logsumexp(" in text
    H = sd.hessian(_model, wrt="y", shapes={"y": (4,)})(Y)
    p = np.exp(Y**2 - np.max(Y**2))
    p /= p.sum()
    expected = 2 * (np.diag(2 * p + 4 * Y**2 * p) - 4 * np.outer(Y * p, Y * p))
    np.testing.assert_allclose(H, expected, rtol=1e-10, atol=1e-12)


def test_two_rules_for_one_body_are_two_functions():
    def body(x):
        return x**2

    first, second = sd.custom_vjp(body), sd.custom_vjp(body)
    first.defvjp(lambda ans, x: lambda g: g * 2 * x)
    second.defvjp(lambda ans, x: lambda g: g * 3 * x)
    x = np.array([1.0, 2.0])
    g1 = sd.grad(lambda x: np.sum(first(x)), wrt="x", shapes={"x": (2,)})
    g2 = sd.grad(lambda x: np.sum(second(x)), wrt="x", shapes={"x": (2,)})
    np.testing.assert_allclose(g1(x), 2 * x)
    np.testing.assert_allclose(g2(x), 3 * x)


def test_plain_calls_and_refusals():
    assert _logsumexp(np.array([0.0, 0.0])) == pytest.approx(np.log(2))
    with pytest.raises(sd.UnsupportedError, match="give the builder shapes="):
        sd.grad(lambda x: _logsumexp(x), wrt="x")
    bare = sd.custom_vjp(lambda x: x)
    with pytest.raises(sd.UnsupportedError, match="without a rule"):
        sd.grad(lambda x: np.sum(bare(x)), wrt="x", shapes={"x": (2,)})
    with pytest.raises(sd.SymdiffError, match="fwd= and bwd= together"):
        bare.defvjp(fwd=lambda x: (x, x))
    with pytest.raises(sd.SymdiffError, match="custom_vjp"):
        sd.defvjp(np.sin, lambda ans, x: lambda g: g)
