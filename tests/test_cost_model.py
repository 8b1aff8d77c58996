"""The emitter's cost model (codegen/cost.py) and the cheaper forms it picks (codegen/forms.py).

Nothing here times code: the model counts array passes in the printed text, and these tests
check the counts, the forms chosen for the benchmark problems, and that the rewrites keep
values and never raise the count.
"""

from __future__ import annotations

import ast
import random

import numpy as np
import pytest
import sympy as sp

import symdiff as sd
from symdiff.codegen.cost import POW_PASSES, line_passes
from symdiff.codegen.forms import cheaper_program, program_passes
from symdiff.codegen.printer import ArrayCodePrinter, CodePrinter
from symdiff.simplify import shared_subexpressions

X, Y, Z = sp.symbols("x y z", real=True)


@pytest.mark.parametrize(
    ("code", "passes"),
    [
        ("x", 0),
        ("2*x", 1),
        ("-1/2*_t0**2", 2),  # the constant is folded on Python numbers, the square is quick
        ("-_t0*x", 2),  # the negation is a pass of its own
        ("_t0*x - 2", 2),
        ("x**3", POW_PASSES),
        ("(x**2*x)", 2),
        ("1/(x**2*x)", 3),
        ("_np.exp(x) + _np.log(2)", 4),  # exp costs 3; log(2) is a number
        ("_np.expm1(x*y)", 6),
        ("_np.power(x, 2)", 1),  # a NumPy function without a weight: one pass
        ("_sigmoid(x*y)", 4),
        ("_np.pi*x", 1),
    ],
)
def test_line_passes(code, passes):
    assert line_passes(code) == passes


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        (X**3, "(x**2*x)"),
        (X**4, "((x**2)**2)"),
        (X**12, "(((x**2*x)**2)**2)"),
        (X**-3, "1/(x**2*x)"),
        (Y / X**5, "y/((x**2)**2*x)"),
        ((X + 1) ** 3, "(x + 1)**3"),  # a compound base is not printed twice
    ],
)
def test_small_integer_powers_print_without_pow(expr, text):
    assert CodePrinter().doprint(expr) == text


def test_array_printer_chains_too():
    assert ArrayCodePrinter().doprint(X**3 * Y) == "(x**2*x)*y"
    assert ArrayCodePrinter().doprint(X**-3) == "1.0/(x**2*x)"


def test_all_negative_sum_leads_with_a_numbers_sign():
    assert CodePrinter().doprint(-X * Y - 3 * sp.sin(Z)) == "-3*_np.sin(z) - x*y"


#: The ufuncs an output's last operation is written as, and the operators they stand for.
_OPERATORS = {"add": ast.Add, "subtract": ast.Sub, "multiply": ast.Mult, "divide": ast.Div}


def _as_math(value: ast.expr) -> ast.expr:
    """An output's statement ``_np.divide(a, b, out=_out[0])`` as the math it computes,
    ``a / b`` (the ufunc is the operator's; ``out=`` only says where the result goes)."""
    if not (isinstance(value, ast.Call) and any(k.arg == "out" for k in value.keywords)):
        return value
    name = value.func.attr  # type: ignore[attr-defined]
    if name in _OPERATORS:
        return ast.BinOp(value.args[0], _OPERATORS[name](), value.args[1])
    if name == "negative":
        return ast.UnaryOp(ast.USub(), value.args[0])
    if name == "square":
        return ast.BinOp(value.args[0], ast.Pow(), ast.Constant(2))
    return ast.Call(value.func, value.args, [k for k in value.keywords if k.arg != "out"])


def _formulas(source: str) -> list[str]:
    """The right-hand sides of the lines of ``_formulas`` in a generated module, as math."""
    tree = ast.parse(source)
    body = next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "_formulas")
    return [ast.unparse(_as_math(node.value)) for node in body.body
            if isinstance(node, ast.Assign)]


def _negations(code: str) -> int:
    """Negations of arrays in a line (``-x`` on a name or a compound, not ``-3``)."""
    tree = ast.parse(code, mode="eval")
    return sum(
        isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub)
        and not isinstance(n.operand, ast.Constant)
        for n in ast.walk(tree)
    )


def _has_pow(code: str) -> bool:
    """Whether a line calls NumPy's power with an exponent other than the quick square."""
    for n in ast.walk(ast.parse(code, mode="eval")):
        if not (isinstance(n, ast.BinOp) and isinstance(n.op, ast.Pow)):
            continue
        if not (isinstance(n.right, ast.Constant) and n.right.value == 2):
            return True
    return "power" in code


