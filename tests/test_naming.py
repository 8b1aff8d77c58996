"""symdiff.codegen.naming: one scheme for every generated name, scalar and tensor, kept in one
module, and no user variable name can collide with a generated one."""

from __future__ import annotations

import ast
import itertools
import pathlib
import re

import numpy as np
import pytest
import sympy as sp

import symdiff as sd
from symdiff.codegen import naming

PACKAGE = pathlib.Path(sd.__file__).resolve().parent

# -- the scheme ------------------------------------------------------------------------------


def test_one_scheme_for_scalar_and_tensor_outputs():
    scalar = sd.grad("x**2*y", wrt=["x", "y"])
    tensor = sd.grad("sum(w*w)", wrt="w", shapes={"w": (3,)})
    assert scalar.recipe.outputs == (naming.adjoint("x"), naming.adjoint("y")) == ("_x_bar",
                                                                                  "_y_bar")
    assert tensor.recipe.outputs == ("_w_bar",)
    assert "_x_bar = " in scalar.source and "_w_bar = " in tensor.source
    assert "_x_hvp" in sd.hvp("x**3", wrt="x").source
    assert "_w_hvp" in sd.hvp("sum(w**3)", wrt="w", shapes={"w": (3,)}).source


def test_names_derived_from_distinct_names_are_distinct():
    user = ["x", "x_bar", "bar", "v", "v_x", "x_hvp", "y_hvp", "v_y", "t0", "t1", "t0_bar", "n",
            "n_dim", "hess", "hess_0", "value", "d2", "s0", "a0", "p0", "z0", "x_dir", "dir"]
    roles = [naming.adjoint, naming.hvp, naming.jacobian, naming.hessian, naming.direction,
             naming.dimension, naming.shape_of]
    made = [role(n) for role in roles for n in user]
    temps = list(itertools.islice(naming.temporaries(user), 3))
    generated = [*temps, *(naming.adjoint(t) for t in temps), naming.adjoint(temps[0], 1),
                 naming.tangent(temps[0]), naming.tangent(temps[0], 1),
                 naming.tangent(naming.adjoint(temps[0]), 1),
                 naming.slot(0), naming.deferred(0), naming.argument(0), naming.placeholder(0),
                 naming.VALUE, naming.SECOND, naming.DIRECTION, naming.hessian_block(0, 1)]
    every = made + generated
    assert len(set(every)) == len(every)
    assert not set(user) & set(every)  # a user's name never starts with "_"


def test_temporaries_never_take_a_variable_name():
    assert list(itertools.islice(naming.temporaries(), 3)) == ["_t0", "_t1", "_t2"]
    assert list(itertools.islice(naming.temporaries(["t0", "t2", "x"]), 3)) == ["_t1", "_t3",
                                                                                "_t4"]


# -- no collision with a user's names ----------------------------------------------------------

#: Variable names that look like generated ones: gradients, the direction, temporaries.
TRICKY = ["x", "x_bar", "v", "t0", "t1", "v_x", "x_hvp", "t0_bar"]
EXPR = "sin(x*x_bar) + v*t0*exp(t1) + x*v_x**2 + t0_bar*t1*x + t0*t0_bar + x_hvp**3*v_x"
POINT = {"x": 0.7, "x_bar": -0.4, "v": 1.3, "t0": 0.5, "t1": -0.9, "v_x": 0.8, "x_hvp": 0.6,
         "t0_bar": 1.1}


def _reference(expr: sp.Expr, wrt: list[str]) -> tuple[np.ndarray, np.ndarray]:
    symbols = [sp.Symbol(n, real=True) for n in wrt]
    at = {sp.Symbol(n, real=True): v for n, v in POINT.items()}
    grad = np.array([float(sp.diff(expr, s).evalf(subs=at)) for s in symbols])
    hess = np.array([[float(sp.diff(expr, a, b).evalf(subs=at)) for b in symbols]
                     for a in symbols])
    return grad, hess


@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_user_names_like_generated_ones_do_not_collide(mode):
    """Forward mode names its outputs after the variables (``_t0_bar``) beside CSE's ``_t0``;
    reverse mode and forward over reverse add adjoints (``_t0_bar`` of a temporary), tangents
    and the direction's components."""
    expr = sp.sympify(EXPR, locals={n: sp.Symbol(n, real=True) for n in TRICKY})
    grad_ref, hess_ref = _reference(expr, TRICKY)
    at = {sp.Symbol(n, real=True): v for n, v in POINT.items()}
    value, partials = sd.value_and_grad(EXPR, wrt=TRICKY, mode=mode)(**POINT)
    assert np.allclose(partials, grad_ref, rtol=1e-12)
    assert np.isclose(value, float(expr.evalf(subs=at)), rtol=1e-12)
    if mode == "forward":  # a forward-mode Hessian names no output after a variable
        return
    assert np.allclose(sd.grad(EXPR, wrt=TRICKY, mode=mode)(**POINT), grad_ref, rtol=1e-12)
    assert np.allclose(sd.hessian(EXPR, wrt=TRICKY, mode=mode)(**POINT), hess_ref, rtol=1e-12)
    direction = np.linspace(-1.0, 1.0, len(TRICKY))
    hv = sd.hvp(EXPR, wrt=TRICKY)(**POINT, _v=direction)
    assert np.allclose(hv, hess_ref @ direction, rtol=1e-12)
    jac = sd.jacobian([EXPR, "x_bar*t0"], wrt=TRICKY, mode=mode)(**POINT)
    assert np.allclose(jac[0], grad_ref, rtol=1e-12)


