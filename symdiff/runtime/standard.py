"""The runtime of ``backend="array_api"`` modules, written with the Array API standard's
functions only (``xp``, the namespace of the arguments, found by ``array_api_compat``):
``_xp_elementwise`` runs an elementwise module's formulas (``_xp_in_blocks``, in blocks on NumPy
arrays), the others check and convert arguments (``_xp_namespace``, ``_xp_float_dtype``,
``_xp_float_arrays``, ``_xp_common_shape``, ``_xp_vector``) and shape outputs
(``_xp_outputs``, ``_xp_as_output``). They refer to ``_xpc`` (``array_api_compat``) and to
the namespace they are given instead of ``_np``.

``array_api_compat`` is an optional dependency (the ``array-api`` extra): this module imports
without it, and ``_xp_namespace`` says what to install when it is missing.
"""

try:
    import array_api_compat as _xpc
except ImportError:  # the extra is not installed: only array_api modules need it
    _xpc = None

from ..errors import ArgumentError as _ArgumentError
from ..errors import ShapeError as _ShapeError


def _xp_namespace(*arrays, _known={}):  # noqa: B006 (the cache of namespaces by types)
    """The Array API namespace of ``arrays`` (``array_api_compat.array_namespace``): the one
    their kind of array has (NumPy, Dask, CuPy, PyTorch, JAX, array-api-strict). Python numbers
    have none and are skipped; arrays of NumPy mixed with one other kind (a NumPy weight vector
    with Dask data) take the other kind's namespace, whose ``asarray`` converts the NumPy ones.
    With no arrays at all, NumPy's wrapped namespace. The namespace depends only on the types
    of the arguments, so it is looked up once per combination of types (``_known``). A masked
    array (``numpy.ma``) raises ``_ArgumentError``: its mask would be ignored."""
    types = tuple(map(type, arrays))
    found = _known.get(types)
    if found is not None:
        return found
    if _xpc is None:
        raise ImportError(
            "this function was generated with backend='array_api', which needs the "
            "array-api-compat package: pip install 'symdiff[array-api]'"
        )
    for kind in types:
        if any(k.__name__ == "MaskedArray" and k.__module__.startswith("numpy.ma")
               for k in kind.__mro__):
            raise _ArgumentError(
                f"an argument is a masked array ({kind.__module__}.{kind.__qualname__}): this "
                "function computes every element and would ignore the mask. Pass "
                "a.filled(value) to choose the masked elements' values, or a.compressed() "
                "(of every argument alike) to leave them out"
            )
    found = [a for a in arrays if _xpc.is_array_api_obj(a)]
    others = [a for a in found if not _xpc.is_numpy_array(a)]
    if others or found:
        namespace = _xpc.array_namespace(*(others or found))
    else:
        import array_api_compat.numpy as namespace
    if len(_known) < 64:
        _known[types] = namespace
    return namespace


def _xp_float_dtype(xp, names, *arrays):
    """The real floating dtype a call computes in: the promoted floating dtype of the
    arguments (float32 stays float32), float64 when none is floating (integers and bools).
    An argument that is not real numbers raises ``_ArgumentError`` naming it."""
    floating = []
    for name, array in zip(names, arrays, strict=True):
        dtype = array.dtype
        if dtype == xp.float64 or dtype == xp.float32 or xp.isdtype(dtype, "real floating"):
            floating.append(dtype)
        elif not xp.isdtype(dtype, ("integral", "bool")):
            raise _ArgumentError(
                f"argument {name!r} has dtype {dtype}, not real numbers (float, int or bool)"
            )
    if not floating:
        return xp.float64
    first = floating[0]
    if all(d == first for d in floating):  # the usual call: one dtype (no promotion to look up)
        return first
    return xp.result_type(*floating)