def test_gaussian_log_density_gradient_has_no_pow_and_no_negation_pass():
    f = sd.grad("-0.5*((x - mu)/sigma)**2 - log(sigma) - 0.5*log(2*pi)",
                wrt=["x", "mu", "sigma"])
    lines = _formulas(f.source)
    assert not any(_has_pow(line) for line in lines), lines
    # the one negation left is a whole output that is minus another (one pass, what
    # hand-written code does too); no product negates a factor first
    assert all(_negations(line) == 0 or (line.startswith("-_") and line[1:].isidentifier())
               for line in lines), lines
    rng = np.random.default_rng(1)
    x, mu, sigma = rng.normal(size=5), rng.normal(size=5), rng.uniform(0.5, 2, 5)
    gx, gmu, gs = f(mu=mu, sigma=sigma, x=x)
    np.testing.assert_allclose(gx, -(x - mu) / sigma**2, rtol=1e-13)
    np.testing.assert_allclose(gmu, (x - mu) / sigma**2, rtol=1e-13)
    np.testing.assert_allclose(gs, (x - mu) ** 2 / sigma**3 - 1 / sigma, rtol=1e-12)


def test_logistic_loss_gradient_folds_the_sign_into_the_shared_factor():
    f = sd.grad("log(1 + exp(-y*(w*x + b)))", wrt=["w", "b"])
    *temps, w_bar, b_bar = _formulas(f.source)
    assert _negations(w_bar) == 0 and _negations(b_bar) == 0, (w_bar, b_bar)
    # y is negated once (``_t = -y``, read twice), and no temporary only names another one
    assert sum(_negations(line) for line in temps) == 1, temps
    assert not any(line.isidentifier() for line in [*temps, w_bar]), temps
    assert sum(line_passes(line) for line in [*temps, w_bar, b_bar]) <= 9, temps
    rng = np.random.default_rng(2)
    w, b, x, y = rng.normal(size=(4, 6))
    s = -y / (1 + np.exp(y * (w * x + b)))
    gw, gb = f(b=b, w=w, x=x, y=y)
    np.testing.assert_allclose(gw, s * x, rtol=1e-12)
    np.testing.assert_allclose(gb, s, rtol=1e-12)


def test_lennard_jones_gradient_reuses_powers():
    f = sd.grad("4*eps*((s/r)**12 - (s/r)**6)", wrt=["r", "s", "eps"])
    lines = _formulas(f.source)
    assert not any(_has_pow(line) for line in lines), lines
    r, s, eps = np.array([1.1, 1.7]), np.array([0.9, 1.05]), np.array([0.7, 1.3])
    q = s / r
    gr, gs, ge = f(eps=eps, r=r, s=s)
    np.testing.assert_allclose(gr, 4 * eps * (6 * q**6 - 12 * q**12) / r, rtol=1e-12)
    np.testing.assert_allclose(gs, 4 * eps * (12 * q**12 - 6 * q**6) / s, rtol=1e-12)
    np.testing.assert_allclose(ge, 4 * (q**12 - q**6), rtol=1e-12)


def _random_expr(rng: random.Random, depth: int) -> sp.Expr:
    if depth == 0:
        return rng.choice([X, Y, Z, X, Y, sp.Integer(rng.randint(1, 5))])
    a, b = _random_expr(rng, depth - 1), _random_expr(rng, depth - 1)
    kind = rng.randrange(8)
    if kind == 0:
        return a + b
    if kind == 1:
        return a - b
    if kind == 2:
        return a * b
    if kind == 3:
        return -a * b
    if kind == 4:
        return a / (1 + b**2)
    if kind == 5:
        return (1 + a**2) ** rng.choice([-3, -2, 2, 3, 4, 6, 12])
    if kind == 6:
        return sp.exp(-a) * b
    return X ** rng.choice([-5, -3, 3, 7]) * a


def _run(assignments, outputs, values):
    printer = CodePrinter()
    scope = {"_np": np, **values}
    for symbol, value in assignments:
        scope[symbol.name] = eval(printer.doprint(value), scope)
    return [np.broadcast_to(eval(printer.doprint(e), scope), (4,)) for e in outputs]


