"""symdiff against its peers on classic test functions of n variables.

Problems: extended Rosenbrock, the product of all variables, log-sum-exp and a tridiagonal
quadratic form, at n = 10, 100, 1000. Peers, in one process:

- symdiff with n scalar variables ``x0 .. x{n-1}`` (``sd.grad(text, wrt=names)``), and with one
  vector argument through the tensor layer (``shapes={"x": ("n",)}``; for the batch a second
  build with ``shapes={"x": ("n", "m")}`` and the value summed over the batch);
- SymPy ``diff`` + ``lambdify`` with ``cse=True`` and ``cse=False``: each build runs in a child
  process with a time budget (``--sympy-budget``, default 120 s), so a hang cannot stall the run;
  the child returns the generated source, which this process runs for the timings;
- hand-written NumPy (the baseline of every ratio);
- when installed (``pip install ".[bench]"``): JAX ``jit(grad)`` on the CPU, PyTorch autograd
  (``backward()``) and HIPS autograd, each differentiating the vectorised value function a user
  of that library would write (``prod``, ``logsumexp`` and slicing included; a batch is the sum
  over its points, whose gradient is every point's gradient).

Columns: build time (s; for JAX the first call, i.e. trace + compile), run time at a single
point (scalar inputs: a vector of n floats) and over a batch of ``--points`` points, each also as
a ratio to hand-written NumPy, and symdiff's gradient cost / function cost (the same form of the
function compiled with ``sd.compile``, timed the same way). Times are medians of ``--repeat``
samples, each sample looping long enough to be measured. symdiff always builds with
``cache=False`` (and a fresh temporary ``SYMDIFF_CACHE_DIR``), so its build times are real.
Every gradient is checked against the hand-written one before it is timed. Everything runs on one
thread (NumPy's ufuncs are single-threaded; PyTorch and XLA are set to one thread).

Run: ``python benchmarks/bench_peers.py`` (the full table: about 25 minutes on 2 cores, most of
it SymPy), or ``--quick`` for a smoke run of about 30 s; ``--sizes``, ``--problems``, ``--peers``
select, ``--mode auto,reverse`` adds rows for other symdiff modes. At the end the targets
are checked against the rows just measured. The elementwise set (1e6 points, two variables) is
``benchmarks/bench_elementwise.py``.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib.util
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

# -- the problems ------------------------------------------------------------------------------
# Every value function takes x of shape (n,) or (n, m) (a batch of m points) and reduces over
# axis 0, written once against a small namespace ``ops`` so each autodiff library runs the same
# formula with its own sum / prod / logsumexp.


def _rosenbrock_value(ops, x):
    return ops.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def _rosenbrock_grad(x):
    g = np.zeros_like(x)
    t = x[1:] - x[:-1] ** 2
    g[:-1] += -400 * x[:-1] * t - 2 * (1 - x[:-1])
    g[1:] += 200 * t
    return g


def _product_value(ops, x):
    return ops.prod(x)


def _product_grad(x):
    """Prefix times suffix products: no division, so exact zeros are fine."""
    before = np.ones_like(x)
    before[1:] = np.cumprod(x[:-1], axis=0)
    after = np.ones_like(x)
    after[:-1] = np.cumprod(x[:0:-1], axis=0)[::-1]
    return before * after


def _logsumexp_value(ops, x):
    return ops.logsumexp(x)


def _logsumexp_grad(x):
    e = np.exp(x - x.max(axis=0))
    return e / e.sum(axis=0)


def _quadratic_value(ops, x):
    """x'Ax / 2 with A = tridiag(-1, 2, -1): sum x_i**2 - sum x_i x_{i+1}; its gradient is Ax."""
    return ops.sum(x**2) - ops.sum(x[:-1] * x[1:])


def _quadratic_grad(x):
    g = 2 * x
    g[1:] -= x[:-1]
    g[:-1] -= x[1:]
    return g


@dataclass(frozen=True)
class Problem:
    name: str
    scalar_text: Callable[[int], str]  # the expression in n scalar variables x0 .. x{n-1}
    vector_text: str  # the same in one vector argument x (tensor layer), summed over a batch
    vector_note: str  # why the vector text is not the same function, or ""
    value: Callable  # value(ops, x), vectorised over axis 0
    grad: Callable  # the hand-written NumPy gradient, x -> array of x's shape
    sympy_expr: Callable  # symbols -> the SymPy expression (for the SymPy child process)


