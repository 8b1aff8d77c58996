"""Sparse Jacobians and Hessians (``sparse=True``) at n = 10^4, 10^5, 10^6 unknowns.

Problems (each also a test at n = 100, ``tests/test_sparse_tensor.py``):

- ``rosenbrock``: the Hessian of the chained Rosenbrock function
  ``sum(100*(x[1:] - x[:-1]**2)**2 + (1 - x[:-1])**2)``, ``x`` of shape ``(n,)``;
- ``bratu``: the Hessian of the 2-D Bratu energy on an m x m grid (n = m^2), the 5-point
  Laplacian with zero boundary minus ``c*diag(exp(u))``;
- ``brusselator``: the Jacobian of the 2-D Brusselator's right-hand side on a periodic
  m x m grid, the state ``y`` of shape ``(2, m, m)`` (n = 2 m^2), a traced NumPy function;
- ``least squares``: the Jacobian of the residuals ``x[2:] - 2*x[1:-1] + x[:-2]`` and
  ``0.1*(x**3 - y)`` (two outputs, rows laid end to end): a constant sparse (second
  difference) matrix stacked on a diagonal.

Columns:

- ``build s``: ``sd.hessian/jacobian(..., sparse=True, cache=False)`` with a named dimension
  (the same function for every n), in CPU seconds in a fresh process (imports excluded, SymPy's
  caches cold); ``int s``: the same with n written into ``shapes=`` as a number, at that n
  (the work does not depend on it);
- ``first ms``: the first call at that n (it lays the pattern out once per size);
- ``f ms``: the function itself (``sd.compile``: the objective for a Hessian, the residuals for
  a Jacobian); ``H/f``: the sparse Hessian or Jacobian over it (a scipy.sparse CSR array);
- ``hand ms``: hand-written SciPy sparse code (``diags_array``, constant parts made once);
  ``x hand``: symdiff over it;
- ``peak MB``: the peak of NumPy's allocations during one call (``tracemalloc``);
  ``x out``: over the bytes of the result (data, indices, indptr);
- ``jax``: dense ``jax.jit(jax.hessian)`` (``jacfwd``) over symdiff, where the dense matrix
  fits (n <= 10^4); ``asdex``: ``jax.jit(asdex.hessian/jacobian(...))`` (sparsity detected
  from the jaxpr and coloured) over symdiff, and its detection and colouring (``asdex s``),
  up to ``--asdex-limit`` unknowns (10^5: at 10^6 its detection takes minutes and gigabytes).
  "-" where not installed or not run.

Times are medians of ``--repeat`` interleaved rounds (the machine is shared). Run with
``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_sparse.py``
(``--quick``: n = 10^3 and 10^4 only; ``--problems``, ``--sizes`` select;
``--minimize``: trust-constr on the chained Rosenbrock function at ``--minimize-n``;
``--ivp``: the Brusselator under ``solve_ivp(method="BDF")``, sparse against dense at
m = 24, sparse alone at m = 200, 80,000 unknowns).
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import math
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sps

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import interleaved_medians

import symdiff as sd

ROSENBROCK = "sum(100*(x[1:] - x[:-1]**2)**2 + (1 - x[:-1])**2)"
BRATU = ("0.5*(sum((u[1:, :] - u[:-1, :])**2) + sum((u[:, 1:] - u[:, :-1])**2)"
         " + sum(u[0, :]**2) + sum(u[-1, :]**2) + sum(u[:, 0]**2) + sum(u[:, -1]**2))"
         " - c*sum(exp(u))")
#: The residuals of a least-squares problem with a constant sparse (second difference) matrix:
#: two outputs of different lengths, their rows laid end to end.
LEAST_SQUARES = ["x[2:] - 2*x[1:-1] + x[:-2]", "0.1*(x**3 - y)"]


def _laplacian(w: Any) -> Any:
    return (np.roll(w, 1, axis=0) + np.roll(w, -1, axis=0) + np.roll(w, 1, axis=1)
            + np.roll(w, -1, axis=1) - 4 * w)


def brusselator(y: Any, alpha: Any) -> Any:
    """The 2-D Brusselator's right-hand side: y[0] = u, y[1] = v on a periodic grid."""
    u, v = y[0], y[1]
    du = 1 + u**2 * v - 4.4 * u + alpha * _laplacian(u)
    dv = 3.4 * u - u**2 * v + alpha * _laplacian(v)
    return np.stack([du, dv])


