"""``backend="array_api"``: modules that take the namespace of their arguments and call only the
Array API standard's functions. Conformance on array-api-strict arrays (which refuse anything
outside the standard), results equal to the NumPy backend to 1e-12 relative on the property
tests' random expressions and on the tensor cases, the verifier's per-backend allow-list, the
cache key, ``.save()``, PyTorch CPU tensors (optional) and CuPy (where a GPU is present)."""

from __future__ import annotations

import ast
import importlib.util

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings

import symdiff as sd
from symdiff.codegen.standard import STANDARD
from symdiff.verify import STANDARD_NAMES, VerificationError, check_module

from .tensor_cases import LOGISTIC, LOGISTIC_SHAPES, MLP, MLP_SHAPES
from .test_property import expressions, points

xp = pytest.importorskip("array_api_strict")

RTOL = 1e-12


def _close(ours, reference) -> None:
    ours, reference = np.asarray(ours, dtype=float), np.asarray(reference, dtype=float)
    scale = np.maximum(1.0, np.abs(reference))
    assert np.all(np.abs(ours - reference) <= RTOL * scale), (ours, reference)


def _numpy(value) -> np.ndarray:
    """An array of any namespace as NumPy (through DLPack, which array-api-strict offers)."""
    return np.from_dlpack(value)


