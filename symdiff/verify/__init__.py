"""Defence in depth: check a generated module's syntax tree before it is ever executed.

The templates can only produce a narrow shape of module: ``import numpy as _np`` (and
``import math as _math``; or, for the Array API backend, ``import array_api_compat as _xpc``
alone, whose function calls only the standard's functions of ``_xp``, see
:data:`STANDARD_NAMES`), the module constants in :data:`CONSTANTS`, helper functions copied
verbatim from :mod:`symdiff.codegen.helpers`, and one function whose body assigns arithmetic on its
parameters and NumPy calls to temporaries and returns them. :func:`check_module` accepts
exactly that and refuses anything else (an unexpected statement, name, attribute or call), so
neither a bug nor a tampered cache entry can run arbitrary code. Standard library only.

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
from pathlib import Path

from .allowed import (
    BLOCK_SLICES,
    CONSTANTS,
    ERROR_CONSTANTS,
    FORMULAS,
    FUNCTION_NAMES,
    IMPORTS,
    KEYWORDS,
    NAMING_HELPERS,
    NUMPY_NAMES,
    OPERATOR_UFUNCS,
    PACKED,
    PARAM_METHODS,
    PATTERN,
    REDUCING_UFUNCS,
    STANDARD_IMPORT,
    STANDARD_NAMES,
    STRUCTURAL_NUMPY_NAMES,
    TENSOR_ATTRIBUTES,
    TENSOR_HELPER,
    TENSOR_PARAM_ATTRIBUTES,
    VECTOR,
)
from .defined import check_defined, module_names
from .errors import VerificationError, refuse
from .packed import check_packed_function, packed_constant
from .statements import check_function

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
    "STANDARD_NAMES",
    "STRUCTURAL_NUMPY_NAMES",
    "TENSOR_ATTRIBUTES",
    "TENSOR_HELPER",
    "TENSOR_PARAM_ATTRIBUTES",
    "VECTOR",
    "VerificationError",
    "check_module",
    "trusted_helpers",
]


@functools.cache
def trusted_helpers() -> dict[str, str]:
    """The syntax tree dump of every helper in the modules of the ``codegen.helpers`` package,
    read as text (not imported)."""
    helpers: dict[str, str] = {}
    for path in sorted((Path(__file__).parent.parent / "codegen" / "helpers").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        helpers.update((n.name, ast.dump(n)) for n in tree.body if isinstance(n, ast.FunctionDef))
    return helpers


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
    constants: set[str] = set()
    imports: set[tuple[str, str | None]] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            if not all((a.name, a.asname) in IMPORTS for a in node.names):
                raise refuse(node, "unexpected import")
            imports |= {(a.name, a.asname) for a in node.names}
        elif isinstance(node, ast.FunctionDef) and node.name in FUNCTION_NAMES:
            functions.append(node)
        elif isinstance(node, ast.FunctionDef) and node.name == FORMULAS:
            formulas.append(node)
        elif isinstance(node, ast.FunctionDef) and node.name == PACKED:
            packed.append(node)
        elif isinstance(node, ast.FunctionDef) and node.name == PATTERN:
            patterns.append(node)
        elif isinstance(node, ast.FunctionDef):
            if trusted_helpers().get(node.name) != ast.dump(node):
                raise refuse(node, f"helper {node.name!r} is not symdiff's own")
        elif isinstance(node, ast.Assign) and ast.dump(node) in _constant_dumps():
            pass
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
    standard = STANDARD_IMPORT in imports  # the Array API backend: no NumPy, the standard only
    if standard and imports != {STANDARD_IMPORT}:
        raise VerificationError("an Array API module imports array_api_compat and nothing else")
    helpers = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    tensor = TENSOR_HELPER in helpers
    check_function(functions[0], set(trusted_helpers()), tensor, standard=standard)
    for node in formulas:
        check_function(node, set(trusted_helpers()), tensor, internal_params=True,
                       standard=standard)
    for node in patterns:
        if standard:
            raise refuse(node, f"{PATTERN} only in NumPy modules")
        check_function(node, set(trusted_helpers()), tensor, internal_params=True)
    for node in packed:
        if standard or tensor:
            raise refuse(node, f"{PACKED} only in elementwise NumPy modules")
        check_packed_function(node, set(trusted_helpers()), constants)
    check_defined(source, {node.name for node in (*functions, *formulas, *packed, *patterns)},
                  module_names(tree))
    return tree

