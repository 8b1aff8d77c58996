"""Models written as users write them for autograd or JAX: plain NumPy and SciPy, parameters as
lists, tuples and dicts of arrays, helpers calling helpers, an iteration counter picking a
batch. The tests (``test_models.py``) differentiate them with symdiff unchanged, and run the same
code under autograd by swapping the module's NumPy and SciPy names for autograd's."""

# ruff: noqa: B905, RUF005, RUF007  (the spellings of autograd's and JAX's users, kept as written)

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp
from scipy.stats import multivariate_normal, norm

import symdiff as sd

# -- a multilayer perceptron: a list of (W, b) layers ------------------------------------------


def init_random_params(scale, layer_sizes, rs):
    """A list of (weights, biases) tuples, one per layer."""
    return [(scale * rs.randn(m, n), scale * rs.randn(n))
            for m, n in zip(layer_sizes[:-1], layer_sizes[1:])]


def neural_net_predict(params, inputs):
    """Class log-probabilities: tanh hidden layers, a log-softmax output."""
    for W, b in params:
        outputs = np.dot(inputs, W) + b
        inputs = np.tanh(outputs)
    return outputs - logsumexp(outputs, axis=1, keepdims=True)


def l2_norm(params):
    """The squared norm of every weight and bias."""
    total = 0.0
    for W, b in params:
        total = total + np.sum(W**2) + np.sum(b**2)
    return total


def log_posterior(params, inputs, targets, L2_reg):
    log_prior = -L2_reg * l2_norm(params)
    log_lik = np.sum(neural_net_predict(params, inputs) * targets)
    return log_prior + log_lik


# -- an iteration counter picking the batch ----------------------------------------------------

BATCH_SIZE = 4
TRAIN_INPUTS = np.random.RandomState(7).randn(12, 3)
TRAIN_TARGETS = np.eye(2)[np.random.RandomState(8).randint(0, 2, size=12)]
NUM_BATCHES = int(np.ceil(len(TRAIN_INPUTS) / BATCH_SIZE))


def batch_indices(iter):
    idx = iter % NUM_BATCHES
    return slice(idx * BATCH_SIZE, (idx + 1) * BATCH_SIZE)


def objective(params, iter):
    idx = batch_indices(iter)
    return -log_posterior(params, TRAIN_INPUTS[idx], TRAIN_TARGETS[idx], 0.1)


# -- a recurrent network and an LSTM over a few steps ------------------------------------------


def sigmoid(x):
    return 0.5 * (np.tanh(x) + 1.0)


def concat_and_multiply(weights, *args):
    cat_state = np.hstack(args + (np.ones((args[0].shape[0], 1)),))
    return np.dot(cat_state, weights)


def rnn_predict(params, inputs):
    """``inputs`` is (steps, batch, features); a log-softmax output at every step."""
    hiddens = np.repeat(params["init hiddens"], inputs.shape[1], axis=0)
    output = []
    for input in inputs:
        hiddens = np.tanh(concat_and_multiply(params["change"], input, hiddens))
        logits = concat_and_multiply(params["predict"], hiddens)
        output.append(logits - logsumexp(logits, axis=1, keepdims=True))
    return output


def sequence_log_likelihood(predict, params, inputs, targets):
    """The mean log-probability ``predict`` gives the targets, over steps and sequences."""
    logprobs = predict(params, inputs)
    loglik = 0.0
    for t in range(len(logprobs)):
        loglik += np.sum(logprobs[t] * targets[t])
    return loglik / (len(logprobs) * inputs.shape[1])


def rnn_log_likelihood(params, inputs, targets):
    return sequence_log_likelihood(rnn_predict, params, inputs, targets)


def lstm_predict(params, inputs):
    def update_lstm(input, hiddens, cells):
        change = np.tanh(concat_and_multiply(params["change"], input, hiddens))
        forget = sigmoid(concat_and_multiply(params["forget"], input, hiddens))
        ingate = sigmoid(concat_and_multiply(params["ingate"], input, hiddens))
        outgate = sigmoid(concat_and_multiply(params["outgate"], input, hiddens))
        cells = cells * forget + ingate * change
        hiddens = outgate * np.tanh(cells)
        return hiddens, cells

    num_sequences = inputs.shape[1]
    hiddens = np.repeat(params["init hiddens"], num_sequences, axis=0)
    cells = np.repeat(params["init cells"], num_sequences, axis=0)
    output = []
    for input in inputs:
        hiddens, cells = update_lstm(input, hiddens, cells)
        logits = concat_and_multiply(params["predict"], hiddens)
        output.append(logits - logsumexp(logits, axis=1, keepdims=True))
    return output


