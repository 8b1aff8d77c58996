"""One convolution layer, forward and backward: symdiff's emitted gradient vs a hand-written
NumPy im2col layer (and PyTorch on CPU when it is installed).

Run: ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_conv.py [--repeat R]``.
Each case is the loss ``sum(conv2d(x, w, stride, padding) * G)``: its value and its gradient
with respect to ``x`` and ``w`` are one layer's forward pass and backward pass for the upstream
adjoint ``G``. symdiff emits ``sliding_window_view`` + ``tensordot`` for the forward pass and
the weight adjoint, and the input adjoint as a transposed convolution (the output adjoint
spread by the stride, correlated with the flipped kernel). The hand-written layer is the
classic im2col one: the windows copied into a matrix, one matrix product forward, two
backward, and the column adjoint added back offset by offset (col2im). Times are medians of
interleaved rounds; the ratio is to the hand-written layer (lower is better). Also pooling
(``max_pool2d``, 2x2) and ``batch_norm`` against their textbook backward passes.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from timing import interleaved_medians

import symdiff as sd


def im2col_layer(stride: int, pad: int) -> Callable:
    """The hand-written layer: value and (dx, dw) of ``sum(conv2d(x, w) * g)``."""

    def layer(g: np.ndarray, w: np.ndarray, x: np.ndarray) -> tuple:
        o, c, kh, kw = w.shape
        xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad))) if pad else x
        view = sliding_window_view(xp, (kh, kw), axis=(2, 3))[:, :, ::stride, ::stride]
        n, _, oh, ow = view.shape[:4]
        cols = view.transpose(1, 4, 5, 0, 2, 3).reshape(c * kh * kw, n * oh * ow)
        wf = w.reshape(o, -1)
        y = (wf @ cols).reshape(o, n, oh, ow).transpose(1, 0, 2, 3)
        value = np.sum(y * g)
        gf = g.transpose(1, 0, 2, 3).reshape(o, -1)
        dw = (gf @ cols.T).reshape(w.shape)
        dcols = (wf.T @ gf).reshape(c, kh, kw, n, oh, ow)
        dxp = np.zeros_like(xp)
        for i in range(kh):
            for j in range(kw):
                dxp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride] += (
                    dcols[:, i, j].transpose(1, 0, 2, 3))
        dx = dxp[:, :, pad:-pad, pad:-pad] if pad else dxp
        return value, (dw, dx)

    return layer


def torch_layer(stride: int, pad: int) -> Callable | None:
    """PyTorch's autograd on CPU, or None when torch is missing."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(1)

    def layer(g: np.ndarray, w: np.ndarray, x: np.ndarray) -> tuple:
        tx = torch.from_numpy(x).requires_grad_()
        tw = torch.from_numpy(w).requires_grad_()
        value = torch.sum(torch.nn.functional.conv2d(tx, tw, stride=stride, padding=pad)
                          * torch.from_numpy(g))
        value.backward()
        return value.item(), (tw.grad.numpy(), tx.grad.numpy())

    return layer


#: (label, x shape, w shape, stride, padding)
CASES = [
    ("8x8, 16->16, 3x3", (64, 16, 8, 8), (16, 16, 3, 3), 1, 1),
    ("16x16, 16->32, 3x3 s2", (64, 16, 16, 16), (32, 16, 3, 3), 2, 1),
    ("32x32, 3->16, 3x3", (64, 3, 32, 32), (16, 3, 3, 3), 1, 1),
    ("8x8, 16->32, 1x1", (64, 16, 8, 8), (32, 16, 1, 1), 1, 0),
]