def test_rewrites_keep_values_and_never_add_passes():
    rng = random.Random(16)
    points = {"x": np.array([0.6, 0.9, 1.3, 1.7]), "y": np.array([-1.1, 0.4, 0.8, 1.2]),
              "z": np.array([0.3, -0.7, 1.5, 0.2])}
    changed = 0
    for _ in range(12):
        exprs = [_random_expr(rng, 3) for _ in range(3)]
        derivs = [sp.diff(exprs[0], s) for s in (X, Y, Z)] + exprs[1:]
        assignments, outputs = shared_subexpressions(derivs)
        lines, outs = cheaper_program(assignments, outputs)
        before, after = program_passes(assignments, outputs), program_passes(lines, outs)
        assert after <= before, (derivs, lines, outs)
        changed += after < before
        with np.errstate(all="ignore"):
            expected = _run(assignments, outputs, points)
            got = _run(lines, outs, points)
        for e, g in zip(expected, got, strict=True):
            np.testing.assert_allclose(g, e, rtol=1e-9, atol=1e-12, equal_nan=True)
    assert changed >= 3  # the rewrites do something on ordinary expressions


def test_rewrites_are_deterministic():
    derivs = [sp.diff(X**3 / (1 + Y**2) ** 3 - sp.exp(-X * Y), s) for s in (X, Y)]
    assignments, outputs = shared_subexpressions(derivs)
    assert cheaper_program(assignments, outputs) == cheaper_program(assignments, outputs)


def test_rosenbrock_gradient_computes_the_residual_once():
    f = sd.grad("(1 - x)**2 + 100*(y - x**2)**2", wrt=["x", "y"])
    lines = _formulas(f.source)
    # y - x**2 (or its negative) is one temporary, the only line that reads y
    reading_y = [
        line for line in lines
        if "y" in {n.id for n in ast.walk(ast.parse(line)) if isinstance(n, ast.Name)}
    ]
    assert len(reading_y) == 1 and "_t0" in reading_y[0], lines
    assert not any(_negations(line) for line in lines), lines
    x, y = np.array([0.3, 1.2, -0.7]), np.array([0.5, 1.1, 2.0])
    gx, gy = f(x=x, y=y)
    np.testing.assert_allclose(gx, 2 * (x - 1) - 400 * x * (y - x**2), rtol=1e-13)
    np.testing.assert_allclose(gy, 200 * (y - x**2), rtol=1e-13)


def test_output_that_divides_another_is_computed_once():
    f = sd.grad("v*tanh(w*x + b)", wrt=["w", "b", "v"])
    tree = ast.parse(f.source)
    body = next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "_formulas")
    lines = {n.targets[0].id: ast.unparse(_as_math(n.value)) for n in body.body
             if isinstance(n, ast.Assign)}
    assert lines["_w_bar"] == "_b_bar * x", lines  # the gradient in b, computed once
    rng = np.random.default_rng(3)
    w, b, v, x = rng.normal(size=(4, 5))
    h = np.tanh(w * x + b)
    gw, gb, gv = f(b=b, v=v, w=w, x=x)
    np.testing.assert_allclose(gw, v * (1 - h * h) * x, rtol=1e-12)
    np.testing.assert_allclose(gb, v * (1 - h * h), rtol=1e-12)
    np.testing.assert_allclose(gv, h, rtol=1e-13)


def _calls(lines: list[str]) -> dict[str, int]:
    """NumPy calls in ``lines`` by function name (``_np.exp`` -> ``exp``)."""
    counts: dict[str, int] = {}
    for line in lines:
        for n in ast.walk(ast.parse(line, mode="eval")):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute):
                counts[n.func.attr] = counts.get(n.func.attr, 0) + 1
    return counts


MORSE = "D*(1 - exp(-a*(r - r0)))**2"


def test_morse_gradient_computes_each_exponential_once():
    # simplification writes the a-derivative as expm1(u)*exp(-2*u) next to exp(-u): three
    # calls where one exp and one expm1 (kept for its accuracy near r = r0) do
    f = sd.grad(MORSE, wrt=["r", "a"])
    lines = _formulas(f.source)
    assert _calls(lines) == {"exp": 1, "expm1": 1}, lines
    assert not any(_has_pow(line) for line in lines), lines
    assert sum(line_passes(line) for line in lines) <= 18, lines
    Ds, As, Rs, R0s = sp.symbols("D a r r0", real=True)
    e = Ds * (1 - sp.exp(-As * (Rs - R0s))) ** 2
    points = [(2.0, 1.5, 1.0 + 2.0**-30, 1.0), (2.0, 1.5, 30.0, 1.0), (2.0, 1.5, 0.2, 1.0),
              (3.0, 0.7, 1.3, 1.1), (1.0, 2.0, -100.0, 1.0)]
    got = f(*(np.array(column) for column in zip(*points, strict=True)))
    for k, v in enumerate((Rs, As)):
        exact = [float(sp.diff(e, v).evalf(40, subs=dict(zip((Ds, As, Rs, R0s), p,
                                                              strict=True))))
                 for p in points]
        # accurate to a few ulp everywhere: near r0 (expm1 kept) and in both tails
        np.testing.assert_allclose(got[k], exact, rtol=4e-15)


