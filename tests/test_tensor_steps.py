"""Steps for tensor expressions: sd.derive(..., shapes=) records the backward walk's rules."""

from __future__ import annotations

import pytest

import symdiff as sd
from symdiff.engine.steps import Derivation
from symdiff.tensor.steps import TensorDerivation, TensorStep
from symdiff.tensor.vjp import TENSOR_VJPS

from .test_display import assert_katex_safe

LOGISTIC = "sum(log(1 + exp(-y * (X @ w))))"
LOGISTIC_SHAPES = {"X": ("n", "d"), "y": ("n",), "w": ("d",)}
SEED = "sum(sigmoid(a) @ b)"
SEED_SHAPES = {"a": ("n", "k"), "b": ("k", "m")}
MLP = (
    "mean(logsumexp(tanh(X @ W1 + b1) @ W2 + b2, axis=1)"
    " - sum(Y * (tanh(X @ W1 + b1) @ W2 + b2), axis=1))"
)
MLP_SHAPES = {"X": ("n", "d"), "Y": ("n", "k"), "W1": ("d", "h"), "b1": ("h",),
              "W2": ("h", "k"), "b2": ("k",)}


def _rules(d: Derivation) -> list[str]:
    return [step.rule for step in d.steps]


def test_logistic_regression_steps_in_order():
    d = sd.derive(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)
    assert isinstance(d, TensorDerivation) and isinstance(d, Derivation)
    assert _rules(d) == ["sum (broadcast back)", "elementwise chain", "matmul"]
    assert [s.text() for s in d.steps] == [
        "f = sum(z2): z2_bar = full((n,), 1)",
        "z2 = softplus(-y*z1): z1_bar = -y*sigmoid(-y*z1)",
        "z1 = X @ w: w_bar = X.T @ z1_bar",
    ]
    # the elementwise step carries the scalar rule table's own tree for d softplus(-y z1)/d z1
    assert [s.rule for _, s in d.steps[1].substeps[0].walk()] == [
        "chain", "softplus", "constant multiple", "variable",
    ]
    assert d.rules[:3] == ["sum (broadcast back)", "elementwise chain", "chain"]
    assert d.result.shape == ("d",)


def test_the_result_is_what_grad_emits():
    for expr, shapes, wrt in [(LOGISTIC, LOGISTIC_SHAPES, "w"), (SEED, SEED_SHAPES, "a"),
                              (SEED, SEED_SHAPES, "b"), (MLP, MLP_SHAPES, "W1")]:
        d = sd.derive(expr, wrt=wrt, shapes=shapes)
        assert d.result == sd.grad(expr, wrt=wrt, shapes=shapes).exprs[0]
        assert d.raw == d.result


def test_seed_example_steps():
    d = sd.derive(SEED, wrt="a", shapes=SEED_SHAPES)
    assert _rules(d) == ["sum (broadcast back)", "matmul", "elementwise chain"]
    assert d.steps[1].expr == "z2 = z1 @ b"
    assert d.steps[2].expr == "z1 = sigmoid(a)"
    assert [s.rule for s in d.steps[2].substeps] == ["sigmoid"]
    d = sd.derive(SEED, wrt="b", shapes=SEED_SHAPES)
    assert _rules(d) == ["sum (broadcast back)", "matmul"]
    assert d.steps[1].lines[0][0] == "b_bar"


def test_mlp_steps_show_fan_out_and_unbroadcast():
    d = sd.derive(MLP, wrt="b1", shapes=MLP_SHAPES)
    assert _rules(d) == [
        "mean (broadcast back)", "elementwise chain", "sum (broadcast back)",
        "elementwise chain", "logsumexp", "elementwise chain", "branch", "matmul",
        "elementwise chain", "unbroadcast",
    ]
    branch = d.steps[_rules(d).index("branch")]
    assert "used 2 times" in branch.note
    unbroadcast = d.steps[-1]
    assert unbroadcast.lines[0][:2] == ("b1_bar", "=")
    assert unbroadcast.lines[0][2].startswith("sum(") and "axis=0" in unbroadcast.lines[0][2]
    assert "(n, h) back to the shape (h,)" in unbroadcast.note
    assert d.steps[-2].lines[0][:2] == ("b1_bar", "+=")


