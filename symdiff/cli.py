"""The ``symdiff`` command line: a thin layer over the public API.

Commands (``symdiff COMMAND --help`` shows the options and examples of each)::

    symdiff grad EXPR [--wrt x,y]            the gradient module (source) on stdout
    symdiff value-and-grad EXPR [--wrt x,y]  value and gradient, sharing subexpressions
    symdiff hessian EXPR [--wrt x,y]         the Hessian module
    symdiff hvp EXPR [--wrt x,y]             the Hessian-vector product module (last arg _v)
    symdiff jacobian EXPR [EXPR ...] [--wrt x,y]
    symdiff compile EXPR                     the expression itself, compiled
    symdiff derive EXPR [--wrt x] [--latex]  the numbered derivation steps
    symdiff cache dir|info|clear             the on-disk cache of generated modules

Every command that builds a function, and ``derive``, takes ``--shapes "X=n,d;y=n;w=d"`` to make
variables arrays (the ``shapes=`` of the Python API): ``;``-separated ``NAME=DIMS`` entries, the
dimensions comma-separated names or non-negative ints, and nothing after ``=`` for a scalar
(``s=``). See :func:`parse_shapes_option`.

Exit codes: 0 success; 1 unexpected internal error (or stdout closed early, as in
``symdiff grad ... | head -1``); 2 bad input (a usage error or any ``symdiff.SymdiffError``),
reported as one line on stderr without a traceback; 130 interrupted. Set ``SYMDIFF_DEBUG=1`` to
see the traceback of an error as well.

SymPy is imported only when a command needs it, so ``symdiff --help`` answers at once.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from . import __version__
from .errors import ParseError, SymdiffError

PROG = "symdiff"
DEBUG_ENV = "SYMDIFF_DEBUG"
EXIT_OK, EXIT_INTERNAL, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130

Handler = Callable[[argparse.Namespace], int]


# -- small helpers -----------------------------------------------------------------------------
def _first_line(text: str) -> str:
    """The first line of ``text`` (empty for empty text)."""
    return text.splitlines()[0] if text else ""


def _wrt_list(text: str) -> list[str]:
    """Parse ``--wrt x,y`` into ``["x", "y"]``; one name without a comma is still a list."""
    names = [name.strip() for name in text.split(",")]
    if any(not name for name in names):
        raise argparse.ArgumentTypeError(f"empty name in {text!r}; write names as x,y")
    return names


_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Longest integer dimension accepted as text (the API bounds the value itself).
_MAX_DIGITS = 20


def parse_shapes_option(text: str) -> dict[str, tuple[int | str, ...]]:
    """Parse ``--shapes "X=n,d;y=n;w=3;s="`` into ``{"X": ("n", "d"), "y": ("n",), ...}``.

    Entries are separated by ``;`` and written ``NAME=DIMS``; the dimensions are separated by
    ``,`` and each is a name (``n``) or a non-negative int (``3``); nothing after ``=`` declares
    a scalar. Spaces around the parts, parentheses around the dimensions (``X=(n, d)``) and a
    trailing ``;`` or ``,`` are allowed. Raises :class:`~symdiff.SymdiffError` naming the bad
    part (the command line reports it in one line, exit code 2); names and sizes are then
    checked by the builder like ``shapes=`` in Python.
    """
    shapes: dict[str, tuple[int | str, ...]] = {}
    entries = [entry.strip() for entry in text.split(";")]
    if entries and not entries[-1]:
        entries.pop()  # a trailing ";"
    if not entries:
        raise SymdiffError('--shapes: no NAME=DIMS entry; write e.g. --shapes "X=n,d;y=n;s="')
    for entry in entries:
        if not entry:
            raise SymdiffError(f"--shapes: empty entry in {text!r}; separate entries by one ;")
        name, equals, dims_text = (part.strip() for part in entry.partition("="))
        if not equals:
            raise SymdiffError(
                f"--shapes: {entry!r} is not NAME=DIMS; write e.g. X=n,d (a scalar: s=)"
            )
        if not _IDENTIFIER.fullmatch(name):
            raise SymdiffError(f"--shapes: {name!r} in {entry!r} is not a variable name")
        if name in shapes:
            raise SymdiffError(f"--shapes: {name!r} is declared twice")
        if dims_text.startswith("(") and dims_text.endswith(")"):
            dims_text = dims_text[1:-1].strip()
        dims = [dim.strip() for dim in dims_text.split(",")] if dims_text else []
        if dims and not dims[-1] and len(dims) > 1:
            dims.pop()  # a trailing "," as in Python's (n,)
        shape: list[int | str] = []
        for dim in dims:
            if dim.isascii() and dim.isdigit() and len(dim) <= _MAX_DIGITS:
                shape.append(int(dim))
            elif _IDENTIFIER.fullmatch(dim):
                shape.append(dim)
            else:
                raise SymdiffError(
                    f"--shapes: dimension {dim!r} of {name!r} must be a name (n) or a "
                    "non-negative int (3)"
                )
        shapes[name] = tuple(shape)
    return shapes


def _shapes(args: argparse.Namespace) -> dict[str, Any]:
    """``{"shapes": ...}`` when ``--shapes`` was given, else nothing (the scalar layer)."""
    text = getattr(args, "shapes", None)
    return {} if text is None else {"shapes": parse_shapes_option(text)}


def _emit(text: str) -> None:
    """Write a result to stdout, ending with exactly one newline."""
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


def _note(text: str) -> None:
    """Write a message (not a result) to stderr."""
    print(f"{PROG}: {text}", file=sys.stderr)


def _debugging() -> bool:
    """Whether ``SYMDIFF_DEBUG`` asks for tracebacks."""
    return os.environ.get(DEBUG_ENV, "").strip().lower() not in ("", "0", "false", "no", "off")


#: A Python keyword argument named bare in a message (``say which one with wrt=``), not followed
#: by a value: on the command line it is the option of the same name.
_KEYWORD_HINT = re.compile(r"(?<![\w-])(wrt|shapes)=(?=$|[\s;,.:)])")


def _error_line(exc: SymdiffError) -> str:
    """One line for a symdiff error: its first line, and for a ParseError its position. A hint
    that names the API's ``wrt=`` or ``shapes=`` names the option ``--wrt`` / ``--shapes``."""
    if isinstance(exc, ParseError) and exc.position is not None:
        line = f"{_first_line(str(exc.reason))} (at position {exc.position})"
    else:
        line = _first_line(str(exc))
    return _KEYWORD_HINT.sub(r"--\1", line)


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at devnull so the exit flush cannot fail again.

    This is the recipe of the Python docs (``signal`` module, "Note on SIGPIPE").
    """
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout without a file descriptor (e.g. captured in tests)
        pass


# -- command handlers ----------------------------------------------------------------------------
def _builder_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword options every builder takes, from the shared command-line flags."""
    return {
        "simplify": not args.no_simplify,
        "cse": not args.no_cse,
        "mode": args.mode,
        "cache": not args.no_cache,
        **_shapes(args),
    }


