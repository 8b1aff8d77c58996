"""Gathers (:mod:`symdiff.tensor.families.gather`): indexing by constant integer arrays, lists
and boolean masks, and ``np.take``; NumPy's shape rules, gradients (scatter-add) against central
differences in both modes and to second order, the string language, the emitted forms, the
verifier's narrow extension, and clear errors. Also the numeric helpers
(:mod:`symdiff.tensor.families.numeric`) and the refusals' suggestions."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import symdiff as sd
from symdiff.errors import ParseError, ShapeError, UnsupportedError
from symdiff.tensor.families import gather
from symdiff.verify import VerificationError, check_module
from tests.numeric import central as _central

IDX = np.array([0, 2, 2, -1])
MASK = np.array([True, False, True, True, False])
LABELS = np.array([1, 0, 2, 2])


# Each: (name, f, shape); f is ordinary NumPy code, traced once and also run on arrays.
CASES = [
    ("repeated and negative", lambda x: np.sum(np.sin(x[IDX]) ** 2), (5,)),
    ("list", lambda x: np.sum(x[[0, 2, 3]] ** 3), (5,)),
    ("unique rows of a matrix", lambda x: np.sum(np.exp(x[[2, 0]]) * x[[1, 2]]), (3, 4)),
    ("repeated rows of a matrix", lambda x: np.sum(np.cos(x[IDX]) * x[IDX][:, ::-1]), (5, 3)),
    ("columns", lambda x: np.sum(np.tanh(x[:, IDX]) ** 2), (3, 5)),
    ("mask", lambda x: np.sum(x[MASK] ** 3), (5,)),
    ("2-D mask", lambda x: np.sum(np.sin(x[x.shape[0] * [[True, False, True]]]) ** 2), (2, 3)),
    ("two arrays", lambda x: -np.sum(x[np.arange(4), LABELS] ** 3), (4, 3)),
    ("take 2-D indices", lambda x: np.sum(np.take(x, [[0, 1], [1, 1]], axis=1) ** 3), (2, 3)),
    ("take flattened", lambda x: np.sum(np.take(x, [5, 0, 5]) ** 2), (2, 3)),
    ("int and array, adjacent", lambda x: np.sum(x[:, 1, [0, 3, 0]] ** 3), (2, 3, 4)),
    ("int and array, apart", lambda x: np.sum(x[0, :, [1, 2]] ** 3 * x[1, :, [0, 3]]), (2, 3, 4)),
    ("slice and array", lambda x: np.sum(x[1:, [2, 0, 2]] ** 3), (3, 4)),
    ("broadcast index arrays", lambda x: np.sum(np.sin(x[[[1], [0]], [[0, 2, 2]]]) ** 2), (2, 3)),
    ("arrays apart", lambda x: np.sum(x[[1, 0, 1], :, [2, 3, 2]] ** 3), (2, 3, 4)),
    ("where constant mask", lambda x: np.sum(np.where(MASK, np.sin(x), x ** 2) * x[::-1]), (5,)),
    ("where constant mask, broadcast", lambda x: np.sum(np.where(MASK[:3], x, 0.5) ** 3), (2, 3)),
    ("ellipsis", lambda x: np.sum(np.sin(x[..., [1, 0, 1]]) * x[..., [0, 0, 2]]), (2, 2, 3)),
]
IDS = [c[0] for c in CASES]


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("name, fn, shape", CASES, ids=IDS)
def test_gradient_against_central_differences(name, fn, shape, mode):
    x = np.random.default_rng(len(name)).uniform(-1, 1, shape)
    got = sd.grad(fn, wrt="x", shapes={"x": shape}, mode=mode)(x)
    np.testing.assert_allclose(got, _central(fn, x), rtol=1e-6, atol=1e-8)


KEYS = [
    [1, 0, 1, -1], [[0, 1], [1, 0]], (slice(None), [1, 0]), (0, slice(None), [1, 2]),
    (slice(None), 1, [0, 3, 0]), ([1, 0], slice(None), [2, 3]), ([[1], [0]], [[0, 1, 2]]),
    (Ellipsis, [3, 1]), (MASK[:2],), (np.array([[True, False, False], [False, True, True]]),),
    (slice(1, None), [0, 0], slice(None, None, -1)),
    (Ellipsis, [True, False, True], slice(None)), ([1, 0], Ellipsis, [True, False, False, True]),
    (slice(None), [False, True, True], 1),
]


@pytest.mark.parametrize("key", KEYS, ids=lambda k: repr(k)[:40])
def test_the_value_has_numpys_shape_and_entries(key):
    x = np.random.default_rng(0).uniform(-1, 1, (2, 3, 4))
    f = sd.compile(lambda x: x[key] * 1.0, shapes={"x": (2, 3, 4)})
    np.testing.assert_array_equal(f(x), x[key])


def test_hessian_through_gathers():
    def f(x):
        return np.sum(np.sin(x[IDX]) * x[[1, 1, 0, 3]] ** 2)

    x = np.random.default_rng(1).uniform(-1, 1, 5)
    hessian = sd.hessian(f, wrt="x", shapes={"x": (5,)})(x)
    gradient = sd.grad(f, wrt="x", shapes={"x": (5,)})
    want = np.stack([_central(lambda v, k=k: gradient(v)[k], x) for k in range(5)])
    np.testing.assert_allclose(hessian, want, rtol=1e-5, atol=1e-7)


def test_hessian_of_a_selected_log_likelihood():
    def nll(W):
        logits = W[[0, 1, 1, 2]]  # an embedding lookup, repeated rows
        logp = logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))
        return -np.sum(logp[np.arange(4), LABELS])

    W = np.random.default_rng(2).uniform(-1, 1, (3, 3))
    hessian = sd.hessian(nll, wrt="W", shapes={"W": (3, 3)})(W)
    gradient = sd.grad(nll, wrt="W", shapes={"W": (3, 3)})
    want = np.zeros((3, 3, 3, 3))
    for i in np.ndindex(3, 3):
        e = np.zeros((3, 3))
        e[i] = 1e-6
        want[:, :, *i] = (gradient(W + e) - gradient(W - e)) / 2e-6
    np.testing.assert_allclose(hessian.reshape(3, 3, 3, 3), want, rtol=1e-5, atol=1e-7)


def test_float32_stays_float32():
    g = sd.grad(lambda x: np.sum(x[IDX] ** 2), wrt="x", shapes={"x": (5, 2)})
    x = np.random.default_rng(3).uniform(-1, 1, (5, 2)).astype(np.float32)
    got = g(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, _central(lambda v: np.sum(v[IDX] ** 2), x.astype(float)),
                               rtol=1e-5, atol=1e-5)
    h = sd.grad(lambda x: np.sum(x[IDX] ** 2), wrt="x", shapes={"x": (5,)})
    assert h(x[:, 0]).dtype == np.float32  # the bincount form too


@pytest.mark.parametrize("text, fn, shape", [
    ("sum(x[[0, 2, 2, -1]] ** 2)", lambda x: np.sum(x[[0, 2, 2, -1]] ** 2), (5,)),
    ("sum(sin(x[:, [1, 0]]))", lambda x: np.sum(np.sin(x[:, [1, 0]])), (3, 2)),
    ("sum(x[[0, 1], [2, 0]] ** 3)", lambda x: np.sum(x[[0, 1], [2, 0]] ** 3), (2, 3)),
    ("sum(take(x, [0, 2], axis=0) ** 3)", lambda x: np.sum(np.take(x, [0, 2], axis=0) ** 3),
     (3, 2)),
    ("sum(take(x, [[1, 1], [0, 1]], axis=1) ** 2)",
     lambda x: np.sum(np.take(x, [[1, 1], [0, 1]], axis=1) ** 2), (2, 2)),
])
def test_string_language_equals_tracing(text, fn, shape):
    x = np.random.default_rng(4).uniform(-1, 1, shape)
    parsed = sd.grad(text, wrt="x", shapes={"x": shape})(x)
    traced = sd.grad(fn, wrt="x", shapes={"x": shape})(x)
    np.testing.assert_allclose(parsed, traced, rtol=1e-12)
    np.testing.assert_allclose(parsed, _central(fn, x), rtol=1e-6, atol=1e-8)


def test_method_spelling_and_named_dimensions():
    g = sd.grad(lambda x: np.sum(x.take([0, 3], axis=0) ** 2), wrt="x", shapes={"x": ("n",)})
    np.testing.assert_allclose(g(np.arange(5.0)), [0, 0, 0, 6, 0])
    with pytest.raises(ShapeError, match="indexes it up to 4"):
        g(np.arange(3.0))


def test_the_emitted_forms():
    unique = sd.grad(lambda x: np.sum(x[[2, 0, 1]] ** 2), wrt="x", shapes={"x": (3, 2)}).source
    assert "_np.take(x, (2, 0, 1), axis=0)" in unique and "[[2, 0, 1]] = " in unique
    spaced = sd.compile(lambda x: x[[4, 2, 0]] + x[[1, 2, 3]], shapes={"x": (5,)}).source
    assert "x[4::-2]" in spaced and "x[1:4]" in spaced  # evenly spaced: slices
    vector = sd.grad(lambda x: np.sum(x[IDX] ** 2), wrt="x", shapes={"x": (5,)}).source
    assert "_np.bincount((0, 2, 2, 4), weights=" in vector
    rows = sd.grad(lambda x: np.sum(x[IDX] ** 2), wrt="x", shapes={"x": (5, 2)}).source
    assert "    _np.add.at(" in rows and ", [0, 2, 2, 4], " in rows
    columns = sd.grad(lambda x: np.sum(x[:, [1, 1]] ** 2), wrt="x", shapes={"x": (2, 3)})
    assert "_np.take(x, (1, 1), axis=1)" in columns.source
    check_module(rows)


ROWS = sd.grad(lambda x: np.sum(x[IDX] ** 2), wrt="x", shapes={"x": (5, 2)}, cache=False).source
ADD_AT = next(line.strip() for line in ROWS.splitlines() if "_np.add.at(" in line)


@pytest.mark.parametrize("line", [
    "_np.add.at(x, [0, 2, 2, 4], _t0)",  # the caller's array
    "_np.add.at(_np, [0, 2, 2, 4], _t0)",
    "_np.add.at(_x_bar, [0, 2, 2, n], _t0)",  # not a literal index
    "_np.add.at(_x_bar, [0, 2, 2, (1, 2)], _t0)",
    "_np.add.at(_x_bar, [], _t0)",
    "_np.add.at(_x_bar, [0, 2], _t0, _t0)",
    "_np.add.at(_x_bar, [0, 2], _t0, dtype=_dtype)",
    "_np.add.at(_x_bar, [0, 2], __import__)",  # the value is checked like any expression
    "_np.subtract.at(_x_bar, [0, 2], _t0)",
    "_np.add(_x_bar, _t0)",
    "_x_bar[[0, x]] = _t0",
    "_x_bar[[0, 1]] = open",
    "_x_bar = x[[0, _np]]",  # a list index holds int literals only
    "_x_bar = x[[0, 1.5]]",
    "_x_bar = x[[[0, 1]]]",
])
def test_hostile_variants_of_the_new_statements_are_refused(line):
    with pytest.raises(VerificationError):
        check_module(ROWS.replace(ADD_AT, line, 1))


def test_clear_errors():
    with pytest.raises(ShapeError, match="7 is out of range for axis 0 of size 5"):
        sd.grad(lambda x: np.sum(x[[0, 7]]), wrt="x", shapes={"x": (5,)})
    with pytest.raises(ShapeError, match="-6 is out of range"):
        sd.grad(lambda x: np.sum(np.take(x, [-6], axis=0)), wrt="x", shapes={"x": (5,)})
    with pytest.raises(UnsupportedError, match="None"):
        sd.grad(lambda x: np.sum(x[[0, 1], None]), wrt="x", shapes={"x": (5,)})
    with pytest.raises(UnsupportedError, match="traced array cannot be an index"):
        sd.grad(lambda x: np.sum(x[np.array([0.5])]), wrt="x", shapes={"x": (5,)})
    with pytest.raises(UnsupportedError, match="negative indices need a fixed size"):
        sd.grad(lambda x: np.sum(x[[-1]]), wrt="x", shapes={"x": ("n",)})
    with pytest.raises(UnsupportedError, match="booleans"):
        sd.grad(lambda x: np.sum(np.take(x, MASK)), wrt="x", shapes={"x": (5,)})
    with pytest.raises(ShapeError, match="cannot be broadcast"):
        sd.grad(lambda x: np.sum(x[[0, 1], [0, 1, 2]]), wrt="x", shapes={"x": (3, 3)})
    with pytest.raises(ShapeError, match=r"mask of shape \(5,\) does not match the axes \(4,\)"):
        sd.grad(lambda x: np.sum(x[:, MASK]), wrt="x", shapes={"x": (3, 4)})
    with pytest.raises(UnsupportedError, match="boolean scalar"):
        sd.grad(lambda x: np.sum(x[True, [0, 1]]), wrt="x", shapes={"x": (3, 4)})
    with pytest.raises(UnsupportedError, match="selects nothing"):
        sd.grad(lambda x: np.sum(x[MASK & False]), wrt="x", shapes={"x": (5,)})
    with pytest.raises(ShapeError, match="out of range"):
        sd.grad("sum(x[[0, 5]])", wrt="x", shapes={"x": (5,)})
    def assigns(x):
        x[[0, 1]] = 0.0
        return np.sum(x)

    with pytest.raises(UnsupportedError, match=r"assigning into a traced array .*np\.where"):
        sd.grad(assigns, wrt="x", shapes={"x": (5,)})
    with pytest.raises(ParseError, match="integer literal"):
        sd.grad("sum(x[[0, y]])", wrt="x", shapes={"x": (5,), "y": ()})


# -- large indices: bound constants ---------------------------------------------------------
BIG = np.random.default_rng(5).integers(-50, 50, 100_000)  # repeated and negative


def _vector_loss(x):
    return np.sum(np.sin(x[BIG]) ** 2)


def _hand_vector(x, idx):
    return np.bincount(idx % 50, weights=np.sin(2 * x[idx]), minlength=50)


def test_a_large_index_is_a_bound_constant_that_rebinds():
    g = sd.grad(_vector_loss, wrt="x", shapes={"x": (50,)})
    x = np.random.default_rng(6).uniform(-1, 1, 50)
    np.testing.assert_allclose(g(x), _hand_vector(x, BIG), rtol=1e-10)
    assert list(g.constants) == ["BIG"] and g.constants["BIG"].dtype == np.int64
    assert "_np.take(x, _c0, axis=0)" in g.source and "_np.bincount(_c0, weights=" in g.source
    assert len(g.source) < 10_000  # the indices are not in it
    forward = sd.grad(_vector_loss, wrt="x", shapes={"x": (50,)}, mode="forward")
    np.testing.assert_allclose(forward(x), g(x), rtol=1e-10)
    other = np.random.default_rng(7).integers(0, 50, 100_000)
    np.testing.assert_allclose(g.bind(BIG=other)(x), _hand_vector(x, other), rtol=1e-10)
    np.testing.assert_allclose(g(x), _hand_vector(x, BIG), rtol=1e-10)  # g is unchanged
    explained = str(g.explain())  # the formula names the constant, and derives again
    assert "take(x, _c0, axis=0)" in explained and "scatter_add(" in explained
    copy = pickle.loads(pickle.dumps(g.bind(BIG=other)))
    np.testing.assert_allclose(copy(x), _hand_vector(x, other), rtol=1e-10)
    with pytest.raises(ShapeError, match="index 50 in BIG is out of range for the axis of "
                                         "size 50"):
        g.bind(BIG=np.full(100_000, 50))
    with pytest.raises(ShapeError, match=r"BIG was traced as an array of ints of shape "
                                         r"\(100000,\)"):
        g.bind(BIG=np.zeros(10, dtype=int))
    with pytest.raises(ShapeError, match="array of ints"):
        g.bind(BIG=np.zeros(100_000))


def test_small_indices_stay_literals():
    n = gather.LITERAL_INDICES
    small, large = np.arange(n)[::-1] % 7, np.arange(n + 1)[::-1] % 7
    g = sd.grad(lambda x: np.sum(x[small] ** 2) + np.sum(x[large] ** 3), wrt="x",
                shapes={"x": (7,)})
    assert "_np.bincount((0, 6, 5," in g.source and list(g.constants) == ["large"]


def _rows_loss(idx):
    def loss(W):
        return np.sum(np.tanh(W[idx]) ** 2)
    return loss


def test_the_module_is_keyed_by_the_index_shape_not_its_content():
    rng = np.random.default_rng(8)
    first, second = rng.integers(0, 30, (40, 5)), rng.integers(0, 30, (40, 5))
    g1 = sd.grad(_rows_loss(first), wrt="W", shapes={"W": (30, 4)})
    g2 = sd.grad(_rows_loss(second), wrt="W", shapes={"W": (30, 4)})
    assert g1.source == g2.source and "_np.add.at(" in g1.source
    W = rng.uniform(-1, 1, (30, 4))
    for g, idx in ((g1, first), (g2, second)):
        np.testing.assert_allclose(g(W), _central(_rows_loss(idx), W), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g1.bind(idx=second)(W), g2(W), rtol=1e-12)
    check_module(g1.source)
    H = sd.hessian(_rows_loss(first), wrt="W", shapes={"W": (30, 4)})(W).reshape(120, 120)
    want = np.stack([_central(lambda v, k=k: g1(v).reshape(-1)[k], W).reshape(-1)
                     for k in range(0, 120, 17)])
    np.testing.assert_allclose(H[::17], want, rtol=1e-5, atol=1e-7)


def test_large_masks_and_combined_indices():
    rng = np.random.default_rng(9)
    mask = rng.uniform(size=(20, 10)) > 0.4
    labels = rng.integers(0, 10, 200)

    def f(x):
        picked = x[mask] ** 3
        chosen = x.reshape(200, 1)[np.arange(200) % 20, labels % 1]
        return np.sum(picked) + np.sum(np.sin(chosen)) + np.sum(np.where(mask, x, x ** 2))

    x = rng.uniform(-1, 1, (20, 10))
    g = sd.grad(f, wrt="x", shapes={"x": (20, 10)})
    np.testing.assert_allclose(g(x), _central(f, x), rtol=1e-6, atol=1e-8)
    assert set(g.constants) == {"mask", "_c1"}  # the mask is an index and a where condition
    with pytest.raises(sd.SymdiffError, match=r"labels .*np\.remainder"):
        g.bind(labels=labels + 1)  # labels % 1 was computed by NumPy when traced
    assert g.constants["mask"].dtype == np.float64
    mask2 = mask.copy()
    mask2[:, 0], mask2[:, 1] = mask[:, 1], mask[:, 0]  # as many entries

    def f2(x):
        return np.sum(x[mask2] ** 3) + np.sum(np.sin(x.reshape(200, 1)[np.arange(200) % 20,
                                                                        labels % 1])) + np.sum(
            np.where(mask2, x, x ** 2))

    np.testing.assert_allclose(g.bind(mask=mask2)(x), _central(f2, x), rtol=1e-6, atol=1e-8)
    with pytest.raises(ShapeError, match=r"selected .* entries when traced"):
        g.bind(mask=~mask)
    with pytest.raises(ShapeError, match="was traced as a boolean mask"):
        g.bind(mask=mask.astype(int))
    forward = sd.grad(f, wrt="x", shapes={"x": (20, 10)}, mode="forward")
    np.testing.assert_allclose(forward(x), g(x), rtol=1e-10, atol=1e-12)


def test_a_rebound_mask_selecting_as_many_entries():
    mask = np.arange(300) % 3 == 0

    def f(x):
        return np.sum(x[mask] ** 3)

    g = sd.grad(f, wrt="x", shapes={"x": (300,)})
    x = np.linspace(-1, 1, 300)
    other = np.roll(mask, 1)
    np.testing.assert_allclose(g.bind(mask=other)(x), np.where(other, 3 * x ** 2, 0.0))


def test_a_combined_index_is_named_by_its_parameter_and_refuses_a_partial_bind():
    rows, labels = np.arange(100), np.random.default_rng(10).integers(0, 3, 100)

    def nll(z):
        return -np.sum(z[rows, labels])

    g = sd.grad(nll, wrt="z", shapes={"z": (100, 3)})
    want = np.zeros((100, 3))
    want[rows, labels] = -1.0
    np.testing.assert_array_equal(g(np.zeros((100, 3))), want)
    assert list(g.constants) == ["_c0"]
    with pytest.raises(TypeError, match=r"labels entered the bound constant.*_c0 only through"):
        g.bind(labels=labels)
    shifted = g.bind(_c0=rows * 3 + (labels + 1) % 3)  # its flat positions
    want[:] = 0.0
    want[rows, (labels + 1) % 3] = -1.0
    np.testing.assert_array_equal(shifted(np.zeros((100, 3))), want)


# -- the numeric helpers ---------------------------------------------------------------------
NUMERIC = [
    ("nan_to_num", lambda x: np.sum(np.nan_to_num(x) ** 2 * x)),
    ("linspace", lambda x: np.sum(np.linspace(x[0], x[1], 5) ** 2 * x[2])),
    ("linspace open", lambda x: np.sum(np.sin(np.linspace(x[2], 2.0, 4, endpoint=False)))),
    ("remainder operator", lambda x: np.sum((x * 3) % 0.7 + 2.5 % (x + 3))),
    ("mod sign abs sinc", lambda x: np.sum(np.mod(x, 0.6) * np.sign(x) + np.abs(x) * np.sinc(x))),
    ("clip by traced arrays", lambda x: np.sum(np.clip(x, x[::-1] - 0.3, x[::-1] + 0.1) ** 2)),
]


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("name, fn", NUMERIC, ids=[n for n, _ in NUMERIC])
def test_numeric_helpers(name, fn, mode):
    x = np.array([0.31, -0.73, 1.17])
    g = sd.value_and_grad(fn, wrt=["x"], shapes={"x": (3,)}, mode=mode)
    value, (got,) = g(x)
    np.testing.assert_allclose(value, fn(x), rtol=1e-12)
    np.testing.assert_allclose(got, _central(fn, x), rtol=1e-6, atol=1e-8)


def test_nan_to_num_replaces_in_the_value_and_passes_the_gradient():
    f = sd.value_and_grad(lambda x: np.sum(np.nan_to_num(x / x[0])), wrt=["x"],
                          shapes={"x": (2,)})
    value, (grad,) = f(np.array([1.0, 2.0]))
    assert value == 3.0 and np.allclose(grad, [-2.0, 1.0])
    value = sd.compile("nan_to_num(log(x), neginf=-5.0)", shapes={"x": (3,)})
    with np.errstate(invalid="ignore", divide="ignore"):
        np.testing.assert_array_equal(value(np.array([-1.0, 0.0, 1.0])), [0.0, -5.0, 0.0])
    assert "_np.nan_to_num(" in value.source


def test_nan_to_num_has_no_derivative_where_it_replaces():
    """autograd's own case: sin(nan_to_num(x + y)) with y holding NaN and infinities: those
    entries are replaced by constants, so their derivative is 0 (not 1), in both modes and to
    second order, as central differences see it."""
    y = np.array([0.0, np.nan, np.inf, -np.inf])

    def f(x):
        return np.sum(np.sin(np.nan_to_num(x + y)))

    x = np.array([0.3, -0.2, 0.5, 1.1])
    for mode in ("reverse", "forward"):
        (got,) = sd.grad(f, shapes={"x": (4,)}, mode=mode)(x)
        np.testing.assert_allclose(got, [np.cos(0.3), 0, 0, 0], rtol=1e-12)
        np.testing.assert_allclose(got, _central(f, x), atol=1e-8)
    H = np.asarray(sd.hessian(f, shapes={"x": (4,)})(x)).reshape(4, 4)
    np.testing.assert_allclose(H, np.diag([-np.sin(0.3), 0, 0, 0]), atol=1e-12)


def test_where_with_a_constant_mask_keeps_the_other_branch_out():
    f = sd.value_and_grad(lambda x: np.sum(np.where(MASK, x, np.log(x))), wrt=["x"],
                          shapes={"x": (5,)})
    with np.errstate(invalid="ignore"):
        value, (grad,) = f(np.array([-1.0, 1.0, -2.0, -3.0, 2.0]))
    assert value == -6.0 + np.log(2.0)
    np.testing.assert_allclose(grad, [1.0, 1.0, 1.0, 1.0, 0.5])


def test_linspace_needs_scalar_ends():
    with pytest.raises(UnsupportedError, match="scalar ends"):
        sd.grad(lambda x: np.sum(np.linspace(x, x + 1, 3)), wrt="x", shapes={"x": (2,)})


# -- refusals name the function and the closest supported spelling ---------------------------
@pytest.mark.parametrize("fn, message", [
    (lambda x: np.nanmax(x), r"'nanmax' is not supported .*did you mean np\.amax\?"),
    (lambda x: np.sum(np.nanmedian(x)), r"'nanmedian' .*did you mean np\.nanmean\?"),
    (lambda x: np.sum(np.linalg.eig(x)[0]), r"'linalg\.eig' .*did you mean np\.linalg\.eigh\?"),
    (lambda x: np.sum(np.fft.fft(x)), r"'fft\.fft' is not supported"),
    (lambda x: np.sum(x.cumsun()), r"no attribute 'cumsun'; did you mean 'cumsum'\?"),
])
def test_unsupported_calls_suggest_the_closest_spelling(fn, message):
    with pytest.raises(UnsupportedError, match=message):
        sd.grad(fn, wrt="x", shapes={"x": (3, 3)})