@dataclass
class Problem:
    """One benchmark problem: what symdiff builds, its arguments at a size and its peers."""

    kind: str
    expr: Any
    shapes: dict[str, tuple]
    wrt: str
    #: n unknowns -> (sizes of the named dimensions, arguments)
    arguments: Callable[[int, np.random.Generator], tuple[dict[str, int], dict[str, Any]]]
    #: arguments -> the hand-written sparse matrix (constant parts made once, by ``prepare``)
    hand: Callable[[dict[str, Any], Any], Any]
    prepare: Callable[[dict[str, Any]], Any]
    #: the function as JAX code of one flat vector, and how to make that vector
    jax_function: Callable[[dict[str, Any]], Callable[[Any], Any]] | None = None

    def build(self, shapes: dict[str, tuple] | None = None) -> Any:
        builder = sd.hessian if self.kind == "hessian" else sd.jacobian
        return builder(self.expr, wrt=self.wrt, shapes=shapes or self.shapes, sparse=True,
                       cache=False)


# -- the problems ----------------------------------------------------------------------------
def _rosenbrock_args(n, rng):
    return {"n": n}, {"x": rng.uniform(-1, 1, n)}


def _rosenbrock_hand(args, _):
    x = args["x"]
    diag = np.zeros_like(x)
    diag[:-1] = 1200 * x[:-1] ** 2 - 400 * x[1:] + 2
    diag[1:] += 200
    off = -400 * x[:-1]
    return sps.diags_array([off, diag, off], offsets=[-1, 0, 1], format="csr")


def _bratu_args(n, rng):
    m = round(math.sqrt(n))
    return {"m": m}, {"u": rng.uniform(0, 1, (m, m)), "c": np.float64(6.0 / (m + 1) ** 2)}


def _bratu_prepare(args):
    m = args["u"].shape[0]
    side = np.ones(m * m - 1)
    side[m - 1::m] = 0  # no neighbour across a grid row's end
    return sps.diags_array([-np.ones(m * m - m), -side, np.zeros(m * m), -side,
                            -np.ones(m * m - m)], offsets=[-m, -1, 0, 1, m], format="csr")


def _bratu_hand(args, laplacian):
    return (laplacian + sps.diags_array(4 - args["c"] * np.exp(args["u"].ravel()))).tocsr()


def _brusselator_args(n, rng):
    m = round(math.sqrt(n / 2))
    grid = np.arange(m) / m
    u = 1 + np.sin(2 * np.pi * grid)[:, None] * np.ones(m) + 0.1 * rng.random((m, m))
    return {"m": m}, {"y": np.stack([u, np.full((m, m), 3.0)]),
                      "alpha": np.float64(0.02 * m * m)}


def _brusselator_prepare(args):
    m = args["y"].shape[1]
    one = sps.eye_array(m, format="csr")
    ring = sps.diags_array([np.ones(m - 1), np.ones(m - 1), [1.0], [1.0], -2 * np.ones(m)],
                           offsets=[-1, 1, -(m - 1), m - 1, 0], format="csr")
    return (args["alpha"] * (sps.kron(ring, one) + sps.kron(one, ring))).tocsr()


def _brusselator_hand(args, laplacian):
    u, v = args["y"][0].ravel(), args["y"][1].ravel()
    uv = u * v
    return sps.block_array([
        [laplacian + sps.diags_array(2 * uv - 4.4), sps.diags_array(u * u)],
        [sps.diags_array(3.4 - 2 * uv), laplacian - sps.diags_array(u * u)],
    ], format="csr")


def _least_squares_args(n, rng):
    return {"n": n}, {"x": rng.uniform(-1, 1, n), "y": rng.uniform(-1, 1, n)}


def _least_squares_prepare(args):
    n = len(args["x"])
    return sps.diags_array([np.ones(n - 2), -2 * np.ones(n - 2), np.ones(n - 2)],
                           offsets=[0, 1, 2], shape=(n - 2, n), format="csr")


def _least_squares_hand(args, second):
    return sps.vstack([second, sps.diags_array(0.3 * args["x"] ** 2)], format="csr")


