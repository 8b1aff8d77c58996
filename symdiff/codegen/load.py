"""Source text -> callable: compile and execute one generated module, register it for tracebacks.

Only modules rendered by symdiff's own templates reach this function; user text never does.

Tracebacks. The module is compiled under the path of its copy on disk
(:mod:`symdiff.codegen.sources`: written now for a cached function, only when a traceback
needs it otherwise), else under a name such as ``<symdiff grad_f ...>``, and its lines are
registered with :mod:`linecache` under that name, so that tracebacks and ``inspect.getsource``
show the generated lines. The registration lasts as long as a function of the module: when the
last one is freed, its lines leave linecache, so that a process building thousands of
functions does not keep every module's text; under a path it is lazy (the text is split into
lines only when a traceback asks).
"""

from __future__ import annotations

import ast
import functools
import linecache
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .. import progress
from ..verify import check_module
from . import naming, sources

_mutex = threading.Lock()
#: How many loaded functions are compiled under each name registered with linecache.
_LIVE: dict[str, int] = {}


def load_function(source: str, name: str, filename: str, *, copy: bool = True
                  ) -> Callable[..., Any]:
    """Execute generated ``source`` in a fresh namespace and return its function ``name``.

    The module's syntax tree is checked first (:func:`symdiff.verify.check_module`); anything a
    template cannot produce is refused before it runs. The code is compiled under the path of a
    copy of the source on disk (written now if ``copy``, else only if a traceback needs it; see
    :mod:`symdiff.codegen.sources`), or under ``filename`` where there can be no copy, and the
    source is registered with :mod:`linecache` under that name for as long as the function
    lives.
    """
    with progress.stage("verify"):
        tree = check_module(source)
    with progress.stage("compile"):
        numba = "\nimport numba as _numba\n" in source
        salt = numba_salt() if numba else ""
        found = sources.write_copy(source, name, salt) if copy or numba else None
        if numba and found is None:
            from ..errors import SymdiffError

            raise SymdiffError(
                "a backend='numba' function needs its module in a file (Numba caches the "
                f"compiled code beside it), and {sources.source_dir()} is not a private "
                "writable directory: set SYMDIFF_SOURCE_DIR to one")
        filename = found or (filename if copy else str(sources.copy_path(source, name)))
        code = compile(tree, filename, "exec")  # the tree just checked, not a second parse
        namespace: dict[str, Any] = {"__name__": "symdiff.generated", "__file__": filename}
        if numba:  # (found: its file)
            namespace = _numba_namespace(filename)
        exec(code, namespace)  # our own rendered module, never user text
    if numba:
        with progress.stage("numba") as counts:
            if "_loop" in namespace:
                counts["loop"] = compile_loop(namespace, tree)
            else:
                counts.update(compile_ufuncs(namespace, tree))
    function = namespace[name]
    _register(filename, source, function, later=not copy)
    return function


def _register(filename: str, source: str, function: Callable[..., Any], later: bool) -> None:
    """Serve ``source`` from linecache under ``filename`` while ``function`` lives."""
    with _mutex:
        _LIVE[filename] = _LIVE.get(filename, 0) + 1
        if filename.startswith("<"):  # no file: the lines themselves
            linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True),
                                         filename)
        else:  # a path: split into lines only if a traceback asks (``linecache.lazycache``)
            linecache.cache[filename] = (functools.partial(str, source),)
    if later:
        sources.copy_later(filename)
    finalizer = weakref.finalize(function, _release, filename, later)
    finalizer.atexit = False


@functools.cache
def numba_salt() -> str:
    """The text of the runtime's scalar functions and loop helpers, which a Numba module's
    compiled code holds inline: a copy's name depends on it, so that Numba's cache beside the
    file (keyed by the file's own text) never serves machine code of other such functions."""
    folder = Path(__file__).resolve().parent.parent / "runtime"
    return "".join((folder / name).read_text(encoding="utf-8")
                   for name in ("scalar.py", "loops.py"))


