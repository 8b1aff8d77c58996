"""A function of the default NumPy backend never converts another library's arrays silently.

``np.asarray`` of a Dask array computes every chunk into this one process, and of a GPU tensor
copies it to the host, and either way the results come back as NumPy arrays. The generated
module's argument prelude (``_as_arrays``, the slow path taken only when an argument is not an
ndarray) refuses them with an :class:`~symdiff.ArgumentError` pointing at
``backend="array_api"`` before anything is converted; NumPy arrays and scalars, Python numbers
and lists are converted as before, and the module stays NumPy-only and standalone.
"""

from __future__ import annotations

import subprocess
import sys
from typing import ClassVar

import numpy as np
import pytest

import symdiff as sd
from symdiff.runtime import _as_arrays

ELEMENTWISE = "x**2*sin(y) + log1p(exp(x*y))"
LOGISTIC = "sum(log(1 + exp(-y * (X @ w))))"
SHAPES = {"X": ("n", "d"), "y": ("n",), "w": ("d",)}


class _Device:
    """An array of another library, as far as NumPy sees it: ``__dlpack__`` and ``__array__``
    (which records that it was converted: a GPU tensor would have been copied to the host)."""

    converted: ClassVar[list[str]] = []

    def __init__(self, values):
        self.values = np.asarray(values, dtype=float)
        self.shape, self.dtype = self.values.shape, self.values.dtype

    def __dlpack__(self, stream=None):
        raise NotImplementedError

    def __array__(self, dtype=None, copy=None):
        _Device.converted.append("converted")
        return self.values


def _lazy(n: int, log: list[int]):
    """A Dask array of ``n`` points whose chunks append to ``log`` when they are computed."""
    da = pytest.importorskip("dask.array", reason="the dask extra is not installed")

    def block(b):
        log.append(b.size)
        return b

    return da.arange(float(n), chunks=n // 4).map_blocks(block, dtype=float, meta=np.empty(0))


# -- the usual arguments are not affected --------------------------------------------------------
def test_ndarrays_skip_the_helper_and_other_plain_arguments_convert_as_before():
    g = sd.grad(ELEMENTWISE)
    x, y = np.linspace(-1, 1, 7), np.linspace(0.5, 2, 7)
    want = g(x, y)
    assert "return _elementwise(_formulas, (x, y), threads=threads)" in g.source
    for args in [(x.tolist(), y.tolist()), (x, y.tolist()), (list(x), tuple(y))]:
        for got, ref in zip(g(*args), want, strict=True):
            np.testing.assert_array_equal(got, ref)
    at = [np.asarray(v) for v in g(0.3, 1.5)]  # the point path (Python floats)
    scalars = [(np.float64(0.3), np.float64(1.5)), (np.asarray(0.3), 1.5), (0.3, np.float64(1.5))]
    for args in scalars:
        for got, ref in zip(g(*args), at, strict=True):
            np.testing.assert_array_equal(got, ref)
    single = g(x.astype(np.float32), np.float32(1.5))
    assert all(d.dtype == np.float32 for d in single)  # float32 stays float32
    assert all(d.dtype == np.float64 for d in g(np.arange(3), 2))  # ints give float64


def test_as_arrays_converts_plain_values_and_names_a_ragged_list():
    x = np.ones(3)
    got = _as_arrays(("a", "b", "c", "d", "e"), x, 2.0, 3, np.float32(1.0), [1.0, 2.0])
    assert got[0] is x and all(type(a) is np.ndarray for a in got)
    assert [a.dtype for a in got[1:4]] == [np.float64, np.dtype(int), np.float32]
    with pytest.raises(sd.ShapeError, match="argument 'b' is not an array of one shape"):
        _as_arrays(("a", "b"), x, [[1.0], [1.0, 2.0]])
    with pytest.raises(sd.ArgumentError, match="argument 'x' is None"):  # refused later, as before
        sd.grad(ELEMENTWISE)(None, x)


# -- Dask ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "build",
    [
        lambda: sd.grad(ELEMENTWISE),
        lambda: sd.value_and_grad(ELEMENTWISE),
        lambda: sd.compile(ELEMENTWISE),
        lambda: sd.hessian(ELEMENTWISE),
        lambda: sd.jacobian([ELEMENTWISE, "x*y"]),
    ],
    ids=["grad", "value_and_grad", "compile", "hessian", "jacobian"],
)
def test_an_elementwise_function_refuses_dask_arrays_without_computing_them(build):
    g = build()
    log: list[int] = []
    lazy = _lazy(400, log)
    for call in (lambda: g(lazy, np.ones(400)), lambda: g(np.ones(400), y=lazy)):
        with pytest.raises(sd.ArgumentError, match="backend='array_api'") as caught:
            call()
        assert isinstance(caught.value, TypeError) and isinstance(caught.value, sd.SymdiffError)
        assert "is a Dask collection (dask.array" in str(caught.value)
    assert log == []  # no chunk was computed


