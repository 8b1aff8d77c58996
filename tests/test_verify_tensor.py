"""The inline shape test of tensor functions: what the verifier accepts, and that it checks
exactly what ``_check_shapes`` checks (which it calls, for the clear error, when it fails)."""

from __future__ import annotations

import random

import numpy as np
import pytest

import symdiff as sd
from symdiff.runtime import _check_shapes
from symdiff.verify import VerificationError, check_module

LOGISTIC = "sum(log(1 + exp(-y * (X @ w))))"
LOGISTIC_SHAPES = {"X": ("n", "d"), "y": ("n",), "w": ("d",)}
SOURCE = sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES, cache=False).source
CALL = "_check_shapes(('X', 'w', 'y'), (X, w, y), (('n', 'd'), ('d',), ('n',)), ())"
SCALAR = sd.grad("sin(x)*exp(y)", wrt=["x", "y"], cache=False).source


def _with_check(block: str, source: str = SOURCE) -> str:
    """``source`` with its ``if ...: _check_shapes(...)`` replaced by ``block`` (indented)."""
    lines = source.splitlines()
    start = next(
        i for i, line in enumerate(lines)
        if line.startswith("    if ") and lines[i + 1].strip().startswith("_check_shapes((")
    )
    new = ["    " + line for line in block.strip("\n").splitlines()]
    return "\n".join(lines[:start] + new + lines[start + 2 :]) + "\n"


def test_the_logistic_gradient_checks_shapes_inline():
    assert (
        "    if X.ndim != 2 or w.shape != X.shape[1:] or y.shape != X.shape[:1]:\n"
        f"        {CALL}\n    _t0 = X @ w\n"
    ) in SOURCE
    check_module(SOURCE)


@pytest.mark.parametrize(
    "test",
    [
        "X.ndim != 2",
        "X.ndim != 2 or w.shape != X.shape[1:] or y.shape != X.shape[:1]",
        "X.shape != (3, 2) or w.shape != (2,) or y.ndim != 1",
        "X.ndim != 2 or X.shape[1] != 2 or X.shape[-1] != w.shape[0] or y.shape[0:1] != (3,)",
        "X.ndim != 2 or X.shape[0] < 4 or _n_dim < 1 or X.shape[::1] != X.shape",
        "w.shape != ()",
    ],
)
def test_valid_shape_tests_pass(test):
    bound = "_n_dim, _d_dim = X.shape\n" if "_n_dim" in test else ""  # read only once bound
    check_module(_with_check(f"{bound}if {test}:\n    {CALL}"))


@pytest.mark.parametrize(
    "block",
    [
        # another body, or more than the call
        "if X.ndim != 2:\n    _t9 = X",
        "if X.ndim != 2:\n    pass",
        f"if X.ndim != 2:\n    {CALL}\n    _t9 = X",
        "if X.ndim != 2:\n    _np.exp(X)",
        "if X.ndim != 2:\n    _sigmoid(X)",
        "if X.ndim != 2:\n    _check_shapes",
        "if X.ndim != 2:\n    _check_shapes(_np.exec(X))",
        "if X.ndim != 2:\n    return X",
        # an else branch (or elif)
        f"if X.ndim != 2:\n    {CALL}\nelse:\n    {CALL}",
        f"if X.ndim != 2:\n    {CALL}\nelif w.ndim != 1:\n    {CALL}",
        # a call in the test
        f"if len(X) != 2:\n    {CALL}",
        f"if _np.ndim(X) != 2:\n    {CALL}",
        f"if X.shape.count(2) != 0:\n    {CALL}",
        f"if X.ndim != 2 or _check_shapes((), (), (), ()) != ():\n    {CALL}",
        # attributes other than ndim / shape, or of something other than a parameter
        f"if X.size != 2:\n    {CALL}",
        f"if X.dtype != 2:\n    {CALL}",
        f"if X.T.shape != (2, 3):\n    {CALL}",
        f"if _t0.shape != (2,):\n    {CALL}",
        f"if _np.pi.ndim != 0:\n    {CALL}",
        f"if Z.ndim != 2:\n    {CALL}",
        # other operators, operands and forms of test
        f"if X.ndim == 2:\n    {CALL}",
        f"if X.ndim > 2:\n    {CALL}",
        f"if X.ndim != 2 and w.ndim != 1:\n    {CALL}",
        f"if not X.ndim != 2:\n    {CALL}",
        f"if X.ndim:\n    {CALL}",
        f"if X.ndim != 2.0:\n    {CALL}",
        f"if X.shape != ('n', 'd'):\n    {CALL}",
        f"if X.shape != (w.ndim,):\n    {CALL}",
        f"if X.shape[_n_dim] != 2:\n    {CALL}",
        f"if X.shape[:_n_dim] != ():\n    {CALL}",
        f"if X.ndim != (X := 2):\n    {CALL}",
        f"if X.ndim != 2 or _np != 2:\n    {CALL}",
        f"if X.ndim != 2 or _check_shapes != 2:\n    {CALL}",
    ],
)
def test_tampered_shape_tests_are_refused(block):
    with pytest.raises(VerificationError):
        check_module(_with_check(block))


