"""What a generated module may contain: the allow-lists :func:`symdiff.verify.check_module` reads.

Names, imports, module constants, NumPy functions and attributes, keywords and syntax-tree node
types; the elementwise functions' NumPy names come from the registry rows.
"""

from __future__ import annotations

import ast
import re

from .. import registry
from ..codegen.naming import CONSTANT as BOUND_CONSTANT
from ..codegen.naming import DIRECTION, OUT, THREADS, threads_keyword

FUNCTION_NAMES = frozenset(
    {"f", "grad_f", "value_and_grad_f", "jacobian_f", "hessian_f", "hvp_f"}
)
#: The second function of elementwise modules: the formulas, which the public function hands
#: to the runtime (``return _elementwise(_formulas, (x, y), threads=threads)``; in an Array API
#: module ``_xp_elementwise``, whose formulas take the namespace ``_xp`` last). Its parameters
#: are generated names too.
FORMULAS = "_formulas"
#: The function of sparse Jacobians and Hessians that returns where their values go (rows,
#: columns and shape: :mod:`symdiff.sparse.pattern`). Its parameters are dimension sizes.
PATTERN = "_pattern"
#: The runtime helpers that run the formulas, and the keywords a call of them may pass.
ELEMENTWISE_HELPERS = frozenset({"_elementwise", "_xp_elementwise", "_at_point",
                                 "_numba_elementwise"})
ELEMENTWISE_KEYWORDS = frozenset({"threads", "leading", "direction", "floats", "loop",
                                  "structure"})
