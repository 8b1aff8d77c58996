"""Traced functions keep their signature: the def's parameter order (used or not), defaults,
keyword-only and positional-only markers; gradients in wrt order; in both layers, through the
memory and disk caches and pickling; builders as decorators with arguments."""

from __future__ import annotations

import inspect
import keyword
import pickle

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import symdiff as sd
import symdiff.build
import symdiff.pipeline
import symdiff.tensor.build


def _grad_r2d(r, d):
    return r**2 * d


# -- the order of the def ------------------------------------------------------------------------
def test_arguments_and_partials_follow_the_def_not_the_sorted_names():
    g = sd.grad(_grad_r2d)
    assert g.args == ("r", "d") and g.wrt == ("r", "d")
    d_r, d_d = g(2.0, 10.0)  # r=2, d=10: d/dr = 2*r*d = 40, d/dd = r**2 = 4
    assert (d_r, d_d) == (40.0, 4.0)
    assert g(d=10.0, r=2.0) == (40.0, 4.0)
    assert inspect.signature(g) == inspect.signature(_grad_r2d)


def test_the_decorator_keeps_the_order():
    @sd.grad
    def f(r, d):
        return r**2 * d

    assert f(2.0, 10.0) == (40.0, 4.0)


def test_an_unused_parameter_stays_in_place():
    def loopy(x, n):
        return x**3

    g = sd.grad(loopy, wrt="x")
    assert g.args == ("x", "n") and g.wrt == "x"
    assert g(2.0, 7.0) == 12.0
    v = sd.compile(loopy)
    assert v.args == ("x", "n") and v(2.0, 7.0) == 8.0


@pytest.mark.parametrize(
    ("wrt", "expected"),
    [(["d", "r"], (4.0, 40.0)), (["r", "d"], (40.0, 4.0)), ("d", 4.0), (["d"], (4.0,))],
)
def test_partials_come_back_in_the_wrt_order_given(wrt, expected):
    g = sd.grad(_grad_r2d, wrt=wrt)
    assert g.args == ("r", "d")
    assert g(2.0, 10.0) == expected


def test_strings_and_sympy_keep_the_sorted_order():
    assert sd.grad("r**2 * d").args == ("d", "r")
    r, d = sp.symbols("r d")
    assert sd.grad(r**2 * d).args == ("d", "r")
    assert sd.grad("r**2 * d")(10.0, 2.0) == (4.0, 40.0)


# -- defaults, keyword-only and positional-only parameters ----------------------------------------
def _scaled(x, k=2.0):
    return k * x**2


def test_a_default_is_kept_and_filled_in_when_left_out():
    g = sd.grad(_scaled)
    assert g.args == ("x", "k") and g.wrt == ("x", "k")
    assert inspect.signature(g) == inspect.signature(_scaled)
    assert g(3.0) == (12.0, 9.0)  # k=2: d/dx = 2*k*x, d/dk = x**2
    assert g(3.0, 1.0) == (6.0, 9.0) and g(3.0, k=1.0) == (6.0, 9.0)
    assert g(x=3.0) == (12.0, 9.0)
    assert "2.0" not in g.source.split("def grad_f", 1)[1].split(":", 1)[0]  # not in the source
    assert "def grad_f(x, k, *, threads=None):" in g.source
    with pytest.raises(TypeError):
        g()
    with pytest.raises(TypeError):
        g(1.0, 2.0, 3.0)
    with pytest.raises(TypeError):
        g(3.0, q=1.0)


def test_keyword_only_parameters_stay_keyword_only():
    def f(x, *, k, c=0.5):
        return k * x + c * x**2

    g = sd.value_and_grad(f, wrt=["c", "x"])
    assert g.args == ("x", "k", "c")
    assert inspect.signature(g) == inspect.signature(f)
    value, (d_c, d_x) = g(2.0, k=3.0)
    assert (value, d_c, d_x) == (8.0, 4.0, 5.0)
    with pytest.raises(TypeError):
        g(2.0, 3.0)  # k is keyword-only
    with pytest.raises(TypeError):
        g(2.0)  # k has no default


