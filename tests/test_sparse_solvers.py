"""Sparse Jacobians and Hessians in SciPy's solvers: ``minimize(method="trust-constr")`` with
``objective(..., sparse=True).hess`` and a sparse constraint Jacobian, ``solve_ivp(method=
"BDF")`` with a Brusselator's sparse Jacobian against a run with the dense one,
``least_squares`` with a sparse Jacobian, and cyipopt where it is installed."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sps
from scipy.integrate import solve_ivp
from scipy.optimize import NonlinearConstraint, least_squares, minimize

import symdiff as sd

from .test_sparse_tensor import _brusselator

ROSENBROCK = "sum(100*(x[1:] - x[:-1]**2)**2 + (1 - x[:-1])**2)"


def _start(n: int) -> np.ndarray:
    """A start from which the chained Rosenbrock function's minimum is some 20 trust-region
    steps away at any n (from 0 or (-1.2, 1, ...), some 4n: the problem's own curvature)."""
    return np.full(n, 1.2)


def test_trust_constr_with_the_sparse_hessian_reaches_the_minimum():
    obj = sd.objective(ROSENBROCK, "x", shapes={"x": ("n",)}, sparse=True)
    assert sps.issparse(obj.hess(_start(8))) and obj.hess(_start(8)).format == "csr"
    res = minimize(obj.fun, _start(2000), jac=obj.jac, hess=obj.hess, method="trust-constr",
                   options={"gtol": 1e-10, "xtol": 1e-14, "maxiter": 3000})
    assert res.success and res.nit < 100
    np.testing.assert_allclose(res.x, 1.0, atol=1e-6)


def test_objective_over_scalar_names_with_a_sparse_hessian():
    n = 12
    names = [f"x{i}" for i in range(n)]
    text = " + ".join(f"100*(x{i + 1} - x{i}**2)**2 + (1 - x{i})**2" for i in range(n - 1))
    obj = sd.objective(text, names, sparse=True)
    dense = sd.objective(text, names)
    point = np.linspace(-1, 1, n)
    np.testing.assert_allclose(obj.hess(point).toarray(), dense.hess(point), rtol=1e-14)
    res = minimize(obj.fun, _start(n), jac=obj.jac, hess=obj.hess, method="trust-constr",
                   options={"gtol": 1e-10, "maxiter": 3000})
    np.testing.assert_allclose(res.x, 1.0, atol=1e-6)


def test_a_sparse_constraint_jacobian():
    """min sum(x**2) on the curve x[i+1] = x[i]**2 + 1 ... as equalities, with the
    constraints' Jacobian (a band) sparse."""
    n = 6
    shapes = {"x": ("n",)}
    residual = sd.compile("x[1:] - x[:-1]**2 - 0.5", shapes=shapes)
    jacobian = sd.jacobian("x[1:] - x[:-1]**2 - 0.5", wrt="x", shapes=shapes, sparse=True)
    assert jacobian(np.ones(n)).nnz == 2 * (n - 1)
    obj = sd.objective("sum(x**2)", "x", shapes=shapes, sparse=True)
    constraint = NonlinearConstraint(residual, 0.0, 0.0, jac=jacobian)
    res = minimize(obj.fun, np.ones(n), jac=obj.jac, hess=obj.hess, method="trust-constr",
                   constraints=[constraint], options={"gtol": 1e-10, "maxiter": 2000})
    assert np.abs(residual(res.x)).max() < 1e-8
    dense = sd.jacobian("x[1:] - x[:-1]**2 - 0.5", wrt="x", shapes=shapes)
    again = minimize(obj.fun, np.ones(n), jac=obj.jac, hess=obj.hess, method="trust-constr",
                     constraints=[NonlinearConstraint(residual, 0.0, 0.0, jac=dense)],
                     options={"gtol": 1e-10, "maxiter": 2000})
    np.testing.assert_allclose(res.x, again.x, atol=1e-6)


def test_brusselator_bdf_with_the_sparse_jacobian_matches_the_dense_run():
    shapes = {"y": (2, "m", "m"), "alpha": ()}
    f = sd.compile(_brusselator, shapes=shapes)
    sparse = sd.jacobian(_brusselator, wrt="y", shapes=shapes, sparse=True)
    dense = sd.jacobian(_brusselator, wrt="y", shapes=shapes)
    m = 5
    alpha = 0.02 * m * m
    grid = np.arange(m) / m
    y0 = np.stack([1 + np.sin(2 * np.pi * grid)[:, None] * np.ones(m), np.full((m, m), 3.0)])

    def rhs(t, y):
        return f(y.reshape(2, m, m), alpha).reshape(-1)

    runs = {}
    for name, jac in {
        "sparse": lambda t, y: sparse(y.reshape(2, m, m), alpha),
        "dense": lambda t, y: dense(y.reshape(2, m, m), alpha).reshape(2 * m * m, -1),
    }.items():
        runs[name] = solve_ivp(rhs, (0, 5), y0.reshape(-1), method="BDF", jac=jac,
                               rtol=1e-8, atol=1e-10)
        assert runs[name].status == 0
    assert sps.issparse(sparse(y0, alpha))
    np.testing.assert_allclose(runs["sparse"].y[:, -1], runs["dense"].y[:, -1], rtol=1e-9)


def test_least_squares_with_a_sparse_jacobian():
    expr = "concatenate([x[2:] - 2*x[1:-1] + x[:-2], 0.1*(x**3 - y)])"
    shapes = {"x": (30,), "y": (30,)}
    residual = sd.compile(expr, shapes=shapes)
    jacobian = sd.jacobian(expr, wrt="x", shapes=shapes, sparse=True)
    y = np.sin(np.linspace(0, 3, 30))
    fit = least_squares(residual, np.zeros(30), jac=jacobian, kwargs={"y": y},
                        method="trf", tr_solver="lsmr", xtol=1e-14, ftol=1e-14, gtol=1e-14)
    dense = sd.jacobian(expr, wrt="x", shapes=shapes)
    again = least_squares(residual, np.zeros(30), jac=dense, kwargs={"y": y}, method="trf",
                          xtol=1e-14, ftol=1e-14, gtol=1e-14)
    assert fit.success and again.success
    np.testing.assert_allclose(fit.x, again.x, atol=1e-7)


def test_cyipopt_takes_the_lower_triangle_and_its_values():
    cyipopt = pytest.importorskip(
        "cyipopt", reason="cyipopt (and the Ipopt library) is not installed")
    n = 20
    H = sd.hessian(ROSENBROCK, wrt="x", shapes={"x": ("n",)}, sparse="coo").tril()
    f = sd.compile(ROSENBROCK, shapes={"x": ("n",)})
    g = sd.grad(ROSENBROCK, wrt="x", shapes={"x": ("n",)})
    rows, cols = H.pattern_for(n=n)

    class Problem:
        def objective(self, x):
            return float(f(x))

        def gradient(self, x):
            return g(x)

        def constraints(self, x):
            return np.zeros(0)

        def jacobian(self, x):
            return np.zeros(0)

        def hessianstructure(self):
            return rows, cols

        def hessian(self, x, lagrange, obj_factor):
            return obj_factor * H.values(x)

    nlp = cyipopt.Problem(n=n, m=0, problem_obj=Problem(), lb=None, ub=None, cl=[], cu=[])
    nlp.add_option("print_level", 0)
    x, info = nlp.solve(_start(n))
    assert info["status"] == 0
    np.testing.assert_allclose(x, 1.0, atol=1e-6)