#: The packed point path (:mod:`symdiff.verify.packed`): the helper the public function's
#: point test returns (``if x.__class__ is float ...: return _at_packed(_packed, ...)``), the
#: packed function it calls, that function's register parameter and the ufuncs whose
#: ``reduce``/``reduceat`` it may call.
PACKED_HELPER = "_at_packed"
PACKED = "_packed"
REGISTER = "_r"
PACKED_REDUCTIONS = frozenset({"add", "multiply"})
#: The last parameter of ``_formulas``: where its outputs go. It may only be indexed by int
#: literals (``_out[0]``, ``_out[1, 0]``), written through ``out=`` of a NumPy call, and
#: given as its default a tuple of ``None`` (one per output).
BLOCK_SLICES = OUT
#: The one keyword-only parameter an elementwise public function may have (default None), under
#: either spelling: its number of threads, passed on to ``_elementwise``.
THREADS_KEYWORDS = frozenset({THREADS, threads_keyword([THREADS])})
IMPORTS = {("numpy", "_np")}
#: The one other import a generated module may have: ``from symdiff.runtime import ...`` of
#: these helpers (each under its own name), which generated code calls. Written out here
#: because this list is the security boundary; a test checks that the runtime has each one.
RUNTIME = "symdiff.runtime"
RUNTIME_IMPORTS = frozenset({
    "_elementwise", "_at_point", "_at_packed", "_float_arrays", "_check_shapes",
    "_erf", "_erfc", "_log_ndtr", "_gamma", "_loggamma", "_polygamma", "_argmax_share",
    "_hypot_share", "_sinc_d", "_sigmoid", "_softplus", "_prod_others", "_tril_inv", "_gram",
    "_xp_elementwise", "_xp_namespace", "_xp_float_arrays", "_affine_grid", "_numba_elementwise",
    "_numba_ready", "_at", "_select", "_exp", "_expm1", "_log", "_log1p", "_tanh", "_cosh", "_sinh",
    "_logistic", "_log1p_exp", "_atan", "_atan2",
})
#: A module of the Numba backend (``backend="numba"``, :mod:`symdiff.codegen.loops`): the
#: helper that makes it one, its further imports, the one decorator of ``_formulas`` and of
#: its loop (by name), the loop's reader of an argument at an element, and the ``math``
#: functions its formulas may call.
NUMBA_HELPER = "_numba_elementwise"
NUMBA_IMPORTS = frozenset({("numba", "_numba"), ("math", "_math")})
NUMBA_JIT = '@_numba.njit(inline="always", fastmath=False, error_model="numpy")'
NUMBA_APART_JIT = '@_numba.njit(fastmath=False, error_model="numpy")'
NUMBA_LOOPS = {
    "_loop": '@_numba.njit(cache=True, nogil=True, fastmath=False, error_model="numpy")',
}
NUMBA_AT = "_at"
#: The one module-level statement of a Numba module besides its definitions (the runtime's
#: scalar functions registered with Numba), and the helper it calls.
NUMBA_READY = "_numba_ready"
#: A tensor module of the Numba backend (:mod:`symdiff.tensor.fused`): its elementwise
#: statements' ufuncs, ``_fused0``, ``_fused1``, ..., each with exactly this decorator, and
#: called as ``_fused0(y, _t0).astype(_dtype, copy=False)``.
FUSED = re.compile(r"_fused\d+\Z")
FUSED_DECORATOR = "@_numba.vectorize(cache=True)"
NUMBA_MATH = frozenset({"erf", "erfc", "lgamma"})
#: The helpers that make a module one of the Array API backend (``backend="array_api"``): it
#: imports no NumPy, binds the namespace of its arguments to :data:`NAMESPACE` with
#: :data:`NAMESPACE_HELPER` (or gets it as the formulas' last parameter) and may use only
#: :data:`STANDARD_NAMES` of it.
STANDARD_HELPERS = frozenset({"_xp_elementwise", "_xp_namespace"})
NAMESPACE = "_xp"
NAMESPACE_HELPER = "_xp_namespace"
#: The error classes the runtime helpers raise, bound to built-ins in a standalone module (so
#: that a saved module runs without symdiff), which symdiff's ``ShapeError`` and
#: ``ArgumentError`` subclass.
ERROR_CONSTANTS = ("_ShapeError = ValueError", "_ArgumentError = TypeError")
#: The module-level constants a generated module may define, each exactly as written here.
CONSTANTS = ('_FLOAT64 = _np.dtype("float64")',)
MODULE_NAMES = frozenset({"_np"})
#: ``_np.<name>`` the templates and the printer's structural forms use (arrays, shapes,
#: reductions, constants, ``where``/logic, and ``sqrt`` for any ``x**(1/2)``). The elementwise
#: functions' names come from the registry rows (:func:`symdiff.registry.numpy_names`).
STRUCTURAL_NUMPY_NAMES = frozenset(
    {
        "asarray", "broadcast_shapes", "broadcast_to", "copy", "e", "empty", "eye", "full", "inf",
        "logical_and", "logical_not", "logical_or", "max", "mean", "min", "nan", "pi", "prod",
        "repeat", "reshape", "result_type", "sqrt", "squeeze", "stack", "sum", "transpose", "where",
        "zeros",
    }
)
#: The ufuncs of the operators, which an output's last operation calls to write into its slice
#: (``_np.multiply(_t0, x, out=_into[0])``; :mod:`symdiff.codegen.into`): allowed only called,
#: with such an ``out=``.
OPERATOR_UFUNCS = frozenset({"add", "divide", "multiply", "negative", "square", "subtract"})
#: ``_np.<name>`` (or ``_np.<module>.<name>``) the tensor operation families' statements use
#: (:mod:`symdiff.tensor.families`). Written out here because this list is the security boundary;
#: a test checks that it covers every family row.
FAMILY_NUMPY_NAMES = frozenset({
    "concatenate", "cumprod", "cumsum", "flip", "roll", "stack", "tril", "triu", "var", "where",
    "einsum", "linalg.det", "linalg.inv", "linalg.norm", "linalg.slogdet", "linalg.solve", "sqrt",
    "sum",
    "argpartition", "argsort", "take_along_axis", "put_along_axis",
    "take", "bincount", "add.at", "nan_to_num", "isfinite",
    "linalg.cholesky", "linalg.eigh", "linalg.svd",
    "lib.stride_tricks.sliding_window_view", "reshape", "transpose",
    "argmax", "argmin", "linalg.qr",
})
NUMPY_NAMES = STRUCTURAL_NUMPY_NAMES | FAMILY_NUMPY_NAMES | registry.numpy_names()
#: ``_xp.<name>`` (or ``_xp.linalg.<name>``) an Array API module may use: the standard's
#: functions the dialect table maps NumPy's to (:data:`symdiff.codegen.standard.STANDARD`;
#: the structural ones written out here because this list is the security boundary, the
#: elementwise ones read from the registry rows; a test checks they agree with the table and
#: that array-api-strict has every one).
STANDARD_NAMES = frozenset({
    "where", "logical_and", "logical_or", "logical_not", "pi", "e", "inf", "nan", "float64",
    "asarray", "broadcast_to", "empty", "eye", "full", "zeros", "reshape", "squeeze", "stack",
    "repeat", "max", "min", "mean", "prod", "sum", "flip", "roll", "tril", "triu", "take",
    "take_along_axis", "argsort", "isfinite", "var", "concat", "cumulative_sum",
    "cumulative_prod", "permute_dims", "sqrt",
    "linalg.det", "linalg.inv", "linalg.slogdet", "linalg.solve", "linalg.cholesky",
    "linalg.eigh", "linalg.svd",
}) | frozenset(registry.standard_names().values())
PARAM_METHODS = frozenset({"astype", "shape", "dtype"})
#: Runtime helpers that check arguments and take the parameters' names as their first argument
#: (a tuple of strings, each the name of a parameter), to name an argument in their errors.
NAMING_HELPERS = frozenset({"_float_arrays"})
#: The Array API backend's naming helpers, which take the namespace first, then the names.
STANDARD_NAMING_HELPERS = frozenset({"_xp_float_arrays", "_xp_float_dtype"})
#: Tensor modules (those that embed this helper to check argument shapes) may also use ``@``,
#: ``.T``, ``.ndim`` of a parameter, basic indexing by literals (``x[1:3]``, ``_t0[:, None]``),
#: ``_t0[1:3] = ...``, ``_n_dim, _d_dim = ...``, identifier-like strings (argument and dimension
#: names), ``_np.add.reduce(...)`` and the other reductions, ``out=`` into a generated name, and
#: two kinds of ``if``: the argument prelude (see :func:`_check_dtype_test`) and the inline shape
#: test (see :func:`_check_shape_test`).
TENSOR_HELPER = "_check_shapes"
TENSOR_ATTRIBUTES = frozenset({"T"})
#: Ufuncs whose ``reduce`` tensor code calls (``_np.add.reduce(x, axis=0)``).
REDUCING_UFUNCS = frozenset({"add", "maximum", "minimum", "multiply"})
TENSOR_PARAM_ATTRIBUTES = frozenset({"ndim"})
#: (``weights``/``minlength``: ``_np.bincount``; ``nan``/``posinf``/``neginf``: ``_np.nan_to_num``;
#: ``full_matrices``: ``_np.linalg.svd``; ``UPLO``: ``_np.linalg.eigh``)
KEYWORDS = frozenset({
    "dtype", "copy", "axis", "keepdims", "optimize", "weights", "minlength", "nan", "posinf",
    "neginf", "full_matrices", "UPLO", "correction",
})
#: Generated names: ``_t0``, ``_dtype``, and names derived from the user's (``_X_bar``, ``_n_dim``).
INTERNAL = re.compile(r"_[A-Za-z][A-Za-z0-9_]*\Z")
PARAM = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
#: The subscripts of ``_np.einsum`` ("ab,b->a"): letters, commas and one arrow, nothing else.
EINSUM = re.compile(r"[A-Za-z]*(,[A-Za-z]*)*->[A-Za-z]*\Z")
VECTOR = DIRECTION  # the direction parameter of Hessian-vector products
#: A traced function's bound constants (``_c0``, ...): trailing parameters of tensor functions.
CONSTANT = BOUND_CONSTANT

EXPRESSION_NODES = (
    ast.BinOp, ast.UnaryOp, ast.Compare, ast.Call, ast.Name, ast.Attribute, ast.Constant,
    ast.Tuple, ast.Subscript, ast.keyword, ast.Load, ast.Store, ast.operator, ast.unaryop,
    ast.cmpop,
)
ALLOWED_OPERATORS = (
    ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.USub, ast.UAdd,
    ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq,
)