def _sympy_rosenbrock(s):
    import sympy as sp

    return sp.Add(*[100 * (s[i + 1] - s[i] ** 2) ** 2 + (1 - s[i]) ** 2 for i in range(len(s) - 1)])


def _sympy_product(s):
    import sympy as sp

    return sp.Mul(*s)


def _sympy_logsumexp(s):
    import sympy as sp

    return sp.log(sp.Add(*[sp.exp(v) for v in s]))


def _sympy_quadratic(s):
    import sympy as sp

    return sp.Add(*[v**2 for v in s]) - sp.Add(*[s[i] * s[i + 1] for i in range(len(s) - 1)])


PROBLEMS = {
    p.name: p
    for p in (
        Problem(
            "rosenbrock",
            lambda n: " + ".join(
                f"100*(x{i + 1} - x{i}**2)**2 + (1 - x{i})**2" for i in range(n - 1)
            ),
            "sum(100*(x[1:] - x[:-1]**2)**2 + (1 - x[:-1])**2)",
            "",
            _rosenbrock_value,
            _rosenbrock_grad,
            _sympy_rosenbrock,
        ),
        Problem(
            "product",
            lambda n: "*".join(f"x{i}" for i in range(n)),
            "sum(prod(x, axis=0))",
            "",
            _product_value,
            _product_grad,
            _sympy_product,
        ),
        Problem(
            "logsumexp",
            lambda n: "log(" + " + ".join(f"exp(x{i})" for i in range(n)) + ")",
            "sum(logsumexp(x, axis=0))",
            "",
            _logsumexp_value,
            _logsumexp_grad,
            _sympy_logsumexp,
        ),
        Problem(
            "quadratic",
            lambda n: " + ".join(
                [f"x{i}**2" for i in range(n)] + [f"-x{i}*x{i + 1}" for i in range(n - 1)]
            ),
            "sum(x**2) - sum(x[:-1]*x[1:])",
            "",
            _quadratic_value,
            _quadratic_grad,
            _sympy_quadratic,
        ),
    )
}


# -- timing ------------------------------------------------------------------------------------


@dataclass
class Timing:
    min_sample: float  # seconds one sample should last at least
    repeat: int  # samples; the median is reported


def per_call(fn: Callable[[], object], timing: Timing) -> float:
    """Median seconds per call of ``fn`` (gc off while timing, as timeit does)."""
    fn()
    start = time.perf_counter()
    fn()
    once = max(time.perf_counter() - start, 1e-7)
    loops = max(1, math.ceil(timing.min_sample / once))
    samples = []
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(timing.repeat):
            start = time.perf_counter()
            for _ in range(loops):
                fn()
            samples.append((time.perf_counter() - start) / loops)
    finally:
        if enabled:
            gc.enable()
    return statistics.median(samples)


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


# -- SymPy in a child process --------------------------------------------------------------------


def sympy_worker(problem: str, n: int, cse: bool) -> None:
    """Child process: diff + lambdify, print JSON with the build seconds and the source."""
    import inspect

    import sympy as sp

    symbols = sp.symbols([f"x{i}" for i in range(n)], real=True)
    expr = PROBLEMS[problem].sympy_expr(symbols)  # not timed (symdiff's build includes parsing)
    start = time.perf_counter()
    fn = sp.lambdify(symbols, [sp.diff(expr, s) for s in symbols], modules="numpy", cse=cse)
    build = time.perf_counter() - start
    json.dump({"build": build, "source": inspect.getsource(fn)}, sys.stdout)


_LAMBDIFY_NAMESPACE: dict | None = None


def _lambdify_namespace() -> dict:
    """The globals lambdify(modules="numpy") gives its functions (NumPy's names + translations)."""
    global _LAMBDIFY_NAMESPACE
    if _LAMBDIFY_NAMESPACE is None:
        import sympy as sp

        x = sp.Symbol("x")
        _LAMBDIFY_NAMESPACE = dict(sp.lambdify([x], sp.exp(x) + sp.log(x), "numpy").__globals__)
    return _LAMBDIFY_NAMESPACE