def _output(compiled: Any, args: argparse.Namespace) -> int:
    """Print the generated source, or save it to ``--output``."""
    if args.output is None:
        _emit(compiled.source)
        return EXIT_OK
    try:
        path = compiled.save(args.output)
    except OSError as exc:
        _note(f"error: cannot write {args.output}: {exc.strerror or exc}")
        return EXIT_USAGE
    _note(f"wrote {path}")
    return EXIT_OK


def _cmd_grad(args: argparse.Namespace) -> int:
    """``symdiff grad``: the gradient module."""
    import symdiff as sd

    return _output(sd.grad(args.expr, wrt=args.wrt, **_builder_options(args)), args)


def _cmd_value_and_grad(args: argparse.Namespace) -> int:
    """``symdiff value-and-grad``: value and gradient in one module."""
    import symdiff as sd

    return _output(sd.value_and_grad(args.expr, wrt=args.wrt, **_builder_options(args)), args)


def _cmd_hessian(args: argparse.Namespace) -> int:
    """``symdiff hessian``: the Hessian module."""
    import symdiff as sd

    return _output(sd.hessian(args.expr, wrt=args.wrt, **_builder_options(args)), args)


def _cmd_hvp(args: argparse.Namespace) -> int:
    """``symdiff hvp``: the Hessian-vector product module."""
    import symdiff as sd

    return _output(sd.hvp(args.expr, wrt=args.wrt, **_builder_options(args)), args)