@pytest.mark.parametrize(
    "line",
    [
        "if x.ndim != 0:\n        _t9 = x",
        "_t9 = x.ndim",
        "if x.dtype is not _FLOAT64:\n        (x,) = _float_arrays(('x',), x)",  # tensor prelude
        "_t9 = _np.exp(x, out=_t9)",  # in place
        "_t9 = _np.add.reduce(x, axis=None)",
    ],
)
def test_scalar_modules_may_not_use_the_forms_only_tensor_code_needs(line):
    marker = "    return _elementwise("
    assert marker in SCALAR
    with pytest.raises(VerificationError):
        check_module(SCALAR.replace(marker, f"    {line}\n{marker}", 1))


def test_ndim_is_only_an_attribute_of_parameters():
    check_module(_with_check(f"if X.ndim != 2:\n    {CALL}\n_t9 = X.ndim"))
    with pytest.raises(VerificationError):
        check_module(_with_check(f"if X.ndim != 2:\n    {CALL}\n_t9 = _t0.ndim"))


def _counting(f):
    """Make the generated function count its calls of ``_check_shapes``; returns the count."""
    calls = [0]
    slow = f._fn.__globals__["_check_shapes"]

    def counted(*args):
        calls[0] += 1
        return slow(*args)

    f._fn.__globals__["_check_shapes"] = counted
    return calls


def test_fast_check_accepts_exactly_what_check_shapes_accepts():
    """Random declared shapes (shared named dimensions, fixed sizes, scalars, literal
    indices) and random, sometimes wrong, argument shapes: the function raises the clear
    ValueError of ``_check_shapes`` exactly when that helper does, never falls back to it on
    good shapes, and binds the right sizes."""
    rng = random.Random(5)
    dims = ["n", "m", 1, 2, 3]
    for _ in range(60):
        names = [f"a{i}" for i in range(rng.randint(1, 4))]
        shapes = {p: tuple(rng.choice(dims) for _ in range(rng.randint(0, 3))) for p in names}
        terms = [f"mean({p})" if shapes[p] else p for p in names]  # mean: divides by the size
        needs: tuple = ()
        indexed = [p for p in names if shapes[p] and isinstance(shapes[p][0], str)]
        if indexed and rng.random() < 0.6:
            p, k = rng.choice(indexed), rng.randint(0, 3)
            terms.append(f"sum({p}[{k}])")
            needs = ((shapes[p][0], k + 1),)
        f = sd.compile(" + ".join(terms), shapes=shapes, cache=False)
        calls = _counting(f)
        for _ in range(15):
            sizes = {"n": rng.randint(1, 5), "m": rng.randint(1, 5)}
            args = {}
            for p in names:
                shape = [sizes[d] if isinstance(d, str) else d for d in shapes[p]]
                if rng.random() < 0.3:
                    if shape and rng.random() < 0.4:
                        shape[rng.randrange(len(shape))] = rng.randint(1, 5)
                    elif shape and rng.random() < 0.5:
                        shape.pop()
                    else:
                        shape.append(rng.randint(1, 3))
                args[p] = np.arange(float(np.prod(shape, dtype=int))).reshape(shape) + 1.0
            try:
                _check_shapes(tuple(names), tuple(args.values()),
                              tuple(shapes.values()), needs)
                error = None
            except ValueError as caught:
                error = str(caught)
            before = calls[0]
            if error is not None:
                with pytest.raises(ValueError) as info:
                    f(**args)
                assert str(info.value) == error
                assert calls[0] == before + 1
                continue
            got = f(**args)
            assert calls[0] == before, (shapes, {p: a.shape for p, a in args.items()})
            want = sum(np.mean(args[p]) for p in names)
            if len(terms) > len(names):
                p, k = terms[-1][4:-2].split("[")
                want += np.sum(args[p][int(k)])
            np.testing.assert_allclose(got, want, rtol=1e-12)


