"""What the command writes: results on stdout, messages and errors on stderr, and exit codes."""

from __future__ import annotations

import os
import re
import sys
import traceback

from ..errors import ParseError, SymdiffError

PROG = "symdiff"
DEBUG_ENV = "SYMDIFF_DEBUG"
EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def first_line(text: str) -> str:
    """The first line of ``text`` (empty for empty text)."""
    return text.splitlines()[0] if text else ""


def emit(text: str) -> None:
    """Write a result to stdout, ending with exactly one newline."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def note(text: str) -> None:
    """Write a message (not a result) to stderr."""
    print(f"{PROG}: {text}", file=sys.stderr)


def debugging() -> bool:
    """Whether ``SYMDIFF_DEBUG`` asks for tracebacks."""
    return os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no", "off")


#: A Python keyword argument named bare in a message (``say which one with wrt=``), not followed
#: by a value: on the command line it is the option of the same name.
_KEYWORD_HINT = re.compile(r"(?<![\w-])(wrt|shapes)=(?=$|[\s;,.:)])")


def error_line(exc: SymdiffError) -> str:
    """One line for a symdiff error: its first line, and for a ParseError its position. A hint
    that names the API's ``wrt=`` or ``shapes=`` names the option ``--wrt`` / ``--shapes``."""
    if isinstance(exc, ParseError) and exc.position is not None:
        line = f"{first_line(str(exc.reason))} (at position {exc.position})"
    else:
        line = first_line(str(exc))
    return _KEYWORD_HINT.sub(r"--\1", line)


def silence_stdout() -> None:
    """After a broken pipe, point stdout at devnull so the exit flush cannot fail again.

    This is the recipe of the Python docs (``signal`` module, "Note on SIGPIPE").
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout without a file descriptor (e.g. captured in tests)
        pass


def report_internal(exc: Exception) -> None:
    """One line for an unexpected exception; the traceback too under ``SYMDIFF_DEBUG=1``."""
    detail = first_line(str(exc))
    line = f"internal error: {type(exc).__name__}{': ' + detail if detail else ''}"
    if debugging():
        traceback.print_exc()
        note(line)
    else:
        note(f"{line} (rerun with {DEBUG_ENV}=1 for the traceback)")
