"""The classroom pages in headless Chromium (the system's ``/usr/bin/chromium``, driven by
Playwright; Playwright never downloads a browser here).

:func:`missing` says why the browser tests cannot run on this machine (they are skipped with
that reason). Run as a script, this module regenerates the pictures of ``docs/classroom.md``::

    python -m tests.classroom_browser docs/images
"""

from __future__ import annotations

import pathlib
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parent.parent
CHROMIUM = pathlib.Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    if not CHROMIUM.exists():
        return f"no Chromium at {CHROMIUM} (apt-get install -y chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install '.[dev]')"
    return None


@contextmanager
def browser() -> Iterator[Any]:
    """A headless Chromium."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@contextmanager
def classroom_server(**settings: Any) -> Iterator[tuple[str, Any]]:
    """``(url, classroom)`` of a classroom server in this process, on a free port."""
    from symdiff.serve import Classroom, Settings
    from symdiff.serve.server import ClassroomServer

    classroom = Classroom(Settings(**settings))
    server = ClassroomServer(("127.0.0.1", 0), classroom)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", classroom
    finally:
        server.shutdown()
        server.server_close()
        classroom.close()


class Watch:
    """What a page logs as an error, throws, or loads from anywhere but ``allowed``."""

    def __init__(self, page: Any, allowed: tuple[str, ...]) -> None:
        self.problems: list[str] = []
        page.on("console", lambda m: self.problems.append(f"console {m.type}: {m.text}")
                if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: self.problems.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: self.problems.append(f"failed: {r.url}"))
        page.on("request", lambda r: None if r.url.startswith(allowed) else
                self.problems.append(f"loaded from outside: {r.url}"))


#: In the page: every fraction laid out as a fraction (numerator above denominator) and every
#: math element given a size; MathML a browser cannot typeset is laid out in one line.
TYPESET = """() => {
  const found = [];
  const maths = [...document.querySelectorAll('math')];
  for (const m of maths) {
    const box = m.getBoundingClientRect();
    if (box.width === 0 && m.offsetParent !== null) found.push('math without a size');
  }
  for (const f of document.querySelectorAll('mfrac')) {
    if (f.closest('[hidden]') || f.getBoundingClientRect().width === 0) continue;
    const [top, bottom] = [...f.children].map((c) => c.getBoundingClientRect());
    if (!(top.bottom <= bottom.top + 1)) found.push('fraction not typeset: ' + f.textContent);
  }
  return {count: maths.length, fractions: document.querySelectorAll('mfrac').length, found};
}"""


def derive_html(out: pathlib.Path, expr: str = "x**2*sin(x)") -> pathlib.Path:
    """``symdiff derive EXPR --html OUT``, as a user runs it."""
    subprocess.run([sys.executable, "-m", "symdiff", "derive", expr, "--html", str(out)],
                   check=True, cwd=ROOT, capture_output=True, timeout=300)
    return out


def tab_to(page: Any, target: str, presses: int = 120) -> None:
    """Press Tab until the element with id ``target`` has the focus (an error if it never
    does: the keyboard cannot reach it)."""
    for _ in range(presses):
        if page.evaluate("() => document.activeElement && document.activeElement.id") == target:
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"Tab never reaches #{target}")


def type_into(page: Any, target: str, text: str) -> None:
    """Reach ``target`` by Tab, replace its text by typing."""
    tab_to(page, target)
    page.keyboard.press("Control+A")
    page.keyboard.type(text)


def screenshots(folder: pathlib.Path) -> None:
    """The pictures of docs/classroom.md: the page of ``symdiff derive --html`` opened offline,
    and the served page with a derivation half revealed, a checked answer and practice."""
    folder.mkdir(parents=True, exist_ok=True)
    with browser() as chromium:
        page = chromium.new_page(viewport={"width": 1000, "height": 900})
        with tempfile.TemporaryDirectory() as work:
            offline = derive_html(pathlib.Path(work) / "out.html")
            page.context.set_offline(True)
            page.goto(offline.as_uri())
            page.screenshot(path=str(folder / "classroom-html-page.png"), full_page=True)
            page.context.set_offline(False)
        with classroom_server(workers=2) as (url, _):
            page.goto(url)
            type_into(page, "expr", "sin(x)**2*cos(3*x)")
            page.keyboard.press("Enter")
            page.wait_for_selector("#steps ol.walk", state="attached", timeout=120_000)
            tab_to(page, "next")
            for _ in range(9):
                page.keyboard.press("Enter")
            page.wait_for_selector("#plot svg", timeout=120_000)
            page.wait_for_selector("#graph svg", timeout=120_000)
            type_into(page, "answer", "2*sin(x)*cos(x)*cos(3*x) - 3*sin(x)*sin(x)*sin(3*x) + 0")
            page.keyboard.press("Enter")
            page.wait_for_selector("#verdict .verdict", timeout=120_000)
            page.locator("#expr-card").screenshot(path=str(folder / "classroom-expression.png"))
            page.locator("#steps-card").screenshot(path=str(folder / "classroom-steps.png"))
            page.locator("#check-card").screenshot(path=str(folder / "classroom-check.png"))
            page.locator("#plot-card").screenshot(path=str(folder / "classroom-plot.png"))
            page.locator("#graph-card").screenshot(path=str(folder / "classroom-graph.png"))
            type_into(page, "seed", "class-7")
            tab_to(page, "practice")
            page.keyboard.press("Enter")
            page.wait_for_selector("#exercises li", timeout=120_000)
            page.locator("#practice-card").screenshot(path=str(folder / "classroom-practice.png"))


if __name__ == "__main__":
    screenshots(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "docs" / "images"))
