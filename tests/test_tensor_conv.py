"""Convolutional layers (:mod:`symdiff.tensor.families.conv`, ``pooling``, ``norms``,
``windows``) and :mod:`symdiff.nn`: gradients against central differences of loop-written NumPy
references on several shapes, strides, paddings and dilations (both modes), ties in max pooling,
Hessians, named dimensions and float32, the string language and tracing, and clear errors."""

from __future__ import annotations

import numpy as np
import pytest

import symdiff as sd
from symdiff import nn
from symdiff.errors import ShapeError
from tests.numeric import central

RNG = np.random.default_rng(18)


# -- references written with loops over the kernel, independent of symdiff -------------------------
def conv_ref(x: np.ndarray, w: np.ndarray, stride: int = 1, padding: int = 0,
             dilation: int = 1) -> np.ndarray:
    """N-d cross-correlation, channels first, as PyTorch defines it."""
    r = w.ndim - 2
    x = np.pad(x, ((0, 0), (0, 0), *((padding, padding),) * r))
    outs = [(h - dilation * (k - 1) - 1) // stride + 1 for h, k in
            zip(x.shape[2:], w.shape[2:], strict=True)]
    y = np.zeros((x.shape[0], w.shape[0], *outs))
    for offset in np.ndindex(*w.shape[2:]):
        window = tuple(slice(i * dilation, i * dilation + stride * (m - 1) + 1, stride)
                       for i, m in zip(offset, outs, strict=True))
        y += np.einsum("nc...,oc->no...", x[(slice(None), slice(None), *window)],
                       w[(slice(None), slice(None), *offset)])
    return y


