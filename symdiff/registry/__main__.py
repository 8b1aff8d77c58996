"""``python -m symdiff.registry markdown [--write]``: print the function table of the docs
(``docs/functions.md``, between its ``functions`` markers), or write it there."""

import sys
from pathlib import Path

from .queries import markdown

#: The page that holds the table, in a checkout of the repository.
PAGE = Path(__file__).resolve().parents[2] / "docs" / "functions.md"
START, END = "<!-- functions:start -->\n", "<!-- functions:end -->"


def write(page: Path = PAGE) -> bool:
    """Put the table between the page's markers; True when the page changed."""
    if not page.is_file():
        raise SystemExit(f"{page} not found: --write works in a checkout of the repository")
    text = page.read_text(encoding="utf-8")
    if START not in text or END not in text:
        raise SystemExit(f"{page} lacks the markers {START.strip()} and {END}")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    new = f"{head}{START}{markdown()}{END}{tail}"
    page.write_text(new, encoding="utf-8")
    return new != text


if __name__ == "__main__":
    args = sys.argv[1:]
    if args == ["markdown"]:
        sys.stdout.write(markdown())
    elif args == ["markdown", "--write"]:
        changed = write()
        print(f"{PAGE}: {'updated' if changed else 'already up to date'}")
    else:
        raise SystemExit("usage: python -m symdiff.registry markdown [--write]")
