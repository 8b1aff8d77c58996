"""Dask arrays through compiled functions: elementwise gradients chunk by chunk through the
NumPy module (lazy until ``.compute()``), tensor gradients with reductions through the Array API
module (task graph counted), ``sd.objective`` with Dask data, and a real
``distributed.LocalCluster`` (2 worker processes, a low memory limit) computing a
logistic-regression gradient over data larger than one worker's limit."""

from __future__ import annotations

import time

import numpy as np
import pytest

import symdiff as sd

from .tensor_cases import LOGISTIC, LOGISTIC_SHAPES

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

RTOL = 1e-12
ELEMENTWISE = "x**2*sin(y) + log1p(exp(x*y)) + max(x, y)"


def _close(ours, reference) -> None:
    ours, reference = np.asarray(ours, dtype=float), np.asarray(reference, dtype=float)
    scale = np.maximum(1.0, np.abs(reference))
    assert np.all(np.abs(ours - reference) <= RTOL * scale)


def _data(n: int, chunk: int):
    rng = da.random.default_rng(0)
    return (rng.normal(size=(n,), chunks=chunk), rng.normal(size=(n,), chunks=chunk))


def test_elementwise_gradient_is_lazy_one_task_per_chunk_and_equals_numpy():
    g = sd.grad(ELEMENTWISE, backend="array_api")
    x, y = _data(40_000, 10_000)
    gx, gy = g(x, y)
    assert isinstance(gx, da.Array) and isinstance(gy, da.Array)  # nothing computed yet
    assert gx.chunks == x.chunks and gx.dtype == np.float64
    graph = dict(gx.__dask_graph__())
    ours = [k for k in graph if isinstance(k, tuple) and k[0].startswith("symdiff-grad_f")]
    assert len(ours) == x.npartitions  # one call of the generated module per chunk
    ex, ey = sd.grad(ELEMENTWISE)(x.compute(), y.compute())
    got_x, got_y = dask.compute(gx, gy)
    _close(got_x, ex)
    _close(got_y, ey)


def test_chunks_run_the_numpy_module():
    g = sd.grad(ELEMENTWISE, backend="array_api")
    assert "_np." in g._chunk_function().__globals__["_formulas"].__code__.co_names or (
        "import numpy as _np" in g.numpy_twin().source)


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch):
    """A cache directory of its own, and no function in memory: a new process's view."""
    from symdiff import cache, pipeline, request_index

    monkeypatch.setenv("SYMDIFF_CACHE_DIR", str(tmp_path / "cache"))
    cache.reset_store()
    pipeline.clear_memo()
    request_index.forget()
    yield
    monkeypatch.undo()
    cache.reset_store()
    pipeline.clear_memo()
    request_index.forget()


def test_a_function_loaded_from_the_cache_runs_the_numpy_module_on_chunks_too(fresh_cache):
    from symdiff import pipeline, request_index

    built = sd.grad(ELEMENTWISE, backend="array_api")
    pipeline.clear_memo()
    request_index.forget()
    loaded = sd.grad(ELEMENTWISE, backend="array_api")  # from the request index on disk
    assert loaded is not built and loaded.recorded is None and built.recorded is not None
    x, y = _data(4_000, 1_000)
    for g in (built, loaded):
        twin = g.numpy_twin()
        assert twin.recipe.options.backend == "numpy" and "import numpy as _np" in twin.source
        assert g._chunk_function() is twin._run
        gx, _ = g(x, y)
        _close(gx.compute(), sd.grad(ELEMENTWISE)(x.compute(), y.compute())[0])


@pytest.mark.parametrize("builder", [sd.compile, sd.value_and_grad, sd.hessian, sd.jacobian])
def test_other_builders_and_broadcasting_on_dask_arrays(builder):
    expr = "x**3*y - atan2(y, x)"
    exprs = [expr, "x*y"] if builder is sd.jacobian else expr
    ours, reference = builder(exprs, backend="array_api"), builder(exprs)
    x = da.linspace(0.5, 2.0, 12, chunks=4)[:, None]
    y = np.linspace(-1.0, 1.0, 3)  # NumPy mixed in: broadcast with the chunks
    got, expected = dask.compute(ours(x, y))[0], reference(x.compute(), y)
    if builder is sd.value_and_grad:
        got, expected = (got[0], *got[1]), (expected[0], *expected[1])
    for g, e in zip(got if isinstance(got, tuple) else (got,),
                    expected if isinstance(expected, tuple) else (expected,), strict=True):
        assert g.shape == e.shape
        _close(g, e)


def test_numpy_backend_results_are_unchanged_numpy():
    g = sd.grad("x*y")
    gx, _ = g(np.ones(3), np.arange(3.0))
    assert type(gx) is np.ndarray


def _logistic_data(n: int, chunk: int, d: int = 5):
    """Features uniform in [-1, 1) and labels +-1, in row chunks (uniform numbers are quicker
    to draw than normal ones: the cluster test draws 10^8 of them)."""
    rng = da.random.default_rng(1)
    X = 2.0 * rng.random(size=(n, d), chunks=(chunk, d)) - 1.0
    y = da.sign(rng.random(size=(n,), chunks=chunk) - 0.5)
    return X, y


