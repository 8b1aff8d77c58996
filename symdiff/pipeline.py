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
   else the layer derives and emits it now and the module is stored (a build that runs long
   reports its stages: :mod:`symdiff.progress`);
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

from . import progress, request_index
from .cache import LRU
from .compiled import CompiledFunction
from .errors import SymdiffError, UnsupportedError
from .layer import Built, Call, Layer, Request
from .sparse.function import function_class
from .stacks import on_large_stack


def _scalar_layer() -> Layer:
    from .build import LAYER  # SymPy and Jinja load here, on first real use

    return LAYER


def _tensor_layer() -> Layer:
    from .tensor.build import LAYER

    return LAYER


def _sparse_scalar_layer() -> Layer:
    from .sparse.scalar_build import LAYER

    return LAYER


def _sparse_tensor_layer() -> Layer:
    from .sparse.tensor_build import LAYER

    return LAYER


#: The layer of each kind of call (:attr:`symdiff.layer.Call.layer`), imported when first used.
LAYERS: dict[str, Callable[[], Layer]] = {
    "scalar": _scalar_layer, "tensor": _tensor_layer,
    "sparse scalar": _sparse_scalar_layer, "sparse tensor": _sparse_tensor_layer,
}

#: The functions of the most recently used requests (:data:`symdiff.cache.MEMO_SIZE`).
_MEMO: LRU[str, CompiledFunction] = LRU()


def compiled(call: Call) -> CompiledFunction:
    """The function for ``call``: from the request index, from memory, from the disk cache, or
    derived, emitted and loaded now (and then cached), as ``cache=True`` allows. While one
    process builds a call, others asking for the same call wait for it and load its entry
    (:func:`symdiff.request_index.building`)."""
    raw = request_index.raw_key(call.kind, call.exprs, call.wrt, call.options, call.shapes)
    exprs = functools.partial(call_exprs, call)
    found = request_index.lookup(raw, exprs)
    if found is not None:  # from the request index: the twin of the same call, as built
        return _found(found, call)
    with request_index.building("index", raw):
        found = request_index.lookup(raw, exprs)  # built by another process meanwhile
        if found is not None:
            return _found(found, call)
        layer = LAYERS[call.layer]()
        title = progress.describe(call.kind, getattr(call.exprs, "fn", call.exprs), call.wrt)
        parsed: dict[str, Request] = {}
        with progress.build(title):  # reported if it runs long
            request, function = as_a_build(
                _parsed_and_built, layer, call, parsed,
                depth=lambda: depth_of(getattr(parsed.get("request"), "exprs", None)))
        if call.layer == "tensor":  # its graph, for composing it into another traced function
            function = function.with_graph((tuple(request.roots), request.params,
                                            dict(request.shapes), request.many))
        request_index.remember(raw, function)
    return _traced(function, call)


def _parsed_and_built(layer: Layer, call: Call, parsed: dict[str, Request]
                      ) -> tuple[Request, CompiledFunction]:
    """``call`` parsed into a request of ``layer`` (kept in ``parsed``, for the error of an
    expression nested too deeply), and its function (:func:`compile_request`)."""
    with progress.stage("parse") as counts:
        request = layer.request(call)
        counts["names"] = len(getattr(request, "params", ()))
    parsed["request"] = request
    return request, compile_request(layer, request)


def depth_of(exprs: Any) -> int | None:
    """How deep the SymPy expression ``exprs`` (or a list or tuple of them) is nested; None for
    anything else (text, a Python function)."""
    from sympy import Basic

    from .simplify.dag import depth

    if isinstance(exprs, Basic):
        return depth([exprs])
    if isinstance(exprs, tuple | list) and all(isinstance(e, Basic) for e in exprs):
        return depth(exprs)
    return None


def _found(found: CompiledFunction, call: Call) -> CompiledFunction:
    """A function found in the request index, as ``call`` asks for it."""
    if call.layer == "scalar" and call.options.backend != "numpy" \
            and "numpy_twin" not in found.__dict__:
        twin = dataclasses.replace(
            call, options=dataclasses.replace(call.options, backend="numpy"))
        found.numpy_twin = functools.cache(  # type: ignore[attr-defined]
            lambda: compiled(twin))
    return _traced(found, call)


