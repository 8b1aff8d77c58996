"""A cached function loaded in a fresh process imports what it needs and nothing more: no
SymPy or Jinja, no lock library (a read takes no lock), no logging, no teaching or display
modules, and of the runtime only the modules of the helpers it calls. (NumPy itself imports
``inspect`` and ``ast``; what symdiff adds is counted after ``import numpy``.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CODE = """
    import json, sys
    import numpy
    before = set(sys.modules)
    import symdiff as sd
    g = sd.grad("sin(x)*exp(y)/(1 + x**2)")
    value = [float(v) for v in g(0.3, 0.7)]
    print(json.dumps({"value": value, "added": sorted(set(sys.modules) - before)}))
"""

#: Modules a warm start has no use for (prefixes).
UNNEEDED = ("sympy", "jinja2", "filelock", "logging", "symdiff.teach",
            "symdiff.source_html", "symdiff.chunks", "symdiff.build", "symdiff.codegen.emit",
            "symdiff.engine", "symdiff.parsing", "symdiff.simplify", "symdiff.tensor",
            "symdiff.runtime.erf", "symdiff.runtime.gamma", "symdiff.runtime.derivatives",
            "symdiff.runtime.standard", "array_api_compat")


def _run(cache_dir: Path) -> dict:
    env = {**os.environ, "SYMDIFF_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(CODE)], env=env, check=True,
                          capture_output=True, text=True, cwd=ROOT)
    return json.loads(done.stdout)


def test_a_warm_start_imports_only_what_it_needs(tmp_path):
    cold = _run(tmp_path / "cache")
    warm = _run(tmp_path / "cache")
    assert warm["value"] == cold["value"]
    assert "sympy" in cold["added"]  # the first process built it
    unneeded = [m for m in warm["added"] if m.startswith(UNNEEDED)]
    assert unneeded == [], unneeded
    assert "symdiff.runtime.elementwise" in warm["added"]
