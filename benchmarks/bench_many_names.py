"""Many scalar names: the n-name form ``sd.grad(text, wrt=["x0", ...])``.

Problems (each a string in n scalar names ``x0 .. x{n-1}``):

- ``rosenbrock``: the extended Rosenbrock function, sum of 100*(x_{i+1} - x_i^2)^2 + (1 - x_i)^2;
- ``product``: the product of all n names;
- ``logsumexp``: log(exp(x0) + ... + exp(x{n-1}));
- ``quadratic``: a dense quadratic form x'Ax of 100 names (A a fixed symmetric integer matrix,
  5,050 terms ``c*xi*xj``).

Columns, per problem and n:

- ``build s``: ``sd.grad(text, wrt=names, cache=False)``, parsing included, in CPU seconds
  (median of ``--builds`` runs, each from empty memos; goal <= 5 s);
- ``g/f``: gradient over function (``sd.compile`` of the same text) on 64-point arrays
  (goal <= 4 at n = 1000);
- ``point us``: the gradient at one point, n Python floats in;
  ``x hand``: that over hand-written NumPy on the vector of n values (goal <= 3 at n = 100);
  ``x jax``: over ``jax.jit(jax.grad(f))`` on that vector, the result converted with
  ``np.asarray`` (goal < 1 at n = 100 and 1000; "-" when JAX is not installed);
  ``f64``: the same point given as NumPy float64 scalars (``g(*x)`` of a float64 array),
  over hand-written; ``0-d``: given as 0-d float64 arrays, over hand-written;
- ``obj us``: ``sd.objective(text, wrt=names).jac(x)``, the vector in and out as SciPy calls
  it (two points in turn, so that its last-point memo never answers); ``x jax``: over
  ``jax.jit(jax.grad(f))`` at the same two points; ``vg jax``: ``obj.value_and_grad`` (for
  ``minimize(..., jac=True)``) over ``jax.jit(jax.value_and_grad(f))``.

Then Hessian-vector products of the objective (``--hessp-sizes``, default n = 100):
``sd.objective(text, wrt=names).hessp(x, p)`` (two points in turn), against
``jax.jit`` of the forward-over-reverse HVP ``jvp(grad(f), (x,), (p,))``, and the objective's
``hess(x) @ p`` (the Hessian formed, then multiplied); each checked against the Hessian.

Then ``value_and_grad`` against ``grad`` (goal: at most 1.1x grad plus the value's last
operation): for the n-name problems at one point and on 64-point arrays, and for the tensor
logistic loss ``sum(log(1 + exp(-y*(X @ w))))`` at n = 2000, d = 100 (against hand-written).

Every gradient is checked against the hand-written one before it is timed. Times are medians
of ``--repeat`` rounds, the peers of one row alternated within each round (the machine is
shared: alternating keeps its load out of the ratios). Run single-threaded:
``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_many_names.py``
(``--quick`` for a smoke run at n = 30; ``--problems``, ``--sizes`` select).
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

os.environ.setdefault("SYMDIFF_CACHE_DIR", tempfile.mkdtemp(prefix="symdiff-bench-"))
os.environ.setdefault(
    "XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import symdiff as sd
from symdiff.pipeline import clear_memo

QUADRATIC_SEED = 0


def quadratic_matrix(n: int) -> np.ndarray:
    """The symmetric integer matrix of the dense quadratic form (entries in -9..9, doubled)."""
    a = np.random.default_rng(QUADRATIC_SEED).integers(-9, 10, size=(n, n))
    return (a + a.T).astype(float)


def _quadratic_text(n: int) -> str:
    a = quadratic_matrix(n)
    terms = []
    for i in range(n):
        for j in range(i, n):
            c = int(a[i, j] if i == j else 2 * a[i, j])
            if c:
                terms.append(f"{c}*x{i}*x{j}")
    return " + ".join(terms).replace("+ -", "- ")


# -- the problems: text, hand-written value and gradient on a vector x of shape (n,) or (n, m) --
TEXTS: dict[str, Callable[[int], str]] = {
    "rosenbrock": lambda n: " + ".join(
        f"100*(x{i + 1} - x{i}**2)**2 + (1 - x{i})**2" for i in range(n - 1)
    ),
    "product": lambda n: "*".join(f"x{i}" for i in range(n)),
    "logsumexp": lambda n: "log(" + " + ".join(f"exp(x{i})" for i in range(n)) + ")",
    "quadratic": _quadratic_text,
}


def _rosenbrock(xp, x):
    return xp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2, axis=0)


def _rosenbrock_grad(x):
    g = np.zeros_like(x)
    t = x[1:] - x[:-1] ** 2
    g[:-1] += -400 * x[:-1] * t - 2 * (1 - x[:-1])
    g[1:] += 200 * t
    return g


def _product_grad(x):
    before = np.ones_like(x)
    before[1:] = np.cumprod(x[:-1], axis=0)
    after = np.ones_like(x)
    after[:-1] = np.cumprod(x[:0:-1], axis=0)[::-1]
    return before * after


def _logsumexp(xp, x):
    top = xp.max(x, axis=0)
    return top + xp.log(xp.sum(xp.exp(x - top), axis=0))


def _logsumexp_grad(x):
    e = np.exp(x - x.max(axis=0))
    return e / e.sum(axis=0)


def _quadratic(xp, x):
    a = quadratic_matrix(x.shape[0])
    return xp.sum(x * (a @ x), axis=0)


def _quadratic_grad(x):
    return 2 * (quadratic_matrix(x.shape[0]) @ x)


VALUES = {
    "rosenbrock": _rosenbrock,
    "product": lambda xp, x: xp.prod(x, axis=0),
    "logsumexp": _logsumexp,
    "quadratic": _quadratic,
}
GRADS = {
    "rosenbrock": _rosenbrock_grad,
    "product": _product_grad,
    "logsumexp": _logsumexp_grad,
    "quadratic": _quadratic_grad,
}
#: Values in which the problem stays finite and well scaled (the product near 1).
SCALES = {"rosenbrock": (0.5, 1.5), "product": (0.97, 1.03), "logsumexp": (-1, 1),
          "quadratic": (-1, 1)}


# -- timing ----------------------------------------------------------------------------------
def _loops(fn: Callable[[], object], seconds: float) -> int:
    fn()
    start = time.perf_counter()
    fn()
    return max(1, math.ceil(seconds / max(time.perf_counter() - start, 1e-7)))


#: The clock of the per-call times: wall time (``perf_counter``), or with ``--clock cpu`` this
#: process's CPU time (``process_time``: all its threads, none of the time it waits for a core,
#: which on a shared machine is most of the noise).
CLOCK = {"clock": time.perf_counter}


def round_times(peers: dict[str, Callable[[], object]], repeat: int,
                seconds: float = 0.01) -> dict[str, float]:
    """Median seconds per call of each peer, the peers alternated within each round."""
    clock = CLOCK["clock"]
    loops = {name: _loops(fn, seconds) for name, fn in peers.items()}
    samples: dict[str, list[float]] = {name: [] for name in peers}
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeat):
            for name, fn in peers.items():
                start = clock()
                for _ in range(loops[name]):
                    fn()
                samples[name].append((clock() - start) / loops[name])
    finally:
        if enabled:
            gc.enable()
    return {name: statistics.median(times) for name, times in samples.items()}


def build_seconds(make: Callable[[], object], builds: int) -> tuple[float, object]:
    """Median CPU seconds of ``make()`` from empty memos (symdiff's and SymPy's), and its
    result."""
    from sympy.core.cache import clear_cache

    times, made = [], None
    for _ in range(builds):
        clear_memo()
        clear_cache()
        gc.collect()
        start = time.process_time()  # CPU time: the machine may be shared
        made = make()
        times.append(time.process_time() - start)
    return statistics.median(times), made


def _jax():
    """``(jax, jax.numpy)`` in float64, or None (said once) without JAX."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError as error:
        _skipped("jax", f"JAX is not installed here ({error})")
        return None
    jax.config.update("jax_enable_x64", True)
    return jax, jnp


