"""The entry point :func:`main`: parse the arguments, run the command, errors to exit codes."""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence

from ..errors import SymdiffError
from .commands import HANDLERS
from .output import (
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    debugging,
    error_line,
    note,
    report_internal,
    silence_stdout,
)
from .parser import build_parser


def _parse(argv: Sequence[str] | None) -> argparse.Namespace | int:
    """The parsed arguments, or the exit code argparse chose (help, version, usage error)."""
    try:
        return build_parser().parse_args(argv)
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (EXIT_OK if code is None else EXIT_USAGE)


def _run(args: argparse.Namespace) -> int:
    """Run the command and flush stdout, so that a closed pipe shows up here."""
    handler = HANDLERS[args.command]
    code = handler(args)
    sys.stdout.flush()
    return code


def main(argv: list[str] | None = None) -> int:
    """Run ``symdiff`` with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    args = _parse(argv)
    if isinstance(args, int):
        return args
    try:
        return _run(args)
    except BrokenPipeError:
        silence_stdout()
        return EXIT_INTERNAL
    except SymdiffError as exc:
        if debugging():
            traceback.print_exc()
        note(f"error: {error_line(exc)}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        note("interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:
        report_internal(exc)
        return EXIT_INTERNAL
