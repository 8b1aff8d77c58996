"""Jupyter displays: derivations as one KaTeX-safe LaTeX block, compiled functions as source.

The golden strings were written once from the output and checked by eye: each row is
``d/dx [expr] &= result && (rule) identity``, the identity with its parts named (``f = ...``,
``g = ...``); sub-steps indented with ``\\quad`` in the rule column and labelled with the part of
the identity they compute (``f'\\colon``); the chain rule's inner function named ``u``, and a
final ``simplify`` row when simplifying changed the result.
"""

from __future__ import annotations

import importlib.util
import re
import sys

import pytest

import symdiff as sd
from symdiff.compiled import CompiledFunction
from symdiff.source_html import highlight_html

HAS_IPYTHON = importlib.util.find_spec("IPython") is not None

GOLDEN = {
    'x**2*sin(x)': (
        '$$\\begin{aligned}\n'
        '\\frac{d}{dx}\\left[x^{2} \\sin{\\left(x \\right)}\\right] &= 2 x \\sin{\\left(x'
        ' \\right)} + x^{2} \\cos{\\left(x \\right)} && \\text{(product rule)} \\\\\n'
        "&&& \\quad \\left(f g\\right)' = f' g + f g' \\\\\n"
        '&&& \\quad \\text{with } f = x^{2},\\ g = \\sin{\\left(x \\right)} \\\\\n'
        "\\frac{d}{dx}\\left[x^{2}\\right] &= 2 x && \\quad f'\\colon\\ \\text{(power"
        ' rule)} \\\\\n'
        '&&& \\quad\\quad \\frac{d}{dx} x^{2} = 2 x \\\\\n'
        '\\frac{d}{dx}\\left[\\sin{\\left(x \\right)}\\right] &= \\cos{\\left(x \\right)}'
        " && \\quad g'\\colon\\ \\text{(trigonometric rule)} \\\\\n"
        '&&& \\quad\\quad \\frac{d}{dx} \\sin{\\left(x \\right)} = \\cos{\\left(x'
        ' \\right)} \\\\\n'
        "f' g + f g' &= 2 x \\sin{\\left(x \\right)} + x^{2} \\cos{\\left(x \\right)}"
        ' && \\quad\\text{(put together)}\n'
        '\\end{aligned}$$'
    ),
    'sin(x)/x': (
        '$$\\begin{aligned}\n'
        '\\frac{d}{dx}\\left[\\frac{\\sin{\\left(x \\right)}}{x}\\right] &= \\frac{x'
        ' \\cos{\\left(x \\right)} - \\sin{\\left(x \\right)}}{x^{2}} && \\text{(quotient'
        ' rule)} \\\\\n'
        "&&& \\quad \\left(\\frac{f}{g}\\right)' = \\frac{f' g - f g'}{g^{2}} \\\\\n"
        '&&& \\quad \\text{with } f = \\sin{\\left(x \\right)},\\ g = x \\\\\n'
        '\\frac{d}{dx}\\left[\\sin{\\left(x \\right)}\\right] &= \\cos{\\left(x \\right)}'
        " && \\quad f'\\colon\\ \\text{(trigonometric rule)} \\\\\n"
        '&&& \\quad\\quad \\frac{d}{dx} \\sin{\\left(x \\right)} = \\cos{\\left(x'
        ' \\right)} \\\\\n'
        "\\frac{d}{dx}\\left[x\\right] &= 1 && \\quad g'\\colon\\ \\text{(variable rule)} \\\\\n"
        "\\frac{f' g - f g'}{g^{2}} &= \\frac{\\cos{\\left(x \\right)} x - \\sin{\\left(x"
        ' \\right)} \\cdot 1}{x^{2}} && \\quad\\text{(put together)} \\\\\n'
        '&= \\frac{x \\cos{\\left(x \\right)} - \\sin{\\left(x \\right)}}{x^{2}} &&\n'
        '\\end{aligned}$$'
    ),
    'exp(x**2)': (
        '$$\\begin{aligned}\n'
        '\\frac{d}{dx}\\left[e^{x^{2}}\\right] &= 2 x e^{x^{2}} && \\text{(chain rule)} \\\\\n'
        "&&& \\quad \\left(f(u)\\right)' = f'(u)\\, u' \\\\\n"
        'u &= x^{2} && \\quad\\text{(inner function)} \\\\\n'
        "\\frac{d}{du}\\left[e^{u}\\right] &= e^{u} && \\quad f'(u)\\colon\\ \\text{(exponential"
        ' rule)} \\\\\n'
        '&&& \\quad\\quad \\frac{d}{du} e^{u} = e^{u} \\\\\n'
        "\\frac{d}{dx}\\left[x^{2}\\right] &= 2 x && \\quad u'\\colon\\ \\text{(power"
        ' rule)} \\\\\n'
        '&&& \\quad\\quad \\frac{d}{dx} x^{2} = 2 x \\\\\n'
        "f'(u)\\, u' &= e^{x^{2}} \\left(2 x\\right) && \\quad\\text{(put together)} \\\\\n"
        '&= 2 x e^{x^{2}} &&\n'
        '\\end{aligned}$$'
    ),
    'log(x, 2)': (
        '$$\\begin{aligned}\n'
        '\\frac{d}{dx}\\left[\\log_{2}\\left(x\\right)\\right] &= \\frac{1}{x \\ln{\\left(2'
        ' \\right)}} && \\text{(logarithm rule)}\n'
        '\\end{aligned}$$'
    ),
    'x**x': (
        '$$\\begin{aligned}\n'
        '\\frac{d}{dx}\\left[x^{x}\\right] &= x^{x} \\left(\\ln{\\left(x \\right)}'
        ' + 1\\right) && \\text{(logarithmic differentiation)} \\\\\n'
        "&&& \\quad \\left(f^{g}\\right)' = \\left(e^{g \\ln{f}}\\right)' = f^{g}"
        " \\left(g' \\ln{f} + \\frac{g f'}{f}\\right) \\\\\n"
        '&&& \\quad \\text{with } f = x\\ \\text{(base)},\\ g = x\\ \\text{(exponent)} \\\\\n'
        "\\frac{d}{dx}\\left[x\\right] &= 1 && \\quad \\text{base } f'\\colon\\ \\text{(variable"
        ' rule)} \\\\\n'
        "\\frac{d}{dx}\\left[x\\right] &= 1 && \\quad \\text{exponent } g'\\colon\\"
        ' \\text{(variable rule)}\n'
        '\\end{aligned}$$'
    ),
}


