"""Gradient run time over 1e6 points: symdiff vs SymPy lambdify (cse on/off) vs hand-written NumPy.

Run: ``OMP_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_elementwise.py [--points N]
[--repeat R] [--only TEXT] [--threads T]``. symdiff runs on ``T`` threads (default 1, as every
peer here does; ``benchmarks/bench_threads.py`` compares threads). Every peer is timed in this
one process on the same arrays, the peers one after another in each round; the table gives
the median time of each and its ratio to the hand-written NumPy gradient (lower is better;
1.00 = as fast as hand-written). "noise" is the
interquartile range of symdiff's time over hand's, round by round, over its median.

The first four problems are the ones the code generator was tuned on; the others (a Gaussian
log-density, a logistic loss, cross-entropy on logits, a Lennard-Jones pair term, a Rosenbrock
term, a rational function, a tanh unit; then a Cauchy log-density, a Morse potential, the
log-cosh loss and a Poisson log-likelihood; then a Student-t log-density, the pseudo-Huber loss
and a negative-binomial log-likelihood) were added without tuning, with hand-written gradients
as a careful person writes them (reciprocals reused, signs folded, no ``pow`` for small powers).

A second table times ``value_and_grad`` against ``grad`` on the same problems (skip it with
``--no-value-and-grad``).

The column "fused" is a reference for what plain NumPy can reach at best: the same
gradients written by hand as cache-sized blocks with every operation writing into preallocated
buffers (``out=``, no temporaries at all). Where that column is well above 0.7, so is any code
generator that emits NumPy calls: the transcendental functions (``sin``, ``cos``, ``arctan2``,
which NumPy evaluates without SIMD in float64) cost the same in every version.

The last column, "numba", is symdiff's ``backend="numba"`` (the formulas in one compiled loop,
on the same ``T`` threads); it reads "-" where Numba is not installed (``pip install
"symdiff[numba]"``: a note says so). After the tables, the startup of a Numba function in
fresh processes sharing one cache directory: the first builds it (Numba compiles its loop:
symdiff's progress report gives the time) and calls it once on 1e6 points; the second finds
both caches filled and compiles nothing (skip it with ``--no-startup``).

The column "pytensor" is PyTensor's gradient of the same expression (``pytensor.grad`` of its
sum, compiled by ``pytensor.function`` in its default mode, which fuses elementwise operations
into one C loop); "-" where PyTensor is not installed (``pip install pytensor``; it needs a C
compiler).
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import operator
import os
import statistics
import time
from collections.abc import Callable

import numpy as np
import sympy as sp
from timing import settle_allocator

import symdiff as sd

X, Y = sp.symbols("x y", real=True)


def _hand_quotient(x, y):
    e, s, q = np.exp(y), np.sin(x), 1 / (1 + x**2)
    v = e * s * q
    return e * q * np.cos(x) - 2 * x * q * v, v


def _hand_logistic(x, y):
    t = np.exp(x * y)
    s = t / (1 + t)
    return y * s, x * s


def _hand_polar(x, y):
    r = np.sqrt(x**2 + y**2)
    a = np.arctan2(y, x)
    r2 = r * r
    return x / r * a - y * r / r2, y / r * a + x * r / r2


def _hand_gauss(x, y):
    d = x - y
    g = np.exp(-(d**2) / 2)
    c = np.cos(3 * x)
    t = -d * g * c
    return t - 3 * g * np.sin(3 * x), -t


BLOCK = 8192


def _fused(kernel: Callable, buffers: int) -> Callable:
    """``kernel(x, y, work, out_x, out_y)`` applied block by block, every result written into
    ``buffers`` preallocated work arrays or straight into the outputs."""

    def gradient(x, y):
        dx, dy, work = np.empty_like(x), np.empty_like(x), np.empty((buffers, BLOCK))
        for i in range(0, len(x), BLOCK):
            a, b = x[i:i + BLOCK], y[i:i + BLOCK]
            kernel(a, b, [w[:len(a)] for w in work], dx[i:i + BLOCK], dy[i:i + BLOCK])
        return dx, dy

    return gradient


def _fused_quotient(x, y, w, dx, dy):
    e, q, s, c, t = w
    np.exp(y, out=e)
    np.square(x, out=q)
    q += 1
    np.sin(x, out=s)
    np.cos(x, out=c)
    c *= q
    np.multiply(s, x, out=t)
    t *= 2
    c -= t
    c *= e
    np.square(q, out=t)
    np.divide(c, t, out=dx)
    np.multiply(e, s, out=t)
    np.divide(t, q, out=dy)


def _fused_logistic(x, y, w, dx, dy):
    (s,) = w
    np.multiply(x, y, out=s)
    np.exp(s, out=s)
    np.divide(s, s + 1, out=s)  # s + 1 is the one temporary; exp(xy) is finite for these points
    np.multiply(s, y, out=dx)
    np.multiply(s, x, out=dy)


def _fused_polar(x, y, w, dx, dy):
    r, a, t = w
    np.square(x, out=r)
    np.square(y, out=a)
    r += a
    np.sqrt(r, out=r)
    np.reciprocal(r, out=r)
    np.arctan2(y, x, out=a)
    np.multiply(a, x, out=t)
    t -= y
    np.multiply(r, t, out=dx)
    np.multiply(a, y, out=t)
    t += x
    np.multiply(r, t, out=dy)


def _fused_gauss(x, y, w, dx, dy):
    d, g, u, c, t = w
    np.subtract(x, y, out=d)
    np.square(d, out=g)
    g *= -0.5
    np.exp(g, out=g)
    np.multiply(x, 3, out=u)
    np.cos(u, out=c)
    np.sin(u, out=u)
    u *= 3
    np.multiply(d, c, out=t)
    np.negative(t, out=t)
    t -= u
    np.multiply(g, t, out=dx)
    np.multiply(d, g, out=t)
    np.multiply(t, c, out=dy)


FUSED = {
    "sin(x)*exp(y)/(1 + x**2)": _fused(_fused_quotient, 5),
    "log(1 + exp(x*y))": _fused(_fused_logistic, 1),
    "sqrt(x**2 + y**2)*atan2(y, x)": _fused(_fused_polar, 3),
    "exp(-(x - y)**2/2)*cos(3*x)": _fused(_fused_gauss, 5),
}


# -- problems the generator was not tuned for; hand-written as a careful person writes them ----
def _hand_normal_logpdf(x, mu, sigma):
    r = 1 / sigma
    z = (x - mu) * r
    g = z * r
    return -g, g, (z * z - 1) * r


def _hand_logistic_loss(w, b, x, y):
    s = -y / (1 + np.exp(y * (w * x + b)))
    return s * x, s


def _hand_bce_logits(a, c, x, t):
    z = a * x + c
    d = 1 / (1 + np.exp(-z)) - t
    return d * x, d


def _hand_lennard_jones(r, s, eps):
    q = s / r
    q2 = q * q
    q6 = q2 * q2 * q2
    q12 = q6 * q6
    k = 4 * eps
    return k * (6 * q6 - 12 * q12) / r, k * (12 * q12 - 6 * q6) / s, k * (q12 - q6) / eps


def _hand_rosenbrock(x, y):
    d = y - x * x
    return 2 * (x - 1) - 400 * x * d, 200 * d


def _hand_rational(x, y):
    n = x * x + 3 * x * y + 1
    y2 = y * y
    r = 1 / (1 + x * x + y2 * y2)
    nr = n * r * r
    return (2 * x + 3 * y) * r - 2 * x * nr, 3 * x * r - 4 * y2 * y * nr


def _hand_tanh_unit(w, b, v, x):
    h = np.tanh(w * x + b)
    g = v * (1 - h * h)
    return g * x, g, h


def _hand_cauchy_logpdf(m, s, x):
    r = 1 / s
    z = (x - m) * r
    q = r / (1 + z * z)
    return 2 * z * q, (z * z - 1) * q


def _hand_morse(D, a, r, r0):
    d = r - r0
    e = np.exp(-a * d)
    k = 2 * D * (1 - e) * e
    return k * a, k * d


def _hand_log_cosh(p, t):
    return (np.tanh(p - t),)


def _hand_poisson(lam, y):
    return (y / lam - 1,)


def _hand_student_t(m, nu, s, x):
    r = 1 / s
    z = (x - m) * r
    w = (nu + 1) * z * r / (nu + z * z)
    return w, w * z - r


def _hand_pseudo_huber(d, p, t):
    e = p - t
    u = e / d
    root = np.sqrt(1 + u * u)
    return e / root, 2 * d * (root - 1) - e * u / root


def _hand_negative_binomial(k, mu, y):
    return (y / mu - (y + k) / (mu + k),)


def _student(rng, n):
    return {"x": rng.standard_t(4, n), "m": rng.normal(0, 1, n), "s": rng.uniform(0.5, 2, n),
            "nu": rng.uniform(2, 10, n)}


def _huber(rng, n):
    return {"p": rng.normal(0, 3, n), "t": rng.normal(0, 3, n), "d": rng.uniform(0.5, 2, n)}


def _negative_binomial(rng, n):
    return {"mu": rng.uniform(0.5, 20, n), "k": rng.uniform(0.5, 5, n),
            "y": rng.poisson(5, n).astype(float)}


def _xy(rng, n):
    return {"x": rng.uniform(0.5, 2.0, n), "y": rng.uniform(0.5, 2.0, n)}


def _normal(rng, n):
    return {"x": rng.normal(0, 2, n), "mu": rng.normal(0, 1, n), "sigma": rng.uniform(0.5, 2, n)}


def _logistic(rng, n):
    return {"w": rng.normal(0, 1, n), "b": rng.normal(0, 1, n), "x": rng.normal(0, 2, n),
            "y": rng.choice([-1.0, 1.0], n)}


def _bce(rng, n):
    return {"a": rng.normal(0, 1, n), "c": rng.normal(0, 1, n), "x": rng.normal(0, 2, n),
            "t": rng.uniform(0, 1, n)}


def _lj(rng, n):
    return {"r": rng.uniform(0.9, 2.5, n), "s": rng.uniform(0.9, 1.1, n),
            "eps": rng.uniform(0.5, 1.5, n)}


def _cauchy(rng, n):
    return {"x": rng.standard_cauchy(n), "m": rng.normal(0, 1, n), "s": rng.uniform(0.5, 2, n)}


def _morse(rng, n):
    return {"D": rng.uniform(1, 5, n), "a": rng.uniform(0.5, 2, n), "r": rng.uniform(0.5, 3, n),
            "r0": rng.uniform(0.8, 1.2, n)}


def _pt(rng, n):
    return {"p": rng.normal(0, 2, n), "t": rng.normal(0, 2, n)}


def _poisson(rng, n):
    return {"lam": rng.uniform(0.5, 20, n), "y": rng.poisson(5, n).astype(float)}


def _tanh(rng, n):
    return {name: rng.normal(0, 1, n) for name in ("w", "b", "v", "x")}


#: (expression, wrt, hand-written gradient, arrays); the symbols of every variable are real.
CASES: list[tuple[str, tuple[str, ...], Callable, Callable]] = [
    ("sin(x)*exp(y)/(1 + x**2)", ("x", "y"), _hand_quotient, _xy),
    ("log(1 + exp(x*y))", ("x", "y"), _hand_logistic, _xy),
    ("sqrt(x**2 + y**2)*atan2(y, x)", ("x", "y"), _hand_polar, _xy),
    ("exp(-(x - y)**2/2)*cos(3*x)", ("x", "y"), _hand_gauss, _xy),
    ("-0.5*((x - mu)/sigma)**2 - log(sigma) - 0.5*log(2*pi)", ("x", "mu", "sigma"),
     _hand_normal_logpdf, _normal),
    ("log(1 + exp(-y*(w*x + b)))", ("w", "b"), _hand_logistic_loss, _logistic),
    ("log(1 + exp(a*x + c)) - t*(a*x + c)", ("a", "c"), _hand_bce_logits, _bce),
    ("4*eps*((s/r)**12 - (s/r)**6)", ("r", "s", "eps"), _hand_lennard_jones, _lj),
    ("(1 - x)**2 + 100*(y - x**2)**2", ("x", "y"), _hand_rosenbrock, _xy),
    ("(x**2 + 3*x*y + 1)/(1 + x**2 + y**4)", ("x", "y"), _hand_rational, _xy),
    ("v*tanh(w*x + b)", ("w", "b", "v"), _hand_tanh_unit, _tanh),
    ("-log(1 + ((x - m)/s)**2) - log(s)", ("m", "s"), _hand_cauchy_logpdf, _cauchy),
    ("D*(1 - exp(-a*(r - r0)))**2", ("r", "a"), _hand_morse, _morse),
    ("log(cosh(p - t))", ("p",), _hand_log_cosh, _pt),
    ("y*log(lam) - lam", ("lam",), _hand_poisson, _poisson),
    ("-(nu + 1)/2*log(1 + ((x - m)/s)**2/nu) - log(s)", ("m", "s"), _hand_student_t, _student),
    ("d**2*(sqrt(1 + ((p - t)/d)**2) - 1)", ("p", "d"), _hand_pseudo_huber, _huber),
    ("y*log(mu) - (y + k)*log(mu + k)", ("mu",), _hand_negative_binomial, _negative_binomial),
]


def pytensor_gradient(expr: sp.Expr, names: list[str], wrt: tuple[str, ...]) -> Callable:
    """PyTensor's compiled gradient of ``expr`` over float64 vectors named ``names``, the
    partial derivatives with respect to ``wrt`` (a function of keyword arrays)."""
    import pytensor
    import pytensor.tensor as pt

    inputs = {name: pt.dvector(name) for name in names}
    calls = {sp.sin: pt.sin, sp.cos: pt.cos, sp.exp: pt.exp, sp.log: pt.log, sp.tanh: pt.tanh,
             sp.cosh: pt.cosh, sp.atan2: pt.arctan2}

    def convert(node: sp.Basic):
        if node.is_Symbol:
            return inputs[node.name]
        if node.is_Number or node is sp.pi:
            return float(node)
        args = [convert(a) for a in node.args]
        if node.is_Add:
            return functools.reduce(operator.add, args)
        if node.is_Mul:
            return functools.reduce(operator.mul, args)
        if node.is_Pow:
            return pt.sqrt(args[0]) if node.exp == sp.S.Half else args[0] ** args[1]
        return calls[node.func](*args)

    grads = pytensor.grad(convert(expr).sum(), [inputs[name] for name in wrt])
    fn = pytensor.function([inputs[name] for name in names], grads)
    return lambda **arrays: fn(*(arrays[name] for name in names))


def round_times(
    peers: dict[str, Callable],
    arrays: dict,
    repeat: int,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, list[float]]:
    """The time of each peer in each of ``repeat`` rounds; within a round the peers run one
    after another, so a burst of load on the shared machine hits all of them alike, and each
    round starts one peer later than the last: each peer follows each other one equally often.
    (On this VM, fresh memory costs the kernel's zeroing of its pages, 130-150 ms of system
    time for two 1e7-point outputs, except right after a peer that freed much of it: the
    peer after the hand-written gradient, whose temporaries are full-length, paid 20 ms. In
    a fixed order, that was always symdiff on one thread.) ``clock``: wall time, or
    ``time.process_time`` (this process's CPU time: on a loaded machine, a single-threaded
    peer's time without the waits for a core; meaningless for threads)."""
    for fn in peers.values():
        fn(**arrays)  # warm up
    times: dict[str, list[float]] = {name: [] for name in peers}
    names = list(peers)
    for round_ in range(repeat):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            start = clock()
            peers[name](**arrays)
            times[name].append(clock() - start)
    return times


def _spread(values: list[float]) -> float:
    """Interquartile range over the median: how noisy a timing was."""
    q = statistics.quantiles(values, n=4)
    return (q[2] - q[0]) / statistics.median(values)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--only", default="", help="run only the cases containing this text")
    parser.add_argument("--threads", type=int, default=1, help="symdiff's threads (default 1)")
    parser.add_argument("--settled", action="store_true",
                        help="first free one block of 30 MB (see timing.settle_allocator)")
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                        help="wall time (default) or this process's CPU time (loaded machines)")
    parser.add_argument("--no-value-and-grad", dest="value_and_grad", action="store_false",
                        help="skip the table of value_and_grad against grad")
    parser.add_argument("--no-startup", dest="startup", action="store_false",
                        help="skip the startup of a Numba function in fresh processes")
    options = parser.parse_args()
    if options.settled:
        settle_allocator()
    rng = np.random.default_rng(0)
    numba = importlib.util.find_spec("numba") is not None
    if not numba:
        print("note: Numba is not installed (pip install \"symdiff[numba]\"): no numba column")
    pytensor = importlib.util.find_spec("pytensor") is not None
    if not pytensor:
        print("note: PyTensor is not installed (pip install pytensor): no pytensor column")

    header = (f"{'expression':54} {'hand ms':>8} {'symdiff':>8} {'lambdify cse':>13} "
              f"{'lambdify':>9} {'fused':>6} {'noise':>6} {'numba':>6} {'pytensor':>9}")
    print(f"gradient over {options.points:.0e} points, median of {options.repeat} rounds "
          f"(peers alternated within a round); ratios to hand; symdiff on {options.threads} "
          f"thread(s); {options.clock} time; load average {os.getloadavg()[0]:.2f}")
    print(header)
    print("-" * len(header))
    found: dict[str, list[float]] = {}
    for text, wrt, hand, make in CASES:
        if options.only not in text:
            continue
        arrays = make(rng, options.points)
        names = sorted(arrays)
        symbols = {n: sp.Symbol(n, real=True) for n in names}
        expr = sp.sympify(text, locals=symbols)
        derivs = [sp.diff(expr, symbols[n]) for n in wrt]
        args = [symbols[n] for n in names]
        lam_cse = sp.lambdify(args, derivs, modules="numpy", cse=True)
        lam = sp.lambdify(args, derivs, modules="numpy")
        peers = {
            "hand": lambda hand=hand, wrt=wrt, **a: hand(**a)[: len(wrt)],
            "symdiff": sd.grad(text, wrt=list(wrt)).with_threads(options.threads),
            "lambdify cse": lambda f=lam_cse, names=names, **a: f(*(a[n] for n in names)),
            "lambdify": lambda f=lam, names=names, **a: f(*(a[n] for n in names)),
        }
        if text in FUSED:
            peers["fused"] = FUSED[text]
        if numba:
            peers["numba"] = sd.grad(text, wrt=list(wrt), backend="numba").with_threads(
                options.threads)
        if pytensor:
            peers["pytensor"] = pytensor_gradient(expr, names, wrt)
        small = {n: a[:1000] for n, a in arrays.items()}
        reference = hand(**small)
        for name, fn in peers.items():  # same numbers before timing anything
            for ours, ref in zip(fn(**small), reference, strict=False):
                np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-12,
                                           err_msg=f"{name}: {text}")
        clock = time.process_time if options.clock == "cpu" else time.perf_counter
        times = round_times(peers, arrays, options.repeat, clock)
        medians = {name: statistics.median(t) for name, t in times.items()}
        # noise: spread of symdiff's time over hand's, round by round
        noise = _spread([s / h for s, h in zip(times["symdiff"], times["hand"], strict=True)])
        base = medians["hand"]
        ratios = {n: t / base for n, t in medians.items() if n != "hand"}
        for name, ratio in ratios.items():
            found.setdefault(name, []).append(ratio)
        fused = f"{ratios['fused']:6.2f}" if "fused" in ratios else f"{'-':>6}"
        compiled = f"{ratios['numba']:6.2f}" if "numba" in ratios else f"{'-':>6}"
        theirs = f"{ratios['pytensor']:9.2f}" if "pytensor" in ratios else f"{'-':>9}"
        print(
            f"{text:54} {base * 1e3:8.2f} {ratios['symdiff']:8.2f} "
            f"{ratios['lambdify cse']:13.2f} {ratios['lambdify']:9.2f} {fused} {noise:6.2f} "
            f"{compiled} {theirs}", flush=True
        )
    means = {n: statistics.geometric_mean(r) for n, r in found.items()}
    print(
        f"{'geometric mean':54} {'':8} {means['symdiff']:8.2f} {means['lambdify cse']:13.2f} "
        f"{means['lambdify']:9.2f} {means.get('fused', float('nan')):6.2f} {'':6} "
        f"{means.get('numba', float('nan')):6.2f} {means.get('pytensor', float('nan')):9.2f}"
    )
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    if options.value_and_grad:
        value_and_grad_table(options, rng)
    if options.startup and numba:
        print("\nstartup of a Numba function: build + first call on 1e6 points, in fresh "
              "processes sharing one cache (seconds)")
        for text in (CASES[0][0], CASES[9][0]):
            first, second, report = startup(text)
            print(f"{text:54} first process {first:6.2f}  second process {second:6.2f}")
            print(f"    first build's report: {report}")


