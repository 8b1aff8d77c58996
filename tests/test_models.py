"""Models as users write them (:mod:`tests.model_zoo`), differentiated by symdiff without
changing a line: only ``wrt=`` and an example (or ``shapes=``) are given. Their gradients are
checked against central differences of the function itself and against autograd running the
same code with its NumPy and SciPy wrappers in place of NumPy's and SciPy's (optional, where
autograd is installed). The recurrences run over a few steps, so that the builds stay short."""

from __future__ import annotations

import importlib.util
import inspect
import types

import numpy as np
import pytest

import symdiff as sd

from . import model_zoo as zoo
from .numeric import central, central_tree

needs_autograd = pytest.mark.skipif(importlib.util.find_spec("autograd") is None,
                                    reason="optional comparison with autograd: autograd is "
                                           "not installed")


def _close(got, expected, rtol=1e-6, atol=1e-8):
    got_leaves, expected_leaves = sd.flatten(got)[0], sd.flatten(expected)[0]
    np.testing.assert_allclose(got_leaves, expected_leaves, rtol=rtol, atol=atol)


def _same_structure(got, expected):
    assert type(got) is type(expected)
    if isinstance(expected, dict):
        assert sorted(got) == sorted(expected)  # JAX orders dict keys by sorting
        for key in expected:
            _same_structure(got[key], expected[key])
    elif isinstance(expected, list | tuple):
        assert len(got) == len(expected)
        for a, b in zip(got, expected, strict=True):
            _same_structure(a, b)
    else:
        assert np.shape(got) == np.shape(expected)


def _autograd_zoo() -> types.SimpleNamespace:
    """The zoo's functions with autograd's ``numpy``, ``logsumexp``, ``norm`` and
    ``multivariate_normal`` as their globals (the custom-VJP function as its plain body)."""
    import autograd.numpy as anp
    import autograd.scipy.stats.multivariate_normal as amvn
    import autograd.scipy.stats.norm as anorm
    from autograd.scipy.special import logsumexp as alogsumexp

    names = dict(vars(zoo), np=anp, norm=anorm, multivariate_normal=amvn,
                 logsumexp=alogsumexp)
    for name, value in vars(zoo).items():
        fn = getattr(value, "fn", value)
        if isinstance(fn, types.FunctionType) and fn.__module__ == zoo.__name__:
            names[name] = types.FunctionType(fn.__code__, names, fn.__name__,
                                             fn.__defaults__, fn.__closure__)
    return types.SimpleNamespace(**names)


def _autograd(name: str, argnum: int, *args):
    import autograd

    return autograd.grad(getattr(_autograd_zoo(), name), argnum)(*args)


def _references(name: str, argnum: int, args: tuple, check_autograd: bool = True):
    """The gradient of the zoo function ``name`` in argument ``argnum``: central differences,
    and autograd's where installed."""
    fn = getattr(zoo, name)

    def partial(tree):
        return fn(*args[:argnum], tree, *args[argnum + 1:])

    refs = [central_tree(partial, args[argnum])]
    if check_autograd and importlib.util.find_spec("autograd") is not None:
        refs.append(_autograd(name, argnum, *args))
    return refs


def _check(name: str, wrt: str, args: tuple, rtol: float = 1e-6, **options):
    fn = getattr(zoo, name)
    argnum = list(inspect.signature(fn).parameters).index(wrt)
    g = sd.grad(fn, wrt=wrt, example=args, **options)
    got = g(*args)
    refs = _references(name, argnum, args)
    _same_structure(got, args[argnum])
    for ref in refs:
        _close(got, ref, rtol=rtol)
    return g


RS = np.random.RandomState(0)


def test_mlp_with_a_list_of_layers():
    params = zoo.init_random_params(0.5, [3, 5, 2], np.random.RandomState(1))
    inputs, targets = zoo.TRAIN_INPUTS[:6], zoo.TRAIN_TARGETS[:6]
    _check("log_posterior", "params", (params, inputs, targets, 0.1))


def test_an_iteration_counter_picks_the_batch():
    params = zoo.init_random_params(0.5, [3, 4, 2], np.random.RandomState(2))
    g = sd.grad(zoo.objective, wrt="params", example=(params, 0))
    for it in range(4):
        got = g(params, it)
        for ref in _references("objective", 0, (params, it)):
            _close(got, ref)
    assert g.specialisations == 4  # one per counter value


def _rnn_params(rs, in_size=2, state=3, out_size=2):
    return {"init hiddens": 0.3 * rs.randn(1, state),
            "change": 0.3 * rs.randn(in_size + state + 1, state),
            "predict": 0.3 * rs.randn(state + 1, out_size)}


def _sequences(rs, steps=3, batch=2, size=2):
    inputs = rs.randn(steps, batch, size)
    targets = np.eye(size)[rs.randint(0, size, size=(steps, batch))]
    return inputs, targets


def test_rnn_over_a_few_steps():
    rs = np.random.RandomState(3)
    inputs, targets = _sequences(rs)
    _check("rnn_log_likelihood", "params", (_rnn_params(rs), inputs, targets))


def test_lstm_over_a_few_steps():
    rs = np.random.RandomState(4)
    inputs, targets = _sequences(rs, steps=3)
    state, size = 2, 2
    params = {"init cells": 0.3 * rs.randn(1, state), "init hiddens": 0.3 * rs.randn(1, state)}
    for gate in ("change", "forget", "ingate", "outgate"):
        params[gate] = 0.3 * rs.randn(size + state + 1, state)
    params["predict"] = 0.3 * rs.randn(state + 1, size)
    _check("lstm_log_likelihood", "params", (params, inputs, targets))


