"""symdiff's runtime: the helpers that generated modules call.

A module symdiff generates is its formulas; what runs around them lives here, and the module
imports what it calls in one line (``from symdiff.runtime import _elementwise, _erf``):

* :mod:`~symdiff.runtime.elementwise`: ``_elementwise``, which takes the arguments of an
  elementwise function as a NumPy ufunc does and runs its formulas at a point or on arrays;
* :mod:`~symdiff.runtime.points`: the formulas at one point, on Python floats
  (``_at_point``), on NumPy scalars (``_at_scalars``) or packed into vectors (``_at_packed``);
* :mod:`~symdiff.runtime.blocks`: long arrays in blocks (``_in_blocks``, with the choice of
  threads ``_thread_count``, by default one per free core ``_free_threads``, and the shaping
  of outputs ``_as_outputs``), and
  :mod:`~symdiff.runtime.threads`: blocks on threads (``_on_threads``);
* :mod:`~symdiff.runtime.arguments`: the argument checks (``_as_arrays``, ``_common_shape``,
  ``_float_dtype``, ``_float_arrays``, ``_as_vector``, ``_check_shapes``);
* :mod:`~symdiff.runtime.erf`, :mod:`~symdiff.runtime.gamma`: special functions NumPy lacks
  (``_erf``, ``_erfc``, ``_log_ndtr``, ``_gamma``, ``_loggamma``, ``_polygamma``), and
  :mod:`~symdiff.runtime.derivatives`: what derivatives print (``_argmax_share``,
  ``_hypot_share``, ``_sinc_d``, ``_sigmoid``, ``_softplus``, ``_prod_others``, ``_tril_inv``,
  ``_gram``);
* :mod:`~symdiff.runtime.sparse`: ``_affine_grid``, the rows and columns of a block of a
  sparse Jacobian's or Hessian's structural nonzeros (a sparse function's ``_pattern``);
* :mod:`~symdiff.runtime.loops`: ``_numba_elementwise``, which runs the compiled loop of a
  ``backend="numba"`` module (Numba itself is imported by that module), and
  :mod:`~symdiff.runtime.scalar`: the elementary functions of one number its formulas call
  (``_exp``, ``_log``, ...; plain arithmetic that Numba compiles inline and vectorises);
* :mod:`~symdiff.runtime.standard`: the ``_xp_`` helpers of ``backend="array_api"`` modules
  (they need ``array_api_compat``).

Each module is imported when a generated module first asks for one of its helpers.

This package imports NumPy and the standard library only, so that loading a cached function
stays light. :meth:`symdiff.CompiledFunction.save` writes a module that runs without symdiff:
the helpers it calls, and those they call, copied into it (:mod:`symdiff.codegen.standalone`).
Hence the rules for every module here (``tests/test_runtime.py`` checks them):

* Its top-level statements are its docstring, imports (``numpy as _np``, ``math as _math``,
  the two error classes of :mod:`symdiff.errors` as ``_ShapeError`` and ``_ArgumentError``,
  other modules of this package), helpers and constants.
* A helper is a top-level function whose name starts with an underscore (a generated module's
  names never meet a user's variables), with a docstring that says what it does. Its body
  refers to ``_np``, ``_math``, builtins, the error classes and other helpers and constants of
  this package; other modules of the standard library it imports in its body (``import os as
  _os``), where it needs them. State it keeps between calls lives in a default argument
  (``_pool=[]``).
* A constant is one assignment to a name that starts with an underscore.
* Helpers are vectorised: NumPy works on whole arrays; Python loops run over coefficients,
  outputs or blocks, never over elements.

Conventions of the special functions: they keep a float input's dtype (the arithmetic in
float64, rounded once at the end), integers and bools give float64, a Python scalar or a 0-d
array gives a NumPy scalar, complex input raises ``TypeError``, and no floating-point warning
is emitted. At poles and outside the real domain:

* ``_erf``: ``nan -> nan``, ``+-inf -> +-1``.
* ``_erfc``: ``nan -> nan``, ``erfc(+inf) = 0``, ``erfc(-inf) = 2``; 0 from ``x = 28`` on
  (underflow).
* ``_gamma``: like ``scipy.special.gamma``: ``gamma(+0.0) = +inf``, ``gamma(-0.0) = -inf``,
  ``nan`` at the negative integers and at ``-inf``; ``+inf`` for ``x > 171.62`` (overflow).
  For ``x < -171`` ``|gamma(x)|`` is subnormal or below: it loses digits and becomes a signed
  zero once ``gamma(-x)`` overflows (``x < -171.62``), as in scipy.
* ``_loggamma``: the real-valued ``log(gamma(x))`` on its real domain ``x > 0`` (what SymPy's
  ``loggamma`` is there); ``nan`` for ``x <= 0`` (including ``+-0.0``) and ``-inf``;
  ``loggamma(+inf) = +inf``.
* ``_polygamma``: ``nan`` at every pole ``x = 0, -1, -2, ...`` (either sign of zero) and at
  ``-inf``; ``polygamma(0, +inf) = +inf``, ``polygamma(n, +inf) = 0`` for ``n >= 1``.
* ``_argmax_share``: ``nan`` wherever any argument is ``nan`` (the maximum is undefined).
* ``_hypot_share``: 0 at ``a = b = 0`` (the gradient of ``hypot`` at the origin).
* ``_sinc_d``: the limits at 0 (``sinc_d(1, 0) = 0``); 0 at ``+-inf``.
"""

import importlib as _importlib

#: Every helper by the module of this package that defines it. A module is imported when a
#: generated module first asks for one of its helpers (``from symdiff.runtime import _erf``):
#: a function of no special function never loads them, and ``standard`` needs
#: ``array_api_compat``.
MODULES = {
    "arguments": ("_as_arrays", "_as_vector", "_check_shapes", "_common_shape",
                  "_float_arrays", "_float_dtype"),
    "blocks": ("_as_output", "_as_outputs", "_free_threads", "_in_blocks", "_nested_like",
               "_thread_count"),
    "derivatives": ("_argmax_share", "_gram", "_hypot_share", "_prod_others", "_sigmoid",
                    "_sinc_d", "_softplus", "_tril_inv"),
    "elementwise": ("_elementwise",),
    "loops": ("_nothing", "_numba_elementwise", "_numba_ready"),
    "memory": ("_reused_empty",),
    "scalar": ("_at", "_atan", "_atan2", "_cosh", "_exp", "_exp_times_pow2", "_expm1",
               "_ln2_multiple", "_log", "_log1p", "_log1p_exp", "_logistic", "_select", "_sinh",
               "_tanh", "_times_pow2"),
    "erf": ("_cody_erf", "_erf", "_erfc", "_log_ndtr"),
    "gamma": ("_gamma", "_loggamma", "_polygamma", "_sinpi"),
    "points": ("_at_packed", "_at_point", "_at_scalars", "_leaves", "_on_floats",
               "_point_numpy", "_zero_d"),
    "sparse": ("_affine_grid",),
    "standard": ("_xp_as_output", "_xp_common_shape", "_xp_elementwise", "_xp_float_arrays",
                 "_xp_float_dtype", "_xp_in_blocks", "_xp_namespace", "_xp_outputs",
                 "_xp_vector"),
    "threads": ("_on_threads",),
}
_MODULE_OF = {name: module for module, names in MODULES.items() for name in names}

__all__ = sorted(_MODULE_OF)


def __getattr__(name: str):
    """A helper, from the module that defines it (imported on first use)."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_MODULE_OF))
