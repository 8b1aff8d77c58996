"""Random draws inside traced functions: drawn afresh at every call of the compiled function,
from the generator the function used, consuming its stream as the Python function does; or
refused with a SymdiffError saying how to pass the noise as an argument.

References: central differences of the user's own function with the generator reset to the
same state before each evaluation (so it draws the same noise), the gradient derived by hand
from the same draws, and autograd's gradient with the same seed where autograd is installed.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symdiff as sd
from tests.numeric import central

try:
    import autograd
    import autograd.numpy as anp
except ImportError:  # an optional peer
    autograd = anp = None

needs_autograd = pytest.mark.skipif(autograd is None, reason="autograd (an optional peer) is "
                                    "not installed")


def _state(generator):
    if isinstance(generator, np.random.RandomState):
        return generator.get_state()
    return copy.deepcopy(generator.bit_generator.state)


def _set(generator, state):
    if isinstance(generator, np.random.RandomState):
        generator.set_state(state)
    else:
        generator.bit_generator.state = state


def _with_draws_of(generator, state, f):
    """``f`` evaluated with ``generator`` reset to ``state`` first: the same draws each time."""
    def fixed(x):
        _set(generator, state)
        return f(x)
    return fixed


# -- a reparameterised Monte Carlo objective (an ELBO), as users write it ------------------------
D = 2
rs = np.random.RandomState(0)


def _log_density(x):
    """An unnormalised 2-D density (the funnel of autograd's black-box SVI example)."""
    mu, log_sigma = x[:, 0], x[:, 1]
    sigma_density = -0.5 * (log_sigma / 1.35) ** 2
    mu_density = -0.5 * (mu / np.exp(log_sigma)) ** 2 - log_sigma
    return sigma_density + mu_density


def elbo(params):
    mean, log_std = params[:D], params[D:]
    samples = rs.randn(30, D) * np.exp(log_std) + mean
    entropy = 0.5 * D * (1.0 + np.log(2 * np.pi)) + np.sum(log_std)
    return -(entropy + np.mean(_log_density(samples)))


PARAMS = np.array([0.3, -0.4, 0.1, -0.2])


def test_the_gradient_is_drawn_afresh_at_every_call():
    g = sd.grad(elbo, wrt="params", shapes={"params": (2 * D,)})
    first, second = g(PARAMS), g(PARAMS)
    assert not np.allclose(first, second)
    rs.seed(7)
    again = g(PARAMS)
    rs.seed(7)
    assert np.array_equal(g(PARAMS), again)


def test_the_gradient_is_the_functions_own_with_the_same_draws():
    g = sd.grad(elbo, wrt="params", shapes={"params": (2 * D,)})
    for seed in (1, 2, 3):
        rs.seed(seed)
        state = _state(rs)
        got = g(PARAMS)
        after = _state(rs)
        assert np.allclose(got, central(_with_draws_of(rs, state, elbo), PARAMS),
                           rtol=1e-6, atol=1e-8)
        _set(rs, state)
        elbo(PARAMS)  # the Python function consumes the stream exactly as the compiled one
        assert all(np.array_equal(a, b) for a, b in zip(_state(rs)[1:], after[1:], strict=True))
        assert np.array_equal(_state(rs)[1], after[1])


def test_a_hand_derived_gradient_with_the_same_draws():
    """d/dmu mean(-(mu + s*eps)**2 / 2) = -mean(mu + s*eps); d/ds = -mean((mu + s*eps)*eps)."""
    rng = np.random.default_rng(3)

    def objective(theta):
        eps = rng.standard_normal(50)
        z = theta[0] + theta[1] * eps
        return np.mean(-0.5 * z ** 2)

    g = sd.grad(objective, wrt="theta", shapes={"theta": (2,)})
    theta = np.array([0.7, 1.3])
    twin = copy.deepcopy(rng)
    got = g(theta)
    eps = twin.standard_normal(50)
    z = theta[0] + theta[1] * eps
    assert np.allclose(got, [-np.mean(z), -np.mean(z * eps)], rtol=1e-12)
    assert rng.bit_generator.state == twin.bit_generator.state


@needs_autograd
def test_matches_autograd_with_the_same_seed():
    def make(numpy):
        def objective(params):
            mean, log_std = params[:D], params[D:]
            samples = rs.randn(30, D) * numpy.exp(log_std) + mean
            mu, log_sigma = samples[:, 0], samples[:, 1]
            density = -0.5 * (log_sigma / 1.35) ** 2 - 0.5 * (mu / numpy.exp(log_sigma)) ** 2
            return -(numpy.sum(log_std) + numpy.mean(density - log_sigma))
        return objective

    ours = sd.grad(make(np), wrt="params", shapes={"params": (2 * D,)})
    theirs = autograd.grad(make(anp))
    for seed in (0, 5):
        rs.seed(seed)
        expected = theirs(PARAMS)
        rs.seed(seed)
        assert np.allclose(ours(PARAMS), expected, rtol=1e-10, atol=1e-12)


@needs_autograd
def test_autograds_own_random_module_is_followed():
    import autograd.numpy.random as npr

    def objective(w):
        return anp.sum(anp.sin(w + 0.1 * npr.randn(3)))

    ours = sd.grad(objective, wrt="w", shapes={"w": (3,)})
    w = np.array([0.1, 0.2, 0.3])
    np.random.seed(4)
    expected = autograd.grad(objective)(w)
    np.random.seed(4)
    assert np.allclose(ours(w), expected, rtol=1e-12)


# -- every kind of generator, the same way ---------------------------------------------------------
SAMPLERS = [
    ("RandomState", "randn", (4,), {}),
    ("RandomState", "normal", (0.5, 2.0), {"size": 4}),
    ("RandomState", "uniform", (-1.0, 1.0, 4), {}),
    ("RandomState", "rand", (4,), {}),
    ("Generator", "standard_normal", (4,), {}),
    ("Generator", "normal", (), {"loc": 1.0, "scale": 0.5, "size": (4,)}),
    ("Generator", "gumbel", (0.0, 1.0, 4), {}),
    ("Generator", "random", (4,), {}),
    ("legacy", "normal", (0.0, 1.0, 4), {}),
    ("legacy", "randn", (4,), {}),
]


@settings(max_examples=20, deadline=None)
@given(st.sampled_from(SAMPLERS), st.integers(0, 2**31 - 1),
       st.sampled_from(["sin", "exp", "square"]))
def test_reparameterised_objectives_match_central_differences(sampler, seed, kind):
    source, method, args, kwargs = sampler
    generator = (np.random.RandomState(seed) if source == "RandomState"
                 else np.random.default_rng(seed) if source == "Generator"
                 else np.random.mtrand._rand)
    draw = getattr(np.random if source == "legacy" else generator, method)
    transform = {"sin": np.sin, "exp": lambda z: np.exp(0.3 * z), "square": np.square}[kind]

    def objective(w):
        z = w * (1.0 + draw(*args, **kwargs)) + 0.5 * w[0]
        return np.mean(transform(z))

    g = sd.value_and_grad(objective, wrt="w", shapes={"w": (4,)}, cache=False)
    w = np.linspace(-0.5, 0.7, 4)
    if source == "legacy":
        np.random.seed(seed)
    state = _state(generator)
    value, grad = g(w)
    fixed = _with_draws_of(generator, state, objective)
    assert np.isclose(value, fixed(w), rtol=1e-12)
    assert np.allclose(grad, central(fixed, w), rtol=1e-6, atol=1e-8)


def test_draws_are_made_in_the_functions_order_from_each_generator():
    a, b = np.random.RandomState(1), np.random.default_rng(2)

    def f(w):
        first = a.randn(2)
        second = b.uniform(size=2)
        third = a.normal(size=2)
        return np.sum(w * first + w ** 2 * second + np.sin(w) * third)

    g = sd.grad(f, wrt="w", shapes={"w": (2,)})
    state_a, state_b = _state(a), _state(b)
    got = g(np.array([0.2, -0.3]))
    _set(a, state_a)
    _set(b, state_b)
    first, second, third = a.randn(2), b.uniform(size=2), a.normal(size=2)
    w = np.array([0.2, -0.3])
    assert np.allclose(got, first + 2 * w * second + np.cos(w) * third, rtol=1e-12)


def test_building_draws_nothing_and_the_source_says_what_is_drawn():
    rng = np.random.default_rng(11)
    before = copy.deepcopy(rng.bit_generator.state)

    def f(w):
        return np.sum(w * rng.normal(0.0, 2.0, size=3))

    g = sd.grad(f, wrt="w", shapes={"w": (3,)})
    assert rng.bit_generator.state == before
    assert "rng.normal(0.0, 2.0, size=3)" in g.source
    assert g.constants == {"rng": rng}


def test_bind_draws_from_another_generator():
    rng = np.random.default_rng(0)

    def f(w):
        return np.sum(w * rng.standard_normal(3))

    g = sd.grad(f, wrt="w", shapes={"w": (3,)})
    other = np.random.default_rng(99)
    expected = copy.deepcopy(other).standard_normal(3)
    assert np.allclose(g.bind(rng=other)(np.zeros(3)), expected)
    with pytest.raises(TypeError, match="Generator"):
        g.bind(rng=np.random.RandomState(0))


def test_a_noise_scalar_and_a_hessian():
    rng = np.random.default_rng(5)

    def f(x):
        return x ** 3 * rng.standard_normal()

    h = sd.hessian(f, wrt="x", shapes={"x": ()})
    twin = copy.deepcopy(rng)
    assert np.isclose(h(2.0), 12.0 * twin.standard_normal())


# -- refusals, each saying how to pass the noise ------------------------------------------------
class _Model:
    def __init__(self):
        self.rng = np.random.default_rng(0)


_MODEL = _Model()


def _refused(f, match, **shapes):
    state = copy.deepcopy(_MODEL.rng.bit_generator.state)
    legacy = np.random.get_state()[1].copy()
    with pytest.raises(sd.SymdiffError, match=match) as error:
        sd.grad(f, wrt="w", shapes=shapes or None)
    assert _MODEL.rng.bit_generator.state == state  # a refused trace leaves the streams alone
    assert np.array_equal(np.random.get_state()[1], legacy)
    return str(error.value)


def test_scalar_tracing_refuses_draws():
    message = _refused(lambda w: w * rs.randn(), "without shapes=")
    assert "def f(w, eps)" in message


@pytest.mark.parametrize("body, match", [
    (lambda w: np.sum(w[rs.randint(0, 3, size=2)]), "draws integers"),
    (lambda w: np.sum(w * rs.permutation(3)), "reorders"),
    (lambda w: (np.random.seed(0), np.sum(w * np.random.randn(3)))[1], "state"),
    (lambda w: np.sum(w * np.random.default_rng(0).normal(size=3)), "new generator"),
    (lambda w: np.sum(w * rs.normal(w, 1.0)), "traced values"),
    (lambda w: np.sum(w * _MODEL.rng.normal(size=3)), "cannot follow"),
    (lambda w: np.sum(w * rs.get_state()[1][:3]), None),
])
def test_what_cannot_be_drawn_again_is_refused(body, match):
    if match is None:  # reading a generator's state is no draw: a constant, as in Python
        sd.grad(body, wrt="w", shapes={"w": (3,)})
        return
    message = _refused(body, match, w=(3,))
    assert "as an argument" in message


def test_a_draw_sized_by_a_named_dimension_is_refused():
    def f(w):
        return np.sum(w * rs.randn(w.shape[0]))

    message = _refused(f, "named dimensions", w=("n",))
    assert "fixed sizes" in message