def pool_ref(x: np.ndarray, k: int, s: int, reduce, rank: int = 2) -> np.ndarray:
    outs = [(h - k) // s + 1 for h in x.shape[-rank:]]
    out = np.empty((*x.shape[:-rank], *outs))
    for pos in np.ndindex(*outs):
        window = tuple(slice(p * s, p * s + k) for p in pos)
        out[(..., *pos)] = reduce(x[(..., *window)], axis=tuple(range(-rank, 0)))
    return out


def bn_ref(x, gamma, beta, eps=1e-5):
    axes = (0, *range(2, x.ndim))
    xhat = (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(x.var(axis=axes, keepdims=True)
                                                            + eps)
    shape = (-1, *(1,) * (x.ndim - 2))
    return xhat * gamma.reshape(shape) + beta.reshape(shape)


def _check(text, fn, values, wrt, mode="reverse", rtol=1e-6, atol=1e-7):
    """``sd.grad(text)`` against central differences of ``fn`` for each ``wrt`` entry."""
    shapes = {k: v.shape for k, v in values.items()}
    got = sd.grad(text, wrt=wrt, shapes=shapes, mode=mode)(**values)
    for name, mine in zip(wrt, got, strict=True):
        def partial(v, name=name):
            return fn(**{**values, name: v})
        np.testing.assert_allclose(mine, central(partial, values[name]), rtol=rtol, atol=atol,
                                   err_msg=f"{text} wrt {name} ({mode})")


# -- convolution -----------------------------------------------------------------------------------
CONV_CASES = [  # x shape, w shape, stride, padding, dilation
    ((2, 3, 5, 5), (4, 3, 3, 3), 1, 0, 1),
    ((2, 2, 6, 7), (3, 2, 3, 2), 2, 1, 1),
    ((1, 2, 7, 6), (2, 2, 2, 3), 1, 0, 2),
    ((1, 1, 9, 8), (2, 1, 3, 2), 3, 2, 2),
    ((2, 3, 4, 4), (2, 3, 1, 1), 1, 0, 1),
    ((1, 2, 4, 4), (3, 2, 2, 2), 2, 0, 1),  # windows that tile the input
]


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("xs, ws, s, p, d", CONV_CASES, ids=[str(c) for c in CONV_CASES])
def test_conv2d_gradients(xs, ws, s, p, d, mode):
    x, w = RNG.normal(size=xs), RNG.normal(size=ws)
    c = RNG.normal(size=conv_ref(x, w, s, p, d).shape)
    text = f"sum(conv2d(x, w, stride={s}, padding={p}, dilation={d}) ** 2 * c)"
    _check(text, lambda x, w, c: np.sum(conv_ref(x, w, s, p, d) ** 2 * c),
           {"x": x, "w": w, "c": c}, ["x", "w"], mode)


@pytest.mark.parametrize("s, p, d", [(1, 0, 1), (2, 1, 1), (1, 2, 3)])
def test_conv1d_gradients(s, p, d):
    x, w = RNG.normal(size=(2, 3, 11)), RNG.normal(size=(2, 3, 3))
    text = f"sum(sin(conv1d(x, w, stride={s}, padding={p}, dilation={d})))"
    _check(text, lambda x, w: np.sum(np.sin(conv_ref(x, w, s, p, d))), {"x": x, "w": w},
           ["x", "w"])


def test_eager_layers_match_the_references():
    x, w = RNG.normal(size=(2, 3, 7, 6)), RNG.normal(size=(4, 3, 3, 2))
    np.testing.assert_allclose(nn.conv2d(x, w, stride=2, padding=1, dilation=2),
                               conv_ref(x, w, 2, 1, 2), rtol=1e-12, atol=1e-12)
    x1, w1 = RNG.normal(size=(2, 3, 9)), RNG.normal(size=(2, 3, 4))
    np.testing.assert_allclose(nn.conv1d(x1, w1, 2, 1), conv_ref(x1, w1, 2, 1), rtol=1e-12)
    np.testing.assert_allclose(nn.max_pool2d(x, 3, 2), pool_ref(x, 3, 2, np.max))
    np.testing.assert_allclose(nn.avg_pool1d(x1, 2), pool_ref(x1, 2, 2, np.mean, 1))
    g, b = RNG.normal(size=3), RNG.normal(size=3)
    np.testing.assert_allclose(nn.batch_norm(x, g, b), bn_ref(x, g, b), rtol=1e-12)


def test_steps_name_the_transposed_convolution():
    d = sd.derive("sum(conv2d(x, w, stride=2) ** 2)", wrt="x",
                  shapes={"x": (1, 2, 5, 5), "w": (3, 2, 3, 3)})
    text = str(d)
    assert "convolution (transposed convolution)" in text
    assert "full correlation of G" in text and "flipped kernel" in text
    assert "conv2d(x, w, stride=2)" in text
    assert "sliding windows (overlap-add)" in text


def test_emitted_code_uses_windows_and_one_matrix_product_per_pass():
    g = sd.grad("sum(conv2d(x, w, padding=1) * c)", wrt=["x", "w"],
                shapes={"x": ("n", 3, 6, 6), "w": (4, 3, 3, 3), "c": ("n", 4, 6, 6)})
    body = g.source[g.source.index("def grad_f"):]
    assert body.count("sliding_window_view") == 1  # one im2col, shared by both passes
    assert body.count("@") == 2  # W_bar = G @ cols.T, cols_bar = W.T @ G (no forward needed)
    assert "for " not in body
    assert body.count("+=") == 8  # col2im: one slice per kernel offset (9, the first a set)


# -- pooling ---------------------------------------------------------------------------------------
POOL_CASES = [((2, 3, 4, 4), 2, 2), ((1, 2, 7, 6), 3, 2), ((2, 5, 5), 2, 1), ((2, 1, 5, 5), 2, 2)]


@pytest.mark.parametrize("kind, reduce", [("max", np.max), ("avg", np.mean)])
@pytest.mark.parametrize("xs, k, s", POOL_CASES, ids=[str(c) for c in POOL_CASES])
def test_pool2d_gradients(xs, k, s, kind, reduce):
    x = RNG.normal(size=xs)
    c = RNG.normal(size=pool_ref(x, k, s, reduce).shape)
    _check(f"sum({kind}_pool2d(x, {k}, {s}) * c)",
           lambda x, c: np.sum(pool_ref(x, k, s, reduce) * c), {"x": x, "c": c}, ["x"],
           mode="forward" if xs[0] == 1 else "reverse")


def test_pool1d_gradients():
    x = RNG.normal(size=(2, 3, 9))
    _check("sum(max_pool1d(x, 3, 2) ** 2) + sum(avg_pool1d(x, 2) ** 3)",
           lambda x: np.sum(pool_ref(x, 3, 2, np.max, 1) ** 2)
           + np.sum(pool_ref(x, 2, 2, np.mean, 1) ** 3), {"x": x}, ["x"])


def test_max_pool_splits_the_gradient_among_ties():
    x = np.zeros((1, 1, 4, 4))
    x[0, 0, 0, :2] = 1.0  # a 2-way tie in the first window; the others all equal (4-way)
    (got,) = sd.grad("sum(max_pool2d(x, 2))", shapes={"x": (1, 1, 4, 4)})(x)
    want = np.full((4, 4), 0.25)
    want[:2, :2] = [[0.5, 0.5], [0, 0]]
    np.testing.assert_array_equal(got[0, 0], want)
    x = np.ones((1, 1, 3, 3))  # overlapping windows (stride 1): shares add up per element
    (got,) = sd.grad("sum(max_pool2d(x, 2, 1))", shapes={"x": (1, 1, 3, 3)})(x)
    np.testing.assert_array_equal(got[0, 0], [[0.25, 0.5, 0.25], [0.5, 1, 0.5],
                                              [0.25, 0.5, 0.25]])


# -- pad and the normalisations --------------------------------------------------------------------
def test_pad_gradients_and_np_pad_tracing():
    x = RNG.normal(size=(2, 3))
    _check("sum(pad(x, ((1, 2), (0, 1)), constant_values=1.5) ** 2)",
           lambda x: np.sum(np.pad(x, ((1, 2), (0, 1)), constant_values=1.5) ** 2), {"x": x},
           ["x"])

    def f(x):
        return np.sum(np.cos(np.pad(x, 2)))

    (got,) = sd.grad(f, shapes={"x": (2, 3)})(x)
    np.testing.assert_allclose(got, central(f, x), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_batch_norm_gradients(mode):
    x, c = RNG.normal(size=(4, 3, 2, 2)), RNG.normal(size=(4, 3, 2, 2))
    gm, bt = RNG.normal(size=3), RNG.normal(size=3)
    _check("sum(batch_norm(x, gm, bt) * c)", lambda x, gm, bt, c: np.sum(bn_ref(x, gm, bt) * c),
           {"x": x, "gm": gm, "bt": bt, "c": c}, ["x", "gm", "bt"], mode)


def test_batch_norm_backward_is_the_textbook_three_term_form():
    x, c = RNG.normal(size=(5, 2, 3, 3)), RNG.normal(size=(5, 2, 3, 3))
    got = sd.grad("sum(batch_norm(x, eps=0.001) * c)", wrt="x",
                  shapes={"x": x.shape, "c": c.shape})(x=x, c=c)
    axes = (0, 2, 3)
    inv = 1 / np.sqrt(x.var(axis=axes, keepdims=True) + 0.001)
    xhat = (x - x.mean(axis=axes, keepdims=True)) * inv
    want = inv * (c - c.mean(axis=axes, keepdims=True)
                  - xhat * (c * xhat).mean(axis=axes, keepdims=True))
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_layer_norm_gradients():
    x, c, gm = RNG.normal(size=(3, 4, 5)), RNG.normal(size=(3, 4, 5)), RNG.normal(size=5)

    def ref(x, gm, c, axis=-1):
        m, v = x.mean(axis=axis, keepdims=True), x.var(axis=axis, keepdims=True)
        return np.sum((x - m) / np.sqrt(v + 1e-5) * gm * c)

    _check("sum(layer_norm(x, gamma=gm) * c)", ref, {"x": x, "gm": gm, "c": c}, ["x", "gm"])
    _check("sum(layer_norm(x, axis=(1, 2)) * c)",
           lambda x, c: np.sum((x - x.mean(axis=(1, 2), keepdims=True))
                               / np.sqrt(x.var(axis=(1, 2), keepdims=True) + 1e-5) * c),
           {"x": x, "c": c}, ["x"], mode="forward")


# -- second order, named dimensions, float32 -------------------------------------------------------
def test_hessian_of_a_small_conv():
    x, w = RNG.normal(size=(1, 2, 4, 4)), RNG.normal(size=(2, 2, 2, 2))

    def loss_w(w):
        return np.sum(np.tanh(conv_ref(x, w, 2, 1)))

    H = sd.hessian("sum(tanh(conv2d(x, w, stride=2, padding=1)))", wrt="w",
                   shapes={"x": x.shape, "w": w.shape})
    got = np.asarray(H(x=x, w=w)).reshape(w.size, w.size)
    grad = sd.grad("sum(tanh(conv2d(x, w, stride=2, padding=1)))", wrt="w",
                   shapes={"x": x.shape, "w": w.shape})
    want = np.stack([central(lambda v, e=e: np.sum(grad(x=x, w=v) * e.reshape(w.shape)),
                             w).ravel() for e in np.eye(w.size)])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got, got.T, rtol=1e-12, atol=1e-12)
    want_grad = central(loss_w, w)
    np.testing.assert_allclose(grad(x=x, w=w), want_grad, rtol=1e-7, atol=1e-9)


def test_named_batch_and_float32():
    g = sd.grad("sum(max_pool2d(conv2d(x, w, padding=1), 2) ** 2)", wrt="w",
                shapes={"x": ("n", 2, 4, 4), "w": (3, 2, 3, 3)})
    for n in (1, 3):
        x = RNG.normal(size=(n, 2, 4, 4)).astype(np.float32)
        w = RNG.normal(size=(3, 2, 3, 3)).astype(np.float32)
        got = g(x=x, w=w)
        assert got.dtype == np.float32
        x64 = x.astype(float)
        want = central(lambda v, x64=x64: np.sum(pool_ref(conv_ref(x64, v, 1, 1), 2, 2,
                                                          np.max) ** 2), w.astype(float))
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)


def test_named_channels_and_per_axis_stride_and_padding():
    g = sd.grad("sum(conv2d(x, w, stride=(1, 2), padding=(2, 1)) ** 2)", wrt=["x", "w"],
                shapes={"x": ("n", "c", 6, 7), "w": ("o", "c", 3, 2)})
    x, w = RNG.normal(size=(2, 3, 6, 7)), RNG.normal(size=(4, 3, 3, 2))

    def f(x, w):
        return np.sum(nn.conv2d(x, w, stride=(1, 2), padding=(2, 1)) ** 2)

    gx, gw = g(x=x, w=w)
    np.testing.assert_allclose(gx, central(lambda v: f(v, w), x), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(gw, central(lambda v: f(x, v), w), rtol=1e-6, atol=1e-6)


# -- tracing: a small residual network written with NumPy and symdiff.nn ---------------------------
W2 = RNG.normal(size=(3, 3, 3, 3)) * 0.3


def residual_net(x, w, gamma, beta):
    h = np.maximum(nn.batch_norm(nn.conv2d(x, w, padding=1), gamma, beta), 0)
    h = h + np.maximum(nn.conv2d(h, W2, padding=1), 0)  # a residual block; W2 is closed over
    return np.sum(nn.max_pool2d(h, 2) ** 2) + np.sum(nn.avg_pool2d(h, 3, 1))


def test_traced_residual_network():
    args = [RNG.normal(size=(3, 1, 6, 6)), RNG.normal(size=(3, 1, 3, 3)), RNG.normal(size=3),
            RNG.normal(size=3)]
    shapes = {"x": (3, 1, 6, 6), "w": (3, 1, 3, 3), "gamma": (3,), "beta": (3,)}
    got = sd.grad(residual_net, shapes=shapes)(*args)
    for i, mine in enumerate(got):
        def partial(v, i=i):
            return residual_net(*args[:i], v, *args[i + 1:])
        np.testing.assert_allclose(mine, central(partial, args[i]), rtol=1e-6, atol=1e-6)


def test_traced_equals_string_language():
    x, w = RNG.normal(size=(2, 2, 5, 5)), RNG.normal(size=(2, 2, 2, 2))

    def f(x, w):
        return np.sum(nn.layer_norm(nn.conv2d(x, w, stride=2, dilation=2)) ** 3)

    shapes = {"x": x.shape, "w": w.shape}
    traced = sd.grad(f, shapes=shapes)(x, w)
    parsed = sd.grad("sum(layer_norm(conv2d(x, w, stride=2, dilation=2)) ** 3)",
                     wrt=["x", "w"], shapes=shapes)(x=x, w=w)
    for a, b in zip(traced, parsed, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-12)


# -- errors ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, shapes, message", [
    ("sum(conv2d(x, w))", {"x": (1, 3, 5, 5), "w": (2, 4, 3, 3)},
     r"conv2d: the input has 3 channels but the weights \(2, 4, 3, 3\) expect 4"),
    ("sum(conv2d(x, w))", {"x": (1, 3, 5), "w": (2, 3, 3)}, "conv2d: needs an input of 4"),
    ("sum(conv2d(x, w))", {"x": (1, 3, 2, 5), "w": (2, 3, 3, 3)},
     "conv2d: a window spanning 3 does not fit in an axis of 2"),
    ("sum(conv2d(x, w, dilation=3))", {"x": (1, 3, 6, 6), "w": (2, 3, 3, 3)},
     "a window spanning 7"),
    ("sum(conv2d(x, w, stride=0))", {"x": (1, 3, 5, 5), "w": (2, 3, 3, 3)},
     r"conv2d: stride must be an int >= 1"),
    ("sum(conv2d(x, w, padding=(1, 2, 3)))", {"x": (1, 3, 5, 5), "w": (2, 3, 3, 3)},
     "padding must be an int >= 0 or a tuple of 2"),
    ("sum(conv2d(x, w))", {"x": (1, 3, "h", 5), "w": (2, 3, 3, 3)},
     "windowed axes need integer lengths"),
    ("sum(max_pool2d(x, 3))", {"x": (1, 2, 2)}, "max_pool2d: a window spanning 3"),
    ("sum(pad(x, ((1, 1),)))", {"x": (2, 2)}, "pad_width must be"),
    ("sum(batch_norm(x, g))", {"x": (2, 3, 4), "g": (4,)},
     r"batch_norm: gamma must have shape \(3,\)"),
])
def test_bad_shapes_are_clear(text, shapes, message):
    with pytest.raises(ShapeError, match=message):
        sd.grad(text, wrt="x", shapes=shapes)