def test_reverse_mode_temporaries_skip_variable_names():
    g = sd.grad("t0*t1*sin(t0 + t1) + exp(t0*t1) + cos(x) + y", wrt=["t0", "t1", "x", "y"],
                mode="reverse")
    # each name assigned once (an 'if _into is None' block assigns its target in both branches:
    # its else branch is not counted)
    tree = ast.parse(g.source)
    branches = {id(a) for n in ast.walk(tree) if isinstance(n, ast.If) for a in n.orelse}
    assigned = [t.id for n in ast.walk(tree)
                if isinstance(n, ast.Assign) and id(n) not in branches
                for t in n.targets if isinstance(t, ast.Name) and t.id.startswith("_")]
    assert len(assigned) == len(set(assigned)), g.source
    assert not {"_t0", "_t1", "_t0_bar_", "_t1_bar_"} & set(assigned)
    t0, t1 = 0.3, -0.6
    expected = t1 * np.sin(t0 + t1) + t0 * t1 * np.cos(t0 + t1) + t1 * np.exp(t0 * t1)
    assert np.isclose(g(t0, t1, 0.1, 0.2)[0], expected)


def test_tensor_names_like_generated_ones_do_not_collide():
    shapes = {"x": (3,), "x_bar": (3,), "t0": (3,)}
    g = sd.grad("sum(x*x_bar*t0) + sum(exp(x))", wrt=["x", "x_bar", "t0"], shapes=shapes)
    x, xb, t0 = np.array([0.1, 0.2, 0.3]), np.array([1.0, -2.0, 0.5]), np.array([2.0, 1.0, -1.0])
    gx, gxb, gt0 = g(x=x, x_bar=xb, t0=t0)
    assert np.allclose(gx, xb * t0 + np.exp(x))
    assert np.allclose(gxb, x * t0)
    assert np.allclose(gt0, x * xb)


# -- the scheme stays in one place -----------------------------------------------------------

#: A string that starts a generated name and is followed by a formatted part: f"_d_{n}",
#: f"_t{i}", f"_{name}_bar", "_v_" + name.
_PREFIX = re.compile(r"_(?!_)[A-Za-z0-9_]*\Z")
#: A role suffix after a formatted part: f"{name}_bar", f"{symbol}_dot{j}".
_ROLE = re.compile(r"_(bar|hvp|hv|dot|jac|hess|dim|dir|shape)(\d*)(\Z|_)")
#: Old spellings kept as format templates or fixed literals.
_TEMPLATE = re.compile(r"(_d_|_hv_|_v_)\{|\{\w*\}_(bar|hvp|dot)")
_FIXED = {naming.VALUE, naming.SECOND, naming.DIRECTION, "_v_", "_d_", "_hv_", "_dot", "_bar"}


def _violations(path: pathlib.Path) -> list[str]:
    """Generated names formatted in ``path`` (docstrings and ``__slots__`` aside). One walk:
    ``ast.walk`` visits a parent before its children, so a docstring or slot is marked before
    it is reached."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    found = []
    shown = path.relative_to(PACKAGE.parent)
    for node in ast.walk(tree):
        where = f"{shown}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skip.add(id(first.value))
        elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__slots__" for t in node.targets):
            skip.update(id(n) for n in ast.walk(node.value))
        elif isinstance(node, ast.JoinedStr):
            parts = node.values
            first = parts[0] if parts else None
            if (isinstance(first, ast.Constant) and _PREFIX.match(first.value) and len(parts) > 1
                    and isinstance(parts[1], ast.FormattedValue)):
                found.append(f"{where}: f-string starting {first.value!r}")
            for before, part in itertools.pairwise(parts):
                if (isinstance(before, ast.FormattedValue) and isinstance(part, ast.Constant)
                        and _ROLE.match(part.value)):
                    found.append(f"{where}: f-string with {part.value!r} after a value")
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left = node.left
            if isinstance(left, ast.Constant) and isinstance(left.value, str) and _PREFIX.match(
                    left.value) and left.value.endswith("_"):
                found.append(f"{where}: {left.value!r} + a name")
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and id(node) not in skip
              and (_TEMPLATE.search(node.value) or node.value in _FIXED)):
            found.append(f"{where}: literal {node.value!r}")
    return found


def test_no_module_but_naming_formats_a_generated_name():
    modules = [p for p in sorted(PACKAGE.rglob("*.py"))
               if p.name != "naming.py" and "runtime" not in p.relative_to(PACKAGE).parts]
    assert len(modules) > 50
    found = [v for p in modules for v in _violations(p)]
    assert not found, "generated names belong in symdiff/codegen/naming.py:\n" + "\n".join(found)


def test_the_scan_finds_what_it_looks_for(tmp_path):
    sample = PACKAGE / "_scan_sample_never_imported.py"
    text = ('a = f"_d_{n}"\nb = f"{name}_bar"\nc = "_v_" + n\nd = "_hv_{code}"\n'
            'e = f"_t{i}"\nf = "_value"\ng = f"_np.sqrt({x})"\nh = f"{x}.shape"\n')
    sample.write_text(text, encoding="utf-8")
    try:
        found = _violations(sample)
    finally:
        sample.unlink()
    assert sorted({int(line.split(":")[1]) for line in found}) == [1, 2, 3, 4, 5, 6], found
