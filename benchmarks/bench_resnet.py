"""One training step of the small ResNet of ``examples/train_resnet_digits.py`` (forward and
backward, batch 64, 8x8 inputs, 16 channels by default, two residual blocks): symdiff's emitted
gradient vs the same network written by hand in NumPy (im2col convolutions, col2im input
gradients, the textbook batch-norm backward pass) and vs PyTorch's autograd on CPU when torch is
installed.

Run: ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_resnet.py [--repeat R]
[--batch B] [--width C]`` (C channels, 16 by default; the example trains 12). With Numba
installed, symdiff's step with ``backend="numba"`` is timed too ("numba"). The peers must
agree on the loss and every gradient (checked first); the table gives the median CPU time
(``time.process_time``: the machine is often shared, and CPU time is what a busy neighbour
disturbs least) of interleaved rounds and the ratios to the hand-written step and to PyTorch
(lower is better; the goal is symdiff <= 1.2x the hand-written step). A peer that
cannot run (PyTorch not installed) is left out with the reason printed. Run from a checkout
with PyTorch elsewhere: ``PYTHONPATH=. /path/to/venv/bin/python benchmarks/bench_resnet.py``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from timing import interleaved_medians

import symdiff as sd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
import train_resnet_digits as net

EPS = 1e-5


# -- the hand-written layers (forward returns the output and what backward needs) ---------------
def conv_forward(x, w):
    o, c, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    view = sliding_window_view(xp, (kh, kw), axis=(2, 3))
    n, _, h, wd = view.shape[:4]
    cols = view.transpose(1, 4, 5, 0, 2, 3).reshape(c * kh * kw, n * h * wd)
    y = (w.reshape(o, -1) @ cols).reshape(o, n, h, wd).transpose(1, 0, 2, 3)
    return y, (cols, xp.shape, w)


def conv_backward(dy, cache):
    cols, padded, w = cache
    o, c, kh, kw = w.shape
    n, _, h, wd = dy.shape
    flat = dy.transpose(1, 0, 2, 3).reshape(o, -1)
    dw = (flat @ cols.T).reshape(w.shape)
    dcols = (w.reshape(o, -1).T @ flat).reshape(c, kh, kw, n, h, wd)
    dxp = np.zeros(padded)
    for i in range(kh):
        for j in range(kw):
            dxp[:, :, i:i + h, j:j + wd] += dcols[:, i, j].transpose(1, 0, 2, 3)
    return dxp[:, :, 1:-1, 1:-1], dw


def bn_forward(x, g, b):
    axes = (0, 2, 3)
    inv = 1 / np.sqrt(x.var(axis=axes, keepdims=True) + EPS)
    xhat = (x - x.mean(axis=axes, keepdims=True)) * inv
    return xhat * g[:, None, None] + b[:, None, None], (xhat, inv, g)


def bn_backward(dy, cache):
    xhat, inv, g = cache
    axes = (0, 2, 3)
    dg, db = np.sum(dy * xhat, axis=axes), np.sum(dy, axis=axes)
    dxhat = dy * g[:, None, None]
    dx = inv * (dxhat - dxhat.mean(axis=axes, keepdims=True)
                - xhat * (dxhat * xhat).mean(axis=axes, keepdims=True))
    return dx, dg, db


def unit(x, w, g, b):
    """conv, batch norm (no ReLU yet)."""
    y, conv_cache = conv_forward(x, w)
    z, bn_cache = bn_forward(y, g, b)
    return z, (conv_cache, bn_cache)


def unit_backward(dz, cache):
    conv_cache, bn_cache = cache
    dy, dg, db = bn_backward(dz, bn_cache)
    dx, dw = conv_backward(dy, conv_cache)
    return dx, dw, dg, db


def hand_step(x, y, p):
    """Loss and gradients (in ``net.PARAMS`` order) of the network, by hand."""
    grads = {}
    z0, c0 = unit(x, p["stem"], p["gs"], p["bs"])
    h0 = np.maximum(z0, 0)
    caches, h = [], h0
    for b in "ab":
        z1, c1 = unit(h, p[f"w1{b}"], p[f"g1{b}"], p[f"b1{b}"])
        a1 = np.maximum(z1, 0)
        z2, c2 = unit(a1, p[f"w2{b}"], p[f"g2{b}"], p[f"b2{b}"])
        out = np.maximum(h + z2, 0)
        caches.append((c1, z1, c2, out))
        h = out
    pooled = h.mean(axis=(2, 3))
    logits = pooled @ p["W"] + p["c"]
    peak = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - peak)
    total = e.sum(axis=1, keepdims=True)
    n = len(x)
    loss = np.mean(np.log(total[:, 0]) + peak[:, 0] - np.sum(y * logits, axis=1))
    dlogits = (e / total - y) / n
    grads["W"], grads["c"] = pooled.T @ dlogits, dlogits.sum(axis=0)
    dh = np.broadcast_to((dlogits @ p["W"].T)[:, :, None, None] / 64, h.shape)
    for b, (c1, z1, c2, out) in zip("ba", reversed(caches), strict=True):
        dout = dh * (out > 0)
        da1, grads[f"w2{b}"], grads[f"g2{b}"], grads[f"b2{b}"] = unit_backward(dout, c2)
        dh_in, grads[f"w1{b}"], grads[f"g1{b}"], grads[f"b1{b}"] = unit_backward(
            da1 * (z1 > 0), c1)
        dh = dout + dh_in
    _, grads["stem"], grads["gs"], grads["bs"] = unit_backward(dh * (z0 > 0), c0)
    return loss, tuple(grads[k] for k in net.PARAMS)


def torch_step() -> Callable | str:
    """PyTorch's autograd on the same network (one thread), or why it cannot run."""
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as error:
        return f"PyTorch is not installed ({error}; pip install torch)"
    torch.set_num_threads(1)

    def block(h, w1, g1, b1, w2, g2, b2):
        inner = F.relu(F.batch_norm(F.conv2d(h, w1, padding=1), None, None, g1, b1, True))
        return F.relu(h + F.batch_norm(F.conv2d(inner, w2, padding=1), None, None, g2, b2,
                                       True))

    def step(x, y, p):
        t = {k: torch.from_numpy(v).requires_grad_() for k, v in p.items()}
        h = F.relu(F.batch_norm(F.conv2d(torch.from_numpy(x), t["stem"], padding=1), None,
                                None, t["gs"], t["bs"], True))
        for b in "ab":
            h = block(h, *(t[f"{k}{b}"] for k in ("w1", "g1", "b1", "w2", "g2", "b2")))
        logits = h.mean(dim=(2, 3)) @ t["W"] + t["c"]
        loss = torch.mean(torch.logsumexp(logits, 1) - (torch.from_numpy(y) * logits).sum(1))
        loss.backward()
        return loss.item(), tuple(t[k].grad.numpy() for k in net.PARAMS)

    return step


