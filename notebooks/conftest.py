"""pytest settings for the notebooks, which nbmake runs (``--nbmake`` is in pyproject's addopts).

While a notebook runs, its kernel gets a fresh ``SYMDIFF_CACHE_DIR`` (never the user's cache, as
for the tests) and this checkout first on ``PYTHONPATH`` (the kernel imports the same symdiff as
the tests do, not an older installed copy). Both are restored afterwards.
"""

from __future__ import annotations

import os
import pathlib
import tempfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    saved = {name: os.environ.get(name) for name in ("SYMDIFF_CACHE_DIR", "PYTHONPATH")}
    with tempfile.TemporaryDirectory(prefix="symdiff-notebook-cache-") as cache:
        os.environ["SYMDIFF_CACHE_DIR"] = cache
        os.environ["PYTHONPATH"] = os.pathsep.join(
            path for path in (str(ROOT), saved["PYTHONPATH"]) if path
        )
        try:
            yield
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value
