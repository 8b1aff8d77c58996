"""The HTML display of a compiled function: its signature, kind and highlighted source
(:func:`compiled_html`)."""

from __future__ import annotations

import html


def compiled_html(signature: str, kind: str, source: str) -> str:
    """The signature, the kind of function and the highlighted source (see
    :func:`highlight_html`), as one ``<div>``; every value is escaped.

    The code is set in a monospace font explicitly: nbconvert's HTML makes output ``<pre>``
    blocks inherit the page's proportional font.
    """
    code = highlight_html(source)
    return (
        f'<div class="symdiff-compiled"><p><code>{html.escape(signature)}</code> '
        f"&mdash; {html.escape(kind)}</p>"
        f'<div style="font-family: {_CODE_FONT}">{code}</div></div>'
    )


#: The code font of the HTML display: JupyterLab's own, else a common monospace font.
_CODE_FONT = "var(--jp-code-font-family, Menlo, Consolas, 'DejaVu Sans Mono', monospace)"


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
