"""The disk cache seen from the build pipeline: keys, the request index, and module entries.
Imports neither SymPy nor Jinja: it is what makes a warm start cheap.

Two levels, both in :func:`symdiff.cache.open_store`, for the scalar and the tensor layer alike:

* ``module/<key>``: a generated module and the JSON record of its
  :class:`~symdiff.recipe.Recipe` (:func:`symdiff.cache.pack_module`), keyed by the *canonical*
  request (:meth:`symdiff.layer.Request.key`: for the scalar layer the parsed expression, so
  ``"x*y"`` and ``"y*x"`` share one entry; for the tensor layer the texts or the traced graph
  and the argument shapes) plus :func:`fingerprint` (symdiff version and code, template digest,
  Python and NumPy major versions);
* ``index/<key>``: keyed by the *raw* request (the exact strings, ``wrt`` and ``shapes=`` given;
  :func:`raw_key`), a small JSON record naming the module entry and holding the recipe. A
  process that finds a request here loads the module without importing SymPy or Jinja.

What a function is comes from the recipe stored with it, never from its source. An entry
without a recipe (an older format), with one that does not describe the function asked for, or
whose module does not load is a miss: the caller rebuilds it (and overwrites the entry).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import json
import os
import sys
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

from . import __version__
from .cache import LRU, cache_key, is_key, open_store, pack_module, unpack_module
from .compiled import CompiledFunction
from .options import Options
from .recipe import Recipe
from .sparse.function import function_class


def _log():  # (logging is imported when there is something to say: not on a warm start)
    import logging

    return logging.getLogger(__name__)


_PACKAGE = Path(__file__).resolve().parent

#: The version of the index record's layout (``{"format", "module", "recipe"}``).
INDEX_FORMAT = 2

#: The functions of the most recently used raw requests (:data:`symdiff.cache.MEMO_SIZE`).
_RAW_MEMO: LRU[str, CompiledFunction] = LRU()

Exprs = Callable[[], list[Any]]


# -- keys ------------------------------------------------------------------------------------------
def code_digest(package: Path = _PACKAGE) -> str:
    """SHA-256 over the name, size and modification time of each of the package's ``.py``
    files, so that any change of symdiff's code (an editable install, a patched copy) keys new
    entries even before the version number moves. The files are not read: Python's own
    bytecode cache tells a changed source the same way, and a warm start reads no source."""
    digest = hashlib.sha256()
    pending = [("", str(package))]
    while pending:
        prefix, folder = pending.pop()
        with os.scandir(folder) as found:
            entries = sorted(found, key=lambda e: e.name)
        for entry in reversed(entries):  # (a stack: folders in order of their names)
            if entry.is_dir() and entry.name != "__pycache__":
                pending.append((f"{prefix}{entry.name}/", entry.path))
        for entry in entries:
            if entry.name.endswith(".py") and entry.is_file():
                info = entry.stat()
                digest.update(f"{prefix}{entry.name}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    return digest.hexdigest()


@functools.cache
def fingerprint() -> str:
    """What besides the request changes generated code: symdiff's version and code, the
    template text, and the Python and NumPy major versions."""
    import numpy

    from .codegen.render import templates_digest

    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    return (
        f"symdiff={__version__};code={code_digest()};templates={templates_digest()};"
        f"python={python};numpy={numpy.__version__.split('.')[0]}"
    )


def module_key(request_key: str) -> str:
    """The disk key of the module for a canonical request key."""
    return cache_key("module", request_key, fingerprint())


def plain_texts(kind: str, exprs: Any, wrt: Any) -> list[str] | None:
    """The expression strings of a request made of plain strings (a ``wrt`` of names), or
    None when it is not one (SymPy objects, traced functions: those need parsing first)."""
    texts = exprs if kind == "jacobian" and isinstance(exprs, list | tuple) else [exprs]
    if not all(isinstance(t, str) for t in texts):
        return None
    if not (
        wrt is None
        or isinstance(wrt, str)
        or (isinstance(wrt, list | tuple) and all(isinstance(w, str) for w in wrt))
    ):
        return None
    return list(texts)


def plain_shapes(shapes: object) -> list[list[Any]] | None:
    """``shapes=`` as sorted ``[name, [dims]]`` pairs when it is plain data (names to tuples
    or lists of strings and ints), else None (no raw key: the request is keyed after parsing)."""
    if not isinstance(shapes, Mapping) or not all(isinstance(k, str) for k in shapes):
        return None
    pairs = []
    for name in sorted(shapes):
        shape = shapes[name]
        if not isinstance(shape, tuple | list) or not all(
            isinstance(d, str) or (type(d) is int) for d in shape
        ):
            return None
        pairs.append([name, list(shape)])
    return pairs


def raw_key(kind: str, exprs: Any, wrt: Any, options: Options, shapes: object = None
            ) -> str | None:
    """The index key of a request made of plain strings (and, for the tensor layer, a plain
    ``shapes=`` mapping), or None when it is not one or ``cache=False``. The two layers' keys
    never meet (the tensor layer's record starts with ``"tensor"``)."""
    texts = plain_texts(kind, exprs, wrt)
    if texts is None or not options.cache:
        return None
    wrt_value = list(wrt) if isinstance(wrt, tuple) else wrt
    if shapes is None:
        request = [kind, texts, wrt_value]
    else:
        pairs = plain_shapes(shapes)
        if pairs is None:
            return None
        given = texts if kind == "jacobian" and isinstance(exprs, list | tuple) else texts[0]
        request = ["tensor", kind, given, wrt_value, pairs]
    return cache_key("request", json.dumps(request), options.code_key(), fingerprint())


# -- module entries --------------------------------------------------------------------------------
def load_module(
    key: str,
    expected: Recipe | None,
    exprs: Exprs,
    signature: inspect.Signature | None = None,
) -> CompiledFunction | None:
    """The module entry ``key`` as a function, or None if absent or not what it should be: no
    recipe (an older entry), a recipe that does not describe ``expected`` (when given), or a
    module that fails to load or verify.

    ``signature`` is a traced function's (the module only holds the parameter names, in order;
    defaults and keyword-only markers live in the signature, never in the source)."""
    text = open_store().get("module", key)
    if text is None:
        return None
    try:
        entry = unpack_module(text)
        if entry is None:
            _log().debug("cache entry %s has no recipe (an older format); rebuilding", key)
            return None
        source, record = entry
        recipe = Recipe.from_json(record)
    except Exception:  # any malformed field of the record: a miss, rebuilt
        _log().debug("cache entry %s has an unreadable recipe; rebuilding", key, exc_info=True)
        return None
    if expected is not None and not recipe.same_function(expected):
        _log().debug("cache entry %s is not %s; rebuilding", key, expected)
        return None
    try:
        return function_class(recipe).of(source, recipe, exprs, key=key, signature=signature)
    except Exception:  # a verified entry that still fails to load is rebuilt, not raised
        _log().debug("cache entry %s failed to load; rebuilding", key, exc_info=True)
        return None


def store_module(compiled: CompiledFunction) -> None:
    """Write ``compiled`` (its source and recipe) to its module entry ``compiled.key``."""
    if compiled.key is None or compiled.recipe is None:
        return
    open_store().put("module", compiled.key, pack_module(compiled.source,
                                                         compiled.recipe.to_json()))


# -- the request index -----------------------------------------------------------------------------
def lookup(key: str | None, exprs: Exprs) -> CompiledFunction | None:
    """The function indexed under the raw request ``key`` (memory, then the disk index), or
    None; ``exprs`` computes its ``.exprs`` on first access."""
    if key is None:
        return None
    found = _RAW_MEMO.get(key)
    if found is not None:
        return found
    text = open_store().get("index", key)
    if text is None:
        return None
    try:
        record = json.loads(text)
        if not isinstance(record, dict) or record.get("format") != INDEX_FORMAT:
            return None  # an older record (no recipe), or not one: a miss, rebuilt
        module, recipe = record["module"], Recipe.from_json(record["recipe"])
    except Exception:  # any malformed field of the record: a miss, rebuilt and overwritten
        _log().debug("index record %s is malformed; rebuilding", key, exc_info=True)
        return None
    if not is_key(module):
        return None
    compiled = load_module(module, recipe, exprs)
    if compiled is not None:
        _RAW_MEMO.put(key, compiled)
    return compiled


def remember(key: str | None, compiled: CompiledFunction) -> None:
    """Index ``compiled`` under the raw request ``key`` (memory and disk). Nothing happens
    without a key or for a function not cached on disk."""
    if key is None or compiled.key is None or compiled.recipe is None:
        return
    _RAW_MEMO.put(key, compiled)
    record = {"format": INDEX_FORMAT, "module": compiled.key, "recipe": compiled.recipe.to_json()}
    open_store().put("index", key, json.dumps(record, sort_keys=True))


def building(namespace: str, key: str | None) -> AbstractContextManager[bool]:
    """While this process builds entry ``key`` of ``namespace`` (``"index"``: a raw request,
    ``"module"``: a module), other processes asking for it wait for it
    (:meth:`symdiff.cache.DiskStore.building`); nothing to hold without a key."""
    if key is None:
        return contextlib.nullcontext(False)
    return open_store().building(namespace, key)


def forget() -> None:
    """Drop the in-memory index."""
    _RAW_MEMO.clear()
