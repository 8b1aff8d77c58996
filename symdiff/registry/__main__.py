"""``python -m symdiff.registry markdown``: print README's function table."""

import sys

from .queries import markdown

if sys.argv[1:] != ["markdown"]:
    raise SystemExit("usage: python -m symdiff.registry markdown")
sys.stdout.write(markdown())