def _xp_float_arrays(xp, names, *arrays, _floating={}):  # noqa: B006 (dtypes seen to be real floating)
    """``arrays`` (the arguments ``names``) as arrays of namespace ``xp`` of one real floating
    dtype (see ``_xp_float_dtype``); arrays already of that kind and dtype are not copied.
    The usual call, arrays of one kind and one dtype object that an earlier call found to be
    real floating (``_floating``), is recognised by identity tests and returns at once."""
    first = arrays[0]
    kind, dtype = first.__class__, getattr(first, "dtype", None)
    if dtype in _floating:
        for array in arrays:
            if array.__class__ is not kind or array.dtype is not dtype:
                break
        else:
            return arrays
    kinds = {a.__class__ for a in arrays}
    if len(kinds) == 1 and hasattr(arrays[0], "dtype") and hasattr(arrays[0], "shape"):
        converted = list(arrays)  # arrays of the namespace's one kind already
    else:
        converted = []
        for name, array in zip(names, arrays, strict=True):
            try:
                converted.append(xp.asarray(array))
            except (TypeError, ValueError) as error:
                raise _ArgumentError(
                    f"argument {name!r} is not an array of numbers: {error}") from None
    dtype = _xp_float_dtype(xp, names, *converted)
    if len(_floating) < 64:
        _floating[dtype] = True
    return tuple(
        a if a.dtype == dtype else xp.astype(a, dtype, copy=False) for a in converted
    )


def _xp_common_shape(names, *arrays):
    """The broadcast shape of ``arrays`` (the arguments ``names``), by the standard's
    broadcasting rules; arguments that do not broadcast raise ``_ShapeError`` naming them."""
    shape = tuple(arrays[0].shape)
    for array in arrays:
        if tuple(array.shape) != shape:
            break
    else:
        return shape
    result = []
    ndim = max(len(a.shape) for a in arrays)
    for axis in range(ndim):
        size, source = 1, None
        for name, array in zip(names, arrays, strict=True):
            offset = axis - (ndim - len(array.shape))
            if offset < 0 or array.shape[offset] == 1:
                continue
            if size == 1:
                size, source = array.shape[offset], name
            elif array.shape[offset] != size:
                raise _ShapeError(
                    f"arguments {source!r} and {name!r} with shapes "
                    f"{tuple(arrays[names.index(source)].shape)} and {tuple(array.shape)} do not "
                    "broadcast together (the arguments broadcast like those of a NumPy ufunc)"
                )
        result.append(size)
    return tuple(result)


def _xp_vector(v, n):
    """``v``, a direction vector whose first axis must hold its ``n`` components (the standard's
    arrays are indexed ``v[i, ...]``, so a longer first axis would be silently cut)."""
    if len(v.shape) == 0 or v.shape[0] != n:
        raise _ShapeError(
            f"argument '_v' must have the {n} components of the direction along its first axis, "
            f"got shape {tuple(v.shape)}"
        )
    return v


def _xp_elementwise(formulas, inputs, leading=None, direction=None):
    """``formulas`` (an elementwise module's ``_formulas``, which takes the namespace last) on
    the arguments ``inputs``, arrays of any Array API namespace (NumPy, Dask, CuPy, PyTorch,
    JAX): they become arrays of the namespace of the arguments, of one real floating dtype,
    and every output an array of it of their broadcast shape, after the ``leading`` axes of an
    array result (whose formulas return its entries as nested tuples, stacked here).
    ``direction``: the direction ``_v`` of a Hessian-vector product, whose components (along
    its first axis, one per entry of ``leading``; ``_v`` itself without ``leading``) are the
    formulas' last inputs. Long NumPy arrays are computed in blocks (``_xp_in_blocks``)."""
    given = inputs if direction is None else (*inputs, direction)
    xp = _xp_namespace(*given)
    names = formulas.__code__.co_varnames[: len(inputs)] + ("_v",) * (direction is not None)
    if not given:
        return _xp_outputs(xp, formulas(xp), (), xp.float64, leading, ())
    arrays = list(_xp_float_arrays(xp, names, *given))
    dtype = arrays[0].dtype
    if direction is not None:
        vector = arrays.pop()
        if leading is not None:
            vector = _xp_vector(vector, leading[0])
            arrays += [vector[i, ...] for i in range(leading[0])]
            names = names[:-1] + ("_v",) * leading[0]
        else:
            arrays.append(vector)
    shape = _xp_common_shape(names, *arrays)

    def compute(part, size):  # the formulas on a block, its outputs shaped
        return _xp_outputs(xp, formulas(*part, xp), size, dtype, leading, part)

    return _xp_in_blocks(compute, arrays, shape, xp)


