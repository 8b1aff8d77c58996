"""Reverse mode, forward-over-reverse Hessians and Hessian-vector products, at size."""

from __future__ import annotations

import importlib.util
import itertools
import re

import numpy as np
import pytest

import symdiff as sd

ROSENBROCK = "100*(y - x**2)**2 + (1 - x)**2"


def _rosenbrock(n: int) -> str:
    return " + ".join(f"100*(x{i + 1} - x{i}**2)**2 + (1 - x{i})**2" for i in range(n - 1))


def _rosenbrock_grad(x: np.ndarray) -> np.ndarray:
    g = np.zeros_like(x)
    g[:-1] += -400 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2 * (1 - x[:-1])
    g[1:] += 200 * (x[1:] - x[:-1] ** 2)
    return g


def _names(n: int) -> list[str]:
    return [f"x{i}" for i in range(n)]


@pytest.mark.parametrize(
    "expr, wrt",
    [
        (ROSENBROCK, ["x", "y"]),
        ("exp(x*y)*sin(z) + log(1 + x**2*z**2) + max(x, y)*w", ["w", "x", "y", "z"]),
        ("sigmoid(a*x + b)*softplus(b - x) + erf(a)*gamma(1 + b**2)", ["a", "b", "x"]),
    ],
)
def test_hvp_equals_hessian_times_vector(expr, wrt):
    rng = np.random.default_rng(3)
    h = sd.hvp(expr, wrt=wrt)
    H = sd.hessian(expr, wrt=wrt)
    point = {n: rng.uniform(0.2, 1.5, 5) for n in H.args}
    v = rng.normal(size=(len(wrt), 5))
    want = np.einsum("ij...,j...->i...", H(**point), v)
    np.testing.assert_allclose(h(**point, _v=v), want, rtol=1e-11, atol=1e-11)
    assert h.args == (*H.args, "_v")


def test_hvp_single_name_has_no_leading_axis():
    h = sd.hvp("x**3*y", wrt="x")
    np.testing.assert_allclose(h(np.array([1.0, 2.0]), 3.0, np.array([1.0, 0.5])), [18.0, 18.0])


def test_hvp_checks_the_direction_length():
    h = sd.hvp(ROSENBROCK, wrt=["x", "y"])
    with pytest.raises(ValueError, match="2 components"):
        h(1.0, 1.0, [1.0, 2.0, 3.0])


@pytest.mark.parametrize("n", [6, 16])
def test_hessian_modes_agree(n):
    expr = _rosenbrock(n) + " + x0*x1*x2"
    forward = sd.hessian(expr, wrt=_names(n), mode="forward")
    reverse = sd.hessian(expr, wrt=_names(n), mode="reverse")
    assert "forward over reverse" in reverse.source
    x = np.random.default_rng(0).uniform(-1, 1, n)
    point = dict(zip(_names(n), x, strict=True))
    np.testing.assert_allclose(reverse(**point), forward(**point), rtol=1e-12, atol=1e-9)


def test_reverse_gradient_of_200_variables_matches_hand_written():
    n = 200
    g = sd.grad(_rosenbrock(n), wrt=_names(n), mode="reverse")
    assert "Mode: reverse" in g.source
    x = np.random.default_rng(1).uniform(-1, 1, (n, 3))
    ours = np.array(g(**dict(zip(_names(n), x, strict=True))))  # args are sorted by name
    want = np.stack([_rosenbrock_grad(x[:, k]) for k in range(3)], axis=1)
    np.testing.assert_allclose(ours, want, rtol=1e-12, atol=1e-9)


def test_auto_mode_is_forward_for_few_variables_and_reverse_beyond():
    assert "Mode: forward" in sd.grad(_rosenbrock(3), wrt=_names(3)).source
    assert "Mode: reverse" in sd.grad(_rosenbrock(4), wrt=_names(4)).source
    assert "Mode: reverse" in sd.grad("*".join(_names(30)), wrt=_names(30)).source


def test_product_of_many_variables_stays_linear_in_size():
    small = sd.grad("*".join(_names(20)), mode="reverse").source
    large = sd.grad("*".join(_names(160)), mode="reverse").source
    # 8x the names, each (and each temporary's) a character or two longer, and the large one
    # packed at a point too: about 12x; a symbolic gradient would grow ~64x (n^2)
    assert len(large) < 16 * len(small)
    x = np.linspace(0.5, 1.5, 160)
    point = dict(zip(_names(160), x, strict=True))
    grads = np.array(sd.grad("*".join(_names(160)), wrt=_names(160), mode="reverse")(**point))
    np.testing.assert_allclose(grads, np.prod(x) / x, rtol=1e-12)


@pytest.mark.skipif(importlib.util.find_spec("scipy") is None, reason="scipy is a dev extra")
def test_objective_hessp_drives_trust_krylov():
    from scipy.optimize import minimize

    n = 10
    obj = sd.objective(_rosenbrock(n), wrt=_names(n))
    result = minimize(obj.fun, np.full(n, -0.5), jac=obj.jac, hessp=obj.hessp,
                      method="trust-krylov", tol=1e-10)
    np.testing.assert_allclose(result.x, np.ones(n), atol=1e-6)


VECTOR_ROSENBROCK = "sum(100*(x[1:] - x[:-1]**2)**2 + (1 - x[:-1])**2)"