def _jax_grad(problem: str, with_value: bool = False):
    """``jax.jit(jax.grad(f))`` of the problem's value on a vector, its result converted with
    ``np.asarray`` (with ``with_value``: ``jax.value_and_grad``, the value a float)."""
    if (found := _jax()) is None:
        return None
    jax, jnp = found
    value = VALUES[problem]
    if with_value:
        both = jax.jit(jax.value_and_grad(lambda v: value(jnp, v)))

        def value_and_grad(x):
            v, g = both(x)
            return float(v), np.asarray(g)

        return value_and_grad
    grad = jax.jit(jax.grad(lambda v: value(jnp, v)))
    return lambda x: np.asarray(grad(x))


class _Alternate:
    """``fn`` at two points in turn (an objective keeps its last point: each call computes)."""

    def __init__(self, fn, first, second):
        self.fn, self.points, self.turn = fn, (first, second), 0

    def __call__(self):
        self.turn ^= 1
        return self.fn(self.points[self.turn])


_SKIPPED: set[str] = set()


def _skipped(peer: str, reason: str) -> None:
    """Say once why a peer's column shows "-"."""
    if peer not in _SKIPPED:
        _SKIPPED.add(peer)
        print(f"(peer {peer} skipped: {reason})", flush=True)


def _check(name: str, got, reference) -> None:
    got = np.asarray(np.stack([np.asarray(g) for g in got]))
    np.testing.assert_allclose(got, reference, rtol=1e-9, atol=1e-9, err_msg=name)