def assert_katex_safe(latex: str) -> None:
    """The subset KaTeX renders: one ``aligned`` block, balanced braces and ``\\left``/``\\right``,
    ``\\text{...}`` holding only letters, spaces, digits, parentheses and commas."""
    assert latex.startswith("$$\\begin{aligned}\n") and latex.endswith("\n\\end{aligned}$$")
    assert latex.count("\\begin{") == latex.count("\\end{")
    assert not re.search(r"\\begin\{(align|eqnarray|equation)\*?\}", latex)
    depth = 0
    for char in latex.replace("\\{", "").replace("\\}", ""):
        depth += {"{": 1, "}": -1}.get(char, 0)
        assert depth >= 0
    assert depth == 0
    assert len(re.findall(r"\\left\b", latex)) == len(re.findall(r"\\right\b", latex))
    for content in re.findall(r"\\text\{([^}]*)\}", latex):
        assert re.fullmatch(r"[A-Za-z0-9 (),]*", content), content


# -- derivations -----------------------------------------------------------------------------------
@pytest.mark.parametrize("expr", sorted(GOLDEN))
def test_golden_latex(expr):
    latex = sd.derive(expr, wrt="x")._repr_latex_()
    assert latex == GOLDEN[expr]
    assert_katex_safe(latex)


