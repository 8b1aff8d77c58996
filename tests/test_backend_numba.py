"""``backend="numba"``: the formulas as one scalar function and a loop over the elements that
Numba compiles. Every builder agrees with the NumPy backend to 4 ulp or 1e-14 relative, on
broadcast arrays, at a point, in float32 and on the property tests' random expressions; bad
arguments raise the NumPy backend's errors; the module reads as a loop, is verified, and its
compiled code is cached on disk so that a second process loads it without compiling."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings

import symdiff as sd
from symdiff.verify import VerificationError, check_module

from .conftest import ROOT, X, Y, Z
from .test_property import _reference, expressions, points

numba = pytest.importorskip("numba", reason="Numba is not installed (the numba extra)")

EXPR = "x**3*y - atan2(y, x) + log1p(x**2) + sigmoid(x*y) + max(x, y) + where(x > y, x, y**2)"
BUILDERS = [sd.compile, sd.grad, sd.value_and_grad, sd.jacobian, sd.hessian, sd.hvp]


def _leaves(value):
    if isinstance(value, tuple):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def _agree(ours, reference, ulps: float = 4.0) -> None:
    """Each array of ``ours`` has the type, shape and dtype of ``reference``'s, and each value
    is within ``ulps`` units in the last place of it or 1e-14 of it relative (nan where it is
    nan, the same infinities)."""
    ours, reference = _leaves(ours), _leaves(reference)
    assert len(ours) == len(reference)
    for a, b in zip(ours, reference, strict=True):
        assert type(a) is type(b)
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
        a64, b64 = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        assert np.array_equal(np.isnan(a64), np.isnan(b64))
        finite = np.isfinite(b64)
        assert np.array_equal(a64[~finite & ~np.isnan(b64)], b64[~finite & ~np.isnan(b64)])
        gap = np.abs(a64[finite] - b64[finite])
        bound = np.maximum(ulps * np.spacing(np.abs(b[finite])).astype(float),
                           1e-14 * np.abs(b64[finite]))
        assert np.all(gap <= bound), (a64[finite][gap > bound], b64[finite][gap > bound])


def _built(builder, expr=EXPR, **options):
    exprs = [expr, "x*y"] if builder is sd.jacobian else expr
    return builder(exprs, backend="numba", **options), builder(exprs, **options)


def _direction(builder, shape, dtype=float):
    if builder is not sd.hvp:
        return ()
    return (np.random.default_rng(5).normal(size=(2, *shape)).astype(dtype),)


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda b: b.__name__)
def test_every_builder_agrees_with_the_numpy_backend_on_broadcast_arrays(builder):
    ours, reference = _built(builder)
    x, y = np.linspace(-1.5, 2.0, 7), np.linspace(0.3, 1.7, 3)[:, None]
    v = _direction(builder, (3, 7))
    _agree(ours(x, y, *v), reference(x, y, *v))
    # one argument a number, the other an array of another layout (a transposed view)
    grid = np.linspace(0.1, 3.0, 12).reshape(3, 4).T
    v = _direction(builder, (4, 3))
    _agree(ours(grid, 0.7, *v), reference(grid, 0.7, *v))


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda b: b.__name__)
def test_at_a_point_the_outputs_are_those_of_the_numpy_backend(builder):
    """Python floats, NumPy scalars and ints in: 0-d arrays out, as on the NumPy backend."""
    ours, reference = _built(builder)
    v = tuple(d[:, 0, 0] for d in _direction(builder, (1, 1)))
    for point in [(1.25, 0.5), (np.float64(-0.75), 2), (3, 4)]:
        _agree(ours(*point, *v), reference(*point, *v))


@pytest.mark.parametrize("builder", [sd.grad, sd.hessian], ids=lambda b: b.__name__)
def test_float32_stays_float32_and_integers_give_float64(builder):
    """float32 arguments give float32 outputs (the loop's arithmetic may be float64, rounded
    once at the end: within 4 float32 ulp of the float64 result); ints give float64."""
    ours, reference = _built(builder, "sin(x)*exp(y)/(1 + x**2)")
    x = np.linspace(-2.0, 2.0, 9, dtype=np.float32)
    y = np.float32(0.5)
    got = ours(x, y)
    for leaf, exact in zip(_leaves(got), _leaves(reference(x.astype(float), float(y))),
                           strict=True):
        assert leaf.dtype == np.float32
        _agree(leaf, exact.astype(np.float32))
    _agree(ours(np.arange(4), 2), reference(np.arange(4), 2))
    assert all(leaf.dtype == np.float64 for leaf in _leaves(ours(np.arange(4), 2)))


def test_bad_arguments_raise_the_numpy_backends_errors():
    ours, reference = _built(sd.grad, "x*y")
    for bad in [("a", 1.0), (np.ones(3), np.ones(4)), (1 + 2j, 1.0), (np.ones(2), [1, "b"])]:
        with pytest.raises(sd.SymdiffError) as expected:
            reference(*bad)
        with pytest.raises(type(expected.value)) as got:
            ours(*bad)
        assert str(got.value) == str(expected.value)
    with pytest.raises(TypeError):
        ours(1.0)
    for threads in (0, 1.5, "2"):
        with pytest.raises(sd.SymdiffError, match="threads must be"):
            ours(1.0, 2.0, threads=threads)


def test_threads_give_the_same_results_bit_for_bit():
    ours, _ = _built(sd.value_and_grad, "sin(x)*exp(y)/(1 + x**2) + sqrt(x*x + y*y)")
    x = np.random.default_rng(1).normal(size=5000)
    one, two = ours(x, 0.25, threads=1), ours(x, 0.25, threads=2)
    for a, b in zip(_leaves(one), _leaves(two), strict=True):
        assert np.array_equal(a, b)


def test_an_output_is_never_an_argument_nor_shared_between_calls():
    ours, _ = _built(sd.grad, "x + y")
    x = np.ones(3)
    gx, _ = ours(x, x)
    assert gx is not x and not np.shares_memory(gx, x)
    gx[:] = 5.0
    assert np.array_equal(ours(x, x)[0], np.ones(3))


def test_out_of_domain_points_give_nan_and_inf_not_exceptions():
    ours, reference = _built(sd.grad, "log(x)/y + sqrt(x)")
    x = np.array([-1.0, 0.0, 1.0])
    with np.errstate(all="ignore"):
        _agree(ours(x, np.array([0.0, 1.0, 2.0])), reference(x, np.array([0.0, 1.0, 2.0])))


@settings(max_examples=6, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(expr=expressions, point=points)
def test_random_gradients_agree_with_the_numpy_backend(expr, point):
    """The property tests' random expressions: the Numba module's gradient is the NumPy
    module's to 4 ulp or 1e-14 relative, or, where a formula amplifies the last bits of a
    function's value (``1 - tanh(u)**2`` at ``tanh(u) = -0.998``: 400 times), at least as close
    to the exact derivative (mpmath) as the NumPy module's; or the builder refuses, naming a
    function with no Numba formula."""
    try:
        ours = sd.grad(expr, backend="numba", simplify=False)
    except sd.UnsupportedError as error:
        assert "backend='numba'" in str(error)
        assume(False)
    reference = sd.grad(expr, simplify=False)
    values = dict(zip("xyz", point, strict=True))
    arrays = {a: np.array([values[a], values[a] / 2 + 0.1]) for a in reference.args}
    with np.errstate(all="ignore"):
        got, expected = _leaves(ours(**arrays)), _leaves(reference(**arrays))
    at = [point, tuple(v / 2 + 0.1 for v in point)]
    for name, a, b in zip(reference.wrt, got, expected, strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape
        for j in range(2):
            if _within(a[j], b[j]):
                continue
            exact = _reference(expr, {"x": X, "y": Y, "z": Z}[name], at[j])
            slack = 4 * np.spacing(abs(exact))
            assert abs(a[j] - exact) <= 2 * abs(b[j] - exact) + slack, (a[j], b[j], exact)


def _within(a: float, b: float, ulps: float = 4.0) -> bool:
    """``a`` within ``ulps`` units in the last place of ``b`` or 1e-14 of it relative (the same
    nan or infinity)."""
    if np.isnan(b) or not np.isfinite(b):
        return bool(np.isnan(a) and np.isnan(b)) or a == b
    return bool(abs(a - b) <= max(ulps * np.spacing(abs(b)), 1e-14 * abs(b)))


def test_the_source_is_the_formulas_in_a_loop_and_is_verified():
    g = sd.grad("sin(x)*exp(y)/(1 + x**2)", backend="numba")
    source = g.source
    assert "import numba as _numba" in source
    assert "def _loop(x, y, _out, _start, _stop):" in source
    assert "    for _i in range(_start, _stop):" in source
    assert "_out[0][_i], _out[1][_i] = _formulas(_at(x, _i), _at(y, _i))" in source
    assert source.count("_np.sin(x)") == 1  # each formula once
    assert "_exp(y)" in source and "_np.exp" not in source  # the vectorisable exp
    assert "\n_numba_ready()\n" in source
    check_module(source)
    for before, after in [
        ('fastmath=False', 'fastmath=True'),
        ("nogil=True", "nogil=True, parallel=True"),
        ("_formulas(_at(x, _i), _at(y, _i))", "_formulas(_at(x, _i + 1), _at(y, _i))"),
        ("_formulas(_at(x, _i), _at(y, _i))", "_formulas(x[_i], _at(y, _i))"),
        ("range(_start, _stop)", "range(10**9)"),
        ("\n_numba_ready()\n", "\n_numba_ready()\n_numba_ready()\n"),
        ("\n_numba_ready()\n", "\n"),
        ("    return (_x_bar, _y_bar)", "    return __import__('os')"),
        # a choice is the runtime's _select, never a jump symdiff does not write
        ("    return (_x_bar, _y_bar)", "    return (_x_bar if x else _y_bar, _y_bar)"),
        ("    return (_x_bar, _y_bar)", "    return (_x_bar and _y_bar, _y_bar)"),
    ]:
        assert before in source
        with pytest.raises(VerificationError):
            check_module(source.replace(before, after, 1))
    numpy_module = sd.grad("sin(x)*exp(y)/(1 + x**2)").source
    with pytest.raises(VerificationError):
        check_module(numpy_module.replace("import numpy as _np", "import numba as _numba\n"
                                          "import numpy as _np"))


def test_functions_without_a_numba_formula_are_refused_by_name():
    with pytest.raises(sd.UnsupportedError, match=r"polygamma.*backend='numba'"):
        sd.grad("loggamma(x)", backend="numba")
    with pytest.raises(sd.UnsupportedError, match=r"gamma.*backend='numba'"):
        sd.compile("gamma(x)", backend="numba")


def test_the_special_functions_with_a_numba_formula_agree():
    ours, reference = _built(sd.grad, "erf(x)*y + erfc(y) + softplus(x - y) + relu(x)")
    x, y = np.linspace(-3.0, 3.0, 13), np.linspace(-1.0, 2.0, 13)
    _agree(ours(x, y), reference(x, y))


def test_formulas_with_many_symbolic_powers_are_compiled_apart_from_the_loop():
    """``x**y`` is a call of the C library's ``pow``, as ``x**(1/3)`` and ``sin`` are: formulas
    that make more than ``INLINE_CALLS`` of them are compiled apart from the loop, fewer inline;
    either way the numbers are the NumPy backend's."""
    from symdiff.codegen.loops import APART_JIT, INLINE_CALLS, JIT

    x, y = np.linspace(0.5, 2.0, 9), np.linspace(-1.0, 1.5, 9)
    for count, decorator in [(INLINE_CALLS, JIT), (INLINE_CALLS + 1, APART_JIT)]:
        text = " + ".join(f"x**(y + {k})" for k in range(count))
        ours, reference = _built(sd.compile, text)
        formulas = ours.source.split("def _formulas(")[0].rstrip().rsplit("\n", 1)[-1]
        assert formulas == decorator, (count, formulas)
        _agree(ours(x, y), reference(x, y))