def _cmd_jacobian(args: argparse.Namespace) -> int:
    """``symdiff jacobian``: the Jacobian module of several expressions."""
    import symdiff as sd

    return _output(sd.jacobian(list(args.exprs), wrt=args.wrt, **_builder_options(args)), args)


def _cmd_compile(args: argparse.Namespace) -> int:
    """``symdiff compile``: the expression itself, compiled."""
    import symdiff as sd

    return _output(sd.compile(args.expr, **_builder_options(args)), args)


def _cmd_derive(args: argparse.Namespace) -> int:
    """``symdiff derive``: the numbered steps, as text or LaTeX."""
    import symdiff as sd

    derivation = sd.derive(args.expr, wrt=args.wrt, simplify=not args.no_simplify, **_shapes(args))
    _emit(derivation._repr_latex_() if args.latex else str(derivation))
    return EXIT_OK


def _cache_dir() -> int:
    """``symdiff cache dir``: where generated modules are stored."""
    import symdiff as sd

    path = sd.cache_info().get("path")
    _emit("(memory only)" if path is None else str(path))
    return EXIT_OK


def _cache_info() -> int:
    """``symdiff cache info``: every field of ``sd.cache_info()``, one ``key: value`` a line."""
    import symdiff as sd

    lines = [f"{key}: {_info_value(key, value)}" for key, value in sd.cache_info().items()]
    _emit("\n".join(lines))
    return EXIT_OK


def _info_value(key: str, value: Any) -> str:
    """A ``cache_info`` value as text; a ``None`` path means the cache is in memory only."""
    return "(memory only)" if key == "path" and value is None else str(value)


def _describe_removed(removed: Any) -> str:
    """What ``sd.clear_cache()`` reported removing, in words (it may report nothing)."""
    if isinstance(removed, bool) or removed is None:
        return "cache cleared"
    if isinstance(removed, int):
        return f"cache cleared: removed {removed} entr{'y' if removed == 1 else 'ies'}"
    if isinstance(removed, Mapping):
        details = ", ".join(f"{key}: {value}" for key, value in removed.items())
        return f"cache cleared: removed {details}" if details else "cache cleared"
    return f"cache cleared: removed {removed}"


def _cache_clear() -> int:
    """``symdiff cache clear``: empty the cache and say what went."""
    import symdiff as sd

    _emit(_describe_removed(sd.clear_cache()))
    return EXIT_OK


CACHE_ACTIONS: dict[str, Callable[[], int]] = {
    "dir": _cache_dir,
    "info": _cache_info,
    "clear": _cache_clear,
}


def _cmd_cache(args: argparse.Namespace) -> int:
    """``symdiff cache ACTION``."""
    return CACHE_ACTIONS[args.action]()


# -- parser --------------------------------------------------------------------------------------
WRT_HELP = (
    "comma-separated names to differentiate with respect to, e.g. x,y (default: every "
    "variable, sorted by name). Each must be a variable of the expression (a typo is an "
    "error). A single name without a comma still means a list of one: "
    "--wrt x gives the one-element form, as wrt=['x'] in Python"
)

SHAPES_HELP = (
    'make variables arrays, as shapes= in Python: ";"-separated NAME=DIMS entries, DIMS '
    'comma-separated dimension names or ints, nothing for a scalar, e.g. "X=n,d;y=n;w=3;s="'
)

