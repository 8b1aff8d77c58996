"""The HTML display of a compiled function: its signature, kind and highlighted source, the
helper functions copied into the module folded away (:func:`compiled_html`)."""

from __future__ import annotations

import html

from .codegen.render import HELPERS_HEADING


def compiled_html(signature: str, kind: str, source: str, name: str) -> str:
    """The signature, the kind of function and the highlighted source (see
    :func:`highlight_html`), as one ``<div>``; every value is escaped.

    The helper functions copied into the module (its last section, after the function ``name``)
    are folded into a ``<details>`` element; one click shows them. The code is set in a
    monospace font explicitly: nbconvert's HTML makes output ``<pre>`` blocks inherit the
    page's proportional font.
    """
    head, helpers, body = _split_helpers(source, name)
    code = highlight_html(head)
    if helpers:
        count = helpers.count("\n") + 1
        code += (
            f"<details><summary>{count} lines of helper functions "
            f"(click to show)</summary>{highlight_html(helpers)}</details>"
            + (highlight_html(body) if body else "")
        )
    return (
        f'<div class="symdiff-compiled"><p><code>{html.escape(signature)}</code> '
        f"&mdash; {html.escape(kind)}</p>"
        f'<div style="font-family: {_CODE_FONT}">{code}</div></div>'
    )


#: The code font of the HTML display: JupyterLab's own, else a common monospace font.
_CODE_FONT = "var(--jp-code-font-family, Menlo, Consolas, 'DejaVu Sans Mono', monospace)"


def _split_helpers(source: str, name: str) -> tuple[str, str, str]:
    """``source`` as (everything before its helper section, the helper section, ""): the
    helpers copied from the runtime follow the function ``name``, under the comment
    :data:`~symdiff.codegen.render.HELPERS_HEADING`. Without that section the whole source is the
    first
    part and the others are empty."""
    lines = source.splitlines()
    start = next((i for i, ln in enumerate(lines) if ln == HELPERS_HEADING), None)
    if start is None or not any(ln.startswith(f"def {name}(") for ln in lines[:start]):
        return source, "", ""
    return "\n".join(lines[:start]).rstrip("\n"), "\n".join(lines[start:]), ""


def highlight_html(source: str) -> str:
    """Python source as highlighted HTML, else an escaped ``<pre>``.

    Uses pygments (the highlighter IPython itself uses) with inline styles, so the colours show in
    a notebook and in exported HTML without a stylesheet; without pygments the source is shown
    as an escaped ``<pre>``.
    """
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return f'<pre class="symdiff-source">{html.escape(source)}</pre>'
    return highlight(source, PythonLexer(), HtmlFormatter(noclasses=True))