def test_positional_only_parameters_stay_positional_only():
    def f(x, /, y):
        return x * y**2

    g = sd.grad(f)
    assert g.args == ("x", "y") and inspect.signature(g) == inspect.signature(f)
    assert g(2.0, 3.0) == (9.0, 12.0) and g(2.0, y=3.0) == (9.0, 12.0)
    with pytest.raises(TypeError):
        g(x=2.0, y=3.0)


def test_a_plain_signature_calls_the_generated_function_directly():
    g = sd.grad(_grad_r2d)
    assert g.__call__ is g._fn  # no wrapper on the fast path
    h = sd.grad(_scaled)
    assert h.__call__ is not h._fn


def test_annotations_are_kept_and_do_not_need_a_wrapper():
    def f(r: float, d: float) -> float:
        return r**2 * d

    g = sd.grad(f)
    assert inspect.signature(g) == inspect.signature(f)
    assert g.__call__ is g._fn
    assert inspect.signature(sd.grad(_grad_r2d)) == inspect.signature(_grad_r2d)


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (lambda *xs: xs[0], r"parameter \*xs is not supported"),
        (lambda x, **options: x, r"parameter \*\*options is not supported"),
        (lambda x, *rest, y: x * y, r"parameter \*rest is not supported"),
    ],
)
def test_parameters_that_cannot_be_variables_are_refused_by_name(fn, message):
    with pytest.raises(sd.UnsupportedError, match=message):
        sd.grad(fn)
    with pytest.raises(sd.UnsupportedError, match=message):
        sd.grad(fn, shapes={"x": (), "xs": (), "options": (), "rest": (), "y": (), "k": ()})


@pytest.mark.parametrize("default", ["a", None, True])
def test_a_default_that_is_not_a_number_makes_a_static_argument(default):
    def f(x, k=default):
        return x**2 if k == default else x**3

    g = sd.grad(f)
    assert g.wrt == ("x",) and g.args == ("x", "k")
    assert float(g(3.0)[0]) == 6.0
    assert float(g(3.0, "other")[0]) == 27.0  # specialised for the other value
    with pytest.raises(sd.UnsupportedError, match=f"default {default!r}, which is not a number"):
        sd.grad(f, shapes={"x": (), "k": ()})  # an array parameter needs a number as default


def test_a_symbol_from_outside_that_is_not_a_parameter_is_refused():
    z = sp.Symbol("z")

    def f(x):
        return x * z

    with pytest.raises(sd.UnsupportedError, match="z are not parameters of f"):
        sd.grad(f)


# -- every builder -------------------------------------------------------------------------------
def _rosen(y, x, a=1.0, *, b=100.0):
    return (a - x) ** 2 + b * (y - x**2) ** 2


def _rosen_partials(y, x, a=1.0, b=100.0):
    return {"y": 2 * b * (y - x**2), "x": -2 * (a - x) - 4 * b * x * (y - x**2)}


def test_hessian_jacobian_value_and_grad_hvp_and_compile_follow_the_signature():
    y, x = 2.0, 1.5
    want = _rosen_partials(y, x)
    assert sd.compile(_rosen)(y, x) == pytest.approx(0.25 + 100 * 0.0625)
    value, (d_x, d_y) = sd.value_and_grad(_rosen, wrt=["x", "y"])(y, x)
    assert value == pytest.approx(_rosen(y, x))
    assert (d_x, d_y) == pytest.approx((want["x"], want["y"]))
    H = sd.hessian(_rosen, wrt=["x", "y"])
    assert H.args == ("y", "x", "a", "b")
    hxx = 2 - 4 * 100 * (y - x**2) + 8 * 100 * x**2
    hxy = -4 * 100 * x
    np.testing.assert_allclose(H(y, x), [[hxx, hxy], [hxy, 200.0]])
    hvp = sd.hvp(_rosen, wrt=["x", "y"])
    assert hvp.args == ("y", "x", "a", "b", "_v")
    assert str(inspect.signature(hvp)) == "(y, x, a=1.0, *, b=100.0, _v)"
    np.testing.assert_allclose(hvp(y, x, _v=np.array([1.0, 2.0])), [hxx + 2 * hxy, hxy + 400])
    J = sd.jacobian(_rosen, wrt=["x", "y"])
    np.testing.assert_allclose(J(y, x), [[want["x"], want["y"]]])
    g = sd.grad(_rosen)  # wrt=None: every parameter in the def's order
    assert g.wrt == ("y", "x", "a", "b")
    assert g(y, x, b=10.0)[:2] == pytest.approx(tuple(_rosen_partials(y, x, b=10.0).values()))