def test_a_tensor_function_and_a_direction_refuse_dask_arrays():
    da = pytest.importorskip("dask.array", reason="the dask extra is not installed")
    log: list[int] = []
    y = _lazy(8, log)
    X, w = np.ones((8, 3)), np.ones(3)
    with pytest.raises(sd.ArgumentError, match="argument 'y' is a Dask collection"):
        sd.grad(LOGISTIC, wrt="w", shapes=SHAPES)(X, w, y)
    with pytest.raises(sd.ArgumentError, match="argument 'X' is a Dask collection"):
        sd.grad(LOGISTIC, wrt="w", shapes=SHAPES)(da.ones((8, 3), chunks=4), w, np.ones(8))
    with pytest.raises(sd.ArgumentError, match="argument '_v' is a Dask collection"):
        sd.hvp("x**2*y + y**3")(1.0, 2.0, da.ones((2, 3), chunks=1))
    assert log == []


def test_the_array_api_backend_still_takes_dask_arrays_lazily():
    da = pytest.importorskip("dask.array", reason="the dask extra is not installed")
    x = da.linspace(0.1, 1.0, 40, chunks=10)
    gx, _ = sd.grad(ELEMENTWISE, backend="array_api")(x, x)
    assert isinstance(gx, da.Array)
    want = sd.grad(ELEMENTWISE)(x.compute(), x.compute())
    np.testing.assert_allclose(gx.compute(), want[0], rtol=1e-12)


# -- other libraries' arrays -----------------------------------------------------------------------
def test_arrays_of_other_libraries_are_refused_before_they_are_converted():
    _Device.converted.clear()
    g = sd.grad(ELEMENTWISE)
    with pytest.raises(sd.ArgumentError, match=r"argument 'y' is an array of another library"):
        g(np.ones(3), _Device([1.0, 2.0, 3.0]))
    with pytest.raises(sd.ArgumentError, match="backend='array_api'"):
        sd.grad(LOGISTIC, wrt="w", shapes=SHAPES)(_Device(np.ones((2, 3))), np.ones(3), np.ones(2))
    assert _Device.converted == []


def test_array_api_strict_arrays_are_refused():
    xps = pytest.importorskip("array_api_strict", reason="array-api-strict is not installed")
    with pytest.raises(sd.ArgumentError, match="array_api_strict"):
        sd.grad(ELEMENTWISE)(xps.asarray([1.0, 2.0]), xps.asarray([1.0, 2.0]))


def test_torch_tensors_are_refused():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (optional)")
    with pytest.raises(sd.ArgumentError, match="torch"):
        sd.grad(ELEMENTWISE)(torch.ones(3, dtype=torch.float64), np.ones(3))


# -- the module stays NumPy-only and standalone ----------------------------------------------------
SCRIPT = """
import importlib.util, sys
import numpy as np
spec = importlib.util.spec_from_file_location("saved", sys.argv[1])
saved = importlib.util.module_from_spec(spec)
spec.loader.exec_module(saved)
print(saved.grad_f(np.ones(2), [1.0, 2.0])[0].tolist())
class Device:
    def __dlpack__(self):
        raise NotImplementedError
    def __array__(self, dtype=None, copy=None):
        raise AssertionError("converted")
try:
    saved.grad_f(np.ones(2), Device())
except TypeError as error:
    print(type(error).__name__, "array_api" in str(error))
print("symdiff" in sys.modules)
"""


def test_a_saved_module_refuses_them_on_its_own(tmp_path):
    g = sd.grad(ELEMENTWISE)
    path = g.save(tmp_path / "saved.py")
    imports = [line for line in path.read_text().splitlines()
               if line.startswith(("import", "from"))]
    assert imports == ["import numpy as _np"]
    run = subprocess.run([sys.executable, "-I", "-c", SCRIPT, str(path)], capture_output=True,
                         text=True, cwd=tmp_path, timeout=120, check=True)
    first = [float(v) for v in g(np.ones(2), [1.0, 2.0])[0]]
    assert run.stdout.split("\n")[:3] == [str(first), "TypeError True", "False"]
