"""The one build pipeline, for scalar and tensor requests alike: request index -> memo -> disk
store -> build.

:func:`compiled` takes a builder call (:class:`~symdiff.layer.Call`) to a
:class:`~symdiff.compiled.CompiledFunction`:

1. a call made of plain strings (and plain shapes) is looked up in the request index
   (:func:`symdiff.request_index.lookup`: memory, then disk) without importing SymPy;
2. otherwise its layer (:data:`LAYERS`: scalar, or tensor with ``shapes=``) parses it into a
   request, and :func:`compile_request` takes over: the request's key finds the function in
   memory (:data:`_MEMO`), or its module entry on disk (:func:`symdiff.request_index.load_module`),
   or
   else the layer derives and emits it now and the module is stored;
3. the function is indexed under the raw call, so the next process finds it in step 1.

A traced function's bound constants (:mod:`symdiff.constants`) are not part of any key, of the
module or of what is stored: the function found is given the values of this trace
(:meth:`~symdiff.compiled.CompiledFunction.with_constants`).

``cache=False`` skips every level. The layers know nothing of caching (:mod:`symdiff.layer`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import inspect
import sys
from collections.abc import Callable, Iterator
from typing import Any

from . import request_index
from .compiled import CompiledFunction
from .errors import SymdiffError, UnsupportedError
from .layer import Built, Call, Layer, Request


def _scalar_layer() -> Layer:
    from .build import LAYER  # SymPy and Jinja load here, on first real use

    return LAYER


def _tensor_layer() -> Layer:
    from .tensor.build import LAYER

    return LAYER


#: The layer of each kind of call (:attr:`symdiff.layer.Call.layer`), imported when first used.
LAYERS: dict[str, Callable[[], Layer]] = {"scalar": _scalar_layer, "tensor": _tensor_layer}

_MEMO: dict[str, CompiledFunction] = {}


def compiled(call: Call) -> CompiledFunction:
    """The function for ``call``: from the request index, from memory, from the disk cache, or
    derived, emitted and loaded now (and then cached), as ``cache=True`` allows."""
    raw = request_index.raw_key(call.kind, call.exprs, call.wrt, call.options, call.shapes)
    found = request_index.lookup(raw, functools.partial(call_exprs, call))
    if found is not None:  # from the request index: the twin of the same call, as built
        if call.layer == "scalar" and call.options.backend != "numpy" \
                and "numpy_twin" not in found.__dict__:
            twin = dataclasses.replace(
                call, options=dataclasses.replace(call.options, backend="numpy"))
            found.numpy_twin = functools.cache(  # type: ignore[attr-defined]
                lambda: compiled(twin))
        return _traced(found, call)
    layer = LAYERS[call.layer]()
    from .parsing.limits import recursion_limit  # (SymPy is loaded by now: the layer needs it)

    with collector_paused(), recursion_limit(BUILD_RECURSION_LIMIT), limits_named():
        function = compile_request(layer, layer.request(call))
    request_index.remember(raw, function)
    return _traced(function, call)


def _traced(function: CompiledFunction, call: Call) -> CompiledFunction:
    """A traced tensor function, remembering (weakly) the Python function it was traced from,
    for ``explain()``: the text of a traced expression does not always parse again."""
    if call.layer == "tensor" and callable(call.exprs):
        return function.with_origin(call.exprs)
    return function


#: The interpreter's recursion limit while a build runs: derivation, linearisation and SymPy's
#: own walks recurse once per level of an expression, and an unrolled loop of 30 steps nests
#: a few hundred levels deep (with several Python frames each).
BUILD_RECURSION_LIMIT = 10_000


@contextlib.contextmanager
def limits_named() -> Iterator[None]:
    """A limit of the interpreter that a build meets, raised as an
    :class:`~symdiff.errors.UnsupportedError` naming it: the recursion limit (an expression
    nested deeper than :data:`BUILD_RECURSION_LIMIT` frames allow) and Python's limit on the
    digits of an integer converted to text (``sys.set_int_max_str_digits``)."""
    try:
        yield
    except RecursionError:
        raise UnsupportedError(
            "the expression is nested too deeply to build: deriving it met Python's recursion "
            f"limit ({sys.getrecursionlimit()} frames); split it into steps (a function of "
            "intermediate results) or build it with mode='reverse'") from None
    except ValueError as error:
        if isinstance(error, SymdiffError) or "integer string conversion" not in str(error):
            raise
        raise UnsupportedError(
            "the expression has a number too long to build: an integer of more digits than "
            f"Python's limit for integer strings ({sys.get_int_max_str_digits()} digits, "
            "sys.set_int_max_str_digits)") from None


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off while a build runs (back on after, if it was on).

    A build allocates hundreds of thousands of objects that stay alive (SymPy nodes, the
    generated module's syntax tree), and each of the collector's passes over the older
    generations walks all of them: with 1,000 names, 10-20% of the build (half of parsing the
    generated module) went to passes that found nothing to free. What a build allocates is
    freed by reference counting; any cycles are collected once the collector runs again.
    """
    paused = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


def compile_request(layer: Layer, request: Request) -> CompiledFunction:
    """The function for a parsed ``request`` of ``layer``: from memory, from its module entry,
    or built now (and stored), as ``cache=True`` allows."""
    signature = request.call_signature
    constants = getattr(request, "constants", ())  # a traced function's bound constants
    if not request.options.cache:
        function = function_of(layer.build(request), None, signature).with_constants(constants)
        return _with_twin(function, layer, request)
    key = request.key()
    if key in _MEMO:  # the key holds the signature; annotations may still differ
        return _MEMO[key].with_signature(signature).with_constants(constants)
    disk_key = request_index.module_key(key)
    function = request_index.load_module(disk_key, request.recipe, layer.exprs(request), signature)
    if function is None:
        function = function_of(layer.build(request), disk_key, signature)
        request_index.store_module(function)
    _MEMO[key] = _with_twin(function, layer, request)
    return function.with_constants(constants)


def _with_twin(function: CompiledFunction, layer: Layer, request: Request) -> CompiledFunction:
    """An elementwise Array API function, given its NumPy twin (the same request with the
    default backend, built on first use): what runs on each chunk of Dask arrays
    (:mod:`symdiff.chunks`)."""
    options = request.options
    if options.backend != "numpy" and not hasattr(request, "shapes"):
        numpy_request = dataclasses.replace(
            request, options=dataclasses.replace(options, backend="numpy"))
        function.numpy_twin = functools.cache(  # type: ignore[attr-defined]
            lambda: compile_request(layer, numpy_request))
    return function


def function_of(built: Built, key: str | None, signature: inspect.Signature | None
                ) -> CompiledFunction:
    """Load what a layer built as a :class:`CompiledFunction` (cached under ``key``)."""
    return CompiledFunction.of(built.source, built.recipe, built.exprs, key=key,
                               signature=signature, recorded=built.recorded)


def call_exprs(call: Call) -> list[Any]:
    """The ``.exprs`` of ``call``, derived (with SymPy) without emitting code: what a function
    loaded through the request index computes its ``.exprs`` with, on first access."""
    layer = LAYERS[call.layer]()
    return layer.exprs(layer.request(call))()


def clear_memo() -> None:
    """Forget the functions kept in memory (both layers)."""
    _MEMO.clear()