def test_hvp_of_a_plain_function_keeps_v_positional():
    h = sd.hvp(lambda y, x: x**2 * y, wrt=["x", "y"])
    assert h.args == ("y", "x", "_v")
    np.testing.assert_allclose(h(3.0, 2.0, np.array([1.0, 0.0])), [6.0, 4.0])


def test_objective_and_check_grad_follow_wrt_and_use_defaults():
    obj = sd.objective(_rosen, wrt=["x", "y"])  # a and b take their defaults
    x, y = 1.5, 2.0
    assert obj.fun([x, y]) == pytest.approx(_rosen(y, x))
    want = _rosen_partials(y, x)
    np.testing.assert_allclose(obj.jac([x, y]), [want["x"], want["y"]])
    assert obj.hess([x, y]).shape == (2, 2)
    np.testing.assert_allclose(obj.hessp([x, y], [1.0, 0.0]), obj.hess([x, y])[:, 0])
    other = sd.objective(_rosen, wrt=["y", "x"], params={"b": 10.0})
    want = _rosen_partials(y, x, b=10.0)
    np.testing.assert_allclose(other.jac([y, x]), [want["y"], want["x"]])
    with pytest.raises(sd.SymdiffError, match="give values for y"):
        sd.objective(_rosen, wrt=["x"])
    assert sd.check_grad(_rosen, wrt=["x", "y"], at={"x": 0.3, "y": 0.2}) < 1e-6
    assert sd.check_grad(lambda x, /, k=3.0: k * x**3, at={"x": 0.5}) < 1e-6


def test_tensor_layer_keeps_the_signature():
    def loss(w, X, y=0.0, *, scale=1.0):
        return scale * np.sum((X @ w - y) ** 2)

    shapes = {"X": ("n", 3), "w": (3,), "y": (), "scale": ()}
    g = sd.grad(loss, wrt="w", shapes=shapes)
    assert g.args == ("w", "X", "y", "scale")
    assert inspect.signature(g) == inspect.signature(loss)
    rng = np.random.default_rng(0)
    w, X = rng.normal(size=3), rng.normal(size=(5, 3))
    np.testing.assert_allclose(g(w, X), 2 * X.T @ (X @ w))
    np.testing.assert_allclose(g(w, X, 1.0, scale=3.0), 6 * X.T @ (X @ w - 1.0))
    with pytest.raises(TypeError):
        g(w, X, 1.0, 3.0)
    both = sd.grad(loss, wrt=["scale", "w"], shapes=shapes)
    d_scale, d_w = both(w, X)
    assert d_scale == pytest.approx(np.sum((X @ w) ** 2))
    np.testing.assert_allclose(d_w, 2 * X.T @ (X @ w))
    everything = sd.grad(loss, shapes=shapes)
    assert everything.wrt == ("w", "X", "y", "scale")
    h = sd.hvp(loss, wrt="w", shapes=shapes)
    assert str(inspect.signature(h)) == "(w, X, y=0.0, *, scale=1.0, _v)"
    np.testing.assert_allclose(h(w, X, _v=np.ones(3)), 2 * X.T @ X @ np.ones(3))
    value = sd.compile(loss, shapes=shapes)
    assert value(w, X) == pytest.approx(np.sum((X @ w) ** 2))


def test_tensor_order_differs_from_the_sorted_order():
    def f(w, X):
        return np.sum(X @ w)

    g = sd.grad(f, shapes={"X": ("n", 2), "w": (2,)})
    assert g.args == ("w", "X") and g.wrt == ("w", "X")
    X = np.arange(6.0).reshape(3, 2)
    d_w, d_X = g(np.ones(2), X)
    np.testing.assert_array_equal(d_w, X.sum(axis=0))
    np.testing.assert_array_equal(d_X, np.ones((3, 2)))


