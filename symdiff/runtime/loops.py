"""How a ``backend="numba"`` module runs: ``_numba_elementwise`` takes the arguments as a NumPy
ufunc does, flattens them to the broadcast shape, allocates the outputs and runs the module's
compiled loop over the elements, in blocks on several threads for long arrays;
``_numba_ready`` (which every Numba module calls once, after its imports) makes the scalar
functions of :mod:`symdiff.runtime.scalar` callable from compiled code."""

import numpy as _np

from ..errors import ArgumentError as _ArgumentError
from .arguments import _as_arrays, _as_vector, _common_shape, _float_dtype
from .blocks import _nested_like, _thread_count
from .memory import _reused_empty
from .scalar import _SCALAR_FUNCTIONS, _at, _select
from .threads import _on_threads

#: The elements of one block of a call on several threads.
_LOOP_BLOCK = 65536


def _numba_elementwise(formulas, inputs, threads=None, loop=None, leading=(1,),
                       structure=None, direction=None):
    """The compiled ``loop`` (a Numba function of the flat arguments, ``_out`` and the range
    of elements ``_start, _stop`` it computes) on the arguments ``inputs``, computed as a
    NumPy ufunc computes: the arguments broadcast together in one float dtype (float32 stays
    float32, integers and bools give float64; ``_as_arrays``, ``_float_dtype`` and
    ``_common_shape`` name an argument that is wrong) and every output has their broadcast
    shape.

    The loop reads each argument at an element with ``_at``: an argument of the broadcast
    shape as a flat array (a view; copied once if it is not C-contiguous, or broadcast to the
    full shape if it has another), an argument of one element as a number of the dtype (the
    same value at every element). With ``structure`` (the nesting of the outputs, each a
    position in ``_out``) ``_out`` is a tuple of ``leading[0]`` flat arrays, one per output,
    returned in that nesting, each of the broadcast shape; without, ``_out`` is one array of
    the ``leading`` axes and one axis over the elements, returned of shape ``leading + shape``
    (a Jacobian's ``(m, n)``, a Hessian's ``(n, n)`` entries, zeros where the loop writes
    nothing). ``direction``: a Hessian-vector product's ``_v``, whose components are the
    loop's last inputs. At a point (shape ``()``) the outputs are 0-d arrays, as the NumPy
    backend's are. ``formulas`` (the module's ``_formulas``) names the arguments in messages.

    ``threads``: as for the NumPy backend (None: ``_thread_count``). More than one splits the
    elements into blocks of ``_LOOP_BLOCK`` that this thread and workers take in turn
    (``_on_threads``; the loop releases the GIL); each element is computed by the same code
    whatever the thread, so the results are the same bit for bit.
    """
    if threads is not None and (type(threads) is not int or threads < 1):
        raise _ArgumentError(f"threads must be a positive int or None, not {threads!r}")
    names = formulas.py_func.__code__.co_varnames[: len(inputs)]
    inputs = _as_arrays(names, *inputs)
    if direction is None:
        dtype = _float_dtype(names, *inputs)
    else:  # the direction's dtype counts whole; its components are the last inputs
        single = structure is not None
        vector = (_as_arrays(("_v",), direction)[0] if single
                  else _as_vector(direction, leading[0]))
        dtype = _float_dtype((*names, "_v"), *inputs, vector)
        parts = [vector] if single else list(vector)
        inputs = [*inputs, *parts]
        names = (*names, *("_v",) * len(parts))
    inputs = [a.astype(dtype, copy=False) for a in inputs]
    shape = _common_shape(names, *inputs) if inputs else ()
    total = 1
    for size in shape:
        total *= size
    flat = []
    for a in inputs:
        if a.size == 1 and total != 1:  # one number for every element
            flat.append(a.reshape(())[()])
        elif a.shape == shape and a.flags.c_contiguous:
            flat.append(a.reshape(-1))  # a view
        else:
            flat.append(_np.ascontiguousarray(_np.broadcast_to(a, shape)).reshape(-1))
    if structure is None:
        out = _np.zeros((*leading, total), dtype=dtype)
    else:  # one array per output, in memory earlier outputs no longer use
        out = tuple(_reused_empty(leading[0], total, dtype))
    count = min(_thread_count(threads, total), -(-total // _LOOP_BLOCK))
    # (unsigned bounds: an index that cannot be negative needs no wraparound test, and the
    # compiler vectorises the loop)
    if count > 1:
        edges = range(0, total + _LOOP_BLOCK, _LOOP_BLOCK)
        blocks = ((_np.uint64(start), _np.uint64(min(start + _LOOP_BLOCK, total)))
                  for start in edges[:-1])
        _on_threads(lambda start, stop: loop(*flat, out, start, stop), blocks, _nothing, count)
    else:
        loop(*flat, out, _np.uint64(0), _np.uint64(total))
    if structure is None:
        return out.reshape((*leading, *shape))
    if structure.__class__ is int:
        return out[structure].reshape(shape)
    return _nested_like(structure, [row.reshape(shape) for row in out])


def _nothing():
    """What a call on threads does after its last block: nothing."""


def _numba_ready(_state={}):  # noqa: B006
    """Register the functions of :mod:`symdiff.runtime.scalar` with Numba, once per process:
    each of ``_SCALAR_FUNCTIONS`` that the module of ``_at`` holds (a saved module holds
    those it calls) is compiled inline into the loop that calls it (``register_jitable``, with
    NumPy's error model and without fastmath); ``_select`` is one LLVM ``select`` of its
    operands' common type; ``_at`` reads an array at the index and returns a number as it is.
    Registration is held in ``_state``, under a lock."""
    if _state.get("ready"):
        return
    import threading as _threading

    with _state.setdefault("lock", _threading.Lock()):
        if _state.get("ready"):
            return
        import numba as _numba
        from numba import extending as _extending

        @_extending.intrinsic
        def select(typing, condition, value, otherwise):  # (a select instruction)
            kind = typing.unify_pairs(value, otherwise)
            if not isinstance(condition, _numba.types.Boolean) or kind is None:
                return None

            def lower(context, builder, signature, args):
                test, first, second = args
                first = context.cast(builder, first, signature.args[1], kind)
                second = context.cast(builder, second, signature.args[2], kind)
                return builder.select(test, first, second)

            return kind(condition, value, otherwise), lower

        def selected(condition, value, otherwise):  # (``_select`` for Numba's types)
            return lambda condition, value, otherwise: select(condition, value, otherwise)

        def element(x, i):  # (``_at`` for Numba's types: an array, or a number)
            if isinstance(x, _numba.types.Array):
                return lambda x, i: x[i]
            return lambda x, i: x

        _extending.overload(_select, inline="always")(selected)
        _extending.overload(_at, inline="always")(element)
        scope = _at.__globals__  # (the runtime's module of scalar functions, or a saved one)
        for name in _SCALAR_FUNCTIONS:
            if name in scope:
                _extending.register_jitable(inline="always", error_model="numpy",
                                            fastmath=False)(scope[name])
        _state["ready"] = True
