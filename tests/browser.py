"""Notebooks as a reader sees them: executed, converted to HTML by nbconvert, and looked at in
headless Chromium (driven by Playwright) at the width of a 1,000 px page.

MathJax comes from a local package (``jupyter-server-mathjax``, MathJax 2.7 with its fonts),
never from a network: the page loads nothing from outside. :func:`problems` lists, per page,
what a reader would see go wrong: a MathJax error (or TeX left untypeset), an element wider than
the page (one inside a box that scrolls sideways is that box's business, not the page's), and
content cut off in a box that scrolls sideways, and an SVG whose drawing extends past its
own ``viewBox`` (clipped).
"""

from __future__ import annotations

import os
import pathlib
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"

#: The system Chromium (Debian's package); Playwright never downloads a browser here.
CHROMIUM = pathlib.Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run"]
PAGE_WIDTH = 1000


def missing() -> str | None:
    """Why the browser test cannot run here, or None."""
    if not CHROMIUM.exists():
        return f"no Chromium at {CHROMIUM} (apt-get install -y chromium)"
    for module in ("playwright", "nbconvert", "nbclient", "jupyter_server_mathjax"):
        try:
            __import__(module)
        except ImportError:
            return f"{module} is not installed (pip install '.[dev]')"
    return None


def mathjax_url() -> str:
    """MathJax from the installed ``jupyter-server-mathjax`` package, as a file URL."""
    import jupyter_server_mathjax

    static = pathlib.Path(jupyter_server_mathjax.__file__).parent / "static" / "MathJax.js"
    return static.as_uri() + "?config=TeX-AMS-MML_HTMLorMML-full,Safe"


