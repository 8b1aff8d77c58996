"""``python -m symdiff``: the command line (see :mod:`symdiff.cli`)."""

from symdiff.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
