"""Runtime helpers that generated gradient modules embed verbatim.

symdiff emits standalone Python modules whose only imports are ``numpy`` (bound to ``_np``) and
the standard library. A few SymPy functions have no NumPy counterpart (``erf``, ``gamma``,
``loggamma``, ``polygamma``) and the derivative of ``Max`` needs the tie-aware share
:func:`_argmax_share`. The code generator pastes the *source* of the helpers defined here into
the generated module (see :func:`helper_source`), so that the shipped code is exactly the code
this package tests.

The helpers live in the package's modules by family, and this ``__init__`` imports every one of
them (``from symdiff.codegen.helpers import _erf`` keeps working; the underscore keeps them apart
from a
generated module's own names, not private to this package):

* :mod:`~symdiff.codegen.helpers.erf`: ``_erf``, ``_erfc``, ``_log_ndtr`` and their core
  ``_cody_erf``;
* :mod:`~symdiff.codegen.helpers.gamma`: ``_gamma`` (with ``_sinpi``), ``_loggamma``,
``_polygamma``;
* :mod:`~symdiff.codegen.helpers.derivatives`: what derivatives print (``_argmax_share``,
  ``_hypot_share``, ``_sinc_d``, ``_sigmoid``, ``_prod_others``, ``_tril_inv``, ``_gram``);
* :mod:`~symdiff.codegen.helpers.arguments`: the argument checks (``_as_arrays``,
  ``_common_shape``, ``_float_dtype``, ``_float_arrays``, ``_as_vector``, ``_check_shapes``);
* :mod:`~symdiff.codegen.helpers.blocks`: the block loop ``_in_blocks``, the point path
  ``_at_point`` (with ``_at_packed`` and ``_zero_d``) and ``_as_output``;
* :mod:`~symdiff.codegen.helpers.sparse`: ``_affine_grid``, the rows and columns of a block of
  a sparse Jacobian's or Hessian's structural nonzeros;
* :mod:`~symdiff.codegen.helpers.standard`: the ``_xp_`` helpers of ``backend="array_api"``
  modules (standard functions only, on the namespace of the arguments).

A helper calls only helpers of its own module. This ``__init__`` holds ``__all__`` (every helper
and the two names below), the dependency table :data:`HELPER_DEPENDENCIES` and
:func:`helper_source`, and defines no helper.

Rules for every helper in the package's modules (checked by ``tests/test_runtime.py``, which
walks every module; the only top-level statements of a helper module are its docstring, its
imports and its helpers):

* It is a top-level function whose name starts with an underscore and it has a docstring.
* Its body refers only to ``_np`` (numpy), ``_math`` (the standard ``math`` module), builtins,
  the other helpers named for it in :data:`HELPER_DEPENDENCIES` and the two error classes
  ``_ShapeError`` and ``_ArgumentError``. A generated module binds those to ``ValueError`` and
  ``TypeError`` (:data:`symdiff.verify.ERROR_CONSTANTS`: a saved module runs on its own) and
  symdiff's loader rebinds them to :class:`~symdiff.errors.ShapeError` and
  :class:`~symdiff.errors.ArgumentError` (subclasses of those). The one exception is
  ``_in_blocks``, which imports the standard library's ``os``, ``threading``, ``queue`` and
  ``contextvars`` inside its body (as ``_os``, ``_threading``, ``_queue``, ``_contextvars``)
  where it uses threads (a call without them imports nothing more), and keeps its worker
  threads in a default argument (``_pool``, as ``_xp_namespace`` keeps its cache in
  ``_known``); ``_free_threads``, which imports ``time`` and ``os`` (as ``_time``, ``_os``)
  and keeps its last look at the cores in ``_seen``; and ``_zero_d``, which imports
  ``operator`` (as ``_operator``) the first time it meets a number of outputs, and keeps its
  getters in ``_takers``. Coefficient tables live inside the function body as tuples; there
  are no other module-level constants.
* It is vectorised: work is done by NumPy on whole arrays (masks and ``_np.where``); Python
  loops only run over coefficients or a bounded number of recurrence steps, never over elements.
* The special functions keep a float input's dtype (float32 in, float32 out; the arithmetic
  is done in float64 and rounded once at the end); integer and bool inputs give float64. A
  Python scalar or a 0-d array gives a NumPy scalar, like a NumPy ufunc; an n-d array gives an
  array of the same shape. Complex input raises ``TypeError``. (``_sinpi`` is an internal
  float64 building block of ``_gamma``, ``_cody_erf`` one of ``_erf`` and
  ``_erfc``.)
* No floating-point warnings are emitted (``_np.errstate``); special values follow the
  conventions documented per helper.

Conventions at poles and outside the real domain:

* ``_erf``: ``nan -> nan``, ``+-inf -> +-1``.
* ``_erfc``: ``nan -> nan``, ``erfc(+inf) = 0``, ``erfc(-inf) = 2``; 0 from ``x = 28`` on
  (underflow).
* ``_log_ndtr``: ``log_ndtr(+inf) = 0``, ``log_ndtr(-inf) = -inf``, ``nan -> nan``.
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

import inspect
from collections.abc import Iterable

from ... import registry as _registry
from .arguments import (
    _as_arrays,
    _as_vector,
    _check_shapes,
    _common_shape,
    _float_arrays,
    _float_dtype,
)
from .blocks import _as_output, _at_packed, _at_point, _free_threads, _in_blocks, _zero_d
from .derivatives import (
    _argmax_share,
    _gram,
    _hypot_share,
    _prod_others,
    _sigmoid,
    _sinc_d,
    _softplus,
    _tril_inv,
)
from .erf import _cody_erf, _erf, _erfc, _log_ndtr
from .gamma import _gamma, _loggamma, _polygamma, _sinpi
from .sparse import _affine_grid
from .standard import (
    _xp_as_output,
    _xp_common_shape,
    _xp_float_arrays,
    _xp_float_dtype,
    _xp_in_blocks,
    _xp_namespace,
    _xp_vector,
)

__all__ = [
    "HELPER_DEPENDENCIES",
    "_affine_grid",
    "_argmax_share",
    "_as_arrays",
    "_as_output",
    "_as_vector",
    "_at_packed",
    "_at_point",
    "_check_shapes",
    "_cody_erf",
    "_common_shape",
    "_erf",
    "_erfc",
    "_float_arrays",
    "_float_dtype",
    "_free_threads",
    "_gamma",
    "_gram",
    "_hypot_share",
    "_in_blocks",
    "_log_ndtr",
    "_loggamma",
    "_polygamma",
    "_prod_others",
    "_sigmoid",
    "_sinc_d",
    "_sinpi",
    "_softplus",
    "_tril_inv",
    "_xp_as_output",
    "_xp_common_shape",
    "_xp_float_arrays",
    "_xp_float_dtype",
    "_xp_in_blocks",
    "_xp_namespace",
    "_xp_vector",
    "_zero_d",
    "helper_source",
]

#: Every helper -> the helpers it calls: those of the argument checks, the block loop and
#: ``_prod_others``, then those of the functions (the registry rows' ``helper``/``helper_deps``).
HELPER_DEPENDENCIES: dict[str, tuple[str, ...]] = {
    "_affine_grid": (),
    "_as_arrays": (),
    "_as_output": (),
    "_at_packed": ("_zero_d",),
    "_at_point": ("_zero_d",),
    "_zero_d": (),
    "_check_shapes": (),
    "_common_shape": (),
    "_in_blocks": ("_free_threads",),
    "_free_threads": (),
    "_as_vector": ("_as_arrays",),
    "_float_arrays": ("_as_arrays", "_float_dtype"),
    "_float_dtype": (),
    "_prod_others": (),
    "_tril_inv": (),
    "_gram": (),
    "_xp_as_output": (),
    "_xp_common_shape": (),
    "_xp_float_arrays": ("_xp_float_dtype",),
    "_xp_float_dtype": (),
    "_xp_in_blocks": (),
    "_xp_namespace": (),
    "_xp_vector": (),
    **_registry.helper_dependencies(),
}


def helper_source(names: Iterable[str]) -> str:
    """Source of the named helpers and everything they depend on, ready to paste into a module.

    ``names`` is an iterable of helper names (a single ``str`` counts as one name). The helpers
    and their transitive :data:`HELPER_DEPENDENCIES` are emitted sorted by name, separated by
    two blank lines, ending with a newline; no names give ``""``. An unknown name raises
    ``KeyError``. The text needs ``_np`` (numpy) and ``_math`` (math) bound where it is run.
    Each helper's text is read from the module that defines it (``inspect.getsource``).
    """
    if isinstance(names, str):
        names = [names]
    wanted: set[str] = set()
    pending = list(names)
    while pending:
        name = pending.pop()
        if name in wanted:
            continue
        if name not in HELPER_DEPENDENCIES:
            raise KeyError(f"unknown runtime helper {name!r}; known: {sorted(HELPER_DEPENDENCIES)}")
        wanted.add(name)
        pending.extend(HELPER_DEPENDENCIES[name])
    chunks = [inspect.getsource(globals()[name]).rstrip("\n") for name in sorted(wanted)]
    return "\n\n\n".join(chunks) + "\n" if chunks else ""