def lstm_log_likelihood(params, inputs, targets):
    return sequence_log_likelihood(lstm_predict, params, inputs, targets)


# -- a variational autoencoder with reparameterised noise --------------------------------------


def diag_gaussian_log_density(x, mu, log_std):
    return np.sum(norm.logpdf(x, mu, np.exp(log_std)), axis=-1)


def unpack_gaussian_params(params):
    D = np.shape(params)[-1] // 2
    mean, log_std = params[:, :D], params[:, D:]
    return mean, log_std


def sample_diag_gaussian(mean, log_std, noise):
    return noise * np.exp(log_std) + mean


def bernoulli_log_density(targets, unnormalized_logprobs):
    label_probabilities = -np.logaddexp(0, -unnormalized_logprobs * (2 * targets - 1))
    return np.sum(label_probabilities, axis=-1)


def mlp(params, inputs):
    for W, b in params[:-1]:
        inputs = np.tanh(inputs @ W + b)
    W, b = params[-1]
    return inputs @ W + b


def vae_lower_bound(gen_params, rec_params, data, noise):
    q_means, q_log_stds = unpack_gaussian_params(mlp(rec_params, data))
    latents = sample_diag_gaussian(q_means, q_log_stds, noise)
    q_latents = diag_gaussian_log_density(latents, q_means, q_log_stds)
    p_latents = diag_gaussian_log_density(latents, 0, 0)
    logits = mlp(gen_params, latents)
    p_data = bernoulli_log_density(data, logits)
    return np.mean(p_latents + p_data - q_latents)


# -- a Gaussian process marginal likelihood ----------------------------------------------------


def rbf_covariance(kernel_params, x, xp):
    output_scale = np.exp(kernel_params[0])
    lengthscales = np.exp(kernel_params[1:])
    diffs = np.expand_dims(x / lengthscales, 1) - np.expand_dims(xp / lengthscales, 0)
    return output_scale * np.exp(-0.5 * np.sum(diffs**2, axis=2))


def gp_log_marginal_likelihood(params, x, y):
    mean, log_noise, kernel_params = params[0], params[1], params[2:]
    cov_y_y = rbf_covariance(kernel_params, x, x) + (np.exp(log_noise) + 1e-6) * np.eye(len(y))
    prior_mean = mean * np.ones(len(y))
    return multivariate_normal.logpdf(y, prior_mean, cov_y_y)


# -- a Gaussian mixture with logsumexp ---------------------------------------------------------


def gmm_log_likelihood(params, data):
    cluster_lls = []
    for log_proportion, mean, log_std in zip(params["log proportions"], params["means"],
                                             params["log stds"]):
        cluster_lls.append(log_proportion + norm.logpdf(data, mean, np.exp(log_std)))
    return np.sum(logsumexp(np.vstack(cluster_lls), axis=0))


def gmm_normalised_log_likelihood(params, data):
    log_weights = params["log proportions"] - logsumexp(params["log proportions"])
    lls = log_weights + norm.logpdf(data[:, None], params["means"],
                                    np.exp(params["log stds"]))
    return np.sum(logsumexp(lls, axis=1))


# -- a hidden Markov model's forward pass -----------------------------------------------------


def hmm_log_likelihood(log_pi, log_A, log_B, obs):
    alpha = log_pi + log_B[:, obs[0]]
    for o in obs[1:]:
        alpha = logsumexp(alpha[:, None] + log_A, axis=0) + log_B[:, o]
    return logsumexp(alpha)


# -- a Bayesian logistic regression ------------------------------------------------------------


def logistic_log_posterior(weights, inputs, targets, prior_scale):
    log_prior = np.sum(norm.logpdf(weights, 0, prior_scale))
    logits = np.dot(inputs, weights)
    log_lik = np.sum(targets * logits - np.logaddexp(0, logits))
    return log_prior + log_lik


# -- a function with its own gradient ----------------------------------------------------------


@sd.custom_vjp
def stable_logsumexp(x):
    max_x = np.max(x)
    return max_x + np.log(np.sum(np.exp(x - max_x)))


def logsumexp_vjp(ans, x):
    return lambda g: g * np.exp(x - ans)


stable_logsumexp.defvjp(logsumexp_vjp)


def softmax_regression_loss(W, inputs, label):
    scores = np.dot(inputs, W)
    return stable_logsumexp(scores) - scores[label]


# -- a scalar function for nested derivatives --------------------------------------------------


def tanh_curve(x):
    return np.tanh(x) * np.exp(-0.1 * x**2) + np.sin(3.0 * x) / (1.0 + x**2)