def one_problem(problem: str, n: int, options) -> dict[str, float]:
    """Build, check and time one problem at size n; print its row."""
    names = [f"x{i}" for i in range(n)]
    text = TEXTS[problem](n)
    build, g = build_seconds(lambda: sd.grad(text, wrt=names, cache=False), options.builds)
    f = sd.compile(text, cache=False)
    order = [int(arg[1:]) for arg in g.args]  # arguments are sorted by name: x10 before x2
    assert f.args == g.args
    rng = np.random.default_rng(1)
    low, high = SCALES[problem]
    x = rng.uniform(low, high, size=n)
    batch = rng.uniform(low, high, size=(n, options.points))
    hand = GRADS[problem]
    floats = tuple(x[order].tolist())
    zeros = tuple(np.asarray(v) for v in floats)
    scalars = tuple(x[order])  # NumPy float64 scalars
    rows = tuple(batch[order])
    reference = hand(x)  # the gradient comes in the order of wrt: x0, x1, ...
    _check(f"{problem} point", g(*floats), reference)
    _check(f"{problem} 0-d", g(*zeros), reference)
    _check(f"{problem} float64", g(*scalars), reference)
    _check(f"{problem} batch", g(*rows), hand(batch))
    batch_times = round_times({"g": lambda: g(*rows), "f": lambda: f(*rows)}, options.repeat)
    peers = {"symdiff": lambda: g(*floats), "hand": lambda: hand(x),
             "0-d": lambda: g(*zeros), "f64": lambda: g(*scalars)}
    jax_grad = _jax_grad(problem) if options.jax else None
    if jax_grad is not None:
        np.testing.assert_allclose(jax_grad(x), hand(x), rtol=1e-9, atol=1e-9)
        peers["jax"] = lambda: jax_grad(x)
    obj = sd.objective(text, wrt=names)  # x0, x1, ... in order: the vector is x itself
    other = rng.uniform(low, high, size=n)
    np.testing.assert_allclose(obj.jac(x), reference, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(obj.value_and_grad(other)[1], hand(other), rtol=1e-9, atol=1e-9)
    peers["obj jac"] = _Alternate(obj.jac, x, other)
    peers["obj vg"] = _Alternate(obj.value_and_grad, x, other)
    if jax_grad is not None:
        peers["jax alt"] = _Alternate(jax_grad, x, other)
        jax_both = _jax_grad(problem, with_value=True)
        peers["jax vg"] = _Alternate(jax_both, x, other)
    point = round_times(peers, options.repeat)

    def jax_ratio(mine: str, theirs: str) -> float:
        return point[mine] / point[theirs] if theirs in point else float("nan")

    row = {
        "build": build,
        "g/f": batch_times["g"] / batch_times["f"],
        "point": point["symdiff"],
        "x hand": point["symdiff"] / point["hand"],
        "x jax": point["symdiff"] / point["jax"] if "jax" in point else float("nan"),
        "0-d": point["0-d"] / point["hand"],
        "f64": point["f64"] / point["hand"],
        "jax us": point.get("jax", float("nan")),
        "hand us": point["hand"],
        "obj us": point["obj jac"],
        "obj x jax": jax_ratio("obj jac", "jax alt"),
        "obj vg x jax": jax_ratio("obj vg", "jax vg"),
    }
    print(f"{problem:11} {n:>5} {row['build']:8.2f} {row['g/f']:6.2f} "
          f"{row['point'] * 1e6:10.1f} {row['hand us'] * 1e6:8.1f} {_fmt(row['jax us'] * 1e6)} "
          f"{row['x hand']:7.2f} {_fmt(row['x jax'])} {row['f64']:6.2f} {row['0-d']:6.2f} "
          f"{row['obj us'] * 1e6:7.1f} {_fmt(row['obj x jax'])} {_fmt(row['obj vg x jax'])}",
          flush=True)
    return row


def _jax_hvp(problem: str):
    """``jax.jit`` of the forward-over-reverse Hessian-vector product of the problem's value on
    a vector, its result converted with ``np.asarray``; None without JAX."""
    if (found := _jax()) is None:
        return None
    jax, jnp = found
    value = VALUES[problem]
    grad = jax.grad(lambda v: value(jnp, v))
    hvp = jax.jit(lambda x, p: jax.jvp(grad, (x,), (p,))[1])
    return lambda x, p: np.asarray(hvp(x, p))


def hessp_row(problem: str, n: int, options) -> None:
    """One row of the Hessian-vector products: the objective's ``hessp``, JAX's jitted HVP and
    ``hess(x) @ p``, at two points in turn (each checked against the Hessian)."""
    names = [f"x{i}" for i in range(n)]
    obj = sd.objective(TEXTS[problem](n), wrt=names)
    rng = np.random.default_rng(3)
    low, high = SCALES[problem]
    points = [rng.uniform(low, high, size=n) for _ in range(2)]
    directions = [rng.normal(size=n) for _ in range(2)]
    for x, p in zip(points, directions, strict=True):
        np.testing.assert_allclose(obj.hessp(x, p), obj.hess(x) @ p, rtol=1e-9, atol=1e-9)
    turn = [0]

    def alternate(fn):
        def call():
            turn[0] ^= 1
            return fn(points[turn[0]], directions[turn[0]])
        return call

    peers = {"hessp": alternate(obj.hessp), "hess @ p": alternate(lambda x, p: obj.hess(x) @ p)}
    jax_hvp = _jax_hvp(problem) if options.jax else None
    if jax_hvp is not None:
        for x, p in zip(points, directions, strict=True):
            np.testing.assert_allclose(jax_hvp(x, p), obj.hess(x) @ p, rtol=1e-9, atol=1e-9)
        peers["jax"] = alternate(jax_hvp)
    times = round_times(peers, options.repeat)
    jax_us = times.get("jax", float("nan")) * 1e6
    print(f"{problem:11} {n:>5} {times['hessp'] * 1e6:9.1f} {_fmt(jax_us)} "
          f"{_fmt(times['hessp'] * 1e6 / jax_us)} {times['hess @ p'] * 1e6:10.1f}", flush=True)


def _fmt(value: float) -> str:
    return f"{'-':>6}" if math.isnan(value) else f"{value:6.2f}"


def value_and_grad_rows(problems: list[str], n: int, options) -> None:
    """``value_and_grad`` over ``grad`` for the n-name problems and the tensor logistic loss."""
    print(f"\nvalue_and_grad / grad (goal <= 1.1 + the value's last operation); n = {n} names")
    for problem in problems:
        one_value_and_grad(problem, n, options)
    logistic(options)


def one_value_and_grad(problem: str, n: int, options) -> None:
    """One row: value_and_grad over grad at a point and over a batch (values checked)."""
    names = [f"x{i}" for i in range(n)]
    text = TEXTS[problem](n)
    g = sd.grad(text, wrt=names, cache=False)
    vg = sd.value_and_grad(text, wrt=names, cache=False)
    f = sd.compile(text, cache=False)
    rng = np.random.default_rng(2)
    low, high = SCALES[problem]
    floats = tuple(rng.uniform(low, high, size=n).tolist())
    rows = tuple(rng.uniform(low, high, size=(n, options.points)))
    value, grads = vg(*rows)
    np.testing.assert_allclose(value, f(*rows), rtol=1e-12)
    np.testing.assert_allclose(np.stack(grads), np.stack(g(*rows)), rtol=1e-9, atol=1e-9)
    point = round_times({"vg": lambda: vg(*floats), "g": lambda: g(*floats)}, options.repeat)
    batch = round_times({"vg": lambda: vg(*rows), "g": lambda: g(*rows)}, options.repeat)
    print(f"  {problem:11} point {point['vg'] / point['g']:5.2f}   "
          f"{options.points} points {batch['vg'] / batch['g']:5.2f}", flush=True)


def logistic(options) -> None:
    n, d = 2000, 100
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, d))
    y = rng.choice([-1.0, 1.0], size=n)
    w = rng.normal(size=d) * 0.1
    text = "sum(log(1 + exp(-y * (X @ w))))"
    shapes = {"X": ("n", "d"), "y": ("n",), "w": ("d",)}
    g = sd.grad(text, wrt="w", shapes=shapes, cache=False)
    vg = sd.value_and_grad(text, wrt="w", shapes=shapes, cache=False)

    def hand_grad(X, y, w):
        z = y * (X @ w)
        return X.T @ (-y / (1 + np.exp(z)))

    def hand_value_and_grad(X, y, w):
        z = y * (X @ w)
        return np.logaddexp(0, -z).sum(), X.T @ (-y / (1 + np.exp(z)))

    value, grad = vg(X=X, y=y, w=w)
    hand_value, hand = hand_value_and_grad(X, y, w)
    np.testing.assert_allclose(value, hand_value, rtol=1e-10)
    np.testing.assert_allclose(grad, hand, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(g(X=X, y=y, w=w), hand, rtol=1e-9, atol=1e-12)
    z = y * (X @ w)
    times = round_times({
        "vg": lambda: vg(X=X, y=y, w=w), "g": lambda: g(X=X, y=y, w=w),
        "hand vg": lambda: hand_value_and_grad(X, y, w), "hand g": lambda: hand_grad(X, y, w),
        "last": lambda: np.logaddexp(0, -z).sum(),
    }, options.repeat, 0.02)
    goal = 1.1 * times["g"] + times["last"]
    print(f"  logistic loss (tensor), n={n}, d={d}: value_and_grad/grad "
          f"{times['vg'] / times['g']:.2f} (hand-written {times['hand vg'] / times['hand g']:.2f});"
          f" value_and_grad / (1.1 grad + the value's sum(logaddexp(0, -z))) "
          f"{times['vg'] / goal:.2f} (goal <= 1); x hand: grad {times['g'] / times['hand g']:.2f},"
          f" value_and_grad {times['vg'] / times['hand vg']:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problems", default=",".join(TEXTS))
    parser.add_argument("--sizes", default="100,1000",
                        help="n for rosenbrock, product and logsumexp (quadratic: 100 only)")
    parser.add_argument("--points", type=int, default=64, help="batch size for g/f")
    parser.add_argument("--repeat", type=int, default=9, help="timing rounds (median)")
    parser.add_argument("--builds", type=int, default=3, help="builds timed (median)")
    parser.add_argument("--hessp-sizes", default="100", help="n for the hessp rows ('': none)")
    parser.add_argument("--no-jax", dest="jax", action="store_false")
    parser.add_argument("--quick", action="store_true", help="smoke run: n = 30, few rounds")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="per-call times in wall time or this process's CPU time")
    options = parser.parse_args()
    if options.clock == "cpu":
        CLOCK["clock"] = time.process_time
    sizes = [int(s) for s in options.sizes.split(",")]
    if options.quick:
        sizes, options.repeat, options.builds = [30], 3, 1
    problems = options.problems.split(",")
    sd.grad("x*y", cache=False)  # imports out of the build times
    print(f"load average {os.getloadavg()[0]:.2f}; medians of {options.repeat} rounds "
          f"({options.clock} clock); "
          f"symdiff {sd.__file__}")
    print(f"{'problem':11} {'n':>5} {'build s':>8} {'g/f':>6} {'point us':>10} {'hand us':>8} "
          f"{'jax us':>6} {'x hand':>7} {'x jax':>6} {'f64':>6} {'0-d':>6} {'obj us':>7} "
          f"{'x jax':>6} {'vg jax':>6}")
    for problem in problems:
        for n in sizes:
            if problem == "quadratic" and n != min(max(sizes), 100):
                continue
            one_problem(problem, n, options)
    hessp_sizes = [int(s) for s in options.hessp_sizes.split(",") if s]
    if options.quick:
        hessp_sizes = [30]
    if hessp_sizes:
        print(f"\nHessian-vector products of the objective, us per call\n{'problem':11} {'n':>5} "
              f"{'hessp us':>9} {'jax us':>6} {'x jax':>6} {'hess@p us':>10}")
    for problem in problems:
        for n in hessp_sizes:
            if problem != "quadratic" or n == 100:
                hessp_row(problem, n, options)
    value_and_grad_rows([p for p in problems if p != "quadratic"], max(sizes), options)


if __name__ == "__main__":
    main()