@pytest.mark.parametrize(
    "expr",
    ["sin(cos(x))", "atan2(x**2, x)", "(x**2 - 1)/(x - 1)", "where(x > 0, x**2, -x)", "max(x, 0)"],
)
def test_more_derivations_are_katex_safe(expr):
    d = sd.derive(expr, wrt="x")
    assert_katex_safe(d.latex("all"))
    assert_katex_safe(d.latex("key"))


def test_chain_rule_names_u_from_the_step_data():
    latex = sd.derive("log(x**2)", wrt="x").latex()
    assert "u &= x^{2}" in latex
    assert "\\frac{d}{du}\\left[\\ln{\\left(u \\right)}\\right] &= \\frac{1}{u}" in latex
    # a variable already called u: the inner function gets another name
    latex = sd.derive("exp(u**2)", wrt="u").latex()
    assert "v &= u^{2}" in latex and "\\frac{d}{dv}\\left[e^{v}\\right]" in latex
    # several inner functions: u_1, u_2 and one partial derivative each
    latex = sd.derive("atan2(x**2, x)", wrt="x").latex()
    assert "u_{1} &= x^{2}" in latex and "u_{2} &= x" in latex
    assert "\\frac{\\partial}{\\partial u_{1}}" in latex


def test_simplify_row_repeats_the_derivative_not_a_second_derivative():
    d = sd.derive("(x**2 - 1)/(x - 1)", wrt="x")
    last = d.latex().splitlines()[-3]  # then the row saying what the simplification did
    assert last.startswith("\\frac{d}{dx}\\left[\\frac{x^{2} - 1}{x - 1}\\right] &= 1 ")
    assert d.steps[-1].latex().startswith("\\frac{- x^{2} + 2 x")


def test_plain_text_lists_the_rules_in_order():
    text = str(sd.derive("exp(x**2)*sin(x)", wrt="x"))
    rules = re.findall(r"^\s*(?:\d\. |[^\s\[]+: )?\[([a-z ]+)\]", text, flags=re.M)
    assert rules == ["product", "chain", "exponential", "power", "trigonometric", "simplify"]
    assert text.splitlines()[1].startswith("1. [product]")


def test_mimebundle_has_latex_and_plain_but_no_html():
    d = sd.derive("sin(x)/x", wrt="x")
    bundle = d._repr_mimebundle_()
    assert set(bundle) == {"text/latex", "text/plain"}
    assert bundle["text/latex"] == GOLDEN["sin(x)/x"]
    assert bundle["text/plain"] == str(d)
    assert set(d._repr_mimebundle_(exclude={"text/plain"})) == {"text/latex"}
    assert set(d._repr_mimebundle_(include={"text/html"})) == {"text/html"}
    assert set(d.steps[0]._repr_mimebundle_()) == {"text/latex", "text/plain"}
    # called by hand, _repr_html_ is still the escaped table API.md lists
    assert d._repr_html_().startswith('<div class="symdiff-steps">')


def test_verbose_key_hides_constant_and_variable_leaves():
    d = sd.derive("x**x + 3", wrt="x")
    assert "variable" in d.latex("all") and "constant rule" in d.latex("all")
    key = d.latex("key")
    assert "variable" not in key and "constant rule" not in key
    assert "logarithmic differentiation" in key
    assert d.text("all").count("[variable]") == 2 and "[variable]" not in d.text("key")
    assert str(d) == d.text("all")
    assert "[variable]" in str(sd.derive("x**x", wrt="x", verbose="key"))  # str: every step
    keyed = sd.derive("x**x + 3", wrt="x", verbose="key")
    assert keyed._repr_latex_() == key and d.with_verbose("key")._repr_latex_() == key
    # the root step is always shown, even when trivial
    assert "(constant rule)" in sd.derive("3", wrt="x", verbose="key").latex()
    with pytest.raises(sd.SymdiffError, match="verbose"):
        sd.derive("x", verbose="some")