STARTUP = """
import time
start = time.perf_counter()
import numpy as np
import symdiff as sd
g = sd.grad({expr!r}, backend="numba")
x = np.linspace(0.5, 2.0, 1_000_000)
g(*(x for _ in g.args), threads=1)
print(time.perf_counter() - start)
"""


def startup(expr: str) -> tuple[float, float, str]:
    """Seconds to build and first call a Numba function in a fresh process: with empty caches,
    and again in a second process that finds both caches filled; and the line of the first
    build's progress report that gives Numba's compile time."""
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as sources:
        env = {**os.environ, "SYMDIFF_CACHE_DIR": cache, "SYMDIFF_SOURCE_DIR": sources,
               "SYMDIFF_PROGRESS": "0.001"}
        found, reports = [], []
        for _ in range(2):
            done = subprocess.run([sys.executable, "-c", STARTUP.format(expr=expr)], env=env,
                                  capture_output=True, text=True, check=True)
            found.append(float(done.stdout.strip().splitlines()[-1]))
            reports.append([line for line in done.stderr.splitlines()
                            if line.startswith("symdiff: numba")])
        if reports[1]:
            raise AssertionError(f"the second process compiled: {reports[1]}")
        return found[0], found[1], (reports[0] or ["(no report)"])[0]


def value_and_grad_table(options, rng) -> None:
    """``value_and_grad`` against ``grad`` on each problem (target: at most 1.1x ``grad``
    plus the value's last operation): the median time of each, in rounds as above, and
    "extra": what ``value_and_grad`` adds to ``grad`` over what the function alone costs
    (``sd.compile``; 0 = the value for free, 1 = no work shared)."""
    clock = time.process_time if options.clock == "cpu" else time.perf_counter
    header = f"{'expression':54} {'grad ms':>8} {'vg/grad':>8} {'f/grad':>7} {'extra':>6}"
    print(f"\nvalue_and_grad / grad, same points and rounds; {options.clock} time")
    print(header)
    print("-" * len(header))
    for text, wrt, _, make in CASES:
        if options.only not in text:
            continue
        arrays = make(rng, options.points)
        g = sd.grad(text, wrt=list(wrt)).with_threads(options.threads)
        vg = sd.value_and_grad(text, wrt=list(wrt)).with_threads(options.threads)
        f = sd.compile(text).with_threads(options.threads)
        small = {n: a[:1000] for n, a in arrays.items()}
        value, grads = vg(**small)
        np.testing.assert_allclose(value, f(**small), rtol=1e-12, err_msg=text)
        for ours, ref in zip(grads, g(**small), strict=True):
            np.testing.assert_allclose(ours, ref, rtol=1e-12, atol=1e-15, err_msg=text)
        times = round_times({"g": g, "vg": vg, "f": f}, arrays, options.repeat, clock)
        m = {name: statistics.median(t) for name, t in times.items()}
        print(f"{text:54} {m['g'] * 1e3:8.2f} {m['vg'] / m['g']:8.2f} {m['f'] / m['g']:7.2f} "
              f"{(m['vg'] - m['g']) / m['f']:6.2f}", flush=True)


if __name__ == "__main__":
    main()