def sympy_build(problem: str, n: int, cse: bool, budget: float) -> tuple[float | None, object]:
    """(build seconds, function) or (None, reason) when over budget or failed."""
    command = [sys.executable, os.path.abspath(__file__), "--sympy-worker", problem, str(n)]
    command.append("1" if cse else "0")
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=budget + 15, check=False
        )
    except subprocess.TimeoutExpired:
        return None, f"> {budget:.0f} s budget"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"failed: {last[:60]}"
    result = json.loads(done.stdout)
    if result["build"] > budget:
        return None, f"> {budget:.0f} s budget ({result['build']:.0f} s)"
    namespace = dict(_lambdify_namespace())
    exec(compile(result["source"], f"<lambdify {problem} {n}>", "exec"), namespace)
    fn = next(v for k, v in namespace.items() if k.startswith("_lambdifygenerated"))
    return result["build"], fn


# -- the peers ---------------------------------------------------------------------------------


@dataclass
class Row:
    peer: str
    build: float | None = None  # seconds
    point: float | None = None  # seconds per call at one point
    batch: float | None = None  # seconds per call over the batch
    ratio_point: float | None = None  # gradient / function cost of the same form (symdiff)
    ratio_batch: float | None = None
    note: str = ""


def _stack(result) -> np.ndarray:
    return np.asarray(result) if not isinstance(result, np.ndarray) else result


def _check(fn: Callable[[], object], reference: np.ndarray) -> str:
    try:
        got = np.asarray(_stack(fn()), dtype=float)
    except Exception as error:  # a failing peer is reported, not fatal
        return f"failed: {_short(error)}"
    if got.shape != reference.shape or not np.allclose(got, reference, rtol=1e-8, atol=1e-10):
        error = np.max(np.abs(got - reference)) if got.shape == reference.shape else got.shape
        return f"WRONG: largest error {error}"
    return ""


def _measure(row: Row, point_fn, batch_fn, timing: Timing, reference) -> Row:
    """Check both calls against the hand-written gradient, then time them."""
    for fn, ref, attr in ((point_fn, reference[0], "point"), (batch_fn, reference[1], "batch")):
        if fn is None:
            continue
        problem = _check(fn, ref)
        if problem:
            row.note = (row.note + "; " if row.note else "") + f"{attr}: {problem}"
            continue
        setattr(row, attr, per_call(fn, timing))
    return row


def _short(error: BaseException) -> str:
    text = next((line for line in str(error).splitlines() if line.strip()), "")
    return f"{type(error).__name__}: {text[:70]}"


def symdiff_scalar(problem: Problem, n: int, x, X, timing, reference, mode: str) -> Row:
    import symdiff as sd

    names = [f"x{i}" for i in range(n)]
    text = problem.scalar_text(n)
    row = Row("symdiff, n scalars" + ("" if mode == "auto" else f", {mode}"))
    start = time.perf_counter()
    try:
        row.build, g = timed(lambda: sd.grad(text, wrt=names, cache=False, mode=mode))
    except Exception as error:
        seconds = time.perf_counter() - start
        row.note = f"grad build failed after {seconds:.1f} s: {_short(error)}"
        return row
    # Positional arguments go in the order of g.args: sorted by name, so x10 comes before x2.
    order = [int(arg[1:]) for arg in g.args]
    xs = tuple(x[order].tolist())  # a single point: n Python floats
    rows = tuple(X[order])  # a batch: n arrays of m points
    _measure(row, lambda: g(*xs), lambda: g(*rows), timing, reference)
    own = True
    try:
        f = sd.compile(text, cache=False)
        assert f.args == g.args
    except Exception as error:  # fall back to a lambdified value for the batch ratio
        import sympy as sp

        own = False
        symbols = sp.symbols(names, real=True)
        f = sp.lambdify([symbols[i] for i in order], problem.sympy_expr(symbols), "numpy")
        row.note = f"sd.compile failed ({_short(error)}): g/f bt uses lambdify's value"
    if row.point is not None and own:  # (lambdify runs Python floats at a point: no ratio)
        row.ratio_point = row.point / per_call(lambda: f(*xs), timing)
    if row.batch is not None:
        row.ratio_batch = row.batch / per_call(lambda: f(*rows), timing)
    return row