def _traced(function: CompiledFunction, call: Call) -> CompiledFunction:
    """A traced tensor function, remembering (weakly) the Python function it was traced from,
    for ``explain()``: the text of a traced expression does not always parse again."""
    if call.shapes is not None and callable(call.exprs):
        return function.with_origin(call.exprs)
    origin = getattr(call.exprs, "fn", None)  # a function with trees or static arguments
    if call.layer == "tensor" and callable(origin):
        return function.with_origin(origin)
    return function


#: The interpreter's recursion limit while a build runs: derivation, linearisation and SymPy's
#: own walks recurse once per level of an expression, and an unrolled loop of 30 steps nests
#: a few hundred levels deep (with several Python frames each). Builds run on a thread whose
#: stack holds far more frames than this (:mod:`symdiff.stacks`), so the limit ends a build
#: too deep with a clear error, never with a crash. A higher limit builds deeper expressions
#: only slowly (a 3,000-deep traced nest met a limit of 50,000 after 100 s, and this one after
#: 4 s).
BUILD_RECURSION_LIMIT = 10_000
#: What to do about an expression nested too deeply to build.
TOO_DEEP_ADVICE = ("split it into steps (a function of intermediate results) or build it with "
                   "mode='reverse'")


@contextlib.contextmanager
def limits_named(depth: Callable[[], int | None] = lambda: None,
                 advice: str = TOO_DEEP_ADVICE) -> Iterator[None]:
    """A limit of the interpreter that a build meets, raised as an
    :class:`~symdiff.errors.UnsupportedError` naming it: the recursion limit (an expression
    nested deeper than :data:`BUILD_RECURSION_LIMIT` frames allow; ``depth()``: how deep, if
    known; ``advice``: what to do) and Python's limit on the digits of an integer converted to
    text (``sys.set_int_max_str_digits``)."""
    try:
        yield
    except RecursionError:
        levels = depth()
        nested = f"nested {levels:,} levels deep, too deep" if levels else "nested too deeply"
        raise UnsupportedError(
            f"the expression is {nested} to build: deriving it met Python's recursion limit "
            f"({sys.getrecursionlimit():,} frames); {advice}") from None
    except ValueError as error:
        if isinstance(error, SymdiffError) or "integer string conversion" not in str(error):
            raise
        raise UnsupportedError(
            "the expression has a number too long to build: an integer of more digits than "
            f"Python's limit for integer strings ({sys.get_int_max_str_digits()} digits, "
            "sys.set_int_max_str_digits)") from None


def as_a_build(fn: Callable[..., Any], *args: Any,
               depth: Callable[[], int | None] = lambda: None,
               advice: str = TOO_DEEP_ADVICE) -> Any:
    """``fn(*args)`` as every build runs: on a large stack (:func:`symdiff.stacks.on_large_stack`)
    with the build's recursion limit and the garbage collector paused, a limit met raised as a
    clear error (:func:`limits_named`, with ``depth`` and ``advice``)."""
    from .parsing.limits import recursion_limit

    with collector_paused(), recursion_limit(BUILD_RECURSION_LIMIT), limits_named(
            depth, advice=advice):
        return on_large_stack(fn, *args)


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
    folded = getattr(request, "folded", ())  # and the named arrays folded into its code
    if not request.options.cache:
        function = function_of(layer.build(request), None, signature)
        return _with_twin(function.with_constants(constants, folded), layer, request)
    key = request.key()
    found = _MEMO.get(key)
    if found is not None:  # the key holds the signature; annotations may still differ
        return found.with_signature(signature).with_constants(constants, folded)
    disk_key = request_index.module_key(key)
    exprs = layer.exprs(request)
    function = request_index.load_module(disk_key, request.recipe, exprs, signature)
    if function is None:
        with request_index.building("module", disk_key):
            function = request_index.load_module(disk_key, request.recipe, exprs, signature)
            if function is None:  # (not built by another process meanwhile)
                function = function_of(layer.build(request), disk_key, signature)
                request_index.store_module(function)
    _MEMO.put(key, _with_twin(function, layer, request))
    return function.with_constants(constants, folded)


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
    return function_class(built.recipe).of(built.source, built.recipe, built.exprs, key=key,
                                           signature=signature, recorded=built.recorded)


def call_exprs(call: Call) -> list[Any]:
    """The ``.exprs`` of ``call``, derived (with SymPy) without emitting code: what a function
    loaded through the request index computes its ``.exprs`` with, on first access."""
    layer = LAYERS[call.layer]()
    return layer.exprs(layer.request(call))()


def clear_memo() -> None:
    """Forget the functions kept in memory (both layers)."""
    _MEMO.clear()