# -- caches and pickling --------------------------------------------------------------------------
def test_the_cache_key_holds_the_signature():
    def f1(x, y):
        return x * y**2

    def f2(y, x):
        return x * y**2

    def f3(x, y=2.0):
        return x * y**2

    def f4(x: float, y: float):
        return x * y**2

    g1, g2, g3, g4 = (sd.grad(f) for f in (f1, f2, f3, f4))
    assert g1.args == ("x", "y") and g2.args == ("y", "x")
    assert g1(1.0, 2.0) == (4.0, 4.0)
    assert g2(1.0, 2.0) == (4.0, 1.0)  # y=1, x=2: d/dy = 2*x*y, d/dx = y**2
    assert g3(1.0) == (4.0, 4.0) and inspect.signature(g3) == inspect.signature(f3)
    assert inspect.signature(g4) == inspect.signature(f4)  # same code as f1, its own annotations
    assert inspect.signature(g1) == inspect.signature(f1)
    assert sd.grad(f1) is g1  # and the memory cache still answers


def test_the_disk_cache_keeps_the_signature(monkeypatch):
    def f(x, k=2.0, *, c=1.0):
        return c * k * x**2

    first = sd.hessian(f, wrt=["x", "k"])
    symdiff.pipeline.clear_memo()

    def no_build(*args, **kwargs):
        raise AssertionError("rebuilt instead of loaded from the disk cache")

    monkeypatch.setattr(symdiff.build, "_build", no_build)
    loaded = sd.hessian(f, wrt=["x", "k"])
    assert loaded is not first and loaded.source == first.source
    assert inspect.signature(loaded) == inspect.signature(f)
    np.testing.assert_allclose(loaded(3.0), [[4.0, 6.0], [6.0, 0.0]])
    np.testing.assert_allclose(loaded(3.0, c=2.0), [[8.0, 12.0], [12.0, 0.0]])


def test_the_tensor_disk_cache_keeps_the_signature(monkeypatch):
    def f(w, X, *, y=1.0):
        return np.sum(X @ w * y)

    shapes = {"w": (2,), "X": ("n", 2), "y": ()}
    first = sd.grad(f, wrt="w", shapes=shapes)
    symdiff.pipeline.clear_memo()

    def no_build(*args, **kwargs):
        raise AssertionError("rebuilt instead of loaded from the disk cache")

    monkeypatch.setattr(symdiff.tensor.build, "_build", no_build)
    loaded = sd.grad(f, wrt="w", shapes=shapes)
    assert loaded is not first and inspect.signature(loaded) == inspect.signature(f)
    np.testing.assert_allclose(loaded(np.ones(2), np.eye(2), y=3.0), [3.0, 3.0])


def test_pickling_keeps_the_signature():
    g = sd.grad(_rosen, wrt=["x", "y"])
    copy = pickle.loads(pickle.dumps(g))
    assert inspect.signature(copy) == inspect.signature(_rosen)
    assert copy(2.0, 1.5) == g(2.0, 1.5)
    with pytest.raises(TypeError):
        copy(2.0, 1.5, 1.0, 100.0)  # b is keyword-only
    plain = pickle.loads(pickle.dumps(sd.grad(_grad_r2d)))
    assert plain.__call__ is plain._fn and plain(2.0, 10.0) == (40.0, 4.0)


# -- builders as decorators with arguments --------------------------------------------------------
def test_every_builder_is_a_decorator_with_arguments():
    @sd.grad(wrt="x")
    def g(x, y):
        return x**2 * y

    @sd.value_and_grad(wrt=["y", "x"])
    def vg(x, y):
        return x**2 * y

    @sd.compile(cse=False)
    def f(x, y):
        return x**2 * y

    @sd.hessian(wrt=["x", "y"], mode="forward")
    def H(x, y):
        return x**2 * y

    @sd.hvp(wrt=["x", "y"])
    def Hv(x, y):
        return x**2 * y

    @sd.jacobian(wrt=["x", "y"])
    def J(x, y):
        return x * y, x + y

    assert g(3.0, 2.0) == 12.0
    assert vg(3.0, 2.0) == (18.0, (9.0, 12.0))
    assert f(3.0, 2.0) == 18.0
    np.testing.assert_array_equal(H(3.0, 2.0), [[4.0, 6.0], [6.0, 0.0]])
    np.testing.assert_array_equal(Hv(3.0, 2.0, np.array([1.0, 0.0])), [4.0, 6.0])
    np.testing.assert_array_equal(J(3.0, 2.0), [[2.0, 3.0], [1.0, 1.0]])
    assert all(isinstance(c, sd.CompiledFunction) for c in (g, vg, f, H, Hv, J))


