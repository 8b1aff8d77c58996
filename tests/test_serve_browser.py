"""The classroom page in headless Chromium, driven by the keyboard alone: type
``sin(x)**2*cos(3*x)``, reveal every hint and step, see the plot and the graph, check a right,
a right but unsimplified and a wrong answer, make a practice set from a seed twice and get the
same exercises; no console error, nothing loaded from outside, the math typeset. And the page
of ``symdiff derive --html`` opened offline.

Skipped, with the reason, where Chromium or Playwright is missing (``.ci/run`` installs
Chromium with apt).
"""

from __future__ import annotations

import pytest

from symdiff.classroom.practice import RULES, exercises

from . import classroom_browser as cb

pytestmark = pytest.mark.skipif(cb.missing() is not None, reason=cb.missing() or "")

WAIT = 180_000  # ms: a derivation on a loaded machine


@pytest.fixture(scope="module")
def served():
    with cb.classroom_server(workers=2, budget=60.0) as running:
        yield running


@pytest.fixture(scope="module")
def chromium():
    with cb.browser() as running:
        yield running


def _verdict(page, text):
    cb.type_into(page, "answer", text)
    page.keyboard.press("Enter")
    page.wait_for_function("() => !document.querySelector('#verdict .busy') && "
                           "document.querySelector('#verdict .verdict')", timeout=WAIT)
    return page.eval_on_selector("#verdict .verdict", "e => [e.className, e.textContent]")


def test_a_lesson_by_keyboard_alone(served, chromium):
    url, _ = served
    page = chromium.new_page(viewport={"width": 1000, "height": 900})
    watch = cb.Watch(page, (url, "data:"))
    page.goto(url)

    page.keyboard.press("Tab")  # the first stop: the link that skips to the expression
    assert page.evaluate("() => document.activeElement.className") == "skip"
    cb.type_into(page, "expr", "sin(x)**2*cos(3*x)")
    page.wait_for_selector("#preview math", timeout=WAIT)
    assert page.inner_text("#preview").startswith("Understood:")
    page.keyboard.press("Enter")
    page.wait_for_selector("#steps ol.walk", state="attached", timeout=WAIT)

    items = page.locator("#steps ol.walk > li")
    count = items.count()
    assert count >= 20 and page.locator("#steps li:not([hidden])").count() == 0
    cb.tab_to(page, "next")
    kinds = []
    while page.is_enabled("#next"):
        label = page.inner_text("#next")
        page.keyboard.press("Enter")
        shown = page.locator("#steps ol.walk > li:not([hidden]), #final:not([hidden])")
        kinds.append((label, shown.count()))
    assert [n for _, n in kinds] == list(range(1, count + 2))  # one more each time, the answer
    labels = [label for label, _ in kinds]
    assert labels[0] == "Show the next hint" and labels[-1] == "Show the answer"
    assert "Show the step" in labels
    hints = page.locator("#steps li.hint").all_inner_texts()
    steps = page.locator("#steps li.step").all_inner_texts()
    assert len(hints) == len(steps) == count // 2
    assert "product rule" in hints[0] and "chain rule" in hints[1]
    assert page.is_visible("#final") and "Answer" in page.inner_text("#final")

    page.wait_for_selector("#plot svg path.curve", timeout=WAIT)
    page.wait_for_selector("#graph svg.symdiff-graph", timeout=WAIT)
    assert "df/dx = -1.19997" in page.inner_text("#gradient")
    cb.type_into(page, "from", "-2")
    cb.type_into(page, "to", "2")
    page.keyboard.press("Enter")
    page.wait_for_function("() => (document.querySelector('#plot svg title') || {})"
                           ".textContent?.includes('from -2 to 2')", timeout=WAIT)
    assert "def grad_f(x" in page.inner_text("#code")

    right = _verdict(page, "2*sin(x)*cos(x)*cos(3*x) - 3*sin(x)**2*sin(3*x)")
    unsimplified = _verdict(page, "2*sin(x)*cos(x)*cos(3*x) - 3*sin(x)*sin(x)*sin(3*x)")
    wrong = _verdict(page, "2*sin(x)*cos(x)*cos(3*x) + 3*sin(x)**2*sin(3*x)")
    assert right[0] == "verdict equivalent" and right[1].startswith("Right.")
    assert unsimplified[0] == "verdict unsimplified" and "Simpler:" in unsimplified[1]
    assert wrong[0] == "verdict different" and wrong[1].startswith("Not equivalent. At x = ")

    cb.type_into(page, "try-0-3", "2*u")  # check this line: f'(u) of u**2
    page.keyboard.press("Enter")
    page.wait_for_selector("#steps .stepcheck .verdict", timeout=WAIT)
    assert page.inner_text("#steps .stepcheck .verdict").startswith("Right.")

    typeset = page.evaluate(cb.TYPESET)
    assert typeset["found"] == [] and typeset["fractions"] > 5
    assert watch.problems == []


