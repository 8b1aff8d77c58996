"""The array families (building, rearranging, scans, statistics; :mod:`symdiff.tensor.families`):
gradients against central differences in both modes, for several shapes (1-element axes,
broadcasting) and float32; Hessians against SymPy and against differences of the gradient; the
string language against tracing (functions and ndarray methods); named dimensions; clear
errors."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import symdiff as sd
from symdiff.errors import ParseError, ShapeError, UnsupportedError


def _central(f, x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    out = np.zeros_like(x, dtype=float)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x, dtype=float)
        e[i] = eps
        out[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return out


# (string, the same NumPy function, shape of x)
CASES = [
    ("sum(concat([x, x**2], axis=0) ** 2)",
     lambda x: np.sum(np.concatenate([x, x**2]) ** 2), (3, 2)),
    ("sum(concatenate([x, sin(x), x], axis=1) * x[:, :1])",
     lambda x: np.sum(np.concatenate([x, np.sin(x), x], axis=1) * x[:, :1]), (1, 2)),
    ("sum(concatenate([x, x], axis=None) ** 3)",
     lambda x: np.sum(np.concatenate([x, x], axis=None) ** 3), (2, 2)),
    ("sum(stack([x, sin(x)], axis=1) ** 3)",
     lambda x: np.sum(np.stack([x, np.sin(x)], axis=1) ** 3), (3, 2)),
    ("sum(stack([x[0], x[1] * x[2], 2.0]) ** 2)",
     lambda x: np.sum(np.stack([x[0], x[1] * x[2], 2.0]) ** 2), (3,)),
    ("sum(hstack([x, x ** 2]) ** 2)", lambda x: np.sum(np.hstack([x, x**2]) ** 2), (3,)),
    ("sum(vstack([x, x ** 2]) ** 3)", lambda x: np.sum(np.vstack([x, x**2]) ** 3), (3,)),
    ("sum(dstack([x, x ** 2, x[:1]]) ** 3)",
     lambda x: np.sum(np.dstack([x, x**2, x[:1]]) ** 3), (1, 3)),
    ("sum(dstack([x, sin(x)]) ** 2)", lambda x: np.sum(np.dstack([x, np.sin(x)]) ** 2), (3,)),
    ("sum(column_stack([x, exp(x)])[:, 1] * x)",
     lambda x: np.sum(np.column_stack([x, np.exp(x)])[:, 1] * x), (4,)),
    ("sum(append(x, x[0] ** 2) ** 3)", lambda x: np.sum(np.append(x, x[0] ** 2) ** 3), (2, 2)),
    ("sum(append(x, x ** 2, axis=1) ** 3)",
     lambda x: np.sum(np.append(x, x**2, axis=1) ** 3), (2, 2)),
    ("sum(atleast_2d(x[0]) * atleast_1d(x) ** 2)",
     lambda x: np.sum(np.atleast_2d(x[0]) * np.atleast_1d(x) ** 2), (3,)),
    ("sum(roll(x, 1, axis=0) * x)", lambda x: np.sum(np.roll(x, 1, axis=0) * x), (4, 3)),
    ("sum(roll(x, 2) * x ** 2)", lambda x: np.sum(np.roll(x, 2) * x**2), (4, 3)),
    ("sum(roll(x, (1, -1), axis=(0, 1)) * x ** 3)",
     lambda x: np.sum(np.roll(x, (1, -1), axis=(0, 1)) * x**3), (3, 3)),
    ("sum(triu(x, 1) * x)", lambda x: np.sum(np.triu(x, 1) * x), (4, 3)),
    ("sum(tril(x) ** 3)", lambda x: np.sum(np.tril(x) ** 3), (2, 4, 3)),
    ("sum(tril(x, -1) * exp(x))", lambda x: np.sum(np.tril(x, -1) * np.exp(x)), (1, 1)),
    ("sum(fliplr(x) * x ** 2 + flipud(x))",
     lambda x: np.sum(np.fliplr(x) * x**2 + np.flipud(x)), (3, 2)),
    ("sum(rot90(x) * rot90(x, 3))", lambda x: np.sum(np.rot90(x) * np.rot90(x, 3)), (3, 3)),
    ("sum(rot90(x, 2, axes=(1, 2)) * x ** 2)",
     lambda x: np.sum(np.rot90(x, 2, axes=(1, 2)) * x**2), (2, 2, 3)),
    ("sum(tile(x, (2, 3)) ** 3)", lambda x: np.sum(np.tile(x, (2, 3)) ** 3), (3, 2)),
    ("sum(tile(x, 2) * tile(x, 2) ** 2)", lambda x: np.sum(np.tile(x, 2) ** 3), (3,)),
    ("sum(moveaxis(x, 0, 2) * swapaxes(x, 0, 2))",
     lambda x: np.sum(np.moveaxis(x, 0, 2) * np.swapaxes(x, 0, 2)), (2, 3, 3)),
    ("sum(broadcast_to(x, (4, 3)) ** 2 * ravel(x)[0])",
     lambda x: np.sum(np.broadcast_to(x, (4, 3)) ** 2 * np.ravel(x)[0]), (1, 3)),
    ("sum(squeeze(x) * expand_dims(squeeze(x), 0))",
     lambda x: np.sum(np.squeeze(x) * np.expand_dims(np.squeeze(x), 0)), (3, 1)),
    ("sum(cumprod(x, axis=1) ** 2)", lambda x: np.sum(np.cumprod(x, axis=1) ** 2), (3, 4)),
    ("sum(cumprod(x) * ravel(x))", lambda x: np.sum(np.cumprod(x) * np.ravel(x)), (2, 2)),
    ("sum(diff(x, 2) ** 2)", lambda x: np.sum(np.diff(x, 2) ** 2), (3, 5)),
    ("sum(diff(x, 2, prepend=0.5, append=x[:, :1] ** 2) ** 2)",
     lambda x: np.sum(np.diff(x, 2, prepend=0.5, append=x[:, :1] ** 2) ** 2), (2, 3)),
    ("sum(diff(x, axis=0) ** 2)", lambda x: np.sum(np.diff(x, axis=0) ** 2), (2, 1)),
    ("var(x, axis=0, ddof=1)[1] + std(x)",
     lambda x: np.var(x, axis=0, ddof=1)[1] + np.std(x), (3, 4)),
    ("sum(var(x, axis=(0, 2), keepdims=True) * x)",
     lambda x: np.sum(np.var(x, axis=(0, 2), keepdims=True) * x), (2, 2, 3)),
    ("sum(x / std(x, axis=-1, keepdims=True))",
     lambda x: np.sum(x / np.std(x, axis=-1, keepdims=True)), (2, 3)),
]


@pytest.mark.parametrize("mode", ["reverse", "forward"])
@pytest.mark.parametrize("text, fn, shape", CASES, ids=[c[0] for c in CASES])
def test_gradient_against_central_differences(text, fn, shape, mode):
    x = np.random.default_rng(len(text)).uniform(-1, 1, shape)
    want = _central(fn, x)
    (got,) = sd.grad(text, shapes={"x": shape}, mode=mode)(x)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
    (traced,) = sd.grad(fn, shapes={"x": shape}, mode=mode)(x)
    np.testing.assert_allclose(traced, got, rtol=1e-12, atol=1e-14)


@pytest.mark.skipif(not hasattr(np, "cumulative_prod"), reason="NumPy < 2.1 has no "
                    "np.cumulative_sum / np.cumulative_prod")
def test_numpy_2_cumulative_names():
    def f(x):
        return np.sum(np.cumulative_prod(x, axis=0) * np.cumulative_sum(x, axis=1))

    x = np.random.default_rng(6).uniform(-1, 1, (2, 3))
    (got,) = sd.grad(f, shapes={"x": (2, 3)})(x)
    np.testing.assert_allclose(got, _central(f, x), rtol=1e-6, atol=1e-8)


def test_methods():
    def f(x):
        flat = x.ravel() * x.flatten()
        return (np.sum(flat * x.cumprod(axis=0).ravel()) + x.var(ddof=1) + x.std(axis=0)[1]
                + np.sum(x[:1].squeeze() * x.swapaxes(0, 1)[:, 0]))

    x = np.random.default_rng(1).uniform(0.5, 1.5, (3, 2))
    for mode in ("reverse", "forward"):
        (got,) = sd.grad(f, shapes={"x": (3, 2)}, mode=mode)(x)
        np.testing.assert_allclose(got, _central(f, x), rtol=1e-6, atol=1e-8)


def test_cumprod_is_exact_at_zeros():
    xs = sp.symbols("x0:5", real=True)
    w = (0.3, -1.0, 2.0, 0.7, 1.1)
    f = sum(wi * sp.prod(xs[: i + 1]) for i, wi in enumerate(w))
    text = "sum(cumprod(x) * w)"
    grads = [sd.grad(text, shapes={"x": (5,), "w": (5,)}, wrt="x", mode=mode)
             for mode in ("reverse", "forward")]
    for point in ([1.5, 0, 2, -1, 0.5], [1.5, 0, 2, 0, 0.5], [0, 0, 0, 0, 0], [1, 2, 3, 4, 0]):
        at = dict(zip(xs, point, strict=True))
        want = [float(sp.diff(f, v).subs(at)) for v in xs]
        for g in grads:
            np.testing.assert_allclose(g(x=np.array(point, float), w=np.array(w)), want,
                                       atol=1e-14)


def test_cumprod_second_order_is_exact_at_zeros():
    xs = sp.symbols("x0:6", real=True)
    w = (0.3, -1.0, 2.0, 0.7, 1.1, -0.4)
    rows = [xs[:3], xs[3:]]
    f = sum(wi * sp.prod(row[: i + 1]) ** 2 for row in rows for i, wi in enumerate(w[:3]))
    text = "sum(cumprod(x, axis=1) ** 2 * w)"
    shapes = {"x": (2, 3), "w": (3,)}
    H = sd.hessian(text, shapes=shapes, wrt="x")
    hvp = sd.hvp(text, shapes=shapes, wrt="x")
    v = np.array([0.5, -1.0, 2.0, 1.5, 0.25, -0.75])
    hessian = sp.lambdify(xs, sp.hessian(f, xs), "numpy")
    for point in ([1.5, 0, 2, 0, -1, 0.5], [0, 0, 3, 2, 0, 0], [1.2, -0.7, 2, 1, 3, 0]):
        want = np.asarray(hessian(*point), dtype=float)
        x = np.array(point, float).reshape(2, 3)
        got = np.asarray(H(x=x, w=np.array(w[:3])))
        np.testing.assert_allclose(got.reshape(6, 6), want, atol=1e-13)
        product = np.asarray(hvp(x=x, w=np.array(w[:3]), _v=v.reshape(2, 3)))
        np.testing.assert_allclose(product.ravel(), want @ v, atol=1e-13)


def test_hessians_against_sympy():
    xs = sp.symbols("x0:4", real=True)
    point = (0.3, -1.2, 0.7, 2.0)
    at = dict(zip(xs, point, strict=True))
    rolled = [xs[(i - 1) % 4] for i in range(4)]
    mean = sum(xs) / 4
    cases = [
        ("sum(cumprod(x) ** 2)", sum(sp.prod(xs[: i + 1]) ** 2 for i in range(4))),
        ("sum(roll(x, 1) * x ** 2)", sum(r * v**2 for r, v in zip(rolled, xs, strict=True))),
        ("sum(diff(x) ** 3)", sum((xs[i + 1] - xs[i]) ** 3 for i in range(3))),
        ("var(x, ddof=1) * sum(x)", sum((v - mean) ** 2 for v in xs) / 3 * sum(xs)),
        ("sum(stack([x, x ** 2], axis=1) ** 3)", sum(v**3 + v**6 for v in xs)),
        ("sum(concat([x[:2], x[1:] ** 2]) ** 3)",
         sum(v**3 for v in xs[:2]) + sum(v**6 for v in xs[1:])),
    ]
    for text, f in cases:
        want = np.array([[float(sp.diff(f, a, b).subs(at)) for b in xs] for a in xs])
        got = np.asarray(sd.hessian(text, shapes={"x": (4,)})(np.array(point)))
        np.testing.assert_allclose(got.reshape(4, 4), want, rtol=1e-10, err_msg=text)


@pytest.mark.parametrize("text", [
    "sum(triu(x, 1) ** 3)", "sum(tile(x, (2, 1)) ** 3 * rot90(tile(x, (1, 2))))",
    "sum(std(x, axis=0) * fliplr(x))", "sum(hstack([x, cumprod(x, axis=1)]) ** 2)",
])
def test_hessians_against_differences_of_the_gradient(text):
    shape = (2, 2)
    x = np.random.default_rng(7).uniform(0.5, 1.5, shape)
    g = sd.grad(text, shapes={"x": shape})
    H = np.asarray(sd.hessian(text, shapes={"x": shape})(x)).reshape(4, 4)
    columns = [_central(lambda v, i=i: g(v)[0].ravel()[i], x).ravel() for i in range(4)]
    np.testing.assert_allclose(H, np.array(columns), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("text", [
    "var(x, ddof=1) * sum(std(x, axis=0) ** 3)",
    "sum(concat([roll(x, 1, axis=1), x ** 2]) ** 3) + sum(stack([x, tril(x)], axis=2) ** 3)",
])
def test_hvp_against_the_hessian(text):
    """Reverse over reverse (``hvp``) through every rule against forward over reverse."""
    shape = (3, 3)
    x = np.random.default_rng(8).uniform(0.5, 1.5, shape)
    v = np.random.default_rng(9).uniform(-1, 1, shape)
    H = np.asarray(sd.hessian(text, shapes={"x": shape})(x)).reshape(9, 9)
    product = np.asarray(sd.hvp(text, shapes={"x": shape})(x, v))
    np.testing.assert_allclose(product.ravel(), H @ v.ravel(), rtol=1e-10, atol=1e-12)


def test_float32_stays_float32():
    g = sd.grad("sum(concat([roll(x, 1), cumprod(x)]) ** 2) + var(x)", shapes={"x": (5,)})
    x = np.linspace(0.5, 1.5, 5, dtype=np.float32)
    (got,) = g(x)
    assert got.dtype == np.float32
    want = _central(lambda v: np.sum(np.concatenate([np.roll(v, 1), np.cumprod(v)]) ** 2)
                    + np.var(v), x.astype(float))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_named_dimensions():
    shapes = {"X": ("n", 3)}
    text = ("sum(stack([X, X ** 2], axis=2) ** 2) + sum(diff(X, axis=0) ** 2) "
            "+ sum(var(X, axis=0, ddof=1)) + sum(roll(X, 1, axis=1) * triu(X))")

    def f(X):
        return (np.sum(np.stack([X, X**2], axis=2) ** 2) + np.sum(np.diff(X, axis=0) ** 2)
                + np.sum(np.var(X, axis=0, ddof=1)) + np.sum(np.roll(X, 1, axis=1) * np.triu(X)))

    g = sd.grad(text, shapes=shapes)
    for n in (2, 5):
        X = np.random.default_rng(n).uniform(-1, 1, (n, 3))
        np.testing.assert_allclose(g(X)[0], _central(f, X), rtol=1e-6, atol=1e-8)
    with pytest.raises(ShapeError, match="named dimension n cannot be along the concat"):
        sd.grad("sum(concat([X, X]))", shapes=shapes)
    with pytest.raises(ShapeError, match="cannot remove an axis"):
        sd.grad("sum(squeeze(X, axis=0))", shapes=shapes)


def test_tuple_axes_and_shape_queries_when_tracing():
    def f(x):
        total = np.sum(x ** 2, axis=(0, 1))
        if x.ndim == 3 and len(x) == 2 and x.size == 12 and np.ndim(x) == 3 and \
                np.shape(x)[2] == 3 and np.size(x) == 12 and np.size(x, 1) == 2:
            total = total * x.shape[2]
        return np.sum(total) + x.sum(axis=(0, 2))[1]

    x = np.random.default_rng(2).uniform(-1, 1, (2, 2, 3))
    (got,) = sd.grad(f, shapes={"x": (2, 2, 3)})(x)
    np.testing.assert_allclose(got, _central(f, x), rtol=1e-6, atol=1e-8)
    (parsed,) = sd.grad("sum(sum(x ** 2, axis=(0, 1)) * 3) + sum(x, axis=(0, 2))[1]",
                        shapes={"x": (2, 2, 3)})(x)
    np.testing.assert_allclose(parsed, got, rtol=1e-12)


def test_size_of_a_named_shape():
    seen = []

    def f(x):
        seen.append(x.size)
        return np.sum(x) / x.size

    sd.grad(f, shapes={"x": ("n", 2)})
    assert str(seen[0]) == "2*n"


def test_steps_name_the_rules():
    text = str(sd.derive("sum(roll(concat([x, cumprod(x)]), 1) ** 2)", wrt="x",
                         shapes={"x": (3,)}))
    for rule in ("roll (roll back)", "concatenate (slices)",
                 "cumprod (reversed cumsum without division)"):
        assert rule in text, rule


def test_generated_code_reads_like_numpy():
    source = sd.grad("sum(roll(x, 1) * triu(x))", shapes={"x": (3, 3)}).source
    assert "_np.roll(" in source and "_np.triu(" in source
    text = "sum(concat([x, x ** 2]) ** 2)"
    source = sd.value_and_grad(text, shapes={"x": (3,)}).source
    assert "_np.concatenate((" in source  # the value
    grad = _body(sd.grad(text, shapes={"x": (3,)}).source)
    assert "concatenate" not in grad  # each slice of the adjoint is its operand's part
    assert "2.0*x" in grad


def _body(source: str) -> str:
    """The generated function's statements (not its header comment or helpers)."""
    return source[source.index("\ndef "):].split("# Helpers")[0]


