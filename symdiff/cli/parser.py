"""The argument parser of the ``symdiff`` command: its commands, options, help and examples."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from .. import __version__
from ..options import BACKENDS
from .commands import CACHE_ACTIONS
from .options import wrt_option
from .output import PROG

WRT_HELP = (
    "comma-separated names to differentiate with respect to, e.g. x,y (default: every "
    "variable, sorted by name). Each must be a variable of the expression (a typo is an "
    "error). As wrt= in Python: a single name (--wrt x) gives one array, as wrt='x'; names "
    "(--wrt x,y) a tuple, and a single name with a trailing comma (--wrt x,) a 1-tuple"
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
  symdiff derive "x**2*sin(x)" --html out.html    one page to open offline, print or project
  symdiff serve                                   the classroom page on http://127.0.0.1:8000/
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
  symdiff grad "x**2 + y" --wrt x         one name: the call returns one array
  symdiff grad "x**2 + y" --wrt x,        a list of one name: the call returns a 1-tuple
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
  symdiff derive "x**2*sin(x)" --html out.html
                                          one self-contained page: steps, plot, graph
""",
    "serve": """\
examples:
  symdiff serve                           http://127.0.0.1:8000/ on this computer only
  symdiff serve --port 8080
  symdiff serve --host 0.0.0.0            for a classroom network (read the warning)
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
    "serve": "serve the classroom page: steps with hints, answer checking, practice",
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
    parser.add_argument(
        "--backend",
        choices=BACKENDS,
        default="numpy",
        help="the kind of module: numpy (imports only NumPy), array_api (the Array API "
        "standard's functions on the namespace of the arguments: NumPy, Dask, CuPy, PyTorch, "
        "JAX; needs array-api-compat) or numba (elementwise formulas in a loop that Numba "
        "compiles; needs numba) (default: numpy)",
    )
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    _add_shapes(parser)
    parser.add_argument(
        "--standalone",
        action="store_true",
        help="the module that runs with NumPy alone: symdiff's runtime helpers it calls copied "
        "into it instead of imported (what CompiledFunction.save writes)",
    )
    parser.add_argument(
        "-o", "--output", metavar="FILE", help="write the module to FILE instead of stdout"
    )


def _add_shapes(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shapes", metavar='"X=n,d;y=n"', help=SHAPES_HELP)


def _add_expr(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("expr", metavar="EXPR", help='an expression, e.g. "sin(x)*y"')


def _add_wrt_list(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--wrt", type=wrt_option, metavar="x,y", help=WRT_HELP)


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
    parser.add_argument(
        "--key", action="store_true",
        help="only the key steps (hide d/dx c = 0 and d/dx x = 1, as verbose='key')",
    )
    parser.add_argument(
        "--bottom-up", action="store_true",
        help="each rule's parts before its own line (default: the rule's line first)",
    )
    parser.add_argument(
        "--width", type=int, metavar="N", default=None,
        help="break text lines longer than N at spaces (default: the terminal's width when "
        "printing to a terminal, else never; 0: never)",
    )
    parser.add_argument(
        "--html", metavar="FILE",
        help="write one self-contained HTML page (steps with hints, plot, graph; no network "
        "needed to read it) to FILE instead of printing",
    )
    _add_shapes(parser)


def _bounded(kind: type, low: float, high: float) -> Callable[[str], float]:
    """An option's type: a number of ``kind`` from ``low`` to ``high``."""
    def read(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text} is not from {low:g} to {high:g}")
        return value
    return read


def _args_serve(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--port", type=_bounded(int, 0, 65535), default=8000,
                        help="the port (default: 8000; 0 takes a free one)")
    parser.add_argument(
        "--host", default="127.0.0.1",
        help="the address to listen on (default: 127.0.0.1, this computer only; 0.0.0.0 "
        "for every network the computer is on, such as a classroom's)",
    )
    parser.add_argument("--workers", type=_bounded(int, 1, 64), default=None,
                        help="worker processes for derivations (default: one more than the "
                        "cores, 2 to 8)")
    parser.add_argument("--budget", type=_bounded(float, 0.5, 600), default=10.0,
                        help="seconds one request may compute before it is stopped "
                        "(default: 10)")


def _args_cache(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=tuple(CACHE_ACTIONS), help="what to do")


#: The function adding each command's arguments to its subparser, by the command's name.
ARGUMENTS: dict[str, Callable[[argparse.ArgumentParser], None]] = {
    "grad": _args_differentiate,
    "value-and-grad": _args_differentiate,
    "hessian": _args_differentiate,
    "hvp": _args_differentiate,
    "jacobian": _args_jacobian,
    "compile": _args_compile,
    "derive": _args_derive,
    "serve": _args_serve,
    "cache": _args_cache,
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
    for name, add_arguments in ARGUMENTS.items():
        sub = commands.add_parser(
            name,
            help=HELPS[name],
            description=HELPS[name][0].upper() + HELPS[name][1:] + ".",
            epilog=EPILOGS[name],
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        add_arguments(sub)
    return parser
