"""The disk cache seen from the builders: keys, the request index, and loading a cached module.

Two levels, both in :func:`symdiff.cache.open_store`:

* ``module/<key>``: a generated module, keyed by the *canonical* request (the parsed expression,
  wrt, options) plus :func:`fingerprint` (symdiff version, template digest, Python and NumPy
  major versions), so ``"x*y"`` and ``"y*x"`` share one entry;
* ``index/<key>``: keyed by the *raw* request (the exact strings given), a small JSON record
  naming the module entry and its signature. A process that finds a request here loads the module
  without importing SymPy or Jinja at all.

This module imports neither; it is what makes a warm start cheap.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import logging
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import __version__
from .cache import cache_key, open_store
from .codenames import code_names
from .compiled import CompiledFunction
from .options import Options

log = logging.getLogger(__name__)
_PACKAGE = Path(__file__).resolve().parent

_RAW_MEMO: dict[str, CompiledFunction] = {}


def code_digest(package: Path = _PACKAGE) -> str:
    """SHA-256 over the package's own ``.py`` files, so that any change of symdiff's code (an
    editable install, a patched copy) keys new entries even before the version number moves."""
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@functools.cache
def fingerprint() -> str:
    """What besides the request changes generated code: symdiff's version and code, the
    template text, and the Python and NumPy major versions."""
    import numpy

    from .render import templates_digest

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


def raw_key(kind: str, exprs: Any, wrt: Any, options: Options) -> str | None:
    """The index key of a request made of plain strings, or None when it is not one."""
    texts = plain_texts(kind, exprs, wrt)
    if texts is None:
        return None
    request = json.dumps([kind, texts, wrt if not isinstance(wrt, tuple) else list(wrt)])
    return cache_key("request", request, options.code_key(), fingerprint())


def load_cached(
    key: str,
    name: str,
    args: Sequence[str],
    wrt: Any,
    kind: str,
    exprs: Callable[[], list],
    signature: inspect.Signature | None = None,
) -> CompiledFunction | None:
    """The cached module ``key`` as a function, or None if absent or not what it should be.

    ``signature`` is a traced function's (the module only holds the parameter names, in order;
    defaults and keyword-only markers live in the signature, never in the source)."""
    source = open_store().get("module", key)
    if source is None:
        return None
    match = re.search(rf"^def {re.escape(name)}\((.*)\):$", source, re.MULTILINE)
    params = [p.strip() for p in match.group(1).split(",") if p.strip()] if match else None
    renamed = code_names(args)  # SymPy names that are not identifiers have code names
    if params != [renamed.get(a, a) for a in args]:
        log.debug("cache entry %s does not define %s%s; rebuilding", key, name, tuple(args))
        return None
    try:
        return CompiledFunction(
            source=source,
            name=name,
            args=args,
            wrt=wrt,
            exprs=exprs,
            kind=kind,
            key=key,
            signature=signature,
        )
    except Exception:  # a verified entry that still fails to load is rebuilt, not raised
        log.debug("cache entry %s failed to load; rebuilding", key, exc_info=True)
        return None


def lookup(kind: str, exprs: Any, wrt: Any, options: Options) -> CompiledFunction | None:
    """A function for this exact request from memory or the disk index, without SymPy."""
    key = raw_key(kind, exprs, wrt, options) if options.cache else None
    lazy = functools.partial(derive_exprs, kind, exprs, wrt, options)
    return lookup_index(key, kind, lazy)


def lookup_index(key: str | None, kind: str, exprs: Callable[[], list]) -> CompiledFunction | None:
    """The function indexed under the raw request ``key`` (memory, then the disk index), or
    None; ``exprs`` computes its ``.exprs`` on first access. Shared with the tensor layer."""
    if key is None:
        return None
    if key in _RAW_MEMO:
        return _RAW_MEMO[key]
    text = open_store().get("index", key)
    if text is None:
        return None
    try:
        record = json.loads(text)
        module, name, args, stored_wrt = (record[k] for k in ("module", "name", "args", "wrt"))
    except (ValueError, KeyError, TypeError):
        return None
    wrt_value = stored_wrt if isinstance(stored_wrt, str | None) else tuple(stored_wrt)
    compiled = load_cached(module, name, args, wrt_value, kind, exprs)
    if compiled is not None:
        _RAW_MEMO[key] = compiled
    return compiled


def remember(kind: str, exprs: Any, wrt: Any, options: Options, compiled: CompiledFunction) -> None:
    """Index a freshly built function under its raw request (memory and disk)."""
    remember_index(raw_key(kind, exprs, wrt, options) if options.cache else None, compiled)


def remember_index(key: str | None, compiled: CompiledFunction) -> None:
    """Index ``compiled`` under the raw request ``key`` (memory and disk); shared with the
    tensor layer. Nothing happens without a key or for a function not cached on disk."""
    if key is None or compiled.key is None:
        return
    _RAW_MEMO[key] = compiled
    wrt_value = compiled.wrt if isinstance(compiled.wrt, str | None) else list(compiled.wrt)
    record = {"module": compiled.key, "name": compiled.name, "args": list(compiled.args)}
    record["wrt"] = wrt_value
    open_store().put("index", key, json.dumps(record, sort_keys=True))


def derive_exprs(kind: str, exprs: Any, wrt: Any, options: Options) -> list:
    """The closed-form expressions of a request (imports SymPy; used lazily by ``.exprs``)."""
    from .build import forward_exprs, make_request

    return forward_exprs(make_request(kind, exprs, wrt, options))


def forget() -> None:
    """Drop the in-memory index."""
    _RAW_MEMO.clear()
