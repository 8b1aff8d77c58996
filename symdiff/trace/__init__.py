"""Tracing: an ordinary Python function as a SymPy expression (the "dynamic graph" entry).

:func:`trace` calls the function once with one :class:`Traced` value per parameter, each
wrapping ``Symbol(name, real=True)``. Arithmetic, :mod:`symdiff.math` and the NumPy functions in
:data:`UFUNCS` and :data:`ARRAY_FUNCTIONS` build the SymPy expression as the body runs, so the
result is the expression the function computes, ready for the same pipeline as a string::

    def f(x, y):
        return np.sin(x) * np.exp(y) + sd.math.relu(x - y)

    trace(f)   # -> (exp(y)*sin(x) + relu(x - y), ('x', 'y'))

The compiled function keeps ``f``'s signature (:func:`signature`): its arguments are the
parameters in the ``def``'s order, used or not, with their defaults and keyword-only markers;
``*args`` and ``**kwargs`` are refused. A Jacobian may trace a function that returns a tuple or
list of scalars (:func:`trace_function` with ``many``).

What cannot be traced is an :class:`~symdiff.errors.UnsupportedError` that names it: Python
control flow on a traced value (``if x > 0:``, ``bool(x)``; use ``where(cond, a, b)``),
``float(x)``/``int(x)`` and the standard library's :mod:`math` (use :mod:`symdiff.math` or
NumPy), NumPy functions outside the tables (``np.rint``), indexing, iteration, ``len``, unknown
attributes, operators other than ``+ - * / **`` and unary ``- +``, and ``==``/``!=``. A
comparison ``< <= > >=`` gives a :class:`Condition`, usable only as the condition of ``where``
(``symdiff.math.where`` or ``np.where``).

Numbers met while tracing become exact SymPy numbers the way :func:`symdiff.parsing.parse` reads
them (``0.1`` is ``1/10``); a float equal to ``math.pi`` or ``math.e`` (``np.pi``,
``symdiff.math.pi``) becomes the constant ``pi`` or ``E``. Python evaluates arithmetic between
plain numbers before symdiff sees it: ``2*np.pi*x`` traces ``6.283185307179586*x`` as an exact
rational, ``np.pi*2*x`` gives ``2*pi*x``.

The package, one stage each (lower ones first):

- :mod:`~symdiff.trace.refusals`: what a traced value refuses, and the messages;
- :mod:`~symdiff.trace.tables`: the SymPy builders of names and NumPy ufuncs, from the
  registry rows plus arithmetic and comparisons;
- :mod:`~symdiff.trace.values`: :class:`Traced` and :class:`Condition`, their operators, and
  how NumPy (``__array_ufunc__``, ``__array_function__``) and :mod:`symdiff.math` reach them;
- :mod:`~symdiff.trace.signatures`: which parameters a traced function may have, and the
  compiled function's signature;
- :mod:`~symdiff.trace.environment`: what a function reads by name (closure, globals, helpers,
  modules), and a copy of it that reads replacements instead, for one trace;
- :mod:`~symdiff.trace.draws`: random draws met while tracing, never frozen silently (a draw of
  a function traced without ``shapes=`` is refused);
- :mod:`~symdiff.trace.running`: :func:`trace` and :func:`trace_function`.
"""

from __future__ import annotations

from .refusals import CONDITION_ONLY, refuse, unsupported_numpy
from .running import trace, trace_function
from .signatures import (
    DIRECTION,
    call_signature,
    call_with,
    combine_signatures,
    parameters,
    signature,
    signature_text,
    traced_name,
    traced_names,
    with_direction,
)
from .tables import FUNCTIONS, UFUNCS, divide, power, ufunc_builder
from .values import (
    ARRAY_FUNCTIONS,
    Condition,
    Symbolic,
    Traced,
    TracedAttributeError,
    apply,
    operand,
    where,
)

__all__ = [
    "ARRAY_FUNCTIONS",
    "CONDITION_ONLY",
    "DIRECTION",
    "FUNCTIONS",
    "UFUNCS",
    "Condition",
    "Symbolic",
    "Traced",
    "TracedAttributeError",
    "apply",
    "call_signature",
    "call_with",
    "combine_signatures",
    "divide",
    "operand",
    "parameters",
    "power",
    "refuse",
    "signature",
    "signature_text",
    "trace",
    "trace_function",
    "traced_name",
    "traced_names",
    "ufunc_builder",
    "unsupported_numpy",
    "where",
    "with_direction",
]