def test_tensor_gradient_on_row_chunked_X_is_a_map_and_a_tree_reduction():
    g = sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES, backend="array_api")
    X, y = _logistic_data(80_000, 10_000)
    w = np.linspace(-0.5, 0.5, 5)
    grad = g(X, w, y)
    assert isinstance(grad, da.Array) and grad.shape == (5,)
    chunks = X.npartitions
    layers = {name: len(layer) for name, layer in grad.__dask_graph__().layers.items()}
    # per chunk: X @ w, the elementwise adjoint and X.T @ r, one task each per chunk (layers
    # of at most `chunks` tasks); then one tree reduction over the chunks (partial sums of a
    # few chunks each, one aggregate): no task holds all of X
    assert max(layers.values()) == chunks, layers
    tree = sum(n for name, n in layers.items() if "partial" in name or "aggregate" in name)
    assert 1 <= tree <= chunks // 2 + 1, layers
    maps = [name for name, n in layers.items() if n == chunks and name.startswith("matmul")]
    assert len(maps) == 2, layers  # X @ w and X.T @ r, chunk by chunk
    optimized = dask.optimize(grad)[0]  # the elementwise steps fuse into the maps
    inputs = sum(len(dict(a.__dask_graph__())) for a in dask.optimize(X, y))
    assert len(dict(optimized.__dask_graph__())) - inputs <= 5 * chunks, layers
    _close(grad.compute(), sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)(
        X.compute(), w, y.compute()))


def test_objective_with_dask_data_returns_numpy_for_scipy():
    from scipy.optimize import minimize

    X, y = _logistic_data(20_000, 5_000)
    obj = sd.objective(LOGISTIC, "w", params={"X": X, "y": y}, shapes=LOGISTIC_SHAPES)
    value, grad = obj.value_and_grad(np.zeros(5))
    assert type(value) is float and type(grad) is np.ndarray
    reference = sd.objective(LOGISTIC, "w", params={"X": X.compute(), "y": y.compute()},
                             shapes=LOGISTIC_SHAPES)
    _close(grad, reference.jac(np.zeros(5)))
    result = minimize(obj.fun, np.zeros(5), jac=obj.jac, method="L-BFGS-B",
                      options={"maxiter": 5})
    assert result.fun < value


def test_hessian_vector_products_on_dask_arrays_stay_lazy_and_equal_numpy():
    X, y = _logistic_data(4_000, 1_000, d=3)
    w, v = np.array([0.1, -0.2, 0.3]), np.array([1.0, 0.5, -1.0])
    product = sd.hvp(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES, backend="array_api")(X, w, y, v)
    assert isinstance(product, da.Array) and product.shape == (3,)
    reference = sd.hvp(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)(X.compute(), w, y.compute(), v)
    _close(product.compute(), reference)
    x, z = _data(400, 100)
    directions = np.array([1.0, -2.0])
    elementwise = sd.hvp("x**2*z + sin(x)*z**3", backend="array_api")(x, z, directions)
    assert isinstance(elementwise, da.Array) and elementwise.shape == (2, 400)
    _close(elementwise.compute(),
           sd.hvp("x**2*z + sin(x)*z**3")(x.compute(), z.compute(), directions))
    objective = sd.objective(LOGISTIC, "w", params={"X": X, "y": y}, shapes=LOGISTIC_SHAPES)
    hessp = objective.hessp(w, v)
    assert type(hessp) is np.ndarray
    _close(hessp, reference)


def test_logistic_gradient_on_a_local_cluster_over_more_data_than_a_worker_holds():
    distributed = pytest.importorskip("distributed")
    limit = 240 * 2**20  # bytes per worker (an idle worker process holds about 150 MB)
    n, d, chunk = 1_600_000, 20, 50_000  # 256 MB of X, in 8 MB chunks: more than one limit
    g = sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES, backend="array_api")
    w = np.linspace(-0.2, 0.2, d)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  memory_limit=limit, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        X, y = _logistic_data(n, chunk, d)
        assert X.nbytes > limit
        workers = set(client.scheduler_info()["workers"])
        started = time.perf_counter()
        grad = client.compute(g(X, w, y)).result()  # all of X, streamed through the workers
        seconds = time.perf_counter() - started
        peaks = client.run(_peak_rss)
        assert set(client.scheduler_info()["workers"]) == workers  # none was restarted
        # NumPy on a sample (the first and the last chunk), the same gradient on the cluster
        rows = np.r_[0:chunk, n - chunk:n]
        Xs, ys = X[rows], y[rows]
        sample = client.compute(g(Xs, w, ys)).result()
        reference = sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)(
            *client.compute([Xs, w, ys], sync=True))
        # and an elementwise gradient, its generated module shipped to the workers
        e = sd.grad("x*exp(y)", wrt="x", backend="array_api")
        x0, y0 = _data(200_000, 50_000)
        _close(client.compute(e(x0, y0)).result(), np.exp(y0.compute()))
    _close(sample, reference)
    assert grad.shape == (d,) and np.all(np.isfinite(grad)) and seconds > 0
    assert max(peaks.values()) < limit, peaks  # no worker held more than its limit


def _peak_rss() -> int:
    """This process's peak resident memory: ``VmHWM`` (Linux; reset when the worker process
    was started, unlike ``ru_maxrss``, which keeps the parent's peak across fork and exec)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def test_an_unpickled_function_keeps_its_numpy_twin_for_the_chunks():
    import pickle

    g = sd.grad(ELEMENTWISE, backend="array_api")
    clone = pickle.loads(pickle.dumps(g))
    twin = clone.numpy_twin()
    assert twin.recipe.options.backend == "numpy" and "import numpy as _np" in twin.source
    assert twin.source == g.numpy_twin().source
    assert clone._chunk_function() is twin._run  # not the Array API module
    assert pickle.loads(pickle.dumps(clone)).numpy_twin().source == twin.source  # again
    x, y = _data(4_000, 1_000)
    gx, gy = clone(x, y)
    ex, ey = sd.grad(ELEMENTWISE)(x.compute(), y.compute())
    _close(gx.compute(), ex)
    _close(gy.compute(), ey)
    assert "numpy_twin" not in pickle.loads(pickle.dumps(sd.grad(ELEMENTWISE))).__dict__