def test_a_practice_set_from_a_seed_twice_is_the_same(served, chromium):
    url, _ = served
    page = chromium.new_page(viewport={"width": 1000, "height": 900})
    watch = cb.Watch(page, (url, "data:"))
    sets = []
    for _ in range(2):
        page.goto(url)
        cb.type_into(page, "seed", "class-7")
        cb.tab_to(page, "practice")
        page.keyboard.press("Enter")
        page.wait_for_selector("#exercises li", timeout=WAIT)
        sets.append(page.eval_on_selector_all("#exercises li", "es => es.map(e => e.dataset.text)"))
    assert sets[0] == sets[1] == [e.text for e in exercises("class-7", list(RULES), 1, 8)]

    for _ in range(200):  # "Try this one" on the first exercise, by Tab
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement.textContent") == "Try this one":
            break
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.activeElement.id === 'next'", timeout=WAIT)
    assert page.input_value("#expr") == sets[0][0]

    cb.tab_to(page, "worksheet-answers")
    page.keyboard.press("Enter")
    page.wait_for_selector("ol.exercises li", timeout=WAIT)
    assert page.locator("ol.exercises .answer").count() == 8
    assert page.evaluate(cb.TYPESET)["found"] == []
    assert watch.problems == []


def test_every_control_is_reached_by_tab(served, chromium):
    url, _ = served
    page = chromium.new_page(viewport={"width": 1000, "height": 900})
    page.goto(url)
    controls = set(page.eval_on_selector_all(
        "a[href], button:not([disabled]), input, select, [tabindex='0']",
        "es => es.filter(e => e.offsetParent !== null).map(e => e.id || e.textContent.trim())"))
    reached = set()
    for _ in range(len(controls) + 5):
        page.keyboard.press("Tab")
        reached.add(page.evaluate("() => document.activeElement.id || "
                                  "document.activeElement.textContent.trim()"))
    assert controls <= reached, controls - reached
    labelled = page.eval_on_selector_all(
        "input, select", "es => es.filter(e => !e.labels || !e.labels.length).map(e => e.id)")
    assert labelled == []


def test_the_html_page_reads_offline_with_typeset_math(chromium, tmp_path):
    page_file = cb.derive_html(tmp_path / "out.html")
    page = chromium.new_page(viewport={"width": 1000, "height": 900})
    watch = cb.Watch(page, (page_file.as_uri(),))
    page.context.set_offline(True)
    try:
        page.goto(page_file.as_uri())
        typeset = page.evaluate(cb.TYPESET)
        assert typeset["found"] == [] and typeset["fractions"] >= 5 and typeset["count"] > 10
        sizes = page.eval_on_selector_all("svg", "es => es.map(e => e.getBoundingClientRect()"
                                                 ".height)")
        assert len(sizes) == 2 and min(sizes) > 100
        assert watch.problems == []
    finally:
        page.context.set_offline(False)


def test_the_checks_catch_what_they_look_for(chromium, tmp_path):
    """A fraction the browser does not typeset (outside ``<math>``) and a failed load are
    found: the checks above are not vacuous."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!doctype html><html><body><div><mfrac><span>1</span><span>2</span></mfrac>"
                   "</div><img src='missing.png'></body></html>", encoding="utf-8")
    page = chromium.new_page()
    watch = cb.Watch(page, (bad.as_uri(),))
    page.goto(bad.as_uri())
    page.wait_for_load_state("load")
    assert page.evaluate(cb.TYPESET)["found"] == ["fraction not typeset: 12"]
    assert any("missing.png" in problem for problem in watch.problems)