def symdiff_vector(problem: Problem, n: int, x, X, timing, reference) -> Row:
    import symdiff as sd

    row = Row("symdiff, vector x", note=problem.vector_note)
    text = problem.vector_text
    point_shapes, batch_shapes = {"x": ("n",)}, {"x": ("n", "m")}
    try:
        row.build, g = timed(lambda: sd.grad(text, wrt="x", shapes=point_shapes, cache=False))
        gb = sd.grad(text, wrt="x", shapes=batch_shapes, cache=False)
        f = sd.compile(text, shapes=point_shapes, cache=False)
        fb = sd.compile(text, shapes=batch_shapes, cache=False)
    except Exception as error:
        row.note = f"build failed: {_short(error)}"
        return row
    _measure(row, lambda: g(x), lambda: gb(X), timing, reference)
    if row.point is not None:
        row.ratio_point = row.point / per_call(lambda: f(x), timing)
    if row.batch is not None:
        row.ratio_batch = row.batch / per_call(lambda: fb(X), timing)
    return row


def sympy_rows(problem: Problem, n: int, x, X, timing, reference, budget, skip) -> list[Row]:
    rows = []
    for cse in (True, False):
        row = Row(f"SymPy lambdify cse={cse}")
        key = (problem.name, cse)
        if key in skip:
            row.note = f"> {budget:.0f} s budget (at n={skip[key]} already)"
            rows.append(row)
            continue
        build, fn = sympy_build(problem.name, n, cse, budget)
        if build is None:
            row.note = str(fn)
            if "budget" in row.note:
                skip[key] = n
            rows.append(row)
            continue
        row.build = build
        xs = tuple(x.tolist())
        batch = tuple(X)
        rows.append(
            _measure(
                row,
                lambda fn=fn, xs=xs: fn(*xs),
                lambda fn=fn, batch=batch: fn(*batch),
                timing,
                reference,
            )
        )
    return rows


def jax_row(problem: Problem, x, X, timing, reference) -> Row:
    os.environ.setdefault(
        "XLA_FLAGS", "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
    )
    import jax
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp

    jax.config.update("jax_enable_x64", True)
    ops = SimpleNamespace(
        sum=lambda a: jnp.sum(a, axis=0),
        prod=lambda a: jnp.prod(a, axis=0),
        logsumexp=lambda a: logsumexp(a, axis=0),
    )
    grad = jax.jit(jax.grad(lambda v: jnp.sum(problem.value(ops, v))))
    row = Row(f"JAX {jax.__version__} jit(grad)", note="build = first call (trace + compile)")
    row.build, _ = timed(lambda: grad(x).block_until_ready())
    grad(X).block_until_ready()  # compile the batch shape before timing
    return _measure(
        row,
        lambda: np.asarray(grad(x)),
        lambda: np.asarray(grad(X)),
        timing,
        reference,
    )


def torch_row(problem: Problem, x, X, timing, reference) -> Row:
    import torch

    torch.set_num_threads(1)
    ops = SimpleNamespace(
        sum=lambda a: torch.sum(a, dim=0),
        prod=lambda a: torch.prod(a, dim=0),
        logsumexp=lambda a: torch.logsumexp(a, dim=0),
    )
    value = problem.value

    def grad(v):
        leaf = torch.from_numpy(v).requires_grad_()
        torch.sum(value(ops, leaf)).backward()
        return leaf.grad.numpy()

    row = Row(f"PyTorch {torch.__version__.split('+')[0]} autograd")
    return _measure(row, lambda: grad(x), lambda: grad(X), timing, reference)


def autograd_row(problem: Problem, x, X, timing, reference) -> Row:
    import autograd
    import autograd.numpy as anp
    from autograd.scipy.special import logsumexp

    ops = SimpleNamespace(
        sum=lambda a: anp.sum(a, axis=0),
        prod=lambda a: anp.prod(a, axis=0),
        logsumexp=lambda a: logsumexp(a, axis=0),
    )
    grad = autograd.grad(lambda v: anp.sum(problem.value(ops, v)))
    row = Row("HIPS autograd")
    return _measure(row, lambda: grad(x), lambda: grad(X), timing, reference)


OPTIONAL_PEERS = {
    "jax": ("jax", jax_row),
    "torch": ("torch", torch_row),
    "autograd": ("autograd", autograd_row),
}
PEERS = ("symdiff", "vector", "sympy", "jax", "torch", "autograd")

