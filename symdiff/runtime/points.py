"""A generated elementwise function at one point: on Python floats (``_at_point``), on NumPy
scalars (``_at_scalars``), or through a packed function (``_at_packed``) for many alike lines
(whose module tests its arguments' classes itself).
At a point the formulas run as ``_on_floats`` makes them: NumPy's ufuncs of the arithmetic
operators (``_np.divide(a, b, out=...)``, which the formulas call to write an output into
its block) stand for the operators themselves."""

import numpy as _np

#: The types of a point's coordinates that the point path takes as they are.
_POINT_TYPES = frozenset((float, _np.float64))


def _at_point(formulas, inputs, leading=None):
    """``formulas`` at the point ``inputs`` (Python floats), computed on the floats: Python's
    float arithmetic is IEEE double arithmetic, as NumPy's float64 is, and costs a fraction of
    NumPy's on scalars. Where Python raises instead of giving inf or nan (a division by zero,
    an overflowing power) the point is computed again on NumPy float64 scalars, which give
    NumPy's values.

    Every output comes back as a 0-d float64 array, in the nesting of the formulas' tuples;
    an array result (``leading``: its shape) as one float64 array."""
    try:
        compute = formulas.on_floats
    except AttributeError:
        compute = _on_floats(formulas)
    if leading is not None:
        try:
            return compute(*inputs, _np.zeros(leading))
        except ArithmeticError:
            return compute(*map(_np.float64, inputs), _np.zeros(leading))
    try:
        result = compute(*inputs)
    except ArithmeticError:
        result = compute(*map(_np.float64, inputs))
    if type(result) is not tuple:
        return _np.asarray(result, dtype=_np.float64)
    value, partials = result[0], result[-1]
    pair = (len(result) == 2 and type(partials) is tuple and type(value) is not tuple
            and tuple not in map(type, partials))  # value_and_grad's (value, partials)
    flat = (value, *partials) if pair else result
    if not pair and tuple in map(type, result):
        flat = _leaves(result)
    views = iter(_zero_d(_np.array(flat, dtype=_np.float64)))
    if flat is result:
        return tuple(views)
    if pair:
        return next(views), tuple(views)

    def rebuild(tree, again):  # given itself: a closure calling itself by name is a cycle
        return tuple([again(t, again) if type(t) is tuple else next(views) for t in tree])

    return rebuild(result, rebuild)


def _leaves(tree):
    """The arrays of ``tree`` (nested tuples of arrays), depth first."""
    found, stack = [], [tree]
    while stack:
        item = stack.pop()
        if type(item) is tuple:
            stack.extend(reversed(item))
        else:
            found.append(item)
    return found


def _at_scalars(formulas, inputs, dtype, leading=None):
    """``formulas`` at one point given as 0-d arrays of ``dtype`` (``inputs``), computed on
    NumPy scalars (several times quicker than on 0-d arrays): every output a 0-d array of
    ``dtype``, or with ``leading`` one array of that shape."""
    try:
        compute = formulas.on_floats
    except AttributeError:
        compute = _on_floats(formulas)
    scalars = [a[()] for a in inputs]
    if leading is not None:
        out = _np.zeros(leading, dtype=dtype)
        compute(*scalars, out)
        return out
    result = compute(*scalars)
    if type(result) is not tuple:
        return _np.asarray(result, dtype=dtype)

    def rebuild(tree, again):  # given itself: a closure calling itself by name is a cycle
        return tuple([again(t, again) if type(t) is tuple else _np.asarray(t, dtype=dtype)
                      for t in tree])

    return rebuild(result, rebuild)


def _at_packed(packed, inputs, size, nest):
    """``packed(r)`` at one point whose coordinates are floats (Python floats or NumPy float64
    scalars), ``r`` a float64 vector of ``size`` whose first elements are ``inputs``: the
    packed function computes every value of the formulas into ``r`` with a few vector
    operations and returns the vector of the outputs (in depth-first order). Each output
    comes back as a 0-d float64 array, nested as ``nest`` says: ``0`` one output, a positive
    int k a tuple of the next k outputs, a tuple of those a tuple of them; ``None``: the
    vector itself (a Hessian-vector product's array)."""
    register = _np.fromiter(inputs, _np.float64, len(inputs))
    register.resize(size, refcheck=False)  # in place: nothing else refers to it yet
    if nest is None:
        return packed(register)
    views = iter(_zero_d(packed(register)))
    if nest == 0:
        return next(views)
    if type(nest) is int:
        return tuple(views)

    def rebuild(tree, again):  # given itself: a closure calling itself by name is a cycle
        if tree == 0:
            return next(views)
        if type(tree) is int:
            return tuple([next(views) for _ in range(tree)])
        return tuple([again(item, again) for item in tree])

    return rebuild(nest, rebuild)


def _zero_d(values, _takers={}):  # noqa: B006
    """Each element of the float64 vector ``values`` as a 0-d array (a view of it), in a
    tuple: the outputs of a point. One ``operator.itemgetter`` of the keys ``(i, ...)`` makes
    them, kept per length in ``_takers``, up to 100 elements; one ``nditer`` beyond."""
    count = len(values)
    if count == 1:  # (an itemgetter of one key returns the item, not a tuple)
        return (values[0, ...],)
    if count > 100 or not count:
        return tuple(_np.nditer(values, flags=["zerosize_ok"], order="C", op_flags=["readwrite"]))
    take = _takers.get(count)
    if take is None:
        import operator as _operator

        take = _takers[count] = _operator.itemgetter(*[(i, ...) for i in range(count)])
    return take(values)


def _on_floats(formulas):
    """``formulas`` as it runs at a point: the same code, reading ``_point_numpy()`` as NumPy,
    whose ufuncs of the arithmetic operators are the operators themselves (made once per
    function, and kept on it as ``on_floats``)."""
    import types as _types

    namespace = dict(formulas.__globals__)
    namespace["_np"] = _point_numpy()
    made = _types.FunctionType(formulas.__code__, namespace, formulas.__name__,
                               formulas.__defaults__, formulas.__closure__)
    formulas.on_floats = made
    return made


def _point_numpy(_made=[]):  # noqa: B006
    """NumPy, as formulas see it at a point: ``add``, ``subtract``, ``multiply``, ``divide``,
    ``negative`` and ``square`` are Python's operators (their ``out=`` ignored), every other
    name NumPy's own. A formula writes an output's last operation as the ufunc, to compute it
    into the output's block; on floats the operator computes the same IEEE result, at the
    speed of Python floats."""
    if not _made:
        import types as _types

        numpy = _types.ModuleType("numpy, with the arithmetic operators for its ufuncs")
        numpy.__dict__.update(_np.__dict__)

        def add(a, b, out=None):
            return a + b

        def subtract(a, b, out=None):
            return a - b

        def multiply(a, b, out=None):
            return a * b

        def divide(a, b, out=None):
            return a / b

        def negative(a, out=None):
            return -a

        def square(a, out=None):
            return a * a

        for operator in (add, subtract, multiply, divide, negative, square):
            setattr(numpy, operator.__name__, operator)
        _made.append(numpy)
    return _made[0]