def _jax_rosenbrock(args):
    import jax.numpy as jnp

    return lambda x: jnp.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def _jax_bratu(args):
    import jax.numpy as jnp

    m, c = args["u"].shape[0], float(args["c"])

    def energy(flat):
        u = flat.reshape(m, m)
        grad = (jnp.sum((u[1:, :] - u[:-1, :]) ** 2) + jnp.sum((u[:, 1:] - u[:, :-1]) ** 2)
                + jnp.sum(u[0, :] ** 2) + jnp.sum(u[-1, :] ** 2) + jnp.sum(u[:, 0] ** 2)
                + jnp.sum(u[:, -1] ** 2))
        return 0.5 * grad - c * jnp.sum(jnp.exp(u))

    return energy


def _jax_brusselator(args):
    import jax.numpy as jnp

    m, alpha = args["y"].shape[1], float(args["alpha"])

    def rhs(flat):
        def lap(w):
            return (jnp.roll(w, 1, 0) + jnp.roll(w, -1, 0) + jnp.roll(w, 1, 1)
                    + jnp.roll(w, -1, 1) - 4 * w)

        u, v = flat.reshape(2, m, m)
        du = 1 + u**2 * v - 4.4 * u + alpha * lap(u)
        dv = 3.4 * u - u**2 * v + alpha * lap(v)
        return jnp.stack([du, dv]).ravel()

    return rhs


def _jax_least_squares(args):
    import jax.numpy as jnp

    y = jnp.asarray(args["y"])
    return lambda x: jnp.concatenate([x[2:] - 2 * x[1:-1] + x[:-2], 0.1 * (x**3 - y)])


PROBLEMS = {
    "rosenbrock": Problem("hessian", ROSENBROCK, {"x": ("n",)}, "x", _rosenbrock_args,
                          _rosenbrock_hand, lambda args: None, _jax_rosenbrock),
    "bratu": Problem("hessian", BRATU, {"u": ("m", "m"), "c": ()}, "u", _bratu_args,
                     _bratu_hand, _bratu_prepare, _jax_bratu),
    "brusselator": Problem("jacobian", brusselator, {"y": (2, "m", "m"), "alpha": ()}, "y",
                           _brusselator_args, _brusselator_hand, _brusselator_prepare,
                           _jax_brusselator),
    "least squares": Problem("jacobian", LEAST_SQUARES, {"x": ("n",), "y": ("n",)}, "x",
                             _least_squares_args, _least_squares_hand, _least_squares_prepare,
                             _jax_least_squares),
}


# -- measuring -------------------------------------------------------------------------------
def _peak_bytes(fn: Callable[[], Any]) -> tuple[int, Any]:
    gc.collect()
    tracemalloc.start()
    try:
        result = fn()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, result


def _out_bytes(matrix: Any) -> int:
    return sum(a.nbytes for a in (matrix.data, matrix.indices, matrix.indptr))


def _jax_peers(problem: Problem, args: dict[str, Any], n: int, dense_limit: int,
               asdex_limit: int) -> tuple[Callable | None, Callable | None, float | None]:
    """Dense ``jax.hessian``/``jacfwd`` (jitted, where it fits) and asdex (jitted; with its
    detection and colouring time)."""
    if problem.jax_function is None or importlib.util.find_spec("jax") is None:
        return None, None, None
    import jax

    jax.config.update("jax_enable_x64", True)
    fn = problem.jax_function(args)
    flat = np.concatenate([np.ravel(args[problem.wrt])])
    dense = None
    if n <= dense_limit:
        maker = jax.hessian if problem.kind == "hessian" else jax.jacfwd
        compiled = jax.jit(maker(fn))
        dense = lambda: compiled(flat).block_until_ready()  # noqa: E731
    sparse = detect = None
    if importlib.util.find_spec("asdex") is not None and n <= asdex_limit:
        import asdex

        start = time.perf_counter()
        maker = asdex.hessian if problem.kind == "hessian" else asdex.jacobian
        made = jax.jit(maker(fn, flat))
        made(flat).data.block_until_ready()
        detect = time.perf_counter() - start
        sparse = lambda: made(flat).data.block_until_ready()  # noqa: E731
    return dense, sparse, detect