# -- the table ---------------------------------------------------------------------------------


def _fmt(value: float | None, spec: str, missing: str = "-") -> str:
    return missing if value is None else format(value, spec)


def print_block(n: int, problem: Problem, hand_point: float, hand_batch: float, rows, points):
    print(
        f"\nn = {n}, {problem.name}: hand-written NumPy {hand_point * 1e6:.1f} us at a point, "
        f"{hand_batch * 1e3:.3f} ms over {points} points"
    )
    print(HEADER)
    for row in rows:
        cells = [
            f"  {row.peer:27}",
            f"{_fmt(row.build, '9.3f'):>9}",
            f"{_fmt(None if row.point is None else row.point * 1e6, '11.1f'):>11}",
            f"{_fmt(None if row.point is None else row.point / hand_point, '8.2f'):>8}",
            f"{_fmt(None if row.batch is None else row.batch * 1e3, '10.3f'):>10}",
            f"{_fmt(None if row.batch is None else row.batch / hand_batch, '8.2f'):>8}",
            f"{_fmt(row.ratio_point, '6.2f'):>6}",
            f"{_fmt(row.ratio_batch, '6.2f'):>6}",
        ]
        print(" ".join(cells) + (f"  {row.note}" if row.note else ""))


HEADER = (
    f"  {'peer':27} {'build s':>9} {'point us':>11} {'x hand':>8} {'batch ms':>10} "
    f"{'x hand':>8} {'g/f pt':>6} {'g/f bt':>6}"
)