def test_named_dimensions_are_bound_from_the_checked_shapes():
    shapes = {"A": (2, "n"), "B": ("m", "m"), "c": ("m",)}
    g = sd.grad("mean(A) + mean(B @ c)", shapes=shapes, cache=False)  # 1/n and 1/m
    for line in ("_A_shape = A.shape", "_n_dim = _A_shape[1]", "_m_dim = _B_shape[0]"):
        assert f"    {line}\n" in g.source
    A, B, c = np.ones((2, 3)), np.full((4, 4), 2.0), np.ones(4)
    dA, dB, dc = g(A, B, c)
    np.testing.assert_allclose(dA, np.full((2, 3), 1 / 6))
    np.testing.assert_allclose(dB, np.full((4, 4), 1 / 4))
    np.testing.assert_allclose(dc, np.full(4, 2.0))
    with pytest.raises(ValueError, match=r"argument 'B' has shape \(4, 3\), expected \(m, m\)"):
        g(A, np.ones((4, 3)), c)
    with pytest.raises(ValueError, match="dimension 'm' is 4"):
        g(A, B, np.ones(3))
    with pytest.raises(ValueError, match=r"argument 'A' has shape \(3,\)"):
        g(np.ones(3), B, c)


def test_calls_bind_arguments_like_the_generated_function():
    g = sd.grad("x * y**2", cache=False)
    want = g._fn(2.0, 3.0)
    for got in (g(2.0, 3.0), g(x=2.0, y=3.0), g(2.0, y=3.0), g.__call__(2.0, 3.0)):
        np.testing.assert_allclose(got, want)
    for bad in ((2.0,), (2.0, 3.0, 4.0)):
        with pytest.raises(TypeError):
            g(*bad)
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        g(2.0, 3.0, z=1.0)
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        g(2.0, x=3.0)
    assert callable(g)


# -- the argument prelude: float64 ndarrays pass two identity tests, the rest is converted ------
PRELUDE = (
    "    if (\n"
    "        X.__class__ is not _np.ndarray or X.dtype is not _FLOAT64\n"
    "        or w.__class__ is not _np.ndarray or w.dtype is not _FLOAT64\n"
    "        or y.__class__ is not _np.ndarray or y.dtype is not _FLOAT64\n"
    "    ):\n"
    "        X, w, y = _float_arrays(('X', 'w', 'y'), X, w, y)\n"
)


def _with_prelude(block: str) -> str:
    assert PRELUDE in SOURCE
    new = "".join("    " + line + "\n" for line in block.strip("\n").splitlines())
    return SOURCE.replace(PRELUDE, new, 1)


@pytest.mark.parametrize(
    "block",
    [
        "if X.__class__ is not _np.ndarray:\n    X, w, y = _float_arrays(('X', 'w', 'y'), X, w, y)",
        "if y.dtype is not _FLOAT64 or X.dtype is not _FLOAT64:\n"
        "    (X,) = _float_arrays(('X',), X)",
    ],
)
def test_valid_preludes_pass(block):
    check_module(_with_prelude(block))