def cold_build(name: str, n: int | None) -> float:
    """CPU seconds of building problem ``name`` in a fresh process (``n``: sizes as numbers)."""
    script = (f"import sys; sys.argv = ['bench_sparse', '--build-only', {name!r}, "
              f"'{n or 0}']; import runpy; runpy.run_path({__file__!r}, run_name='__main__')")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=True)
    return float(done.stdout.split()[-1])


def _build_only(name: str, n: int) -> None:
    problem = PROBLEMS[name]
    shapes = None
    if n:
        dims, _ = problem.arguments(n, np.random.default_rng(0))
        shapes = {k: tuple(dims.get(d, d) for d in v) for k, v in problem.shapes.items()}
    import sympy  # noqa: F401  (imports are not the build)

    import symdiff.sparse.tensor_build  # noqa: F401

    start = time.process_time()
    problem.build(shapes)
    print(time.process_time() - start)


def run_problem(name: str, sizes: list[int], repeat: int, dense_limit: int,
                asdex_limit: int) -> list[dict]:
    problem = PROBLEMS[name]
    built = problem.build()
    build = cold_build(name, None)
    exprs = problem.expr if isinstance(problem.expr, list) else [problem.expr]
    parts = [sd.compile(e, shapes=problem.shapes) for e in exprs]

    def function(**args: Any) -> list[Any]:
        return [part(**{a: args[a] for a in part.args}) for part in parts]

    rows = []
    rng = np.random.default_rng(0)
    for n in sizes:
        _, args = problem.arguments(n, rng)
        int_build = cold_build(name, n)
        start = time.perf_counter()
        ours = built(**args)
        first = time.perf_counter() - start
        constant = problem.prepare(args)
        hand = problem.hand(args, constant)
        error = abs(ours - hand).max() / max(1.0, abs(hand).max())
        assert error < 1e-10, f"{name} at n={n}: off by {error}"
        peers = [("f", lambda a=args: function(**a)), ("ours", lambda a=args: built(**a)),
                 ("hand", lambda a=args, c=constant: problem.hand(a, c))]
        dense, asdex_fn, detect = _jax_peers(problem, args, n, dense_limit, asdex_limit)
        if dense is not None:
            peers.append(("jax", dense))
        if asdex_fn is not None:
            peers.append(("asdex", asdex_fn))
        medians = dict(zip([p for p, _ in peers], interleaved_medians(
            [(p, (lambda fn=fn: fn())) for p, fn in peers], (), repeat), strict=True))
        peak, matrix = _peak_bytes(lambda a=args: built(**a))
        rows.append({
            "problem": name, "n": matrix.shape[1], "nnz": matrix.nnz, "build": build,
            "int": int_build, "first": first * 1e3, "f": medians["f"] * 1e3,
            "ours": medians["ours"] * 1e3, "ratio": medians["ours"] / medians["f"],
            "hand": medians["hand"] * 1e3, "x hand": medians["ours"] / medians["hand"],
            "peak": peak / 2**20, "x out": peak / _out_bytes(matrix),
            "jax": medians["jax"] / medians["ours"] if "jax" in medians else None,
            "asdex": medians["asdex"] / medians["ours"] if "asdex" in medians else None,
            "asdex s": detect,
        })
        print(_format(rows[-1]), flush=True)
    return rows


HEADER = ("| problem | n | nnz | build s | int s | first ms | f ms | H/f | hand ms | x hand "
          "| peak MB | x out | jax | asdex | asdex s |")


def _format(row: dict) -> str:
    def number(value, digits=2):
        return "-" if value is None else f"{value:.{digits}f}"

    return (f"| {row['problem']} | {row['n']:,} | {row['nnz']:,} | {row['build']:.2f} | "
            f"{row['int']:.2f} | {row['first']:.0f} | {row['f']:.2f} | {row['ratio']:.1f} | "
            f"{row['hand']:.2f} | {row['x hand']:.2f} | {row['peak']:.0f} | "
            f"{row['x out']:.2f} | {number(row['jax'], 1)} | {number(row['asdex'], 1)} | "
            f"{number(row['asdex s'], 1)} |")


