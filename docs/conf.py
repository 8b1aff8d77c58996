"""Sphinx configuration of the symdiff user guide: Markdown pages (MyST) with the Furo theme.

Build it strictly, as the test suite does (tests/test_docs_site.py)::

    python -m sphinx -W --keep-going -n -b html docs docs/_build/html
"""

project = "symdiff"
author = "symdiff developers"
copyright = "symdiff developers"

extensions = ["myst_parser"]
source_suffix = {".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build"]
# "#" links to headings within and across pages (tensors.md#linear-algebra)
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence"]
html_theme = "furo"
html_title = "symdiff"
pygments_style = "sphinx"
