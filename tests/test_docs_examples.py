"""Every example of README.md, CONTRIBUTING.md and docs/ runs as pasted, through Sybil.

Each fenced ``python`` block runs in a fresh namespace (blocks do not lean on one another: each
has its own imports and data); a block written as a doctest (``>>>`` lines) has its shown
output checked. In ``bash`` blocks each line is one command, and the lines that call the
``symdiff`` command run and must succeed.
"""

from __future__ import annotations

import doctest
import importlib.util
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from sybil import Sybil
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser

from .conftest import reset_memory

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").rglob("*.md")])
PAGES = [p for p in PAGES if "_build" not in p.parts]


def _run_commands(example) -> None:
    """Run each ``symdiff ...`` line of a bash block in the current (temporary) directory; each
    must succeed (other lines, such as ``pip install``, are for the reader to run)."""
    for line in example.parsed.splitlines():
        command = line.split("  #")[0].strip()
        if not command or command.startswith("#"):
            continue
        words = shlex.split(command)
        if words[0] != "symdiff":
            continue
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        done = subprocess.run([sys.executable, "-m", "symdiff", *words[1:]], env=env,
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{line!r} failed:\n{done.stderr}"


SYBIL = Sybil(parsers=[
    PythonCodeBlockParser(doctest_optionflags=doctest.NORMALIZE_WHITESPACE),
    CodeBlockParser(language="bash", evaluator=_run_commands),
])
FENCES = Sybil(parsers=[CodeBlockParser(language="python", evaluator=lambda example: None)])


def _blocks(path: Path) -> list[tuple[int, list]]:
    """The page's examples grouped by fenced block: (line of the fence, its examples)."""
    examples = list(SYBIL.parse(path).examples())
    fences = [(f.start, f.end, f.line) for f in FENCES.parse(path).examples()]
    blocks: dict[int, list] = {}
    for example in examples:
        inside = [line for start, end, line in fences if start <= example.start < end]
        blocks.setdefault(inside[0] if inside else example.line, []).append(example)
    return sorted(blocks.items())


#: Optional dependencies by the text that marks a page's examples as needing them.
OPTIONAL = {'backend="numba"': "numba"}


def _marks(path: Path) -> list:
    """A skip, with its reason, for a page whose examples need an optional dependency that is
    not installed (CI installs every one: the ``dev`` extra)."""
    text = path.read_text(encoding="utf-8")
    return [pytest.mark.skipif(importlib.util.find_spec(module) is None,
                               reason=f"{module} is not installed (optional)")
            for marker, module in OPTIONAL.items() if marker in text]


CASES = [
    pytest.param(path, line, id=f"{path.relative_to(ROOT)}:{line}", marks=_marks(path))
    for path in PAGES
    for line, _ in _blocks(path)
]


def test_the_pages_have_examples():
    assert len(CASES) >= 40, len(CASES)


@pytest.mark.parametrize(("path", "line"), CASES)
def test_example_runs_as_pasted(path, line, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a block that writes a file writes it here
    (examples,) = [found for at, found in _blocks(path) if at == line]
    namespace = examples[0].namespace
    namespace.clear()  # a fresh namespace per block, shared by a doctest block's lines
    environment = dict(os.environ)
    try:
        for example in examples:
            example.evaluate()
    finally:  # a block run as its own process may set variables (SYMDIFF_CACHE_DIR, ...)
        if dict(os.environ) != environment:
            os.environ.clear()
            os.environ.update(environment)
            reset_memory()  # and the cache store made from them is forgotten
