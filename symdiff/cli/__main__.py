"""``python -m symdiff.cli``: the command line, as ``python -m symdiff``."""

from symdiff.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