def compile_loop(namespace: dict[str, Any], tree: ast.Module) -> str:
    """Compile a Numba module's loop for float64 arrays (every argument a full array), or
    load it from Numba's cache beside the module's file: ``"compiled"`` or ``"from Numba's
    cache"``. The module's own call of the runtime (``_numba_elementwise``, with the layout of
    the outputs it gives there: ``leading=`` and ``structure=``) runs on one-element float64
    arrays, so that the loop is compiled for exactly what the runtime passes it (the flat
    arguments, the outputs, the bounds of the elements). Other kinds of arguments (float32,
    an argument of one element among longer ones) compile on the first call that brings them
    (and are cached too)."""
    import numpy as np

    loop, formulas = namespace["_loop"], namespace["_formulas"]
    call = next(node for node in ast.walk(tree) if isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name) and node.func.id == "_numba_elementwise")
    layout = {k.arg: ast.literal_eval(k.value) for k in call.keywords
              if k.arg in ("leading", "structure")}
    inputs = [np.zeros(1) for _ in range(formulas.py_func.__code__.co_argcount)]
    before = sum(loop.stats.cache_hits.values())
    namespace["_numba_elementwise"](formulas, inputs, threads=1, loop=loop, **layout)
    return "from Numba's cache" if sum(loop.stats.cache_hits.values()) > before else "compiled"


def compile_ufuncs(namespace: dict[str, Any], tree: ast.Module) -> dict[str, int]:
    """Compile the Numba ufuncs of a tensor module's elementwise statements
    (:mod:`symdiff.tensor.fused`) for float64 arrays, or load them from Numba's cache: how many
    of each (``{"ufuncs compiled": 3, "from Numba's cache": 1}``). A ufunc was compiled when
    Numba's compiler ran passes on it (its ``numba:run_pass`` events; a ufunc has no
    dispatcher statistics of cache hits). float32 arguments, and a ufunc that reads a
    condition (booleans), compile on the first call that brings them."""
    import numpy as np
    from numba.core import event
    from numba.core.errors import TypingError

    counts = {"ufuncs compiled": 0, "from Numba's cache": 0, "on the first call": 0}
    module = namespace["__name__"]
    for node in tree.body:
        if not (isinstance(node, ast.FunctionDef) and node.name.startswith("_fused")):
            continue
        try:
            with event.install_recorder("numba:run_pass") as passes, np.errstate(all="ignore"):
                namespace[node.name](*(np.int64(1) if naming.is_dimension(a.arg)
                                       else np.zeros(1) for a in node.args.args))
        except TypingError:  # (a parameter that is a condition, booleans, which zeros cannot
            counts["on the first call"] += 1  # stand for: the first call compiles it)
            continue
        compiled = any(found.data["qualname"] == node.name and found.data["module"] == module
                       for _, found in passes.buffer)
        counts["ufuncs compiled" if compiled else "from Numba's cache"] += 1
    return {key: value for key, value in counts.items() if value}


def _numba_namespace(path: str) -> dict[str, Any]:
    """The namespace of a Numba module: a module registered in :data:`sys.modules` under a
    name of its file's (``symdiff.generated.grad_f-<hash>``), which Numba's cache records
    in the compiled code it writes, and imports again when a later process loads it."""
    import sys
    import types

    name = "symdiff.generated." + Path(path).stem
    module = sys.modules.get(name)
    if module is None:
        module = sys.modules[name] = types.ModuleType(name)
    module.__file__ = path
    return module.__dict__


def _release(filename: str, later: bool) -> None:
    """A function compiled under ``filename`` was freed: the last one takes its lines out of
    linecache."""
    with _mutex:
        left = _LIVE.get(filename, 0) - 1
        if left > 0:
            _LIVE[filename] = left
        else:
            _LIVE.pop(filename, None)
            entry = linecache.cache.get(filename)
            if entry is not None and (len(entry) == 1 or entry[1] is None):
                del linecache.cache[filename]  # (ours: lazy, or lines with no mtime)
    if later:
        sources.forget_later(filename)


def registered() -> int:
    """How many names linecache serves for loaded generated modules now."""
    with _mutex:
        return len(_LIVE)
