"""The ``symdiff`` command line: a thin layer over the public API.

Commands (``symdiff COMMAND --help`` shows the options and examples of each)::

    symdiff grad EXPR [--wrt x,y]            the gradient module (source) on stdout
    symdiff value-and-grad EXPR [--wrt x,y]  value and gradient, sharing subexpressions
    symdiff hessian EXPR [--wrt x,y]         the Hessian module
    symdiff hvp EXPR [--wrt x,y]             the Hessian-vector product module (last arg _v)
    symdiff jacobian EXPR [EXPR ...] [--wrt x,y]
    symdiff compile EXPR                     the expression itself, compiled
    symdiff derive EXPR [--wrt x] [--latex]  the numbered derivation steps
    symdiff derive EXPR --html FILE          one self-contained page: steps, plot, graph
    symdiff serve [--port N] [--host H]      the classroom page (127.0.0.1:8000 by default)
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

Modules: ``parser`` (commands, options, help texts) reads the option values with ``options``;
``commands`` (one handler per command) calls the public API; ``output`` writes results,
messages and exit codes; ``entry`` (:func:`main`) ties them together.
"""

from __future__ import annotations

from .entry import main
from .options import parse_shapes_option
from .output import DEBUG_ENV, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE, PROG
from .parser import build_parser

__all__ = [
    "DEBUG_ENV",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "PROG",
    "build_parser",
    "main",
    "parse_shapes_option",
]