def test_decorators_with_arguments_and_shapes():
    @sd.grad(wrt="w", shapes={"w": (3,), "X": ("n", 3)})
    def g(w, X):
        return np.sum((X @ w) ** 2)

    @sd.compile(shapes={"w": (3,)})
    def f(w):
        return np.sum(w**2)

    @sd.hessian(wrt="w", shapes={"w": (2,)})
    def H(w):
        return np.sum(w**3)

    X = np.eye(3)
    np.testing.assert_array_equal(g(np.ones(3), X), 2 * np.ones(3))
    assert f(np.ones(3)) == 3.0
    np.testing.assert_array_equal(H(np.array([1.0, 2.0])), [[6.0, 0.0], [0.0, 12.0]])


# -- jacobian of a function returning several values ---------------------------------------------
def test_jacobian_of_a_function_returning_a_tuple():
    def polar(r, theta):
        return r * np.cos(theta), r * np.sin(theta)

    J = sd.jacobian(polar)
    assert J.args == ("r", "theta") and J.wrt == ("r", "theta")
    r, t = 2.0, 0.3
    np.testing.assert_allclose(
        J(r, t), [[np.cos(t), -r * np.sin(t)], [np.sin(t), r * np.cos(t)]], rtol=1e-14
    )
    listed = sd.jacobian(lambda r, theta: [r * np.cos(theta), r * np.sin(theta)], wrt="theta")
    np.testing.assert_allclose(listed(r, t), [-r * np.sin(t), r * np.cos(t)], rtol=1e-14)
    one = sd.jacobian(lambda x, y: x * y)  # one value: one row
    np.testing.assert_array_equal(one(2.0, 3.0), [[3.0, 2.0]])


def test_jacobian_of_a_traced_tensor_function_returning_a_tuple():
    J = sd.jacobian(lambda A, x: (A @ x, np.tanh(A @ x)), wrt="x",
                    shapes={"A": (2, 3), "x": (3,)})
    assert J.args == ("A", "x")
    rng = np.random.default_rng(1)
    A, x = rng.normal(size=(2, 3)), rng.normal(size=3)
    got = J(A, x)
    assert got.shape == (2, 2, 3)
    np.testing.assert_allclose(got[0], A)
    np.testing.assert_allclose(got[1], (1 - np.tanh(A @ x) ** 2)[:, None] * A, rtol=1e-12)


def test_a_tuple_outside_jacobian_points_to_jacobian():
    with pytest.raises(sd.UnsupportedError, match=r"returned a tuple.*use sd\.jacobian"):
        sd.grad(lambda x: (x, x))
    with pytest.raises(sd.UnsupportedError, match=r"returned a tuple.*use sd\.jacobian"):
        sd.grad(lambda x: (np.sum(x), np.sum(x)), shapes={"x": (2,)})
    with pytest.raises(sd.UnsupportedError, match="returned an empty tuple"):
        sd.jacobian(lambda x: ())


def test_jacobian_lists_of_functions():
    J = sd.jacobian([lambda x: x**2, lambda y, x: np.sin(y) * x])
    assert J.args == ("x", "y")  # order of first appearance
    np.testing.assert_allclose(J(1.0, 0.0), [[2.0, 0.0], [0.0, 1.0]])
    with pytest.raises(sd.UnsupportedError, match="different signatures"):
        sd.jacobian([lambda x, k=1.0: x, lambda x: x])
    with pytest.raises(sd.UnsupportedError, match="z are not parameters"):
        sd.jacobian([lambda x: x, "z*x"])


def test_a_list_given_to_grad_points_to_jacobian():
    for builder in (sd.grad, sd.value_and_grad, sd.hessian, sd.hvp):
        with pytest.raises(sd.SymdiffError, match=r"not a list.*sd\.jacobian"):
            builder(["x**2", "y"])
    with pytest.raises(sd.SymdiffError, match=r"not a tuple.*sd\.jacobian"):
        sd.grad(("sum(x)",), shapes={"x": (2,)})
    with pytest.raises(sd.SymdiffError, match="compile takes one expression"):
        sd.compile(["x", "y"])