def _pool_peers(shape: tuple[int, ...]) -> list[tuple[str, Callable]]:
    text = "sum(max_pool2d(x, 2) * g)"
    out = (*shape[:2], shape[2] // 2, shape[3] // 2)
    vg = sd.value_and_grad(text, wrt="x", shapes={"x": shape, "g": out})

    def hand(g: np.ndarray, x: np.ndarray) -> tuple:
        n, c, h, w = x.shape
        tiles = x.reshape(n, c, h // 2, 2, w // 2, 2)
        peak = tiles.max(axis=(3, 5), keepdims=True)
        mask = tiles == peak
        share = mask / mask.sum(axis=(3, 5), keepdims=True)
        return np.sum(peak[:, :, :, 0, :, 0] * g), (share * g[:, :, :, None, :, None]).reshape(
            x.shape)

    return [("symdiff", lambda g, x: vg(g=g, x=x)), ("by hand", hand)]


def _norm_peers(shape: tuple[int, ...]) -> list[tuple[str, Callable]]:
    text = "sum(batch_norm(x) * g)"
    vg = sd.value_and_grad(text, wrt="x", shapes={"x": shape, "g": shape})

    def hand(g: np.ndarray, x: np.ndarray) -> tuple:
        axes = (0, 2, 3)
        mu = x.mean(axis=axes, keepdims=True)
        inv = 1 / np.sqrt(x.var(axis=axes, keepdims=True) + 1e-5)
        xhat = (x - mu) * inv
        dx = inv * (g - g.mean(axis=axes, keepdims=True)
                    - xhat * (g * xhat).mean(axis=axes, keepdims=True))
        return np.sum(xhat * g), dx

    return [("symdiff", lambda g, x: vg(g=g, x=x)), ("by hand", hand)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21)
    options = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"numpy {np.__version__}; median of {options.repeat} interleaved rounds; batch 64")
    print(f"{'case':<24} {'symdiff':>10} {'im2col':>10} {'ratio':>6} {'torch':>10} {'ratio':>6}")
    for label, x_shape, w_shape, stride, pad in CASES:
        text = f"sum(conv2d(x, w, stride={stride}, padding={pad}) * g)"
        x = rng.normal(size=x_shape)
        w = rng.normal(size=w_shape)
        hand = im2col_layer(stride, pad)
        g = rng.normal(size=_out_shape(x_shape, w_shape, stride, pad))
        vg = sd.value_and_grad(text, wrt=["w", "x"], shapes={"x": x_shape, "w": w_shape,
                                                            "g": g.shape})
        ours = vg(g=g, w=w, x=x)
        theirs = hand(g, w, x)
        for a, b in zip(ours[1], theirs[1], strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)
        peers = [("symdiff", vg), ("im2col", hand)]
        torch = torch_layer(stride, pad)
        if torch is not None:
            peers.append(("torch", torch))
        times = interleaved_medians(peers, (g, w, x), options.repeat)
        torch_cols = (f" {times[2] * 1e3:>8.2f}ms {times[0] / times[2]:>6.2f}"
                      if torch is not None else "")
        print(f"{label:<24} {times[0] * 1e3:>8.2f}ms {times[1] * 1e3:>8.2f}ms "
              f"{times[0] / times[1]:>6.2f}{torch_cols}")
    shape = (64, 16, 8, 8)
    x, g = rng.normal(size=shape), rng.normal(size=shape)
    for label, peers, args in (
        ("max_pool2d 2x2", _pool_peers(shape), (rng.normal(size=(64, 16, 4, 4)), x)),
        ("batch_norm", _norm_peers(shape), (g, x)),
    ):
        times = interleaved_medians(peers, args, options.repeat)
        print(f"{label:<24} {times[0] * 1e3:>8.2f}ms {times[1] * 1e3:>8.2f}ms "
              f"{times[0] / times[1]:>6.2f}")


def _out_shape(x_shape: tuple[int, ...], w_shape: tuple[int, ...], stride: int, pad: int
               ) -> tuple[int, ...]:
    return (x_shape[0], w_shape[0], *(
        (h + 2 * pad - k) // stride + 1 for h, k in zip(x_shape[2:], w_shape[2:], strict=True)))


if __name__ == "__main__":
    main()
