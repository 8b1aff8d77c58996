"""Golden files pin the exact generated source of a handful of functions, scalar and tensor.

The cases are listed in ``tests/regenerate_goldens.py``; ``golden/runtime.txt`` pins the runtime
those modules import (``symdiff.runtime``: each helper's first line and a digest of its source).
Regenerate every golden file after an intended change with ``python -m tests.regenerate_goldens``
(or ``SYMDIFF_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py``) and review the diff like
any other code change.
"""

from __future__ import annotations

import difflib
import os

import pytest

from symdiff.verify import check_module
from tests.regenerate_goldens import (
    CASES,
    GOLDEN,
    REGENERATE,
    RUNTIME_GOLDEN,
    TENSOR_CASES,
    golden_path,
    runtime_snapshot,
)


def _difference(name: str, expected: str, actual: str) -> str:
    diff = difflib.unified_diff(
        expected.splitlines(keepends=True),
        actual.splitlines(keepends=True),
        f"golden/{name}.py",
        "generated now",
    )
    lines = list(diff)
    shown = "".join(lines[:60])
    if len(lines) > 60:
        shown += f"... ({len(lines) - 60} more lines)\n"
    return (
        f"the generated source of {name!r} differs from tests/golden/{name}.py:\n{shown}"
        f"If the change is intended, regenerate every golden file with `{REGENERATE}` "
        "and review `git diff tests/golden`."
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_source_matches_golden_file(name):
    source = CASES[name]().source
    path = golden_path(name)
    if os.environ.get("SYMDIFF_UPDATE_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(source)
    assert path.exists(), f"missing golden file {path}; create it with `{REGENERATE}`"
    expected = path.read_text()
    if source != expected:
        pytest.fail(_difference(name, expected, source), pytrace=False)


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_file_passes_the_verifier(name):
    check_module(golden_path(name).read_text())


def test_every_golden_module_has_a_case():
    files = {p.stem for p in GOLDEN.glob("*.py")}
    assert files == set(CASES), f"stale or missing golden files; run `{REGENERATE}`"
    assert all(name.startswith("tensor_") for name in TENSOR_CASES)


def test_the_runtime_matches_its_golden_snapshot():
    """A change of ``symdiff.runtime`` (which every generated module runs) is deliberate: its
    snapshot names each helper whose source changed."""
    snapshot = runtime_snapshot()
    if os.environ.get("SYMDIFF_UPDATE_GOLDEN"):
        RUNTIME_GOLDEN.write_text(snapshot)
    expected = RUNTIME_GOLDEN.read_text()
    if snapshot != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(keepends=True),
                                            snapshot.splitlines(keepends=True),
                                            "golden/runtime.txt", "symdiff.runtime now"))
        pytest.fail(f"symdiff.runtime changed:\n{diff}If the change is intended, run "
                    f"`{REGENERATE}` and review `git diff tests/golden`.", pytrace=False)
