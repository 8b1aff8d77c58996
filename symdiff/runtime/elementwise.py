"""How a generated elementwise function runs its formulas: ``_elementwise`` takes the
arguments as a NumPy ufunc does, and hands the formulas to the point path or the block loop;
``_as_outputs`` gives every output the broadcast shape and the dtype of the call."""

import numpy as _np

from .arguments import _as_arrays, _as_vector, _common_shape, _float_dtype
from .blocks import _in_blocks
from .points import _POINT_TYPES, _at_point


def _elementwise(formulas, inputs, threads=None, leading=None, direction=None, floats=True):
    """``formulas`` (a generated module's ``_formulas``) on the arguments ``inputs``, computed
    as a NumPy ufunc computes: the arguments broadcast together in one float dtype (float32
    stays float32, integers and bools give float64) and every output has their broadcast
    shape, after the ``leading`` axes of an array result (a Jacobian's ``(m, n)``, a
    Hessian's ``(n, n)``).

    * At one point given as Python floats (or NumPy float64 scalars, made Python floats) the
      formulas run on the floats themselves (``_at_point``), unless ``floats`` is False
      (formulas that take a float to a fractional power, which Python makes complex; a
      Hessian-vector product, whose direction is an array).
    * Otherwise the arguments become arrays (``_as_arrays``, ``_float_dtype``,
      ``_common_shape`` name an argument that is wrong) and ``_in_blocks`` computes long
      arrays in blocks, on ``threads`` threads (None: a choice by the size, see
      ``_thread_count``).
    * ``direction``: the direction ``_v`` of a Hessian-vector product, whose components (along
      its first axis, one per entry of ``leading``; ``_v`` itself without ``leading``) are
      the formulas' last inputs.

    The formulas' parameters name the arguments in messages (the generated module's own).
    """
    if floats:
        for value in inputs:
            if value.__class__ is not float:
                break
        else:
            return _at_point(formulas, inputs, leading)
        if _POINT_TYPES.issuperset(map(type, inputs)):  # NumPy float64 scalars among them
            return _at_point(formulas, [float(a) for a in inputs], leading)
    names = formulas.__code__.co_varnames[: len(inputs)]
    for value in inputs:
        if value.__class__ is not _np.ndarray:
            inputs = _as_arrays(names, *inputs)
            break
    if direction is None:
        dtype = _float_dtype(names, *inputs)
    else:  # the direction's dtype counts whole; its components are the last inputs
        vector = (_as_arrays(("_v",), direction)[0] if leading is None
                  else _as_vector(direction, leading[0]))
        dtype = _float_dtype((*names, "_v"), *inputs, vector)
        vector = vector.astype(dtype, copy=False)
        parts = [vector] if leading is None else list(vector)
        inputs = [*inputs, *parts]
        names = (*names, *("_v",) * len(parts))
    inputs = [a.astype(dtype, copy=False) for a in inputs]
    shape = _common_shape(names, *inputs) if inputs else ()
    return _in_blocks(formulas, inputs, shape, dtype, threads, leading)
