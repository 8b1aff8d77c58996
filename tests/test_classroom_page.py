"""The self-contained pages: a derivation (``to_html_page``, ``symdiff derive --html``) and a
practice worksheet; and the plot they show."""

from __future__ import annotations

import html.parser
import math

import numpy as np
import pytest
import sympy as sp

import symdiff as sd
from symdiff.classroom import plot
from symdiff.classroom.page import worksheet_page
from symdiff.cli import main


class _Collector(html.parser.HTMLParser):
    """The tags of a page, and its attributes that load something (from anywhere but the page
    itself: a ``data:`` URL is part of it)."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.loads: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        for name, value in attrs:
            if (name in ("src", "href", "action", "srcset") and not (value or "").startswith(
                    ("data:", "#"))) or (value and "url(" in value and "url(#" not in value):
                self.loads.append(f"{tag} {name}={value}")


def _parsed(page: str) -> _Collector:
    collector = _Collector()
    collector.feed(page)
    return collector


def test_a_derivation_page_is_one_file_that_loads_nothing():
    d = sd.derive("x**2*sin(x)", wrt="x")
    page = d.to_html_page()
    found = _parsed(page)
    assert found.loads == []
    assert "script" not in found.tags
    assert found.tags.count("svg") == 2 and "math" in found.tags
    assert "x**2*cos(x) + 2*x*sin(x)" in page  # the answer as text
    assert page.count('class="hint"') == len(d.lines())
    assert page.count('class="step"') == len(d.lines())
    assert "product rule" in page and "Computational graph at x = 1" in page


def test_a_page_of_a_partial_derivative_plots_against_its_variable():
    d = sd.derive("x**2*y + log(y)", wrt="y")
    page = d.to_html_page(at={"x": 2.0, "y": 0.5}, interval=(0.1, 3.0))
    assert "\u2202" in page and "with x = 2" in page and "y from 0.1 to 3" in page
    with pytest.raises(sd.SymdiffError, match="at= needs a value for x"):
        d.to_html_page(at={"y": 1.0})


def test_a_tensor_derivation_has_no_page():
    d = sd.derive("sum(x**2)", wrt="x", shapes={"x": ("n",)})
    with pytest.raises(sd.SymdiffError, match="scalar expression"):
        d.to_html_page()


def test_the_command_writes_the_page(tmp_path, capsys):
    out = tmp_path / "out.html"
    assert main(["derive", "x**2*sin(x)", "--html", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8").startswith("<!doctype html>")
    assert main(["derive", "x**2*sin(x)", "--html", str(tmp_path / "no" / "out.html")]) == 2
    assert "cannot write" in capsys.readouterr().err


def test_a_worksheet_has_the_answers_only_when_asked():
    without = worksheet_page("7", ["chain", "product"], 2, 4, answers=False)
    with_answers = worksheet_page("7", ["chain", "product"], 2, 4, answers=True)
    assert without.count('class="answer"') == 0 and with_answers.count('class="answer"') == 4
    assert without.count('class="blank"') == 4
    assert _parsed(with_answers).loads == [] and "Seed 7, difficulty 2" in without


def test_the_plot_samples_the_function_and_its_derivative():
    x = sp.Symbol("x", real=True)
    xs = np.linspace(-2, 2, 9)
    assert plot.sample(sp.sin(x) * x, "x", {}, xs) == pytest.approx(np.sin(xs) * xs)
    assert plot.sample(sp.Integer(3), "x", {}, xs) == pytest.approx(np.full(9, 3.0))
    y = sp.Symbol("y", real=True)
    assert plot.sample(x * y, "x", {"y": 2.0}, xs) == pytest.approx(2 * xs)
    logs = plot.sample(sp.log(x), "x", {}, xs)
    assert not np.isfinite(logs[xs <= 0]).any() and np.isfinite(logs[xs > 0]).all()


def test_the_range_leaves_out_poles_but_not_large_smooth_values():
    xs = np.linspace(-5, 5, plot.SAMPLES)
    with np.errstate(all="ignore"):
        low, high = plot.value_range([plot.Curve("f", np.tan(xs))])
        assert -30 < low < -3 and 3 < high < 30
        low, high = plot.value_range([plot.Curve("f", np.exp(xs))])
    assert high >= math.exp(5)


def test_a_curve_is_cut_across_a_pole():
    xs = np.linspace(-1, 1, 101)
    with np.errstate(all="ignore"):
        svg = plot.draw(xs, [plot.Curve("f", 1 / xs)], "x", "1/x")
    assert svg.count('class="curve"') == 2


@pytest.mark.parametrize(("low", "high", "ticks"), [
    (-5, 5, [-4, -2, 0, 2, 4]), (0, 1, [0, 0.2, 0.4, 0.6, 0.8, 1]), (0.1, 3, [0.5, 1, 1.5, 2,
                                                                              2.5, 3])])
def test_ticks_are_round_numbers(low, high, ticks):
    assert plot.nice_ticks(low, high) == pytest.approx(ticks)
