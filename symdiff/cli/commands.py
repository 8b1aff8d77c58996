"""The command handlers: each reads its parsed arguments, calls the public API and writes the
result. SymPy (through ``symdiff``'s API) is imported only inside a handler."""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable, Mapping
from typing import Any

from .options import shapes_keyword
from .output import EXIT_OK, EXIT_USAGE, emit, note

Handler = Callable[[argparse.Namespace], int]


def builder_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword options every builder takes, from the shared command-line flags."""
    return {
        "simplify": not args.no_simplify,
        "cse": not args.no_cse,
        "mode": args.mode,
        "cache": not args.no_cache,
        "backend": args.backend,
        **shapes_keyword(args),
    }


def write_module(compiled: Any, args: argparse.Namespace) -> int:
    """Print the generated source (with ``--standalone``, the module that runs with NumPy
    alone), or write it to ``--output``."""
    text = compiled.standalone_source if args.standalone else compiled.source
    if args.output is None:
        emit(text)
        return EXIT_OK
    return write_file(args.output, text)


def write_file(path: str, text: str) -> int:
    """Write ``text`` to ``path`` and say so; a path that cannot be written is a usage error."""
    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        note(f"error: cannot write {path}: {exc.strerror or exc}")
        return EXIT_USAGE
    note(f"wrote {path}")
    return EXIT_OK


def _cmd_grad(args: argparse.Namespace) -> int:
    """``symdiff grad``: the gradient module."""
    import symdiff as sd

    return write_module(sd.grad(args.expr, wrt=args.wrt, **builder_options(args)), args)


def _cmd_value_and_grad(args: argparse.Namespace) -> int:
    """``symdiff value-and-grad``: value and gradient in one module."""
    import symdiff as sd

    return write_module(sd.value_and_grad(args.expr, wrt=args.wrt, **builder_options(args)), args)


def _cmd_hessian(args: argparse.Namespace) -> int:
    """``symdiff hessian``: the Hessian module."""
    import symdiff as sd

    return write_module(sd.hessian(args.expr, wrt=args.wrt, **builder_options(args)), args)


def _cmd_hvp(args: argparse.Namespace) -> int:
    """``symdiff hvp``: the Hessian-vector product module."""
    import symdiff as sd

    return write_module(sd.hvp(args.expr, wrt=args.wrt, **builder_options(args)), args)


def _cmd_jacobian(args: argparse.Namespace) -> int:
    """``symdiff jacobian``: the Jacobian module of several expressions."""
    import symdiff as sd

    return write_module(sd.jacobian(list(args.exprs), wrt=args.wrt, **builder_options(args)), args)


def _cmd_compile(args: argparse.Namespace) -> int:
    """``symdiff compile``: the expression itself, compiled."""
    import symdiff as sd

    return write_module(sd.compile(args.expr, **builder_options(args)), args)


def _cmd_derive(args: argparse.Namespace) -> int:
    """``symdiff derive``: the numbered steps, as text or LaTeX."""
    import symdiff as sd

    derivation = sd.derive(
        args.expr, wrt=args.wrt, simplify=not args.no_simplify, **shapes_keyword(args),
        verbose="key" if args.key else "all", order="bottom-up" if args.bottom_up else
        "result-first",
    )
    if args.html is not None:
        return write_file(args.html, derivation.to_html_page())
    if args.latex:
        emit(derivation.latex())
    else:
        emit(derivation.text(width=text_width(args.width)))
    return EXIT_OK


def text_width(asked: int | None) -> int | None:
    """The width ``derive`` wraps its text to: ``--width`` if given (0: none), else the
    terminal's (``COLUMNS`` if set) when stdout is a terminal, else none: a pipe or a file
    gets whole lines."""
    if asked is not None:
        return asked or None
    return shutil.get_terminal_size().columns if sys.stdout.isatty() else None


def _cmd_serve(args: argparse.Namespace) -> int:
    """``symdiff serve``: the classroom page, until Ctrl-C."""
    from ..serve import Settings, serve

    settings = Settings(budget=args.budget, **({} if args.workers is None else
                                               {"workers": args.workers}))
    serve(args.host, args.port, settings)
    return EXIT_OK


def _cache_dir() -> int:
    """``symdiff cache dir``: where generated modules are stored."""
    import symdiff as sd

    path = sd.cache_info().get("path")
    emit("(memory only)" if path is None else str(path))
    return EXIT_OK


def _cache_info() -> int:
    """``symdiff cache info``: every field of ``sd.cache_info()``, one ``key: value`` a line."""
    import symdiff as sd

    lines = [f"{key}: {_info_value(key, value)}" for key, value in sd.cache_info().items()]
    emit("\n".join(lines))
    return EXIT_OK


def _info_value(key: str, value: Any) -> str:
    """A ``cache_info`` value as text; a ``None`` path means the cache is in memory only."""
    return "(memory only)" if key == "path" and value is None else str(value)


def describe_removed(removed: Any) -> str:
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

    emit(describe_removed(sd.clear_cache()))
    return EXIT_OK


CACHE_ACTIONS: dict[str, Callable[[], int]] = {
    "dir": _cache_dir,
    "info": _cache_info,
    "clear": _cache_clear,
}


def _cmd_cache(args: argparse.Namespace) -> int:
    """``symdiff cache ACTION``."""
    return CACHE_ACTIONS[args.action]()


#: The handler of each command, by the command's name.
HANDLERS: dict[str, Handler] = {
    "grad": _cmd_grad,
    "value-and-grad": _cmd_value_and_grad,
    "hessian": _cmd_hessian,
    "hvp": _cmd_hvp,
    "jacobian": _cmd_jacobian,
    "compile": _cmd_compile,
    "derive": _cmd_derive,
    "serve": _cmd_serve,
    "cache": _cmd_cache,
}
