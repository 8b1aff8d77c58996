"""Notebooks 01, 03 and 06 as a reader sees them, in headless Chromium at 1,000 px wide.

Each notebook is executed in a fresh kernel, converted to HTML by nbconvert (MathJax from the
``jupyter-server-mathjax`` package, nothing from a network) and opened in the system Chromium
through Playwright (:mod:`tests.browser`). The test fails on a MathJax error or TeX left
untypeset, on an element wider than the page or content cut off in a box that scrolls sideways,
and on an SVG whose drawing leaves its own ``viewBox``. Without Chromium (``apt-get install -y
chromium``; ``.ci/run`` installs it) the test is skipped with that reason.
"""

from __future__ import annotations

import pytest

from . import browser

NOTEBOOKS = ["01_derivations.ipynb", "03_computational_graphs.ipynb",
             "06_convolutional_networks.ipynb"]

pytestmark = pytest.mark.skipif(browser.missing() is not None,
                                reason=browser.missing() or "browser test")


@pytest.mark.slow
def test_notebooks_render_without_errors_overflow_or_clipping(tmp_path):
    pages = [browser.executed_html(name, tmp_path, tmp_path / "cache") for name in NOTEBOOKS]
    found = browser.problems(pages)
    assert found == {page.name: [] for page in pages}


def test_the_checks_catch_what_they_look_for(tmp_path):
    """A page with each fault (a MathJax error, a box wider than the page, a clipped SVG) and
    one without: the checks are not vacuous."""
    good = tmp_path / "good.html"
    bad = tmp_path / "bad.html"
    head = f'<html><head><script src="{browser.mathjax_url()}"></script></head><body>'
    good.write_text(head + r"<p>$$\frac{1}{x}$$</p>"
                    '<svg viewBox="0 0 100 50" width="100"><rect x="10" y="10" width="80" '
                    'height="30"/></svg></body></html>')
    bad.write_text(head + r"<p>$$\frac{1}{x$$</p><div style='width:1400px'>wide</div>"
                   '<svg viewBox="0 0 100 50" width="100"><rect x="10" y="-7" width="80" '
                   'height="30"/></svg></body></html>')
    found = browser.problems([good, bad])
    assert found["good.html"] == []
    bad_found = "\n".join(found["bad.html"])
    assert "TeX not typeset: \\frac{1}{x" in bad_found  # MathJax shows the TeX of an error
    assert "wider than the page (1408 > 1000 px): div" in bad_found
    assert "SVG clipped by its viewBox 0 0 100 50: content 10.0 -7.0 80.0 30.0" in bad_found
