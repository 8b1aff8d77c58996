"""Defence in depth: check a generated module's syntax tree before it is ever executed.

The templates can only produce a narrow shape of module: ``import numpy as _np`` (not in the
Array API backend, whose functions call only the standard's functions of ``_xp``, see
:data:`STANDARD_NAMES`), one ``from symdiff.runtime import ...`` of the runtime helpers the code
calls (:data:`RUNTIME_IMPORTS`), the module constants in :data:`CONSTANTS`, and one function
whose body assigns arithmetic on its parameters and NumPy calls to temporaries and returns them
(with its formulas, ``_formulas``, a packed point path, ``_packed``, and a sparse function's
``_pattern``, where its values go).
:func:`check_module` accepts exactly that and refuses anything else (an unexpected statement,
name, attribute, call or import), so neither a bug nor a tampered cache entry can run
arbitrary code. Standard library only.

Constant shapes are bounded too (``sizes``): no module allocates an array of a constant shape
beyond ``MAX_CONSTANT_ELEMENTS`` or repeats a sequence (``(20000,) * 3``).

Modules: ``allowed`` (the allow-lists), ``errors`` (:class:`VerificationError`), ``literals``
(small tests of tree pieces), ``sizes`` (bounds on constant shapes), ``expressions`` (one
expression) and ``statements`` (one function's parameters and statements); this package checks
the module level (:func:`check_module`).
"""

from __future__ import annotations

import ast
import functools

from .allowed import (
    BLOCK_SLICES,
    CONSTANTS,
    ERROR_CONSTANTS,
    FORMULAS,
    FUNCTION_NAMES,
    FUSED,
    IMPORTS,
    KEYWORDS,
    NAMING_HELPERS,
    NUMBA_APART_JIT,
    NUMBA_HELPER,
    NUMBA_IMPORTS,
    NUMBA_JIT,
    NUMBA_LOOPS,
    NUMBA_READY,
    NUMPY_NAMES,
    OPERATOR_UFUNCS,
    PACKED,
    PARAM_METHODS,
    PATTERN,
    REDUCING_UFUNCS,
    RUNTIME,
    RUNTIME_IMPORTS,
    STANDARD_HELPERS,
    STANDARD_NAMES,
    STRUCTURAL_NUMPY_NAMES,
    TENSOR_ATTRIBUTES,
    TENSOR_HELPER,
    TENSOR_PARAM_ATTRIBUTES,
    VECTOR,
)
from .defined import check_defined, module_names
from .errors import VerificationError, refuse
from .loops import check_decorator, check_loop
from .packed import check_packed_function, packed_constant
from .statements import check_function, check_fused

__all__ = [
    "BLOCK_SLICES",
    "CONSTANTS",
    "ERROR_CONSTANTS",
    "FORMULAS",
    "FUNCTION_NAMES",
    "IMPORTS",
    "KEYWORDS",
    "NAMING_HELPERS",
    "NUMPY_NAMES",
    "OPERATOR_UFUNCS",
    "PARAM_METHODS",
    "REDUCING_UFUNCS",
    "RUNTIME",
    "RUNTIME_IMPORTS",
    "STANDARD_NAMES",
    "STRUCTURAL_NUMPY_NAMES",
    "TENSOR_ATTRIBUTES",
    "TENSOR_HELPER",
    "TENSOR_PARAM_ATTRIBUTES",
    "VECTOR",
    "VerificationError",
    "check_module",
]


@functools.cache
def _constant_dumps() -> frozenset[str]:
    return frozenset(ast.dump(ast.parse(text).body[0]) for text in CONSTANTS)