def test_morse_value_and_grad_shares_the_exponentials():
    vg = sd.value_and_grad(MORSE, wrt=["r", "a"])
    g = sd.grad(MORSE, wrt=["r", "a"])
    lines, grad_lines = _formulas(vg.source), _formulas(g.source)
    assert _calls(lines) == {"exp": 1, "expm1": 1}, lines
    # the value adds at most two passes (a square and a product) to the gradient's
    assert sum(map(line_passes, lines)) <= sum(map(line_passes, grad_lines)) + 2, lines
    rng = np.random.default_rng(5)
    D, a, r, r0 = rng.uniform(0.5, 2, (4, 7))
    value, (gr, ga) = vg(D, a, r, r0)
    np.testing.assert_allclose(value, D * (1 - np.exp(-a * (r - r0))) ** 2, rtol=1e-13)
    for got, want in zip((gr, ga), g(D, a, r, r0), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-14)


def test_powers_of_one_exponential_are_products():
    f = sd.grad("exp(x) + exp(2*x)*y - 3*exp(-x)", wrt=["x", "y"])
    lines = _formulas(f.source)
    assert _calls(lines) == {"exp": 1}, lines
    x, y = np.array([-1.5, 0.2, 2.0]), np.array([0.3, -1.0, 4.0])
    gx, gy = f(x=x, y=y)
    np.testing.assert_allclose(gx, np.exp(x) + 2 * np.exp(2 * x) * y + 3 * np.exp(-x),
                               rtol=1e-14)
    np.testing.assert_allclose(gy, np.exp(2 * x), rtol=1e-14)


def _exp_expr(rng: random.Random, depth: int) -> sp.Expr:
    if depth == 0:
        return rng.choice([X, Y, Z, sp.Integer(rng.randint(1, 3))])
    a, b = _exp_expr(rng, depth - 1), _exp_expr(rng, depth - 1)
    kind = rng.randrange(5)
    if kind == 0:
        return a + b
    if kind == 1:
        return a * b
    if kind == 2:
        return sp.exp(rng.choice([-2, -1, 1, 2, 3]) * X * Y) * a
    if kind == 3:
        return (1 - sp.exp(rng.choice([-1, 2]) * X * Y)) * b
    return a - b


def test_shared_exponentials_keep_values_and_never_add_passes():
    from symdiff.codegen.exps import cheapest_program
    from symdiff.simplify import stable_forms

    rng = random.Random(7)
    points = {"x": np.array([0.6, -0.9, 1e-9, 1.7]), "y": np.array([-1.1, 0.4, 0.8, 1.2]),
              "z": np.array([0.3, -0.7, 1.5, 0.2])}
    changed = 0
    for _ in range(4):
        e = _exp_expr(rng, 2) + sp.exp(-X * Y) * (sp.exp(X * Y) - 1)
        outputs = [stable_forms(sp.diff(e, s)) for s in (X, Y)]
        plain = cheaper_program(*shared_subexpressions(outputs))
        lines, outs = cheapest_program(outputs)
        assert program_passes(lines, outs) <= program_passes(*plain), (outputs, lines, outs)
        changed += program_passes(lines, outs) < program_passes(*plain)
        for got, want in zip(_run(lines, outs, points), _run(*plain, points), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert changed >= 2


@pytest.mark.parametrize(
    ("text", "wrt"),
    [("sin(x)*exp(y)/(1 + x**2)", ["x", "y"]), (MORSE, ["r", "a"]),
     ("-0.5*((x - mu)/sigma)**2 - log(sigma)", ["x", "mu", "sigma"])],
)
def test_outputs_into_their_blocks_state_each_formula_once(text, wrt):
    """Each output is one statement, its last operation the operator's ufunc written into
    where the output goes: nothing is computed twice, nothing depends on a test."""
    source = sd.grad(text, wrt=wrt).source
    tree = ast.parse(source)
    body = next(f for f in tree.body if isinstance(f, ast.FunctionDef) and f.name == "_formulas")
    assert not [node for node in ast.walk(body) if isinstance(node, ast.If | ast.IfExp)]
    targets = [t.id for node in body.body if isinstance(node, ast.Assign) for t in node.targets]
    written = [node for node in body.body if isinstance(node, ast.Assign)
               and isinstance(node.value, ast.Call)
               and any(k.arg == "out" for k in node.value.keywords)]
    assert written, source
    for node in written:
        assert targets.count(node.targets[0].id) == 1
        (out,) = [k.value for k in node.value.keywords if k.arg == "out"]
        assert ast.unparse(out).startswith("_out[")