def test_pad_modes_other_than_constant_are_refused():
    with pytest.raises(ShapeError, match="pad: only mode='constant' is supported, not 'edge'"):
        sd.grad(lambda x: np.sum(np.pad(x, 1, mode="edge")), shapes={"x": (2, 2)})


def test_scalar_tracing_is_refused_clearly():
    with pytest.raises(sd.SymdiffError, match="conv2d works on arrays: trace with shapes="):
        sd.grad(lambda x: nn.conv2d(x, x))


def test_a_deep_network_formula_is_replaced_by_a_note():
    """Printed as a tree, the gradient of stacked residual blocks repeats every shared node
    at each use (exponential in depth): past MAX_FORMULA characters ``exprs`` is a note."""
    def f(x, w):
        for _ in range(4):
            x = x + np.maximum(nn.batch_norm(nn.conv2d(x, w, padding=1)), 0)
        return np.sum(x ** 2)

    g = sd.grad(f, wrt="w", shapes={"x": (2, 2, 4, 4), "w": (2, 2, 3, 3)})
    (formula,) = g.exprs
    assert "see the generated source" in formula and "see the generated source" in formula.latex
    x, w = RNG.normal(size=(2, 2, 4, 4)), RNG.normal(size=(2, 2, 3, 3)) * 0.3
    np.testing.assert_allclose(g(x, w), central(lambda v: f(x, v), w), rtol=1e-6, atol=1e-6)


def test_nn_is_a_lazy_submodule():
    assert sd.nn is nn
    assert "nn" not in sd.__all__  # like sd.math: a star import brings no module named nn