def executed_html(name: str, out: pathlib.Path, cache: pathlib.Path, timeout: int = 600
                  ) -> pathlib.Path:
    """Notebook ``name`` executed in a fresh kernel (this checkout first on the path, its own
    symdiff cache) and converted to one HTML page in ``out``; returns the page's path."""
    import nbconvert
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    saved = {key: os.environ.get(key) for key in ("SYMDIFF_CACHE_DIR", "PYTHONPATH")}
    os.environ["SYMDIFF_CACHE_DIR"] = str(cache)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), saved["PYTHONPATH"]) if p)
    try:
        NotebookClient(notebook, timeout=timeout, kernel_name="python3",
                       resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    # require.js is for widgets, which these notebooks have none of: not loaded from outside
    exporter = nbconvert.HTMLExporter(template_name="lab", mathjax_url=mathjax_url(),
                                      require_js_url="data:text/javascript,")
    body, _ = exporter.from_notebook_node(notebook)
    page = out / (pathlib.Path(name).stem + ".html")
    page.write_text(body, encoding="utf-8")
    return page


#: In the page: what a reader would see go wrong (see the module docstring).
_CHECKS = r"""
() => {
  const width = document.documentElement.clientWidth;
  const found = [];
  for (const el of document.querySelectorAll('.MathJax_Error, .merror, mjx-merror')) {
    found.push('MathJax error: ' + el.textContent.slice(0, 120));
  }
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (parent.closest('pre, code, script, style, textarea, .jp-InputArea')) continue;
    if (/\\begin\{aligned\}|\\frac\{|Math Processing Error/.test(node.textContent)) {
      found.push('TeX not typeset: ' + node.textContent.trim().slice(0, 120));
    }
  }
  const scrolls = (el) => {
    for (let a = el.parentElement; a; a = a.parentElement) {
      const x = getComputedStyle(a).overflowX;
      if (x === 'auto' || x === 'scroll' || x === 'hidden') return a !== document.body
        && a !== document.documentElement;
    }
    return false;
  };
  for (const el of document.body.querySelectorAll('*')) {
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.right <= width + 1 || scrolls(el)) continue;
    if (el.closest('svg') && el.tagName.toLowerCase() !== 'svg') continue;
    const name = el.tagName.toLowerCase() + (el.className && el.className.baseVal === undefined
      ? '.' + String(el.className).split(' ')[0] : '');
    found.push(`wider than the page (${Math.round(box.right)} > ${width} px): ${name} `
               + (el.textContent || '').trim().slice(0, 80));
  }
  const hidden = '.MJX_Assistive_MathML, .MathJax_Preview, .jp-InputArea';  // not shown
  for (const el of document.body.querySelectorAll('*')) {
    const x = getComputedStyle(el).overflowX;
    if ((x === 'auto' || x === 'scroll' || x === 'hidden') && el.clientWidth > 4
        && el.scrollWidth > el.clientWidth + 1 && !el.closest(hidden)) {
      found.push(`cut off: ${el.tagName.toLowerCase()}.${String(el.className).split(' ')[0]} `
                 + `shows ${el.clientWidth} of `
                 + `${el.scrollWidth} px: ` + (el.textContent || '').trim().slice(0, 80));
    }
  }
  if (document.documentElement.scrollWidth > width + 1) {
    found.push(`the page scrolls sideways: ${document.documentElement.scrollWidth} px`);
  }
  const pictures = [...document.querySelectorAll('svg[viewBox]')];
  for (const img of document.querySelectorAll('img[src^="data:image/svg+xml"]')) {
    // an SVG output put in an <img>: drawn again inline, out of sight, to measure it
    const data = img.src.split(',')[1];
    const text = img.src.includes(';base64,') ? atob(data) : decodeURIComponent(data);
    const svg = new DOMParser().parseFromString(text, 'image/svg+xml').documentElement;
    if (!svg.getAttribute || !svg.getAttribute('viewBox')) continue;
    const holder = document.createElement('div');
    holder.style.cssText = 'position:absolute;left:0;top:0;visibility:hidden';
    holder.appendChild(document.importNode(svg, true));
    document.body.appendChild(holder);
    pictures.push(holder.firstChild);
  }
  for (const svg of pictures) {
    const [x, y, w, h] = svg.getAttribute('viewBox').split(/[\s,]+/).map(Number);
    const b = svg.getBBox();
    if (b.x < x - 1 || b.y < y - 1 || b.x + b.width > x + w + 1 || b.y + b.height > y + h + 1) {
      const content = [b.x, b.y, b.width, b.height].map((v) => v.toFixed(1)).join(' ');
      found.push(`SVG clipped by its viewBox ${x} ${y} ${w} ${h}: content ${content}`);
    }
  }
  return found;
}
"""

#: Before the page's scripts: MathJax 2 reads ``window.MathJax`` as its first configuration:
#: the web font the package ships (STIX-Web; it has no TeX fonts), and an ``AuthorInit`` that
#: hooks the end of the first typesetting pass.
_MATHJAX_HOOK = """window.MathJax = {
  "HTML-CSS": {availableFonts: [], preferredFont: null, webFont: "STIX-Web", imageFont: null},
  AuthorInit: function () {
    MathJax.Hub.Register.StartupHook("End", function () {
        MathJax.Hub.Queue(function () { window.symdiffTypeset = true; });
    });
}};"""
_MATHJAX_DONE = "() => window.symdiffTypeset === true"


def problems(pages: list[pathlib.Path], screenshots: dict[str, Any] | None = None
             ) -> dict[str, list[str]]:
    """What goes wrong on each page in Chromium at :data:`PAGE_WIDTH` px, by page name.
    ``screenshots`` maps a page name to ``(selector, index, path)``: that element is saved as
    a PNG (the docs' pictures)."""
    from playwright.sync_api import sync_playwright

    found: dict[str, list[str]] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": PAGE_WIDTH, "height": 900})
            page.add_init_script(_MATHJAX_HOOK)
            outside: list[str] = []
            page.on("request", lambda r: outside.append(r.url)
                    if not r.url.startswith(("file:", "data:", "about:")) else None)
            for path in pages:
                outside.clear()
                page.goto(path.as_uri())
                page.wait_for_function(_MATHJAX_DONE, timeout=120_000)
                page.wait_for_timeout(300)
                found[path.name] = list(page.evaluate(_CHECKS)) + [
                    f"loaded from outside: {url}" for url in outside]
                for selector, index, target in (screenshots or {}).get(path.name, []):
                    page.locator(selector).nth(index).screenshot(path=str(target))
        finally:
            browser.close()
    return found

