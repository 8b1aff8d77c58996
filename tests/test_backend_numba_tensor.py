"""``backend="numba"`` for tensor functions: the arithmetic of each elementwise statement (two
operations or more) is a Numba ufunc of its own (``_fused0(...)``), its functions (``exp``,
``tanh``) NumPy's SIMD loops, matrix products and reductions NumPy (BLAS) calls. Every
builder gives the NumPy backend's values (to 1e-13 relative), dtypes and types; float32 stays
float32; a function with no Numba formula is computed by NumPy; bad arguments raise the NumPy
backend's errors; the module reads as NumPy statements and small ufuncs and is verified;
normal data raise no floating-point warning."""

from __future__ import annotations

import textwrap
import warnings

import numpy as np
import pytest

import symdiff as sd
from symdiff.verify import VerificationError, check_module

from .tensor_cases import LOGISTIC, LOGISTIC_SHAPES, MLP, MLP_SHAPES

pytest.importorskip("numba", reason="Numba is not installed (the numba extra)")

SIZES = {"n": 9, "d": 3, "k": 4, "h": 5}
CASES = [
    (LOGISTIC, LOGISTIC_SHAPES, "w", (sd.grad, sd.value_and_grad, sd.hessian, sd.hvp)),
    (MLP, MLP_SHAPES, ["W1", "b1", "W2", "b2"], (sd.grad, sd.value_and_grad)),
    ("sum(x[1:] * x[:-1]) + sum(cumsum(x)**2) + sum(softmax(x, axis=0) * x)", {"x": ("n",)},
     "x", (sd.grad, sd.hessian)),
    ("sum(relu(X @ W) @ v)", {"X": ("n", "d"), "W": ("d", "h"), "v": ("h",)}, ["W", "v"],
     (sd.grad,)),
    ("sum(sigmoid(X @ w) * y + softplus(X @ w) * erf(y) + where(X @ w > 0, X @ w, 0.5*y)"
     " + tanh(X @ w) / cosh(y))", LOGISTIC_SHAPES, "w", (sd.grad, sd.hessian)),
]


def _values(shapes, seed=7):
    rng = np.random.default_rng(seed)
    values = {name: rng.normal(size=[SIZES[d] for d in dims]) for name, dims in shapes.items()}
    if "y" in values:
        values["y"] = np.sign(values["y"]) * (1.0 + 0.1 * rng.uniform(size=values["y"].shape))
    return values


def _leaves(value):
    if isinstance(value, tuple):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def _same(ours, reference, rtol=1e-13):
    got, expected = _leaves(ours), _leaves(reference)
    assert len(got) == len(expected)
    for a, b in zip(got, expected, strict=True):
        assert type(a) is type(b) and np.shape(a) == np.shape(b)
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-15)


def _calls(builder, expr, wrt, shapes, values):
    args = dict(values)
    if builder is sd.hvp:
        args["_v"] = np.linspace(-1.0, 1.0, SIZES["d"])
    return args


@pytest.mark.parametrize(("expr", "shapes", "wrt", "builders"), CASES,
                         ids=["logistic", "mlp", "slices", "relu", "functions"])
def test_every_builder_gives_the_numpy_backends_values(expr, shapes, wrt, builders):
    values = _values(shapes)
    for builder in builders:
        ours = builder(expr, wrt=wrt, shapes=shapes, backend="numba")
        reference = builder(expr, wrt=wrt, shapes=shapes)
        args = _calls(builder, expr, wrt, shapes, values)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no floating-point warning on normal data
            _same(ours(**args), reference(**args))
        single = {k: np.asarray(v, dtype=np.float32) for k, v in args.items()}
        for leaf in _leaves(ours(**single)):
            assert np.asarray(leaf).dtype == np.float32
        _same(ours(**single), reference(**single), rtol=2e-6)


def test_the_elementwise_statement_is_a_ufunc_and_the_products_stay_blas():
    g = sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES, backend="numba")
    source = g.source
    assert "import numba as _numba" in source and "\n_numba_ready()\n" in source
    assert "_t0 = X @ w" in source and "_w_bar = X.T @ _t3" in source
    # the arithmetic around exp in two ufuncs; exp itself NumPy's (SIMD) loop
    assert "_t1 = _fused0(y, _t0).astype(_dtype, copy=False)" in source
    assert "_t2 = _np.exp(_t1)" in source
    assert "_t3 = _fused1(y, _t2).astype(_dtype, copy=False)" in source
    assert "@_numba.vectorize(cache=True)\ndef _fused0(y, _t0):" in source
    assert "return _np.minimum(88, _t0*y)" in source and "return -y/(_t2 + 1)" in source
    check_module(source)
    for before, after in [
        ("@_numba.vectorize(cache=True)", "@_numba.vectorize(cache=True, fastmath=True)"),
        ("    return -y/", "    y = 1\n    return -y/"),
        ("return -y/(_t2 + 1)", "return -y/(__import__('os').system(_t2) + 1)"),
        (".astype(_dtype, copy=False)", ".astype(_dtype, copy=False).tofile('x')"),
        ("def _fused0(y, _t0):", "def _loop(y, _t0):"),
        ("\n_numba_ready()\n", "\n"),
    ]:
        assert before in source
        with pytest.raises(VerificationError):
            check_module(source.replace(before, after, 1))
    numpy_module = sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES).source
    with pytest.raises(VerificationError):  # no ufunc in a NumPy module
        check_module(numpy_module + "\n\n@_numba.vectorize(cache=True)\ndef _fused0(y):\n"
                     "    return y\n")


