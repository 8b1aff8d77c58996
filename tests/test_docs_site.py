"""The user guide (docs/) builds as a site with Sphinx in strict mode: any warning, such as a
broken link between pages, a missing page in the table of contents or a bad heading, fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_docs_build_strictly(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-b", "html",
         "-d", str(tmp_path / "doctrees"), str(ROOT / "docs"), str(tmp_path / "html")],
        capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    for page in ("index", "functions", "contributing", "limitations"):
        assert (tmp_path / "html" / f"{page}.html").is_file(), page
