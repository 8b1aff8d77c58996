"""Fit a logistic regression on a chunked dataset with SciPy's L-BFGS: the loss and its
gradient are emitted by symdiff with ``backend="array_api"`` and evaluated by Dask, chunk by
chunk, on a local cluster (or on any Dask cluster you point it at).

Needs: the ``dask`` extra, ``pip install "symdiff[dask]"`` (Dask, distributed, array-api-compat
and SciPy); without them it stops with one line saying so.

Run: ``python examples/dask_logistic.py [--rows N] [--features D] [--chunk C] [--workers W]
[--address tcp://scheduler:8786]``.

The loss is one string over arrays with named dimensions. ``sd.objective`` sees that the data
in ``params`` are Dask arrays and builds the Array API module: each ``fun``/``jac`` call sends
one lazy graph (``X @ w`` and ``X.T @ r`` per chunk, a tree sum over the chunks) to the
cluster and hands SciPy a float and a NumPy vector. The data never leave the workers; the same
code runs on a multi-node cluster with ``--address``.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time

import numpy as np

import symdiff as sd

LOSS = "sum(log(1 + exp(-y * (X @ w)))) / n_rows + lam * sum(w**2)"
SHAPES = {"X": ("n", "d"), "y": ("n",), "w": ("d",), "n_rows": (), "lam": ()}


def make_data(rows: int, features: int, chunk: int, seed: int = 0):
    """Features uniform in [-1, 1), labels from a known weight vector with 10% flipped, as
    Dask arrays in row chunks (made lazily, on the workers)."""
    import dask.array as da

    rng = da.random.default_rng(seed)
    X = 2.0 * rng.random(size=(rows, features), chunks=(chunk, features)) - 1.0
    truth = np.linspace(-2.0, 2.0, features)
    noise = rng.random(size=(rows,), chunks=chunk) < 0.1
    y = da.where(noise, -1.0, 1.0) * da.sign(X @ truth)
    return X, y, truth


def fit(rows: int, features: int, chunk: int, workers: int, address: str | None) -> np.ndarray:
    """Fit on a cluster (a LocalCluster of ``workers`` processes unless ``address`` is given)
    and print one line per L-BFGS iteration."""
    from distributed import Client, LocalCluster
    from scipy.optimize import minimize

    cluster = None if address else LocalCluster(n_workers=workers, threads_per_worker=1,
                                                processes=True, dashboard_address=None)
    with Client(address or cluster) as client:
        print(f"cluster: {client}")
        X, y, truth = make_data(rows, features, chunk)
        X, y = client.persist([X, y])  # drawn once, kept on the workers
        obj = sd.objective(LOSS, "w", params={"X": X, "y": y, "n_rows": float(rows),
                                              "lam": 1e-4}, shapes=SHAPES)
        started = time.perf_counter()
        iteration = 0
        last: tuple[float, np.ndarray] = (np.nan, np.zeros(features))

        def value_and_grad(w: np.ndarray) -> tuple[float, np.ndarray]:
            nonlocal last
            last = obj.value_and_grad(w)  # one pass over the chunks for both
            return last

        def progress(w: np.ndarray) -> None:
            nonlocal iteration
            iteration += 1
            value, grad = last  # the accepted point is the last one evaluated
            print(f"iteration {iteration:3d}  loss {value:.6f}  |grad| {np.linalg.norm(grad):.2e}"
                  f"  {time.perf_counter() - started:6.1f} s")

        result = minimize(value_and_grad, np.zeros(features), jac=True, method="L-BFGS-B",
                          callback=progress, options={"maxiter": 50})
        cosine = result.x @ truth / (np.linalg.norm(result.x) * np.linalg.norm(truth))
        print(f"{result.message}; {result.nfev} gradients in "
              f"{time.perf_counter() - started:.1f} s; cosine to the true weights {cosine:.4f}")
    if cluster is not None:
        cluster.close()
    return result.x


#: What the example imports beyond symdiff and NumPy (all in the ``dask`` extra).
NEEDS = ("dask.array", "distributed", "array_api_compat", "scipy.optimize")


def missing_modules(names: tuple[str, ...] = NEEDS) -> list[str]:
    """The modules of ``names`` that cannot be imported."""
    missing = []
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name.split(".")[0])
    return missing


def main() -> None:
    missing = missing_modules()
    if missing:
        sys.exit(f"dask_logistic.py needs {', '.join(missing)}: pip install \"symdiff[dask]\"")
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--chunk", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--address", default=None, help="a running scheduler's address")
    args = parser.parse_args()
    fit(args.rows, args.features, args.chunk, args.workers, args.address)


if __name__ == "__main__":
    main()