def test_vae_with_reparameterised_noise():
    rs = np.random.RandomState(5)
    data_dim, latent_dim, hidden, n = 4, 2, 3, 5
    gen = zoo.init_random_params(0.3, [latent_dim, hidden, data_dim], rs)
    rec = zoo.init_random_params(0.3, [data_dim, hidden, 2 * latent_dim], rs)
    data = (rs.rand(n, data_dim) > 0.5).astype(float)
    noise = rs.randn(n, latent_dim)
    args = (gen, rec, data, noise)
    _check("vae_lower_bound", "gen_params", args)
    _check("vae_lower_bound", "rec_params", args)


def test_gp_marginal_likelihood_with_multivariate_normal():
    rs = np.random.RandomState(6)
    x = rs.randn(6, 1)
    y = np.sin(2 * x[:, 0]) + 0.1 * rs.randn(6)
    params = np.array([0.1, -2.0, 0.3, -0.2])  # mean, log noise, log scale, log lengthscale
    _check("gp_log_marginal_likelihood", "params", (params, x, y))


def test_gmm_with_logsumexp():
    rs = np.random.RandomState(7)
    data = np.concatenate([rs.randn(5) - 2, rs.randn(5) + 2])
    params = {"log proportions": np.log(np.array([0.3, 0.7])),
              "means": np.array([-1.5, 1.0]), "log stds": np.array([0.1, -0.2])}
    _check("gmm_log_likelihood", "params", (params, data))
    _check("gmm_normalised_log_likelihood", "params", (params, data))


def test_hmm_forward_pass_with_observations_static():
    rs = np.random.RandomState(11)
    log_pi = np.log(np.array([0.6, 0.4]))
    log_A, log_B = np.log(rs.dirichlet(np.ones(2), 2)), np.log(rs.dirichlet(np.ones(3), 2))
    obs = np.array([0, 2, 1, 1])
    args = (log_pi, log_A, log_B, obs)
    for wrt in ("log_A", "log_B"):
        _check("hmm_log_likelihood", wrt, args, static="obs")
    g = sd.grad(zoo.hmm_log_likelihood, wrt="log_B", example=args, static="obs")
    other = np.array([2, 2, 0, 1])
    _close(g(log_pi, log_A, log_B, other),
           _references("hmm_log_likelihood", 2, (log_pi, log_A, log_B, other))[0])
    assert g.specialisations == 2  # one per sequence of observations
    with pytest.raises(sd.UnsupportedError, match=r"indexing by a traced array.*static='name'"):
        sd.grad(zoo.hmm_log_likelihood, wrt="log_B", example=args)


def test_bayesian_logistic_regression_with_norm_logpdf():
    rs = np.random.RandomState(8)
    inputs = rs.randn(10, 3)
    targets = (rs.rand(10) > 0.5).astype(float)
    weights = rs.randn(3)
    g = _check("logistic_log_posterior", "weights", (weights, inputs, targets, 2.0))
    assert g(weights, inputs, targets, 3.0).shape == (3,)  # prior_scale is a traced scalar


def test_nested_grad_of_grad():
    d2 = sd.grad(sd.grad(zoo.tanh_curve))
    d3 = sd.grad(sd.grad(sd.grad(zoo.tanh_curve)))
    x = np.linspace(-2.0, 2.0, 7)
    d1 = sd.grad(zoo.tanh_curve)

    def first(x):
        return d1(x)[0]

    def second(x):
        return d2(x)[0]

    np.testing.assert_allclose(d2(x)[0], central(lambda v: np.sum(first(v)), x), rtol=1e-6)
    np.testing.assert_allclose(d3(x)[0], central(lambda v: np.sum(second(v)), x), rtol=1e-5)
    if importlib.util.find_spec("autograd") is not None:
        import autograd

        curve = _autograd_zoo().tanh_curve
        theirs2 = autograd.elementwise_grad(autograd.elementwise_grad(curve))(x)
        theirs3 = autograd.elementwise_grad(autograd.elementwise_grad(
            autograd.elementwise_grad(curve)))(x)
        np.testing.assert_allclose(d2(x)[0], theirs2, rtol=1e-10)
        np.testing.assert_allclose(d3(x)[0], theirs3, rtol=1e-10)


def test_nested_grad_of_a_model():
    """The gradient of a loss that itself calls a compiled gradient (a gradient-norm penalty)."""
    rs = np.random.RandomState(9)
    inputs, targets = rs.randn(6, 3), (rs.rand(6) > 0.5).astype(float)
    inner = sd.grad(zoo.logistic_log_posterior, wrt="weights",
                    example=(rs.randn(3), inputs, targets, 2.0))

    def penalised(weights):
        return np.sum(inner(weights, inputs, targets, 2.0) ** 2)

    weights = rs.randn(3)
    got = sd.grad(penalised, wrt="weights", shapes={"weights": (3,)})(weights)
    np.testing.assert_allclose(got, central(penalised, weights), rtol=1e-6)
    if importlib.util.find_spec("autograd") is not None:
        import autograd

        log_post = _autograd_zoo().logistic_log_posterior
        inner_ag = autograd.grad(log_post)
        theirs = autograd.grad(lambda w: autograd.numpy.sum(
            inner_ag(w, inputs, targets, 2.0) ** 2))(weights)
        np.testing.assert_allclose(got, theirs, rtol=1e-10)


def test_a_function_with_its_own_gradient():
    rs = np.random.RandomState(10)
    W, inputs = rs.randn(3, 4), rs.randn(3)
    _check("softmax_regression_loss", "W", (W, inputs, 2))
    g = sd.grad(zoo.softmax_regression_loss, wrt="W", example=(W, inputs, 2))
    assert "exp" in g.source and "scipy" not in g.source
