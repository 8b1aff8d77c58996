"""The one place that knows where templates live; renders them with a strict Jinja environment.

Templates are in the top-level ``templates/`` folder of the source tree and are force-included in
the wheel as ``symdiff/templates``; :func:`templates_dir` finds either. The environment is created
on first use, never at import time.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path
from typing import Any

from ..errors import SymdiffError

#: The ``symdiff`` package folder: an installed wheel carries ``templates/`` inside it.
_PACKAGE_DIR = Path(__file__).resolve().parent.parent

def templates_dir() -> Path:
    """The folder holding ``module.py.jinja`` and friends (installed wheel or source tree)."""
    for candidate in (_PACKAGE_DIR / "templates", _PACKAGE_DIR.parent / "templates"):
        if (candidate / "module.py.jinja").is_file():
            return candidate
    raise SymdiffError(f"symdiff templates not found next to {_PACKAGE_DIR}; reinstall symdiff")


@functools.cache
def _environment():
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def render(template: str, **context: Any) -> str:
    """Render ``template`` with ``context``; a missing variable is an error."""
    return _environment().get_template(template).render(**context)


@functools.cache
def templates_digest(directory: Path | None = None) -> str:
    """SHA-256 over every template file's name and text: changes whenever a template does."""
    digest = hashlib.sha256()
    for path in sorted((directory or templates_dir()).glob("*.jinja")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()