def test_a_function_with_no_numba_formula_is_numpys_and_nothing_fused_is_a_numpy_module():
    """The derivative of ``loggamma`` calls the runtime's ``_polygamma`` (no Numba formula):
    NumPy computes it, a ufunc the arithmetic around it; a function with nothing to fuse is a
    NumPy module."""
    shapes = {"x": ("n",), "y": ("n",)}
    text = "sum(loggamma(x**2 + 1)*y + exp(-x*y)*y)"
    g = sd.grad(text, wrt="x", shapes=shapes, backend="numba")
    assert "= _polygamma(0, " in g.source and "@_numba.vectorize" in g.source
    values = {"x": np.linspace(0.5, 2.0, 5), "y": np.linspace(-1.0, 1.0, 5)}
    _same(g(**values), sd.grad(text, wrt="x", shapes=shapes)(**values))
    plain = sd.grad("sum(x*y)", wrt="x", shapes=shapes, backend="numba")
    assert "numba" not in plain.source
    _same(plain(**values), values["y"])


def test_bad_arguments_raise_the_numpy_backends_errors():
    ours = sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES, backend="numba")
    reference = sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)
    good = _values(LOGISTIC_SHAPES)
    for bad in [{**good, "w": np.ones(4)}, {**good, "X": "a"}, {**good, "y": good["y"] + 1j}]:
        with pytest.raises(sd.SymdiffError) as expected:
            reference(**bad)
        with pytest.raises(type(expected.value)) as got:
            ours(**bad)
        assert str(got.value) == str(expected.value)


def test_a_step_with_a_number_argument_is_fused_with_its_arithmetic():
    """relu's derivative ``Heaviside(x, 0)`` compiles to instructions: it stays in the ufunc
    of the arithmetic around it, not computed apart by NumPy in a pass of its own; ``exp``
    is computed apart."""
    import sympy as sp

    from symdiff.tensor.fused import Fuser

    x, y = sp.symbols("x y")
    names = (f"_s{k}" for k in range(100))
    lines, value = Fuser().split(sp.Heaviside(x, 0) * y + x, lambda e: "numpy", names)
    assert lines == [] and value == sp.Heaviside(x, 0) * y + x
    lines, _ = Fuser().split(sp.exp(x) * y + x, lambda e: "numpy", names)
    assert [code for _, code in lines] == ["numpy"]


def test_a_fused_statement_is_never_printed_as_numpy_code():
    """The fuser asks for a statement's NumPy code only when it keeps it (a function such as
    ``exp``, or a single operation)."""
    import sympy as sp

    from symdiff.tensor.fused import Fuser

    x, y = sp.symbols("x y")

    def unused(expr):
        raise AssertionError(f"{expr} printed as NumPy code")

    assert Fuser().code(x * y + x, unused) == "_fused0(x, y).astype(_dtype, copy=False)"
    assert Fuser().code(sp.exp(x) * y + x, lambda expr: "numpy") == "numpy"
    assert Fuser().code(x * y, lambda expr: "numpy") == "numpy"


def test_building_reports_the_ufuncs_compiled_and_those_numbas_cache_gave(tmp_path,
                                                                            monkeypatch):
    """Each ufunc of a module is compiled when the function is built, or loaded from Numba's
    cache beside the module's file when a module of that file was compiled before; a ufunc
    that reads a condition (booleans, which float zeros cannot stand for) compiles on its
    first call."""
    import ast
    import importlib.util
    import sys

    from symdiff.codegen.load import compile_ufuncs

    text = textwrap.dedent('''
        import numba as _numba
        from symdiff.runtime import _numba_ready, _select

        _numba_ready()


        @_numba.vectorize(cache=True)
        def _fused0(x, y):
            """The formula of an elementwise statement, at one element."""
            return x*y + 1


        @_numba.vectorize(cache=True)
        def _fused1(_t0, x):
            """The formula of an elementwise statement, at one element."""
            return _select(_t0, x, -x)
    ''')
    path = tmp_path / "fused_module.py"
    path.write_text(text, encoding="utf-8")
    counts = []
    for copy in range(2):  # (the second module of the file finds the first's machine code)
        spec = importlib.util.spec_from_file_location(f"fused_module_{copy}", path)
        module = importlib.util.module_from_spec(spec)
        monkeypatch.setitem(sys.modules, spec.name, module)  # (as symdiff registers its own)
        spec.loader.exec_module(module)
        counts.append(compile_ufuncs(vars(module), ast.parse(text)))
    assert counts == [{"ufuncs compiled": 1, "on the first call": 1},
                      {"from Numba's cache": 1, "on the first call": 1}]
