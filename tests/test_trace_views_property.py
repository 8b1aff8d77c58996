"""Random programs of the kind that unpacks one parameter vector into pieces (layer-unpacking
code, Gaussian-process hyperparameters): chains of slices, slices of reshaped slices, rows,
columns and elements of them, each piece then used by a term of the objective. The gradient in
every mode against central differences of the function itself.

The backward pass of a slice of a slice is a scatter of a scatter; the emitter once left the
inner one unbuilt when the outer was built on its own (``_t70[2:] = _z1 + _z2``: refused by the
verifier as a name no statement binds), as in ``c = w[2:]; np.exp(c[0]) * ... c[1:] ...``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import symdiff as sd
from tests.numeric import central

N = 24


def _views(draw, steps: int) -> tuple[list[str], list[tuple[int, ...]]]:
    """Lines ``v1 = ...`` making views of ``w`` (each from any earlier one), and the shapes."""
    lines: list[str] = []
    shapes: list[tuple[int, ...]] = [(N,)]
    for k in range(1, steps + 1):
        source = draw(st.sampled_from([i for i, s in enumerate(shapes) if s]))
        shape = shapes[source]
        name = "w" if source == 0 else f"v{source}"
        if len(shape) == 1:
            (n,) = shape
            kind = draw(st.sampled_from(["slice", "tail", "step", "element", "reshape"]))
            kind = "element" if n == 1 else kind
            if kind == "reshape" and n >= 4:
                p = draw(st.integers(2, max(2, n // 2)))
                q = draw(st.integers(2, max(2, n // p)))
                text, new = f"{name}[:{p * q}].reshape({p}, {q})", (p, q)
            elif kind == "element":
                i = draw(st.integers(-n, n - 1))
                text, new = f"{name}[{i}]", ()
            elif kind == "step" and n >= 3:
                start = draw(st.integers(0, n - 2))
                text, new = f"{name}[{start}::2]", (len(range(start, n, 2)),)
            elif kind == "tail":
                start = draw(st.integers(1, n - 1))
                text, new = f"{name}[{start}:]", (n - start,)
            else:
                start = draw(st.integers(0, n - 1))
                stop = draw(st.integers(start + 1, n))
                text, new = f"{name}[{start}:{stop}]", (stop - start,)
        else:
            p, q = shape
            kind = draw(st.sampled_from(["rows", "columns", "row", "column", "ravel", "T"]))
            if kind == "rows":
                start = draw(st.integers(0, p - 1))
                text, new = f"{name}[{start}:]", (p - start, q)
            elif kind == "columns":
                stop = draw(st.integers(1, q))
                text, new = f"{name}[:, :{stop}]", (p, stop)
            elif kind == "row":
                i = draw(st.integers(0, p - 1))
                text, new = f"{name}[{i}]", (q,)
            elif kind == "column":
                j = draw(st.integers(0, q - 1))
                text, new = f"{name}[:, {j}]", (p,)
            elif kind == "ravel":
                text, new = f"{name}.reshape(-1)", (p * q,)
            else:
                text, new = f"{name}.T", (q, p)
        lines.append(f"v{k} = {text}")
        shapes.append(new)
    return lines, shapes


def _term(draw, k: int, shape: tuple[int, ...], other: int, other_shape: tuple[int, ...]) -> str:
    """A term of the objective using view ``k`` (and maybe another, ``other``)."""
    v, u = f"v{k}", f"v{other}"
    kind = draw(st.sampled_from(["sin", "exp_times", "product", "matrix"]))
    if kind == "exp_times":  # an element scaling a sum over another piece (GP hyperparameters)
        first = v if not shape else f"{v}.reshape(-1)[0]"
        return f"np.exp(0.3 * {first}) * np.sum(np.cos({u}))"
    if kind == "product":
        return f"np.sum(np.sin({v})) * np.sum({u} ** 2)"
    if kind == "matrix" and len(shape) == 2:
        return f"np.sum(np.tanh({v} @ np.linspace(-1.0, 1.0, {shape[1]})))"
    return f"np.sum(np.sin({v}) * {v})"


@st.composite
def programs(draw) -> str:
    lines, shapes = _views(draw, draw(st.integers(2, 6)))
    count = len(shapes) - 1
    used = draw(st.lists(st.integers(1, count), min_size=1, max_size=4))
    terms = [_term(draw, k, shapes[k], draw(st.integers(1, count)),
                   shapes[draw(st.integers(1, count))]) for k in used]
    body = "".join(f"    {line}\n" for line in lines)
    return f"def f(w):\n{body}    return {' + '.join(terms)}\n"


@settings(max_examples=30, deadline=None)
@given(programs(), st.sampled_from(["reverse", "forward", "auto"]), st.integers(0, 2**16))
def test_views_of_views_match_central_differences(source, mode, seed):
    _check(source, mode, np.random.default_rng(seed).uniform(-1.0, 1.0, size=N))


def _check(source: str, mode: str, w: np.ndarray) -> None:
    """The gradient of the random program ``source`` at ``w`` against central differences."""
    namespace: dict = {"np": np}
    exec(source, namespace)  # the test's own random program
    f = namespace["f"]
    got = sd.grad(f, wrt="w", shapes={"w": w.shape}, mode=mode, cache=False)(w)
    assert np.allclose(got, central(f, w), rtol=1e-5, atol=1e-6), source


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_slice_of_hyperparameters_used_twice(mode):
    """The shape of the Gaussian-process code that once failed to build in reverse mode."""
    x = np.linspace(-1.0, 1.0, 5)

    def f(params):
        cov_params = params[2:]
        scale = np.exp(cov_params[0])
        lengths = np.exp(cov_params[1:])
        return scale * np.sum(np.exp(-(x[:, None] / lengths) ** 2)) + params[0] * params[1]

    w = np.array([0.3, -0.2, 0.1, 0.4, -0.5])
    got = sd.grad(f, wrt="params", shapes={"params": (5,)}, mode=mode, cache=False)(w)
    assert np.allclose(got, central(f, w), rtol=1e-6, atol=1e-8)


L = 40


@st.composite
def gp_programs(draw) -> str:
    """A Gaussian-process-like objective of one parameter vector ``w`` (deep GP, GPLVM): each
    layer's hyperparameters a slice of ``w``, unpacked by slicing again (``mean = p[0]``,
    ``cov = p[2:]``, ``lengths = cov[1:]``); a covariance matrix of latent points (a reshaped
    slice), a Gram matrix or nested products of reshaped slices; then solves, log-determinants
    and products with it."""
    n = draw(st.integers(2, 4))

    def piece(size: int) -> str:
        start = draw(st.integers(0, L - size))
        return f"w[{start}:{start + size}]"

    d = draw(st.integers(1, 2))
    lines = [f"A = {piece(n * n)}.reshape({n}, {n})", f"v = {piece(n)}",
             f"p = {piece(d + 3)}", "mean = p[0]", "noise = np.exp(p[1]) + 0.5",
             "cov = p[2:]", "scale = np.exp(cov[0])", "lengths = np.exp(cov[1:])"]
    kind = draw(st.sampled_from(["gram", "nested", "rbf"]))
    if kind == "gram":
        lines.append(f"K = scale * (A @ A.T) + noise * np.eye({n})")
    elif kind == "nested":
        lines.append(f"B = {piece(n * n)}.reshape({n}, {n})")
        lines.append(f"K = (A @ B) @ (A @ B).T + scale * (A @ A.T) + noise * np.eye({n})")
    else:
        lines += [f"latents = {piece(n * d)}.reshape({n}, {d})",
                  "scaled = latents / lengths",
                  "diffs = np.expand_dims(scaled, 1) - np.expand_dims(scaled, 0)",
                  f"K = scale * np.exp(-0.5 * np.sum(diffs ** 2, axis=2)) + noise * np.eye({n})"]
    terms = draw(st.lists(st.sampled_from(["quad", "logdet", "trace", "product"]),
                          min_size=1, max_size=3, unique=True))
    text = {
        "quad": "(v - mean) @ np.linalg.solve(K, v - mean)",
        "logdet": "np.linalg.slogdet(K)[1]",
        "trace": "np.trace(np.linalg.solve(K, A @ A.T))",
        "product": "np.sum((A @ K) @ v)",
    }
    body = "".join(f"    {line}\n" for line in lines)
    return f"def f(w):\n{body}    return {' + '.join(text[t] for t in terms)}\n"


@settings(max_examples=20, deadline=None)
@given(gp_programs(), st.sampled_from(["reverse", "auto"]), st.integers(0, 2**16))
def test_gaussian_process_patterns_in_reverse_mode(source, mode, seed):
    _check(source, mode, np.random.default_rng(seed).uniform(-0.5, 0.5, size=L))


# -- the deep Gaussian process and the GPLVM, written as their users write them ------------------
def _rbf_covariance(kernel_params, x, xp):
    output_scale = np.exp(kernel_params[0])
    lengthscales = np.exp(kernel_params[1:])
    diffs = np.expand_dims(x / lengthscales, 1) - np.expand_dims(xp / lengthscales, 0)
    return output_scale * np.exp(-0.5 * np.sum(diffs ** 2, axis=2))


def _mvn_logpdf(y, mean, cov):
    diff = y - mean
    _, logdet = np.linalg.slogdet(cov)
    return -0.5 * (diff @ np.linalg.solve(cov, diff) + logdet + len(y) * np.log(2 * np.pi))


def _log_marginal_likelihood(params, x, y):
    mean, cov_params, noise_scale = params[0], params[2:], np.exp(params[1]) + 0.0001
    cov_y_y = _rbf_covariance(cov_params, x, x) + noise_scale * np.eye(len(y))
    return _mvn_logpdf(y, mean * np.ones(len(y)), cov_y_y)


_X = np.random.default_rng(0).normal(size=(6, 1))
_Y = np.sin(_X[:, 0])


def _deep_gp(all_params):
    layer1, layer2 = all_params[:4], all_params[4:8]
    hiddens = np.reshape(all_params[8:], (6, 1))
    return (_log_marginal_likelihood(layer1, _X, hiddens[:, 0])
            + _log_marginal_likelihood(layer2, hiddens, _Y))


def _gplvm(params):
    kernel_params = params[:4]
    latents = np.reshape(params[4:], (6, 1))
    data = np.stack([_Y, _Y ** 2], axis=1)
    gp = sum(_log_marginal_likelihood(kernel_params, latents, data[:, i]) for i in range(2))
    return -gp - np.sum(-0.5 * latents ** 2 - 0.5 * np.log(2 * np.pi))


@pytest.mark.parametrize("objective", [_deep_gp, _gplvm])
def test_deep_gp_and_gplvm_build_in_reverse_mode(objective):
    size = 14 if objective is _deep_gp else 10
    w = np.random.default_rng(1).uniform(-0.5, 0.5, size=size)
    g = sd.grad(objective, wrt=objective.__code__.co_varnames[0],
                shapes={objective.__code__.co_varnames[0]: (size,)}, mode="reverse")
    assert np.allclose(g(w), central(objective, w), rtol=1e-6, atol=1e-7)