def _run(code: str, env: dict[str, str]) -> dict:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env,
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "stderr": done.stderr}


def test_a_second_process_loads_the_compiled_code_from_disk(tmp_path):
    """Numba's cache beside the module's file: the second process finds the first's machine
    code (cache hits, no misses) and neither imports numba for ``import symdiff``; the first
    build reports the loop's compile time, the second nothing."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SYMDIFF_CACHE_DIR": str(tmp_path / "c"),
           "SYMDIFF_SOURCE_DIR": str(tmp_path / "s"), "SYMDIFF_PROGRESS": "0.001"}
    code = """
        import json, sys
        import numpy as np
        import symdiff as sd
        imported = "numba" in sys.modules
        g = sd.grad("x**2*y + exp(x/y)", backend="numba")
        g(np.linspace(0, 1, 5), 2.0)
        loop = g._fn.__globals__["_loop"]
        print(json.dumps({"imported": imported, "hits": sum(loop.stats.cache_hits.values()),
                          "misses": sum(loop.stats.cache_misses.values())}))
    """
    first, second = _run(code, env), _run(code, env)
    assert not first["imported"] and not second["imported"]
    # two kinds of arguments: every one a full array (compiled when the function is built)
    # and a number beside an array (compiled on the call)
    assert first["misses"] == 2 and first["hits"] == 0
    assert second["hits"] == 2 and second["misses"] == 0
    assert re.search(r"symdiff: numba \d+\.\d\d s \(loop compiled\)", first["stderr"])
    assert "symdiff: numba" not in second["stderr"]


@pytest.mark.parametrize("builder", BUILDERS, ids=lambda b: b.__name__)
def test_the_loop_compiled_when_the_function_is_built_is_the_one_a_call_runs(builder):
    """Building compiles the loop for what the runtime passes it on float64 arrays of the
    full shape (flat arguments, the outputs' layout, the bounds): such a call compiles
    nothing more."""
    ours, _ = _built(builder, "sin(x)*y + x**2")
    loop = ours._fn.__globals__["_loop"]
    assert len(loop.signatures) == 1
    x, y = np.linspace(-1.0, 1.0, 6), np.linspace(0.5, 2.0, 6)
    ours(x, y, *_direction(builder, (6,)))
    assert len(loop.signatures) == 1


def test_a_saved_module_runs_without_symdiff_and_gives_the_same_numbers(tmp_path):
    """``save()`` copies the runtime's helpers into the file; the module's call of
    ``_numba_ready()`` comes after them (before them it named nothing yet)."""
    for builder in (sd.value_and_grad, sd.hessian):
        ours, _ = _built(builder, "sin(x)*y + sigmoid(x*y) + log1p(x**2)")
        path = ours.save(tmp_path / f"{ours.name}.py")
        text = path.read_text(encoding="utf-8")
        assert "from symdiff" not in text and text.rstrip().endswith("_numba_ready()")
        namespace: dict = {"__name__": ours.name}
        exec(compile(text, str(path), "exec"), namespace)
        x = np.linspace(-2.0, 2.0, 70_001)
        for threads in (1, 2):
            got = namespace[ours.name](x, 0.5, threads=threads)
            for a, b in zip(_leaves(got), _leaves(ours(x, 0.5)), strict=True):
                assert np.array_equal(a, b)


def test_without_numba_the_backend_is_refused_with_how_to_install(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "numba" else real(name, *a))
    with pytest.raises(sd.SymdiffError, match=r"symdiff\[numba\]"):
        sd.grad("x*y", backend="numba", cache=False)