@settings(max_examples=5, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(expr=expressions, point=points)
def test_random_gradients_on_strict_arrays_equal_numpy_backend(expr, point):
    """The property tests' expressions: the Array API module on array-api-strict arrays gives
    the NumPy module's gradient (or refuses, naming a function the standard lacks)."""
    _same_as_numpy_backend(expr, point, lambda v: xp.asarray(v), _numpy)


@settings(max_examples=5, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(expr=expressions, point=points)
def test_random_gradients_on_dask_arrays_equal_numpy_backend(expr, point):
    """The same on Dask arrays (one chunk per point: the NumPy module runs chunk by chunk)."""
    da = pytest.importorskip("dask.array")
    _same_as_numpy_backend(expr, point, lambda v: da.from_array(v, chunks=1),
                           lambda d: d.compute())


@settings(max_examples=5, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(expr=expressions, point=points)
def test_random_gradients_on_torch_tensors_equal_numpy_backend(expr, point):
    """The same on PyTorch CPU tensors (optional: skipped without torch)."""
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (optional)")
    _same_as_numpy_backend(expr, point, torch.from_numpy, lambda t: t.numpy())


def _same_as_numpy_backend(expr, point, convert, back) -> None:
    try:
        ours = sd.grad(expr, backend="array_api", simplify=False)
    except sd.UnsupportedError as error:
        assert "Array API" in str(error)
        assume(False)
    reference = sd.grad(expr, simplify=False)
    values = dict(zip("xyz", point, strict=True))
    arrays = {a: np.array([values[a], values[a] / 2 + 0.1]) for a in reference.args}
    expected = reference(**arrays)
    got = ours(**{a: convert(v) for a, v in arrays.items()})
    for g, e in zip(got if isinstance(got, tuple) else (got,),
                    expected if isinstance(expected, tuple) else (expected,), strict=True):
        assert type(g) is not np.ndarray  # the input's kind of array
        finite = np.isfinite(e)
        _close(back(g)[finite], e[finite])


@pytest.mark.parametrize("builder", [sd.compile, sd.grad, sd.value_and_grad, sd.hessian,
                                     sd.jacobian])
def test_every_builder_on_strict_arrays(builder):
    expr = "x**3*y - atan2(y, x) + log1p(x**2) + sigmoid(x*y) + max(x, y)"
    exprs = [expr, "x*y"] if builder is sd.jacobian else expr
    ours, reference = builder(exprs, backend="array_api"), builder(exprs)
    x, y = np.linspace(-1.5, 2.0, 6), np.linspace(0.3, 1.7, 6)[:, None]
    got, expected = ours(xp.asarray(x), xp.asarray(y)), reference(x, y)
    flat_got = got if isinstance(got, tuple) else (got,)
    flat_expected = expected if isinstance(expected, tuple) else (expected,)
    if builder is sd.value_and_grad:
        flat_got, flat_expected = (got[0], *got[1]), (expected[0], *expected[1])
    for g, e in zip(flat_got, flat_expected, strict=True):
        assert g.shape == e.shape
        _close(_numpy(g), e)


@pytest.mark.parametrize(("expr", "wrt"), [
    ("x**3*y - atan2(y, x) + log1p(x**2) + sigmoid(x*y)", ["x", "y"]),
    ("exp(x)*sin(y)*z + x*y*z**2", ["z", "x", "y"]),
    ("x**3*y", ["x"]),
    ("x**3*y", "x"),
])
def test_hessian_vector_products_on_strict_arrays(expr, wrt):
    """``sd.hvp`` on array-api-strict arrays: the direction's components are ``_v[i, ...]``
    (the standard has no flat indexing of the first axis; ``_v[i]`` was refused). A list of
    one name keeps the first axis (of size 1) on ``_v`` and the result, as on NumPy."""
    ours, reference = sd.hvp(expr, wrt=wrt, backend="array_api"), sd.hvp(expr, wrt=wrt)
    rng = np.random.default_rng(3)
    values = {name: rng.uniform(0.2, 1.5, size=5) for name in ours.args if name != "_v"}
    v = rng.normal(size=5) if isinstance(wrt, str) else rng.normal(size=(len(wrt), 5))
    got = ours(**{k: xp.asarray(a) for k, a in values.items()}, _v=xp.asarray(v))
    expected = reference(**values, _v=v)
    assert type(got).__module__.startswith("array_api_strict")
    assert got.shape == expected.shape == v.shape
    _close(_numpy(got), expected)


@pytest.mark.parametrize("backend", ["numpy", "array_api"])
def test_a_direction_with_the_wrong_number_of_components_is_refused(backend):
    """``_v`` must hold one component per ``wrt`` name on its first axis; a longer axis was cut
    silently on the Array API backend, and ``wrt=["x"]`` took ``_v`` whole on NumPy."""
    wrap = xp.asarray if backend == "array_api" else np.asarray
    two = sd.hvp("x**2*y", wrt=["x", "y"], backend=backend)
    with pytest.raises(sd.ShapeError, match="_v"):
        two(wrap([1.0, 2.0]), wrap([3.0, 4.0]), wrap(np.ones((3, 2))))
    one = sd.hvp("x**2*y", wrt=["x"], backend=backend)
    got = one(wrap([1.0, 2.0]), wrap([3.0, 4.0]), wrap([[1.0, -1.0]]))
    _close(_numpy(got), np.array([[6.0, -8.0]]))
    with pytest.raises(sd.ShapeError, match="_v"):
        one(wrap([1.0, 2.0]), wrap([3.0, 4.0]), wrap([1.0, -1.0]))


def test_tensor_hessian_vector_product_on_strict_arrays():
    ours = sd.hvp(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES, backend="array_api")
    reference = sd.hvp(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)
    rng = np.random.default_rng(4)
    values = {"X": rng.normal(size=(7, 3)), "y": rng.choice([-1.0, 1.0], 7),
              "w": rng.normal(size=3), "_v": rng.normal(size=3)}
    got = ours(**{k: xp.asarray(a) for k, a in values.items()})
    _close(_numpy(got), reference(**values))


def test_float32_stays_float32_and_integers_give_float64():
    g = sd.grad("x*exp(y)", backend="array_api")
    gx, _ = g(xp.asarray([1.0, 2.0], dtype=xp.float32), xp.asarray([0.5, 1.0], dtype=xp.float32))
    assert gx.dtype == xp.float32
    gx, gy = g(xp.asarray([1, 2]), 1.0)
    assert gx.dtype == xp.float64 and gy.shape == (2,)


@pytest.mark.parametrize(("expr", "shapes", "wrt"), [
    (LOGISTIC, LOGISTIC_SHAPES, "w"),
    (MLP, MLP_SHAPES, ["W1", "b1", "W2", "b2"]),
    ("sum(x[1:] * x[:-1]) + sum(cumsum(x)**2) + sum(softmax(x, axis=0) * x)", {"x": ("n",)}, "x"),
    # relu's step H(u, 0) (refused on this backend before it was written with sign)
    ("sum(relu(X @ W) @ v)", {"X": ("n", "d"), "W": ("d", "h"), "v": ("h",)}, ["W", "v"]),
])
def test_tensor_gradients_and_hessians_on_strict_arrays(expr, shapes, wrt):
    rng = np.random.default_rng(7)
    sizes = {"n": 9, "d": 3, "k": 4, "h": 5}
    values = {name: rng.normal(size=[sizes[d] for d in dims]) for name, dims in shapes.items()}
    if "y" in values and "Y" not in values:
        values["y"] = np.sign(values["y"])
    for builder in (sd.grad, sd.hessian) if isinstance(wrt, str) else (sd.grad,):
        ours = builder(expr, wrt=wrt, shapes=shapes, backend="array_api")
        reference = builder(expr, wrt=wrt, shapes=shapes)
        got = ours(**{k: xp.asarray(v) for k, v in values.items()})
        expected = reference(**values)
        for g, e in zip(got if isinstance(got, tuple) else (got,),
                        expected if isinstance(expected, tuple) else (expected,), strict=True):
            assert type(g).__module__.startswith("array_api_strict")
            _close(_numpy(g), e)


def test_relu_and_max_steps_on_strict_arrays():
    """The steps of relu (0 at 0) and of max's ties (1/2 at 0), elementwise, as NumPy's."""
    values = {"x": np.array([-1.5, 0.0, 0.5, 2.0]), "y": np.array([1.0, 0.0, 1.0, -3.0])}
    ours = sd.grad("relu(x)*y + max(x, y)", backend="array_api")
    expected = sd.grad("relu(x)*y + max(x, y)")(**values)
    got = ours(**{k: xp.asarray(v) for k, v in values.items()})
    for g, e in zip(got, expected, strict=True):
        _close(_numpy(g), e)


@pytest.mark.parametrize(("expr", "shapes", "named"), [
    ("sum(x[[0, 2, 2]]**2)", {"x": ("n",)}, "bincount"),
    ("norm(x)", {"x": ("n",)}, "linalg.norm"),
    ("erf(x) * y", None, "erf"),
    ("gamma(x)", None, "gamma"),
])
def test_operations_outside_the_standard_are_refused_by_name(expr, shapes, named):
    with pytest.raises(sd.UnsupportedError, match=named) as caught:
        sd.grad(expr, shapes=shapes, backend="array_api", cache=False)
    assert "backend='array_api'" in str(caught.value)


def test_unknown_backend_is_an_error():
    with pytest.raises(sd.SymdiffError, match="backend must be one of"):
        sd.grad("x*y", backend="cupy")


def test_cache_key_and_source_differ_by_backend_and_save_imports_compat_only(tmp_path):
    numpy_fn, standard_fn = sd.grad("x*sin(y)"), sd.grad("x*sin(y)", backend="array_api")
    assert numpy_fn.source != standard_fn.source
    assert "backend=array_api" not in numpy_fn.recipe.options.code_key()
    assert standard_fn.recipe.options.backend == "array_api"
    imports = {ast.unparse(n) for n in ast.parse(standard_fn.source).body
               if isinstance(n, ast.Import | ast.ImportFrom)}
    assert imports == {"from symdiff.runtime import _xp_elementwise"}
    assert {ast.unparse(n) for n in ast.parse(numpy_fn.source).body
            if isinstance(n, ast.Import)} == {"import numpy as _np"}
    assert {ast.unparse(n) for n in ast.parse(standard_fn.standalone_source).body
            if isinstance(n, ast.Import | ast.ImportFrom)} == {"import array_api_compat as _xpc"}
    path = standard_fn.save(tmp_path / "grad_standard.py")
    spec = importlib.util.spec_from_file_location("grad_standard", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # runs on its own
    _, gy = module.grad_f(xp.asarray([1.0, 2.0]), xp.asarray([0.5, 0.25]))
    _close(_numpy(gy), np.array([1.0, 2.0]) * np.cos([0.5, 0.25]))


def test_verifier_allow_list_is_per_backend():
    source = sd.grad("x*exp(y)", backend="array_api").source
    check_module(source)
    for tampered in (
        source.replace("_xp.exp(y)", "_xp.einsum(y)"),  # not the standard's
        source.replace("_xp.exp(y)", "_np.exp(y)"),  # NumPy in an Array API module
        source.replace("_xp.exp(y)", "_xp.exp(y, out=y)"),
        source.replace("from symdiff.runtime import _xp_elementwise",
                       "import numpy as _np\nfrom symdiff.runtime import _xp_elementwise"),
        source.replace("def _formulas(x, y, _xp):", "def _formulas(x, y, _xp=print):"),
        source.replace("    _x_bar = _xp.exp(y)", "    _xp = x\n    _x_bar = _xp.exp(y)"),
    ):
        assert tampered != source
        with pytest.raises(VerificationError):
            check_module(tampered)
    numpy_source = sd.grad("x*exp(y)").source
    assert "_np.exp(y, out=_out[0])" in numpy_source
    with pytest.raises(VerificationError):
        check_module(numpy_source.replace("_np.exp(y, out=_out[0])", "_xp.exp(y)"))


def test_dialect_table_and_verifier_list_agree():
    assert set(STANDARD.values()) <= STANDARD_NAMES
    assert set(dir(xp)) | {"linalg." + n for n in dir(xp.linalg)} >= STANDARD_NAMES


def test_pytorch_cpu_tensors_come_back_as_tensors():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (optional)")
    g = sd.grad("x**2*sin(y) + log1p(exp(x))", backend="array_api")
    x = torch.linspace(-1, 1, 7, dtype=torch.float64)
    y = torch.linspace(0, 2, 7, dtype=torch.float64)
    gx, gy = g(x, y)
    assert isinstance(gx, torch.Tensor) and gx.dtype == torch.float64
    ex, ey = sd.grad("x**2*sin(y) + log1p(exp(x))")(x.numpy(), y.numpy())
    _close(gx.numpy(), ex)
    _close(gy.numpy(), ey)
    t = sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES, backend="array_api")
    rng = np.random.default_rng(3)
    X, w, y = rng.normal(size=(20, 4)), rng.normal(size=4), np.sign(rng.normal(size=20))
    got = t(torch.from_numpy(X), torch.from_numpy(w), torch.from_numpy(y))
    assert isinstance(got, torch.Tensor)
    _close(got.numpy(), sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)(X, w, y))


def test_cupy_arrays_stay_on_the_gpu():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed (needs a CUDA GPU)")
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # pragma: no cover - depends on the machine
        pytest.skip(f"no CUDA device: {error}")
    g = sd.grad("x**2*sin(y)", backend="array_api")  # pragma: no cover - needs a GPU
    gx, _ = g(cupy.linspace(-1, 1, 5), cupy.linspace(0, 1, 5))
    assert isinstance(gx, cupy.ndarray)


def test_bad_arguments_are_named():
    g = sd.grad("x*y", backend="array_api")
    with pytest.raises(TypeError, match="argument 'x'"):
        g("a", 1.0)
    with pytest.raises(ValueError, match="'x' and 'y'"):
        g(xp.ones(3), xp.ones(4))
    t = sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES, backend="array_api")
    with pytest.raises(sd.ShapeError, match="argument 'w'"):
        t(xp.ones((4, 3)), xp.ones(2), xp.ones(4))


@pytest.mark.parametrize("backend", ["numpy", "array_api"])
def test_a_gradient_made_of_conditions_keeps_float32(backend):
    """``where(y > 0, y, 0)``'s gradient is ``where(y > 0, 1.0, 0.0)``: Python numbers, so
    float64 unless the code says otherwise (it came back float64 for float32 ``y``); and the
    standard's ``where`` takes at most one Python number (array-api-strict refused it)."""
    g = sd.grad(lambda y: np.sum(np.where(y > 0, y, 0) + np.maximum(y, 1.0)),
                shapes={"y": (5,)}, backend=backend)
    y = np.linspace(-2.0, 2.0, 5).astype(np.float32)
    (got,) = g(xp.asarray(y) if backend == "array_api" else y)
    got = _numpy(got)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, (y > 0) + np.where(y > 1, 1.0, np.where(y == 1, 0.5, 0.0)))