def test_display_without_ipython_prints_text(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "IPython", None)
    monkeypatch.setitem(sys.modules, "IPython.display", None)
    sd.derive("x**x + 3", wrt="x").display(verbose="key")
    out = capsys.readouterr().out
    assert "[general power]" in out and "[variable]" not in out


#: Run in a child process: a real IPython shell (an ``InteractiveShell`` singleton) in the test
#: process would change how ``display`` behaves for every later test.
IPYTHON_SCRIPT = r"""
import json
from IPython.core.formatters import DisplayFormatter
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
import symdiff as sd

shell = InteractiveShell.instance()
d = sd.derive("exp(x**2)", wrt="x")
out = {}
with capture_output() as cap:
    out["format"] = list(shell.display_formatter.format(d))   # handled by _ipython_display_
    shell.run_cell("import symdiff as sd\nsd.derive('exp(x**2)', wrt='x')")  # last expression
    d.display(verbose="key")
out["published"] = [sorted(o.data) for o in cap.outputs]
out["latex"] = [o.data.get("text/latex") for o in cap.outputs]
out["step"] = sorted(DisplayFormatter().format(d.steps[0])[0])
out["compiled"] = sorted(DisplayFormatter().format(sd.grad("x**2"))[0])
out["html_by_hand"] = d._repr_html_()[:30]
print(json.dumps(out))
"""