@pytest.mark.skipif(importlib.util.find_spec("scipy") is None, reason="scipy is a dev extra")
@pytest.mark.parametrize("method", ["BFGS", "trust-ncg"])
def test_objective_of_one_vector_variable_reaches_the_rosenbrock_minimum(method):
    from scipy.optimize import minimize

    obj = sd.objective(VECTOR_ROSENBROCK, "x", shapes={"x": ("n",)})
    x0 = np.full(100, -0.5)
    hess = obj.hess if method == "trust-ncg" else None
    result = minimize(obj.fun, x0, jac=obj.jac, hess=hess, method=method, tol=1e-12)
    np.testing.assert_allclose(result.x, np.ones(100), atol=1e-5)


def test_objective_of_one_vector_variable_matches_the_scalar_form():
    n = 12
    vector = sd.objective(VECTOR_ROSENBROCK, "x", shapes={"x": ("n",)})
    scalar = sd.objective(_rosenbrock(n), wrt=_names(n))
    x = np.random.default_rng(4).normal(size=n)
    p = np.random.default_rng(5).normal(size=n)
    assert vector.fun(x) == pytest.approx(scalar.fun(x), rel=1e-13)
    np.testing.assert_allclose(vector.jac(x), scalar.jac(x), rtol=1e-12)
    np.testing.assert_allclose(vector.hess(x), scalar.hess(x), rtol=1e-12)
    np.testing.assert_allclose(vector.hessp(x, p), scalar.hessp(x, p), rtol=1e-11)


@pytest.mark.parametrize(
    "wrt, shapes",
    [("x", {"x": ("n", "d")}), (["x", "y"], {"x": ("n",), "y": ("n",)}), ("x", {"y": ("n",)})],
)
def test_objective_with_shapes_needs_one_vector_variable(wrt, shapes):
    with pytest.raises(sd.SymdiffError, match="one vector variable"):
        sd.objective("sum(x)", wrt, shapes=shapes)


def test_log_sum_exp_of_a_thousand_variables_builds_and_is_right():
    # A 1,000-term sum: once a recursion overflow in verify.py and a quadratic cost in printing.
    n = 1000
    names = _names(n)
    g = sd.grad("log(" + " + ".join(f"exp({v})" for v in names) + ")", wrt=names)
    assert "Mode: reverse" in g.source
    x = np.random.default_rng(6).normal(size=n)
    grads = np.array(g(**dict(zip(names, x, strict=True))))
    e = np.exp(x - x.max())
    np.testing.assert_allclose(grads, e / e.sum(), rtol=1e-12, atol=1e-300)


def test_auto_mode_does_not_try_forward_mode_on_large_many_variable_problems():
    names = _names(500)
    pairs = [f"-{a}*{b}" for a, b in itertools.pairwise(names)]
    quad = " + ".join([f"{v}**2" for v in names] + pairs)
    assert "Mode: reverse" in sd.grad(quad, wrt=names).source


def test_reverse_mode_names_only_values_read_more_than_once():
    source = sd.grad(_rosenbrock(6), wrt=_names(6), mode="reverse").source
    body = source.split("def _formulas")[1]
    assigned = [line.split(" = ")[0].strip() for line in body.splitlines() if " = " in line]
    for name in assigned:
        if name.startswith("_t"):
            uses = re.findall(rf"(?<![A-Za-z0-9_]){name}(?![A-Za-z0-9_])", body)
            assert len(uses) >= 3, name  # assigned once, read at least twice
    x = np.random.default_rng(7).normal(size=6)
    grads = sd.grad(_rosenbrock(6), wrt=_names(6), mode="reverse")(*x)
    np.testing.assert_allclose(np.array(grads), _rosenbrock_grad(x), rtol=1e-12)


def test_sums_beyond_what_python_parses_in_one_chain_are_printed_in_groups():
    # 4,000 terms: Python's parser gives up on one chain near 3,000.
    names = _names(1000)
    f = sd.compile(" + ".join(f"{v}**2 + {v}**3 + {v}**4 + {v}**5" for v in names))
    assert f(**dict.fromkeys(names, 2.0)) == 1000 * (4 + 8 + 16 + 32)
    g = sd.grad("*".join(names[:200]), wrt=names[:3])
    assert np.allclose(g(**dict.fromkeys(names[:200], 1.01)), 1.01**199)


def test_large_programs_free_each_temporary_after_its_last_read():
    names = _names(100)
    g = sd.grad("*".join(names), wrt=names, mode="reverse")
    body = g.source.split("def _formulas")[1]
    assert "del _t" in body
    lines = body.splitlines()
    for k, line in enumerate(lines):  # nothing is read after it is deleted
        if line.strip().startswith("del "):
            for name in line.strip()[4:].split(", "):
                used = re.compile(rf"(?<![A-Za-z0-9_]){name}(?![A-Za-z0-9_])")
                assert not any(used.search(later) for later in lines[k + 1 :]), name
    x = np.linspace(0.5, 1.5, 100)
    grads = np.array(g(**dict(zip(names, x, strict=True))))
    np.testing.assert_allclose(grads, np.prod(x) / x, rtol=1e-12)
    small = sd.grad("*".join(names[:10]), wrt=names[:10], mode="reverse").source
    assert "del " not in small  # short programs keep the plain layout