def summarize(results) -> None:
    """The targets, checked against the rows just measured (symdiff rows only)."""
    print("\nTargets; every symdiff row:")

    def line(target: str, n: int, name: str, row: Row, text: str, met: bool | None) -> None:
        verdict = {True: "met", False: "MISSED", None: "n/a"}[met]
        print(f"  {target:18} n={n:<5} {name:11} {row.peer:27} {text:34} {verdict}")

    for n, name, hand_point, _, rows in results:
        for row in rows:
            if row.peer.startswith("symdiff"):
                if row.point is None:
                    line("point <= hand", n, name, row, "not measured", False)
                else:
                    ratio = row.point / hand_point
                    line("point <= hand", n, name, row, f"{ratio:.2f}x hand", ratio <= 1.0)
    for n, name, _, _, rows in results:
        for row in rows:
            if n == 1000 and row.peer.startswith("symdiff"):
                if row.ratio_batch is None:
                    line("grad/f <= 4", n, name, row, "not measured", False)
                else:
                    text = f"{row.ratio_batch:.2f} batch, {_fmt(row.ratio_point, '.2f')} point"
                    line("grad/f <= 4", n, name, row, text, row.ratio_batch <= 4)
    for n, name, _, _, rows in results:
        for row in rows:
            if n == 1000 and row.peer.startswith("symdiff"):
                met = row.build is not None and row.build <= 5
                line("build <= 5 s", n, name, row, _fmt(row.build, ".2f", "failed") + " s", met)
    for n, name, _, _, rows in results:
        sympy = next((r for r in rows if r.peer == "SymPy lambdify cse=True"), None)
        if sympy is None:
            continue
        for row in rows:
            if not row.peer.startswith("symdiff"):
                continue
            if row.build is None:
                line("build <= SymPy/2", n, name, row, "failed", False)
            elif sympy.build is None:
                text = f"{row.build:.2f} s, SymPy {sympy.note}"
                line("build <= SymPy/2", n, name, row, text, None)
            else:
                text = f"{row.build:.2f} s vs {sympy.build:.2f} s ({row.build / sympy.build:.2f}x)"
                line("build <= SymPy/2", n, name, row, text, row.build <= sympy.build / 2)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    full = {
        "sizes": "10,100,1000",
        "points": 1000,
        "repeat": 7,
        "min_sample": 0.02,
        "sympy_budget": 120.0,
    }
    quick = {
        "sizes": "10,30",
        "points": 100,
        "repeat": 3,
        "min_sample": 0.002,
        "sympy_budget": 10.0,
    }
    parser.add_argument("--sizes", help=f"n values (default {full['sizes']})")
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--peers", default=",".join(PEERS), help=f"from {', '.join(PEERS)}")
    parser.add_argument("--points", type=int, help="batch size m (default 1000)")
    parser.add_argument("--repeat", type=int, help="samples per timing, median (default 7)")
    parser.add_argument("--min-sample", type=float, help="seconds per sample (default 0.02)")
    parser.add_argument("--sympy-budget", type=float, help="seconds per SymPy build (default 120)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--mode", default="auto", help="symdiff mode(s) for the n-scalar form, e.g. auto,reverse"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run (about 30 s): n = 10 and 30, 100 points, 3 short samples, 10 s SymPy",
    )
    parser.add_argument("--sympy-worker", nargs=3, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.sympy_worker:
        problem, n, cse = options.sympy_worker
        sympy_worker(problem, int(n), cse == "1")
        return
    for name, value in (quick if options.quick else full).items():
        if getattr(options, name) is None:
            setattr(options, name, value)
    cache_dir = tempfile.mkdtemp(prefix="symdiff-bench-")  # builds use cache=False as well
    atexit.register(shutil.rmtree, cache_dir, ignore_errors=True)
    os.environ["SYMDIFF_CACHE_DIR"] = cache_dir
    peers = set(options.peers.split(","))
    unknown = peers - set(PEERS)
    if unknown:
        parser.error(f"unknown peers: {', '.join(sorted(unknown))}")
    timing = Timing(options.min_sample, options.repeat)
    rng = np.random.default_rng(options.seed)
    installed = {k for k, (module, _) in OPTIONAL_PEERS.items() if importlib.util.find_spec(module)}
    missing = sorted((peers & set(OPTIONAL_PEERS)) - installed)
    print(
        f"symdiff vs peers: build s; run time per call at one point (us) and over a batch of "
        f"{options.points} points (ms), median of {options.repeat} samples of >= "
        f"{options.min_sample * 1e3:.0f} ms; 'x hand' = time / hand-written NumPy; g/f = "
        f"symdiff gradient / function cost, same form (pt = one point, bt = batch); SymPy "
        f"budget {options.sympy_budget:.0f} s per build; python {sys.version.split()[0]}, "
        f"numpy {np.__version__}, {os.cpu_count()} CPUs (shared: numbers are noisy)"
    )
    if missing:
        print(f"not installed (pip install '.[bench]'): {', '.join(missing)}")
    if peers & {"symdiff", "vector"}:
        import symdiff as sd

        seconds, _ = timed(
            lambda: (
                sd.grad("x*sin(y)", cache=False),
                sd.grad("sum(x**2)", wrt="x", shapes={"x": ("n",)}, cache=False),
            )
        )
        print(
            f"symdiff {sd.__version__} from {os.path.dirname(sd.__file__)}; one-time warm-up "
            f"build (imports, templates) {seconds:.2f} s, not counted below"
        )
    results = []
    skip: dict = {}
    for n in map(int, options.sizes.split(",")):
        x = rng.uniform(0.5, 1.0, n)
        X = rng.uniform(0.5, 1.0, (n, options.points))
        for name in options.problems.split(","):
            problem = PROBLEMS[name]
            reference = (problem.grad(x), problem.grad(X))
            hand_point = per_call(lambda p=problem, x=x: p.grad(x), timing)
            hand_batch = per_call(lambda p=problem, X=X: p.grad(X), timing)
            rows = []
            if "symdiff" in peers:
                for mode in options.mode.split(","):
                    rows.append(symdiff_scalar(problem, n, x, X, timing, reference, mode))
            if "vector" in peers:
                rows.append(symdiff_vector(problem, n, x, X, timing, reference))
            if "sympy" in peers:
                rows.extend(
                    sympy_rows(problem, n, x, X, timing, reference, options.sympy_budget, skip)
                )
            for key in ("jax", "torch", "autograd"):
                if key in peers and key in installed:
                    try:
                        rows.append(OPTIONAL_PEERS[key][1](problem, x, X, timing, reference))
                    except Exception as error:
                        rows.append(Row(key, note=f"failed: {_short(error)}"))
            print_block(n, problem, hand_point, hand_batch, rows, options.points)
            sys.stdout.flush()
            results.append((n, name, hand_point, hand_batch, rows))
    summarize(results)


if __name__ == "__main__":
    main()