@pytest.mark.parametrize(
    ("expr", "shapes", "rule"),
    [
        ("sum(max(x, axis=1))", {"x": ("n", 3)}, "max with ties split"),
        ("sum(min(x, axis=0))", {"x": ("n", 3)}, "min with ties split"),
        ("sum(transpose(x, (2, 0, 1)) * c)", {"x": (2, 3, 4), "c": (3,)}, "transpose"),
        ("sum(x[:, 0] * y)", {"x": ("n", 3), "y": ("n",)}, "slice (scatter)"),
        ("sum(reshape(x, (-1,)) ** 2)", {"x": ("n", 3)}, "reshape"),
        ("sum(repeat(x, 2, axis=0) ** 2)", {"x": ("n", 3)}, "repeat (sum back)"),
        ("sum(softmax(x, axis=1) * y)", {"x": ("n", 3), "y": ("n", 3)}, "softmax"),
        ("sum(x * v)", {"x": ("n", 3), "v": (3,)}, "unbroadcast"),
        ("sum(x * x.T)", {"x": (3, 3)}, "branch"),
    ],
)
def test_every_rule_is_named_as_the_table_names_it(expr, shapes, rule):
    wrt = "v" if "v" in shapes else "x"
    d = sd.derive(expr, wrt=wrt, shapes=shapes)
    assert rule in _rules(d)
    assert d.result == sd.grad(expr, wrt=wrt, shapes=shapes).exprs[0]
    assert_katex_safe(d.latex("all"))
    assert_katex_safe(d.latex("key"))


def test_step_names_come_from_the_vjp_table():
    names = {rule.name for rule in TENSOR_VJPS.values()} | {"branch", "unbroadcast"}
    d = sd.derive(MLP, wrt="W1", shapes=MLP_SHAPES)
    assert {step.rule for step in d.steps} <= names
    assert all(step.note for step in d.steps)
    assert TENSOR_VJPS["matmul"].identity in str(d)


def test_text_and_latex_rendering():
    d = sd.derive(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES)
    text = str(d)
    assert text.splitlines()[0] == (
        "d/dw [sum(softplus(-(X @ w)*y))] = X.T @ (-y*sigmoid(-(X @ w)*y))   (shape (d,))"
    )
    assert "3. [matmul] z1 = X @ w: w_bar = X.T @ z1_bar" in text
    assert "\n  [chain] d/dz1 [softplus(-y*z1)]" in text
    assert "_a0" not in text and "_a1" not in text  # placeholders renamed, notes too
    latex = d._repr_latex_()
    assert_katex_safe(latex)
    assert_katex_safe(d.latex("key"))
    assert r"z_{1} &= X w && \text{(matmul rule)}" in latex
    assert r"\overline{w} &= {X}^{T} \overline{z_{1}} &&" in latex
    assert "variable rule" in latex and "variable rule" not in d.latex("key")
    assert d.with_verbose("key").latex() == d.latex("key")
    bundle = d._repr_mimebundle_()
    assert set(bundle) == {"text/latex", "text/plain"}
    assert "[matmul]</span> <code>z1 = X @ w: w_bar = X.T @ z1_bar</code>" in d.html()
    assert str(d) == str(sd.derive(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES))


def test_a_step_renders_on_its_own():
    d = sd.derive(SEED, wrt="b", shapes=SEED_SHAPES)
    step = d.steps[1]
    assert isinstance(step, TensorStep)
    assert str(step).startswith("1. [matmul] z2 = z1 @ b: b_bar = ")
    assert step.latex().startswith(r"z_{2} &= z_{1} b && \text{(matmul rule)}")


def test_names_never_clash_with_variables_and_html_is_escaped():
    d = sd.derive("sum(where(f < 0, f * z1, 0))", wrt="z1", shapes={"f": ("n",), "z1": ("n",)})
    output = d.steps[0].expr.split(" = ")[0]
    assert output not in ("f", "z1") and not output.startswith("z")
    assert "&lt;" in d.html() and "f < 0" in str(d)
    assert_katex_safe(d.latex())


def test_errors():
    with pytest.raises(sd.SymdiffError, match="say which one with wrt="):
        sd.derive(LOGISTIC, shapes=LOGISTIC_SHAPES)
    with pytest.raises(sd.SymdiffError, match="one name"):
        sd.derive(LOGISTIC, wrt=["w"], shapes=LOGISTIC_SHAPES)
    with pytest.raises(sd.ShapeError, match="scalar"):
        sd.derive("X @ w", wrt="w", shapes=LOGISTIC_SHAPES)
    with pytest.raises(sd.SymdiffError, match="verbose"):
        sd.derive(LOGISTIC, wrt="w", shapes=LOGISTIC_SHAPES, verbose="some")


def test_one_variable_needs_no_wrt_and_an_absent_one_has_no_steps():
    d = sd.derive("sum(x ** 2)", shapes={"x": ("n",)})
    assert str(d.var) == "x" and _rules(d) == ["sum (broadcast back)", "elementwise chain"]
    d = sd.derive("sum(x ** 2)", wrt="q", shapes={"x": ("n",), "q": (2,)})
    assert d.steps == [] and d.result == "full((2,), 0)"