def _xp_outputs(xp, result, shape, dtype, leading, inputs):
    """What the formulas returned (an array, or nested tuples of them) as arrays of namespace
    ``xp`` of ``shape`` and ``dtype`` (``_xp_as_output``; one of ``inputs``, or an array
    returned twice, copied); with ``leading``, its nested tuples stacked into one array."""
    seen = [*inputs]

    def shaped(value):  # (stacked entries are copied by the stack)
        new = _xp_as_output(xp, value, shape, dtype)
        if leading is None and any(new is other for other in seen):
            new = xp.asarray(new, copy=True)
        seen.append(new)
        return new

    def each(tree, depth, again):  # given itself: a closure calling itself by name is a cycle
        if type(tree) is not tuple:
            return shaped(tree)
        items = [again(item, depth + 1, again) for item in tree]
        return xp.stack(items) if leading is not None and depth < len(leading) else tuple(items)

    return each(result, 0, each)


def _xp_as_output(xp, value, shape, dtype):
    """``value`` as an array of namespace ``xp``, of the broadcast ``shape`` and ``dtype``
    (constants included)."""
    if value.__class__ in (bool, int, float):
        return xp.full(shape, value, dtype=dtype)
    if value.dtype != dtype:
        value = xp.astype(value, dtype)
    if value.shape != shape and tuple(value.shape) != tuple(shape):
        value = xp.asarray(xp.broadcast_to(value, shape), copy=True)
    return value


def _xp_in_blocks(compute, inputs, shape, xp):
    """``compute(inputs, shape)`` (the formulas on arrays of namespace ``xp`` broadcasting to
    ``shape``, their outputs shaped), computed in blocks of about 16384 elements when the
    arrays are NumPy's (or array-api-strict's, which wraps NumPy's): there a block's
    temporaries stay in the CPU's caches, where a full-length temporary costs a pass over
    memory. Other namespaces get one call on the whole arrays: Dask's arrays are lazy and
    already in chunks, JAX's cannot be written, GPU arrays and PyTorch's (which spreads long
    loops over its threads) want whole passes.

    Long arrays (32768 elements or more, 4 rows or more) are cut along the first axis of
    ``shape`` with the standard's slicing; ``compute`` returns an array or nested tuples of
    arrays, each of shape ``leading axes + block shape``; the full arrays are made with
    ``xp.empty`` after the first block, with its dtypes and device, and every block is written
    into them (the standard's item assignment). Every element goes through the same
    operations either way, so the results are the same bit for bit."""
    size = 1
    for length in shape:
        size *= length
    if size < 32768 or shape[0] < 4 or not (
        _xpc.is_numpy_namespace(xp) or _xpc.is_array_api_strict_namespace(xp)
    ):
        return compute(inputs, shape)
    rows, tail = shape[0], shape[1:]
    step = max(1, 16384 // (size // rows))
    cut = [len(a.shape) == len(shape) and a.shape[0] == rows for a in inputs]

    def leaves(tree):  # the arrays of nested tuples, depth first
        found, stack = [], [tree]
        while stack:
            item = stack.pop()
            if isinstance(item, tuple):
                stack.extend(reversed(item))
            else:
                found.append(item)
        return found

    def block_at(start):  # the outputs of the rows from start, and their arrays in order
        stop = min(start + step, rows)
        part = tuple([a[start:stop, ...] if c else a for a, c in zip(inputs, cut, strict=True)])
        block = compute(part, (stop - start, *tail))
        return block, leaves(block), slice(start, stop)

    block, found, where = block_at(0)
    full = [
        xp.empty((*b.shape[: len(b.shape) - len(shape)], *shape), dtype=b.dtype,
                 device=_xpc.device(b))
        for b in found
    ]
    heads = [(slice(None),) * (len(b.shape) - len(shape)) for b in found]
    fresh = iter(full)

    # the full arrays in the nesting of the formulas' tuples; given itself (``again``): a
    # closure calling itself by name is a reference cycle, which would keep ``full`` alive
    def rebuild(tree, again):
        return tuple([again(t, again) for t in tree]) if isinstance(tree, tuple) else next(fresh)

    result = rebuild(block, rebuild)
    for start in range(0, rows, step):
        if start:
            block, found, where = block_at(start)
        for f, h, b in zip(full, heads, found, strict=True):
            f[(*h, where, ...)] = b  # (the standard wants every axis or an ellipsis)
    return result