def test_slices_of_a_concatenation_are_its_operands():
    def f(x, y):
        return np.sum(np.sin(np.concatenate([x, y], axis=1)) * np.concatenate([y, x], axis=1))

    g = sd.grad(f, wrt=["x", "y"], shapes={"x": (3, 2), "y": (3, 2)})
    assert "concatenate" not in _body(g.source)
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(3, 2)), rng.normal(size=(3, 2))
    gx, gy = g(x, y)
    np.testing.assert_allclose(gx, y * np.cos(x) + np.sin(y), rtol=1e-12)
    np.testing.assert_allclose(gy, x * np.cos(y) + np.sin(x), rtol=1e-12)
    # a slice across two operands keeps the concatenation
    h = sd.grad(lambda x, y: np.sum(np.concatenate([x, y])[3:7] ** 2), wrt=["x", "y"],
                shapes={"x": (5,), "y": (4,)})
    hx, hy = h(np.arange(5.0), np.arange(4.0))
    np.testing.assert_allclose(hx, [0, 0, 0, 6, 8], rtol=1e-12)
    np.testing.assert_allclose(hy, [0, 2, 0, 0], rtol=1e-12)


def test_clear_errors():
    with pytest.raises(ShapeError, match=r"concatenate: shapes .* differ off the axis 0"):
        sd.grad("sum(concat([x, y]))", shapes={"x": (2, 3), "y": (2, 4)})
    with pytest.raises(ShapeError, match="zero-dimensional arrays cannot be concatenated"):
        sd.grad("sum(concat([x, x]))", shapes={"x": ()})
    with pytest.raises(ShapeError, match="stack: all arrays need the same shape"):
        sd.grad("sum(stack([x, y]))", shapes={"x": (2,), "y": (3,)})
    with pytest.raises(ShapeError, match="triu: needs an array of at least 2 dimensions"):
        sd.grad("sum(triu(x))", shapes={"x": (3,)})
    with pytest.raises(ShapeError, match="ddof=3 leaves no degrees of freedom"):
        sd.grad("var(x, ddof=3)", shapes={"x": (3,)})
    with pytest.raises(ShapeError, match="diff: axis 0 of shape"):
        sd.grad("sum(diff(x, 3))", shapes={"x": (3,)})
    with pytest.raises(ParseError, match=r"roll\(a, shift, axis=None\)"):
        sd.grad("sum(roll(x))", shapes={"x": (3,)})
    with pytest.raises(UnsupportedError, match=r"np.stack\(\[x, 2 \* x\]\) \(a new first axis"):
        sd.grad(lambda x: np.sum(np.array([x[0], x[1]])), shapes={"x": (2, 600)})
    with pytest.raises(UnsupportedError, match=r"np.hstack\(\[x, y\]\) \(along an existing axis, "
                                               r"as np.r_\[x, y\]\).*\(1200 elements handed"):
        sd.grad(lambda x: np.sum(np.r_[x, x]), shapes={"x": (600,)})
    with pytest.raises(UnsupportedError, match=r"var.*unexpected keyword argument 'dtype'"):
        sd.grad(lambda x: np.var(x, dtype=np.float32), shapes={"x": (2,)})


