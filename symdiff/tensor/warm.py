"""The disk cache for tensor functions, seen from the builders: imports neither SymPy nor Jinja.

Tensor functions use the scalar layer's two levels (:mod:`symdiff.warm`), in the same store:

* ``module/<key>``: the generated module, keyed (in :mod:`symdiff.tensor.build`, after parsing)
  by everything that changes its code: the kind, the expression texts (for a traced function, a
  serialization of the traced graph), the resolved ``wrt`` names and whether one name was given,
  the shapes of the function's arguments, the options that change code, and
  :func:`symdiff.warm.fingerprint` (symdiff's version and code, templates, Python, NumPy);
* ``index/<key>``: keyed here by the *raw* request (the strings, ``wrt`` and the ``shapes=``
  mapping exactly as given), a small record naming the module entry and its signature, so a
  second process asking the same loads the module without importing SymPy.

Both are verified like every cache entry (checksum, then :mod:`symdiff.verify` before the module
runs); a corrupt, foreign or mismatched entry is a miss and is rebuilt, never executed.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import Any

from .. import warm
from ..cache import cache_key
from ..compiled import CompiledFunction
from ..options import Options


def _plain_shapes(shapes: object) -> list[list[Any]] | None:
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


def raw_key(kind: str, exprs: Any, wrt: Any, options: Options, shapes: object) -> str | None:
    """The index key of a tensor request made of plain strings and plain shapes, else None."""
    if not options.cache:
        return None
    plain = warm.plain_texts(kind, exprs, wrt)
    if plain is None:
        return None
    texts = plain if kind == "jacobian" and isinstance(exprs, list | tuple) else plain[0]
    pairs = _plain_shapes(shapes)
    if pairs is None:
        return None
    wrt_value = list(wrt) if isinstance(wrt, list | tuple) else wrt
    request = json.dumps(["tensor", kind, texts, wrt_value, pairs])
    return cache_key("request", request, options.code_key(), warm.fingerprint())


def lookup(kind: str, exprs: Any, wrt: Any, options: Options, shapes: object
           ) -> CompiledFunction | None:
    """The function for this exact request from memory or the disk index, without SymPy."""
    key = raw_key(kind, exprs, wrt, options, shapes)
    lazy = functools.partial(derive_exprs, kind, exprs, wrt, options, shapes)
    return warm.lookup_index(key, kind, lazy)


def remember(kind: str, exprs: Any, wrt: Any, options: Options, shapes: object,
             compiled: CompiledFunction) -> None:
    """Index a freshly built (or disk-loaded) tensor function under its raw request."""
    warm.remember_index(raw_key(kind, exprs, wrt, options, shapes), compiled)


def derive_exprs(kind: str, exprs: Any, wrt: Any, options: Options, shapes: object) -> list:
    """The ``.exprs`` of a request, derived without emitting code (used lazily)."""
    from .build import request_exprs

    return request_exprs(kind, exprs, wrt, options, shapes)


__all__ = ["derive_exprs", "lookup", "raw_key", "remember"]