# -- random traced functions ----------------------------------------------------------------------
_FORBIDDEN = set(keyword.kwlist) | {"np", "f"}
NAMES = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,5}", fullmatch=True).filter(
    lambda n: n not in _FORBIDDEN
)
UNARY = ["np.sin({})", "np.cos({})", "np.exp(0.5*{})", "np.tanh({})", "(-{})"]
BINARY = ["({} + {})", "({} - {})", "({} * {})"]


@st.composite
def _bodies(draw, names, depth=3):
    if depth == 0 or draw(st.integers(0, 3)) == 0:
        if draw(st.integers(0, 4)) == 0:
            return repr(draw(st.sampled_from([0.5, 2.0, 3.0])))
        return draw(st.sampled_from(names))
    if draw(st.booleans()):
        return draw(st.sampled_from(UNARY)).format(draw(_bodies(names, depth - 1)))
    return draw(st.sampled_from(BINARY)).format(
        draw(_bodies(names, depth - 1)), draw(_bodies(names, depth - 1))
    )


@st.composite
def traced_functions(draw):
    """A function with a random signature and a random body of its parameters, written as
    source by the test itself: (function, names, kinds, defaults)."""
    names = draw(st.lists(NAMES, min_size=1, max_size=4, unique=True))
    n = len(names)
    keyword_only = draw(st.integers(0, n))  # the last ones are keyword-only
    positional_only = draw(st.integers(0, n - keyword_only))  # the first ones
    positional = n - keyword_only
    first_default = draw(st.integers(0, positional))  # positional defaults form a suffix
    defaults = {}
    for i, name in enumerate(names):
        has = i >= first_default if i < positional else draw(st.booleans())
        if has:
            defaults[name] = draw(st.sampled_from([0.25, 0.5, 1.5]))
    parts = []
    for i, name in enumerate(names):
        if i == positional and keyword_only:
            parts.append("*")
        parts.append(f"{name}={defaults[name]!r}" if name in defaults else name)
        if positional_only and i == positional_only - 1:
            parts.append("/")
    body = draw(_bodies(names))
    source = f"def f({', '.join(parts)}):\n    return {body}\n"
    namespace = {"np": np}
    exec(source, namespace)  # text generated by this test, not user input
    kinds = ["positional_only"] * positional_only + ["either"] * (
        positional - positional_only
    ) + ["keyword_only"] * keyword_only
    return namespace["f"], names, kinds, defaults, source


def _call(function, names, kinds, values):
    args = [values[n] for n, k in zip(names, kinds, strict=True) if k != "keyword_only"]
    kwargs = {n: values[n] for n, k in zip(names, kinds, strict=True) if k == "keyword_only"}
    return function(*args, **kwargs)


@settings(max_examples=40)
@given(case=traced_functions(), data=st.data())
def test_random_traced_functions_keep_their_signature(case, data):
    f, names, kinds, defaults, source = case
    wrt = data.draw(
        st.none() | st.permutations(names).flatmap(
            lambda order: st.integers(1, len(order)).map(lambda k: list(order[:k]))
        ),
        label="wrt",
    )
    g = sd.grad(f, wrt=wrt)
    assert g.args == tuple(names), source
    assert inspect.signature(g) == inspect.signature(f), source
    order = list(names) if wrt is None else wrt
    assert g.wrt == tuple(order)

    values = {n: data.draw(st.floats(-1.0, 1.0), label=n) for n in names}
    partials = _call(g, names, kinds, values)
    by_keyword = [k != "positional_only" for k in kinds]
    if all(by_keyword):
        assert g(**values) == partials
    given_only = {n: v for n, v in values.items() if n not in defaults}
    with_defaults = {**values, **defaults}
    np.testing.assert_array_equal(
        _call(g, names, kinds, with_defaults),
        g(*[given_only[n] for n, k in zip(names, kinds, strict=True)
            if k != "keyword_only" and n in given_only],
          **{n: v for n, v in given_only.items() if kinds[names.index(n)] == "keyword_only"}),
    )

    for name, partial in zip(order, partials, strict=True):
        h = 1e-6
        plus = _call(f, names, kinds, {**values, name: values[name] + h})
        minus = _call(f, names, kinds, {**values, name: values[name] - h})
        numeric = (plus - minus) / (2 * h)
        assert float(partial) == pytest.approx(numeric, rel=1e-5, abs=1e-6), (source, name)