def minimize_rosenbrock(n: int) -> None:
    """trust-constr on the chained Rosenbrock function with the sparse Hessian."""
    from scipy.optimize import minimize

    obj = sd.objective(ROSENBROCK, "x", shapes={"x": ("n",)}, sparse=True)
    x0 = np.full(n, 1.2)  # (from 0 or (-1.2, 1, ...), trust-constr takes some 4n iterations)
    start = time.perf_counter()
    res = minimize(obj.fun, x0, jac=obj.jac, hess=obj.hess, method="trust-constr",
                   options={"gtol": 1e-8, "xtol": 1e-14, "maxiter": 100_000})
    seconds = time.perf_counter() - start
    print(f"trust-constr, chained Rosenbrock, n = {n:,}, from x0 = 1.2: {res.message} "
          f"{res.nit} iterations, {seconds:.1f} s, max |x - 1| = {np.abs(res.x - 1).max():.1e}, "
          f"f = {res.fun:.1e}")


def integrate_brusselator(small: int, large: int, until: float) -> None:
    """``solve_ivp(method="BDF")`` on the 2-D Brusselator with the sparse Jacobian: against
    the dense Jacobian at an m x m grid of ``small``, alone at ``large`` (where the dense
    Jacobian would not fit in memory)."""
    from scipy.integrate import solve_ivp

    shapes = {"y": (2, "m", "m"), "alpha": ()}
    f = sd.compile(brusselator, shapes=shapes)
    sparse = sd.jacobian(brusselator, wrt="y", shapes=shapes, sparse=True)
    dense = sd.jacobian(brusselator, wrt="y", shapes=shapes)
    for m in (small, large):
        _, args = _brusselator_args(2 * m * m, np.random.default_rng(0))
        alpha, y0 = args["alpha"], args["y"].reshape(-1)

        def rhs(t, y, m=m, alpha=alpha):
            return f(y.reshape(2, m, m), alpha).reshape(-1)

        jacobians = {"sparse": lambda t, y, m=m, alpha=alpha: sparse(y.reshape(2, m, m), alpha)}
        if m == small:
            jacobians["dense"] = lambda t, y, m=m, alpha=alpha: dense(
                y.reshape(2, m, m), alpha).reshape(2 * m * m, -1)
        finals = {}
        for name, jac in jacobians.items():
            start = time.perf_counter()
            sol = solve_ivp(rhs, (0, until), y0, method="BDF", jac=jac, rtol=1e-6, atol=1e-8)
            seconds = time.perf_counter() - start
            finals[name] = sol.y[:, -1]
            print(f"Brusselator m = {m} ({2 * m * m:,} unknowns), BDF to t = {until} with the "
                  f"{name} Jacobian: {seconds:.2f} s, {sol.nfev} f, {sol.njev} Jacobians, "
                  f"{sol.nlu} LU, status {sol.status}", flush=True)
        if "dense" in finals:
            gap = np.abs(finals["sparse"] - finals["dense"]).max()
            print(f"  sparse and dense runs differ by at most {gap:.1e}")
        else:
            print(f"  (a dense Jacobian would take {(2 * m * m) ** 2 * 8 / 2**30:,.0f} GiB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", default=",".join(PROBLEMS))
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--dense-limit", type=int, default=10_000)
    parser.add_argument("--asdex-limit", type=int, default=100_000)
    parser.add_argument("--minimize", action="store_true")
    parser.add_argument("--minimize-n", type=int, default=100_000)
    parser.add_argument("--ivp", action="store_true", help="the Brusselator under BDF")
    parser.add_argument("--build-only", nargs=2, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.build_only:
        _build_only(options.build_only[0], int(options.build_only[1]))
        return
    sizes = [1000, 10000] if options.quick else [int(s) for s in options.sizes.split(",")]
    print(HEADER)
    print("|" + "---|" * (HEADER.count("|") - 1))
    for name in filter(None, options.problems.split(",")):
        run_problem(name, sizes, options.repeat, options.dense_limit, options.asdex_limit)
    if options.minimize:
        minimize_rosenbrock(options.minimize_n)
    if options.ivp:
        integrate_brusselator(24, 200, 2.0)
    load = Path("/proc/loadavg")
    print(f"medians of {options.repeat} rounds"
          + (f"; load average {load.read_text().split()[0]}" if load.exists() else ""))


if __name__ == "__main__":
    main()