def check_module(source: str) -> ast.Module:
    """Raise :class:`VerificationError` unless ``source`` has the shape of a generated module;
    return its syntax tree (which the loader compiles: a 5,000-line module is parsed once)."""
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        raise VerificationError(f"generated code does not parse: {error}") from None
    functions = []
    formulas = []
    packed = []
    patterns = []
    loops = []
    fused: list[ast.FunctionDef] = []
    registers = 0
    constants: set[str] = set()
    imports: set[tuple[str, str | None]] = set()
    helpers: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            if not all((a.name, a.asname) in IMPORTS | NUMBA_IMPORTS for a in node.names):
                raise refuse(node, "unexpected import")
            imports |= {(a.name, a.asname) for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if helpers or not _imports_runtime(node):
                raise refuse(node, f"unexpected import: one 'from {RUNTIME} import ...' of its "
                             "helpers is allowed")
            helpers = {a.name for a in node.names}
        elif isinstance(node, ast.FunctionDef) and node.name in FUNCTION_NAMES:
            functions.append(node)
        elif isinstance(node, ast.FunctionDef) and node.name == FORMULAS:
            formulas.append(node)
        elif isinstance(node, ast.FunctionDef) and node.name == PACKED:
            packed.append(node)
        elif isinstance(node, ast.FunctionDef) and node.name == PATTERN:
            patterns.append(node)
        elif isinstance(node, ast.FunctionDef) and node.name in NUMBA_LOOPS:
            loops.append(node)
        elif isinstance(node, ast.FunctionDef) and FUSED.match(node.name):
            fused.append(node)
        elif isinstance(node, ast.Assign) and ast.dump(node) in _constant_dumps():
            pass
        elif _registers(node):
            registers += 1
        elif (name := packed_constant(node)) is not None:
            if name in constants:
                raise refuse(node, f"packed constant {name!r} bound twice")
            constants.add(name)
        else:
            raise refuse(node, f"unexpected {type(node).__name__} at module level")
    if len(functions) != 1 or len(formulas) > 1 or len(packed) > 1 or len(patterns) > 1:
        raise VerificationError(
            f"generated code must define exactly one function (and at most one {FORMULAS}, "
            f"one {PACKED} and one {PATTERN})"
        )
    if constants and not packed:
        raise VerificationError("packed constants without a packed function")
    standard = bool(helpers & STANDARD_HELPERS)  # the Array API backend: the standard only
    if standard and imports:
        raise VerificationError("an Array API module imports no NumPy")
    numba = NUMBA_HELPER in helpers  # the Numba backend: decorated formulas and a loop
    if (imports & NUMBA_IMPORTS or loops) and not (numba or fused):
        raise VerificationError("only a Numba module imports numba or math and has a loop")
    if registers != bool(numba or fused) or (registers and NUMBA_READY not in helpers):
        raise VerificationError(f"a Numba module calls {NUMBA_READY}() once, after its imports")
    if numba and (sorted(n.name for n in loops) != sorted(NUMBA_LOOPS) or len(formulas) != 1):
        raise VerificationError(f"a Numba module has {FORMULAS} and one loop")
    tensor = TENSOR_HELPER in helpers
    if fused and (numba or not tensor or ("numba", "_numba") not in imports
                  or len({n.name for n in fused}) != len(fused)):
        raise VerificationError("only a tensor module of the Numba backend has fused ufuncs, "
                                "each once")
    check_function(functions[0], helpers | {n.name for n in fused}, tensor, standard=standard)
    for node in fused:
        check_fused(node, helpers)
    for node in formulas:
        if numba:
            check_decorator(node, NUMBA_JIT, NUMBA_APART_JIT)
            node = ast.FunctionDef(**{**node.__dict__, "decorator_list": []})
        check_function(node, helpers, tensor, internal_params=True, standard=standard,
                       numba=numba)
    for node in patterns:
        if standard:
            raise refuse(node, f"{PATTERN} only in NumPy modules")
        check_function(node, helpers, tensor, internal_params=True)
    for node in loops:
        check_loop(node, helpers)
    for node in packed:
        if standard or tensor:
            raise refuse(node, f"{PACKED} only in elementwise NumPy modules")
        check_packed_function(node, helpers, constants)
    check_defined(source, {node.name for node in (*functions, *formulas, *packed, *patterns,
                                                  *loops, *fused)},
                  module_names(tree))
    return tree


def _registers(node: ast.stmt) -> bool:
    """``_numba_ready()``: the call of a Numba module that registers the runtime's scalar
    functions with Numba (its only statement besides definitions)."""
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name) and node.value.func.id == NUMBA_READY
            and not node.value.args and not node.value.keywords)


def _imports_runtime(node: ast.ImportFrom) -> bool:
    """``from symdiff.runtime import _a, _b``: helpers of :data:`RUNTIME_IMPORTS`, each once and
    under its own name."""
    names = [a.name for a in node.names]
    return (node.module == RUNTIME and node.level == 0 and bool(names)
            and len(set(names)) == len(names)
            and all(a.asname is None and a.name in RUNTIME_IMPORTS for a in node.names))