@pytest.mark.parametrize(
    "block",
    [
        "if X.__class__ is _np.ndarray:\n    X, w, y = _float_arrays(('X', 'w', 'y'), X, w, y)",
        "if X.__class__ is not _np.exp:\n    X, w, y = _float_arrays(('X', 'w', 'y'), X, w, y)",
        "if X.__class__ is not _np.ndarray or X.dtype is not _np:\n"
        "    (X,) = _float_arrays(('X',), X)",
        "if X.dtype is not _float_arrays(('X',), X):\n    (X,) = _float_arrays(('X',), X)",
        "if X.shape is not _FLOAT64:\n    (X,) = _float_arrays(('X',), X)",
        "if _t0.dtype is not _FLOAT64:\n    (X,) = _float_arrays(('X',), X)",
        "if X.dtype is not _FLOAT64 and w.dtype is not _FLOAT64:\n"
        "    (X,) = _float_arrays(('X',), X)",
        "if X.dtype is not _FLOAT64:\n    (X,) = _np.exp(X)",
        "if X.dtype is not _FLOAT64:\n    (_t9,) = _float_arrays(('X',), X)",
        "if X.dtype is not _FLOAT64:\n    (X,) = _float_arrays(('X',), _t0)",
        "if X.dtype is not _FLOAT64:\n    (X,) = _float_arrays(('X',), X, copy=True)",
        "if X.dtype is not _FLOAT64:\n    X = _float_arrays(('X',), X)",
        "if X.dtype is not _FLOAT64:\n    (X,) = _float_arrays(('X',), X)\nelse:\n    _t9 = X",
        "if X.dtype is not _FLOAT64:\n    (X,) = _float_arrays(X)",  # no names
        "if X.dtype is not _FLOAT64:\n    (X,) = _float_arrays(('X', 'os'), X)",  # not a param
        "if X.dtype is not _FLOAT64:\n    (X,) = _float_arrays(('X', 1), X)",
        "if X.dtype is not _FLOAT64:\n    (X,) = _float_arrays((_t0,), X)",
        "if X.dtype is not _FLOAT64:\n    (X,) = _float_arrays(['X'], X)",
    ],
)
def test_tampered_preludes_are_refused(block):
    with pytest.raises(VerificationError):
        check_module(_with_prelude(block))


@pytest.mark.parametrize(
    "constant",
    ['_FLOAT64 = _np.dtype("float32")', "_FLOAT64 = _np.exp(1.0)", '_t9 = _np.dtype("float64")'],
)
def test_only_the_one_module_constant_is_allowed(constant):
    line = '_FLOAT64 = _np.dtype("float64")'
    assert line in SOURCE
    with pytest.raises(VerificationError):
        check_module(SOURCE.replace(line, constant, 1))


class _Subclass(np.ndarray):
    pass


@pytest.mark.parametrize(
    "convert",
    [
        lambda a: a.astype(np.float32),
        lambda a: a.astype(">f8"),  # byte-swapped: not the float64 singleton, converted
        lambda a: a.tolist(),
        lambda a: a.view(_Subclass),  # an ndarray subclass: converted to ndarray
    ],
)
def test_arguments_off_the_fast_path_give_the_same_gradient(convert):
    """Anything but a float64 ndarray takes ``_float_arrays``: same numbers (float32 rounded),
    a plain float ndarray out, float32 kept."""
    g = sd.grad(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES, cache=False)
    rng = np.random.default_rng(3)
    X, w, y = rng.normal(size=(6, 3)), rng.normal(size=3), rng.choice([-1.0, 1.0], size=6)
    want = g(X, w, y)
    args = [convert(a) for a in (X, w, y)]
    got = g(*args)
    assert type(got) is np.ndarray and got.dtype.isnative
    as_float32 = isinstance(args[0], np.ndarray) and args[0].dtype == np.float32
    assert got.dtype == (np.float32 if as_float32 else np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-5 if as_float32 else 1e-15)


# -- in place: ``_np.exp(_t1, out=_t1)`` writes into a generated array, never an argument -------
IN_PLACE = sd.grad("logsumexp(x)", wrt="x", shapes={"x": ("n",)}, cache=False).source
IN_PLACE_LINE = "_t1 = _np.exp(_t1, out=_t1)"


def test_a_function_applied_in_place_passes():
    assert IN_PLACE_LINE in IN_PLACE
    check_module(IN_PLACE)


@pytest.mark.parametrize(
    "line",
    [
        "_t1 = _np.exp(x, out=x)",  # the caller's array
        "_t1 = _np.exp(_t1, out=_np)",
        "_t1 = _np.exp(_t1, out=_float_arrays)",
        "_t1 = _np.exp(_t1, out=_t1[0])",
        "_t1 = _np.exp(_t1, out=(_t1,))",
        "_t1 = _np.exp(_t1, where=_t1)",
    ],
)
def test_writing_anywhere_else_is_refused(line):
    with pytest.raises(VerificationError):
        check_module(IN_PLACE.replace(IN_PLACE_LINE, line, 1))