MAIN_EPILOG = """\
examples:
  symdiff grad "sin(x)*exp(y)/(1 + x**2)"        gradient wrt every variable
  symdiff grad "sin(x)*y" --wrt x,y -o grad_f.py  save the module
  symdiff derive "sin(x)/x" --wrt x               the quotient rule, step by step
  symdiff hessian "100*(y - x**2)**2 + (1 - x)**2" --wrt x,y
  symdiff grad "sum(log(1 + exp(-y * (X @ w))))" --wrt w --shapes "X=n,d;y=n;w=d"
  symdiff cache info
  symdiff grad --wrt x -- "-x**2 + y"             "--" before an EXPR starting with "-"

exit codes: 0 success, 1 internal error, 2 bad input (one line on stderr, no traceback).
Set SYMDIFF_DEBUG=1 to see tracebacks.
"""

EPILOGS = {
    "grad": """\
examples:
  symdiff grad "sin(x)*y"                 wrt x and y (sorted by name)
  symdiff grad "sin(x)*y" --wrt y,x       the partials in this order
  symdiff grad "x**2 + y" --wrt x         a list of one name (the call returns a 1-tuple)
  symdiff grad "log(1 + exp(x))" --no-simplify -o grad_f.py
  symdiff grad "sum(log(1 + exp(-y * (X @ w))))" --wrt w --shapes "X=n,d;y=n;w=d"
                                          arrays: X of shape (n, d), y (n,), w (d,)
""",
    "value-and-grad": """\
examples:
  symdiff value-and-grad "x**2 * y" --wrt x,y
  symdiff value-and-grad "sum((X @ w - y)**2)" --wrt w --shapes "X=n,3;y=n;w=3"
""",
    "hessian": """\
examples:
  symdiff hessian "100*(y - x**2)**2 + (1 - x)**2" --wrt x,y
  symdiff hessian "sum(log(1 + exp(-y * (X @ w))))" --wrt w --shapes "X=n,d;y=n;w=d"
""",
    "hvp": """\
examples:
  symdiff hvp "100*(y - x**2)**2 + (1 - x)**2" --wrt x,y     call as hvp_f(x, y, _v)
  symdiff hvp "sum(100*(x[1:] - x[:-1]**2)**2)" --wrt x --shapes "x=n"
""",
    "jacobian": """\
examples:
  symdiff jacobian "x*y" "sin(x) + y" --wrt x,y
  symdiff jacobian "A @ x" --wrt x --shapes "A=m,n;x=n"
""",
    "compile": """\
examples:
  symdiff compile "sin(x)*exp(y)"
  symdiff compile "x**2 + 1" -o f.py
  symdiff compile "sum(X @ w) + s" --shapes "X=n,3;w=3;s="   s is a scalar
""",
    "derive": """\
examples:
  symdiff derive "sin(x)/x"               one variable: --wrt may be omitted
  symdiff derive "x**2 * y" --wrt x
  symdiff derive "exp(-x**2)" --latex     aligned equations for LaTeX / Jupyter
  symdiff derive "sum(log(1 + exp(-y * (X @ w))))" --wrt w --shapes "X=n,d;y=n;w=d"
                                          the matrix-calculus steps of the backward walk
""",
    "cache": """\
examples:
  symdiff cache dir      the directory ($SYMDIFF_CACHE_DIR, else the platform's cache)
  symdiff cache info     what it holds, one key: value a line
  symdiff cache clear    remove every entry
""",
}

HELPS = {
    "grad": "print the gradient module",
    "value-and-grad": "print a module computing the value and the gradient",
    "hessian": "print the Hessian module",
    "hvp": "print the Hessian-vector product module (the direction _v is the last argument)",
    "jacobian": "print the Jacobian module of several expressions",
    "compile": "print the module computing the expression itself",
    "derive": "print the derivation, one rule a line",
    "cache": "show or clear the cache of generated modules",
}