def test_derivation_latex_is_katex_safe():
    from .test_display import assert_katex_safe

    d = sd.derive("sum(roll(concat([x, cumprod(x)]), 1) * sum(stack([x, x], axis=1), axis=1)[0]) "
                  "+ sum(triu(tile(x, (3, 1)))) + var(x, ddof=1)", wrt="x", shapes={"x": (3,)})
    for level in ("all", "key"):
        assert_katex_safe(d.latex(level))


def test_every_family_rule_name_renders_in_latex_text():
    """Rule names go into ``\\text{(... rule)}`` of the LaTeX steps: characters that are plain
    text there (``_`` is escaped by the step printer), no formula (``^`` would be dropped:
    formulas belong in the identity)."""
    import re

    from symdiff.tensor import families

    for row in families.OPS.values():
        assert re.fullmatch(r"[A-Za-z0-9 (),_-]*", row.rule), row.rule


def test_unsupported_numpy_functions_suggest_a_spelling():
    with pytest.raises(UnsupportedError, match=r"'lexsort'.*did you mean np.sort"):
        sd.grad(lambda x: np.sum(np.lexsort(x)), shapes={"x": (2,)})
    with pytest.raises(UnsupportedError, match=r"'nanmedian'.*did you mean np.nanmean"):
        sd.grad(lambda x: np.sum(np.nanmedian(x)), shapes={"x": (2,)})