def _time(peers: list[tuple[str, Callable]], args: tuple, repeat: int) -> list[float]:
    """Medians of CPU time (the shared machine's other processes do not count)."""
    return interleaved_medians(peers, args, repeat, time.process_time)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--width", type=int, default=16, help="channels (the example trains 12)")
    options = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    params = net.init(width=options.width)
    x = rng.uniform(size=(options.batch, 1, 8, 8))
    y = np.eye(net.CLASSES)[rng.integers(0, net.CLASSES, options.batch)]
    start = time.perf_counter()
    vg = sd.value_and_grad(net.loss, wrt=net.PARAMS, shapes=net.shapes(params))
    print(f"symdiff built the step in {time.perf_counter() - start:.1f}s (cached after)")
    peers = [("symdiff", lambda x, y, p: vg(x, y, **p)), ("by hand", hand_step)]
    if importlib.util.find_spec("numba") is None:
        print('numba left out: Numba is not installed (pip install "symdiff[numba]")')
    else:  # each elementwise statement a compiled ufunc; convolutions the same matrix products
        start = time.perf_counter()
        fused = sd.value_and_grad(net.loss, wrt=net.PARAMS, shapes=net.shapes(params),
                                  backend="numba")
        print(f"symdiff built the step with backend='numba' in "
              f"{time.perf_counter() - start:.1f}s (cached after)")
        peers.append(("numba", lambda x, y, p: fused(x, y, **p)))
    torch = torch_step()
    if isinstance(torch, str):
        print(f"torch left out: {torch}")
    else:
        peers.append(("torch 1T", torch))
    want_loss, want = hand_step(x, y, params)
    for label, fn in peers:
        loss, grads = fn(x, y, params)
        np.testing.assert_allclose(loss, want_loss, rtol=1e-10, err_msg=label)
        for name, a, b in zip(net.PARAMS, grads, want, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10, err_msg=f"{label} {name}")
    times = _time(peers, (x, y, params), options.repeat)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"numpy {np.__version__}; batch {options.batch}; width {options.width}; median CPU "
          f"time of {options.repeat} interleaved rounds; load average {load:.2f}; "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}")
    labels = [label for label, _ in peers]
    torch_time = times[labels.index("torch 1T")] if "torch 1T" in labels else None
    print(f"{'':<9} {'CPU ms':>8}  {'/ by hand':>9}" + (f"  {'/ torch':>7}" if torch_time
                                                       else ""))
    for label, t in zip(labels, times, strict=True):
        line = f"{label:<9} {t * 1e3:8.2f}  {t / times[1]:8.2f}x"
        if torch_time:
            line += f"  {t / torch_time:6.2f}x"
        print(line)


if __name__ == "__main__":
    main()