def _add_builder_options(parser: argparse.ArgumentParser) -> None:
    """The options shared by every command that emits a module."""
    parser.add_argument("--no-simplify", action="store_true", help="keep derivatives as derived")
    parser.add_argument("--no-cse", action="store_true", help="no common-subexpression sharing")
    parser.add_argument(
        "--mode",
        choices=("auto", "forward", "reverse"),
        default="auto",
        help="differentiation mode (default: auto)",
    )
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    _add_shapes(parser)
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write the module to FILE instead of stdout"
    )


def _add_shapes(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shapes", metavar='"X=n,d;y=n"', help=SHAPES_HELP)


def _add_expr(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("expr", metavar="EXPR", help='an expression, e.g. "sin(x)*y"')


def _add_wrt_list(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--wrt", type=_wrt_list, metavar="x,y", help=WRT_HELP)


def _args_differentiate(parser: argparse.ArgumentParser) -> None:
    _add_expr(parser)
    _add_wrt_list(parser)
    _add_builder_options(parser)


def _args_jacobian(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("exprs", metavar="EXPR", nargs="+", help="the expressions (rows)")
    _add_wrt_list(parser)
    _add_builder_options(parser)


def _args_compile(parser: argparse.ArgumentParser) -> None:
    _add_expr(parser)
    _add_builder_options(parser)


def _args_derive(parser: argparse.ArgumentParser) -> None:
    _add_expr(parser)
    parser.add_argument(
        "--wrt", metavar="x", help="the variable (may be omitted if there is only one)"
    )
    parser.add_argument("--latex", action="store_true", help="print LaTeX instead of text")
    parser.add_argument("--no-simplify", action="store_true", help="keep the result as derived")
    _add_shapes(parser)


def _args_cache(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=tuple(CACHE_ACTIONS), help="what to do")


# name -> (handler, function adding its arguments)
COMMANDS: dict[str, tuple[Handler, Callable[[argparse.ArgumentParser], None]]] = {
    "grad": (_cmd_grad, _args_differentiate),
    "value-and-grad": (_cmd_value_and_grad, _args_differentiate),
    "hessian": (_cmd_hessian, _args_differentiate),
    "hvp": (_cmd_hvp, _args_differentiate),
    "jacobian": (_cmd_jacobian, _args_jacobian),
    "compile": (_cmd_compile, _args_compile),
    "derive": (_cmd_derive, _args_derive),
    "cache": (_cmd_cache, _args_cache),
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``symdiff`` command."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Symbolic differentiation that emits readable, vectorized NumPy code.",
        epilog=MAIN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, (_, add_arguments) in COMMANDS.items():
        sub = commands.add_parser(
            name,
            help=HELPS[name],
            description=HELPS[name][0].upper() + HELPS[name][1:] + ".",
            epilog=EPILOGS[name],
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        add_arguments(sub)
    return parser


# -- entry point ---------------------------------------------------------------------------------
def _parse(argv: Sequence[str] | None) -> argparse.Namespace | int:
    """The parsed arguments, or the exit code argparse chose (help, version, usage error)."""
    try:
        return build_parser().parse_args(argv)
    except SystemExit as exc:
        code = exc.code
        return code if isinstance(code, int) else (EXIT_OK if code is None else EXIT_USAGE)


def _run(args: argparse.Namespace) -> int:
    """Run the command and flush stdout, so that a closed pipe shows up here."""
    handler, _ = COMMANDS[args.command]
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
        _silence_stdout()
        return EXIT_INTERNAL
    except SymdiffError as exc:
        if _debugging():
            traceback.print_exc()
        _note(f"error: {_error_line(exc)}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        _note("interrupted")
        return EXIT_INTERRUPTED
    except Exception as exc:
        _report_internal(exc)
        return EXIT_INTERNAL


def _report_internal(exc: Exception) -> None:
    """One line for an unexpected exception; the traceback too under ``SYMDIFF_DEBUG=1``."""
    detail = _first_line(str(exc))
    line = f"internal error: {type(exc).__name__}{': ' + detail if detail else ''}"
    if _debugging():
        traceback.print_exc()
        _note(line)
    else:
        _note(f"{line} (rerun with {DEBUG_ENV}=1 for the traceback)")


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