@pytest.mark.skipif(
    not HAS_IPYTHON, reason="IPython is not installed (optional; pip install ipython)"
)
def test_ipython_shows_latex_not_html(tmp_path):
    """Through a real IPython shell: display(d) and a cell ending in d publish LaTeX + plain
    text only (no text/html, which JupyterLab would prefer), yet d._repr_html_() is the table."""
    import json
    import os
    import subprocess

    env = {**os.environ, "SYMDIFF_CACHE_DIR": str(tmp_path), "IPYTHONDIR": str(tmp_path / "ip")}
    run = subprocess.run(
        [sys.executable, "-c", IPYTHON_SCRIPT],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    out = json.loads(run.stdout.strip().splitlines()[-1])
    assert out["format"] == [{}, {}]  # the object displayed itself
    assert out["published"] == [["text/latex", "text/plain"]] * 3
    assert out["latex"][0] == out["latex"][1] == GOLDEN["exp(x**2)"]
    assert out["latex"][2] == sd.derive("exp(x**2)", wrt="x").latex("key")
    assert out["step"] == ["text/latex", "text/plain"]
    assert "text/html" in out["compiled"]  # compiled functions do show as HTML
    assert out["html_by_hand"].startswith('<div class="symdiff-steps">')


# -- compiled functions ----------------------------------------------------------------------------
def test_compiled_html_is_highlighted_with_pygments():
    pytest.importorskip("pygments")
    g = sd.grad("x**2*sin(y)", wrt=["x", "y"])
    html = g._repr_html_()
    assert "<code>grad_f(x, y)</code>" in html and "with respect to (x, y)" in html
    assert "style=" in html and "<span" in html and "_x_bar" in html
    assert "<script" not in html


def test_compiled_html_without_pygments_is_an_escaped_pre(monkeypatch):
    for name in ("pygments", "pygments.formatters", "pygments.lexers"):
        monkeypatch.setitem(sys.modules, name, None)
    g = sd.grad("x**2*sin(y)", wrt=["x", "y"])
    html = g._repr_html_()
    assert '<pre class="symdiff-source">' in html and "<span" not in html
    assert "<code>grad_f(x, y)</code>" in html
    assert highlight_html("a < b & '<script>'") == (
        '<pre class="symdiff-source">a &lt; b &amp; &#x27;&lt;script&gt;&#x27;</pre>'
    )


def test_explain_pairs_each_output_with_its_rules():
    g = sd.grad("x**2*sin(y) + exp(x*y)", wrt=["x", "y"])
    text = g.explain(verbose="all")
    assert text.startswith("grad_f(x, y): grad with respect to (x, y)")
    blocks = text.split("\n\n")[1:]
    assert [b.splitlines()[0].split(" = ")[0] for b in blocks] == ["_x_bar", "_y_bar"]
    assert "[chain]" in blocks[0] and "[power]" in blocks[0] and "[exponential]" in blocks[0]
    assert "[trigonometric]" in blocks[1]
    assert "[variable]" not in g.explain()  # key steps by default


def test_explain_other_kinds():
    text = sd.value_and_grad("exp(x**2)", wrt="x").explain()
    assert "_x_bar = " in text and "[chain]" in text
    text = sd.jacobian(["x*y", "sin(x)"], wrt=["x", "y"]).explain()
    assert "d(expr 1)/d(x)" in text and "[trigonometric]" in text
    assert "no rule tree" in sd.compile("x*y").explain()
    g = sd.grad("sin(x)", wrt="x")
    assert "[trigonometric]" in g.explain(expr="sin(x)")


def test_explain_needs_the_expression_when_the_header_is_gone():
    g = sd.grad("sin(x)", wrt="x")
    bare = CompiledFunction(
        source=g.source.replace(" from: ", " of: "),
        name=g.name,
        args=g.args,
        wrt=g.wrt,
        exprs=g.exprs,
        kind=g.kind,
    )
    with pytest.raises(sd.SymdiffError, match="expr="):
        bare.explain()
    assert "[trigonometric]" in bare.explain(expr="sin(x)")


def test_a_chain_inside_a_chain_names_its_inner_function_v():
    latex = sd.derive("exp(sin(x)**2)", wrt="x").latex()
    assert "u &= \\sin^{2}{\\left(x \\right)}" in latex
    assert "v &= \\sin{\\left(x \\right)}" in latex and "\\frac{d}{dv}\\left[v^{2}\\right]" in latex


def test_compiled_html_shows_the_whole_short_module_in_a_code_font():
    g = sd.grad("x**2*sin(y)", wrt=["x", "y"])
    page = g._repr_html_()
    assert "monospace" in page and "<details>" not in page
    assert "grad_f" in page and "_formulas" in page and "symdiff.runtime" in page
    # nothing of the source is lost: every identifier of it is in the page
    for name in set(re.findall(r"\b_?[A-Za-z]\w*\b", g.source)):
        assert name in page


# -- computational graphs ----------------------------------------------------------------------
def test_graph_svg_styles_are_scoped_to_the_graph():
    """Inline SVG <style> applies to the whole page: every rule names .symdiff-graph, so node
    colours cannot leak into the text (or into other pictures on the page)."""
    svg = sd.graph("x*y + y", at={"x": 2, "y": 3}).to_svg()
    assert 'class="symdiff-graph"' in svg and 'id="symdiff-arrow"' in svg
    style = svg.split("<style>")[1].split("</style>")[0]
    rules = [line for line in style.splitlines() if "{" in line]
    assert rules and all(line.startswith(".symdiff-graph ") for line in rules)


def test_walkthrough_tables_show_as_html_and_as_text():
    g = sd.graph("x*y**3*z*(y + z)", at={"x": 5, "y": 2, "z": 3})
    table = g.reverse_table()
    page = table._repr_html_()
    assert page.startswith('<table class="symdiff-table">') and "<th>adjoint</th>" in page
    assert "<td>120 + 900  (branch)</td>" in page
    assert "reverse mode (one pass): df/dx = 120, df/dy = 1020, df/dz = 320" in page
    assert table.text.endswith(table.summary + "\n")
    assert len(table.cells) == len(table.rows) and len(table.header) == 6
    compared = sd.graph("where(x < y, x*y, y)", at={"x": 1, "y": 2}).forward_table("x")
    assert any("x < y" in cell for row in compared.cells for cell in row)
    assert "x &lt; y" in compared._repr_html_() and "x < y" not in compared._repr_html_()
    if HAS_IPYTHON:
        from IPython.lib.pretty import pretty

        assert pretty(g.forward_table("y")) == g.forward_table("y").text.rstrip("\n")
