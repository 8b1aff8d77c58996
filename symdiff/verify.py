"""Defence in depth: check a generated module's syntax tree before it is ever executed.

The templates can only produce a narrow shape of module: ``import numpy as _np`` (and
``import math as _math``), the module constants in :data:`CONSTANTS`, helper functions copied
verbatim from :mod:`symdiff.runtime`, and one function whose body assigns arithmetic on its
parameters and NumPy calls to temporaries and returns them. :func:`check_module` accepts
exactly that and refuses anything else (an unexpected statement, name, attribute or call), so
neither a bug nor a tampered cache entry can run arbitrary code. Standard library only.
"""

from __future__ import annotations

import ast
import functools
import keyword
import re
from pathlib import Path

from . import registry
from .errors import SymdiffError

FUNCTION_NAMES = frozenset(
    {"f", "grad_f", "value_and_grad_f", "jacobian_f", "hessian_f", "hvp_f"}
)
#: The second function of elementwise modules: the formulas, which the public function runs
#: through the ``_in_blocks`` helper. Its parameters are generated names too.
FORMULAS = "_formulas"
IMPORTS = {("numpy", "_np"), ("math", "_math")}
#: The error classes the runtime helpers raise, bound to built-ins in a generated module (so
#: that a saved module runs on its own) and rebound by the loader to symdiff's ``ShapeError``
#: and ``ArgumentError`` (:func:`symdiff.load.load_function`), which subclass them.
ERROR_CONSTANTS = ("_ShapeError = ValueError", "_ArgumentError = TypeError")
#: The module-level constants a generated module may define, each exactly as written here.
CONSTANTS = ('_FLOAT64 = _np.dtype("float64")', *ERROR_CONSTANTS)
_MODULE_NAMES = frozenset(alias for _, alias in IMPORTS)
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
#: Allowed already, though no row prints them yet: issue #14 step 11 gives them rows and drops
#: this set (removing a name would turn cached modules that use it into cache misses).
NUMPY_NAMES = STRUCTURAL_NUMPY_NAMES | registry.numpy_names()
PARAM_METHODS = frozenset({"astype", "shape", "dtype"})
#: Runtime helpers that check arguments and take the parameters' names as their first argument
#: (a tuple of strings, each the name of a parameter), to name an argument in their errors.
NAMING_HELPERS = frozenset({"_float_dtype", "_common_shape", "_float_arrays"})
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
KEYWORDS = frozenset({"dtype", "copy", "axis", "keepdims"})
#: Generated names: ``_t0``, ``_dtype``, and names derived from the user's (``_X_bar``, ``_n_dim``).
_INTERNAL = re.compile(r"_[A-Za-z][A-Za-z0-9_]*\Z")
_PARAM = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
VECTOR = "_v"  # the direction parameter of Hessian-vector products

_EXPRESSION_NODES = (
    ast.BinOp, ast.UnaryOp, ast.Compare, ast.Call, ast.Name, ast.Attribute, ast.Constant,
    ast.Tuple, ast.Subscript, ast.keyword, ast.Load, ast.Store, ast.operator, ast.unaryop,
    ast.cmpop,
)
_ALLOWED_OPERATORS = (
    ast.Add, ast.Sub, ast.Mult, ast.Div, ast.Pow, ast.USub, ast.UAdd,
    ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.Eq, ast.NotEq,
)


def _plain_index(index: ast.AST) -> bool:
    """Basic indexing by literals only: ints, slices of ints, ``None`` and ``...``."""
    items = index.elts if isinstance(index, ast.Tuple) else [index]
    return all(_plain_item(item) for item in items)


def _plain_item(item: ast.AST) -> bool:
    if isinstance(item, ast.Slice):
        return all(p is None or _literal_int(p) for p in (item.lower, item.upper, item.step))
    if isinstance(item, ast.Constant) and (item.value is None or item.value is Ellipsis):
        return True
    return _literal_int(item)


def _literal_int(node: ast.AST) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int


def _all_axes(item: ast.keyword) -> bool:
    """``axis=None``: a reduction over every axis (``None`` is no other constant's value)."""
    return item.arg == "axis" and isinstance(item.value, ast.Constant) and item.value.value is None


class VerificationError(SymdiffError):
    """A generated module is not of the shape symdiff's templates produce."""


def _refuse(node: ast.AST, why: str) -> VerificationError:
    line = getattr(node, "lineno", "?")
    return VerificationError(f"generated code refused at line {line}: {why}")


@functools.cache
def trusted_helpers() -> dict[str, str]:
    """The syntax tree dump of every helper in ``runtime.py``, read as text (not imported)."""
    tree = ast.parse(Path(__file__).with_name("runtime.py").read_text(encoding="utf-8"))
    return {n.name: ast.dump(n) for n in tree.body if isinstance(n, ast.FunctionDef)}


@functools.cache
def _constant_dumps() -> frozenset[str]:
    return frozenset(ast.dump(ast.parse(text).body[0]) for text in CONSTANTS)


def check_module(source: str) -> None:
    """Raise :class:`VerificationError` unless ``source`` has the shape of a generated module."""
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        raise VerificationError(f"generated code does not parse: {error}") from None
    functions = []
    formulas = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            if not all((a.name, a.asname) in IMPORTS for a in node.names):
                raise _refuse(node, "unexpected import")
        elif isinstance(node, ast.FunctionDef) and node.name in FUNCTION_NAMES:
            functions.append(node)
        elif isinstance(node, ast.FunctionDef) and node.name == FORMULAS:
            formulas.append(node)
        elif isinstance(node, ast.FunctionDef):
            if trusted_helpers().get(node.name) != ast.dump(node):
                raise _refuse(node, f"helper {node.name!r} is not symdiff's own")
        elif isinstance(node, ast.Assign) and ast.dump(node) in _constant_dumps():
            pass
        else:
            raise _refuse(node, f"unexpected {type(node).__name__} at module level")
    if len(functions) != 1 or len(formulas) > 1:
        raise VerificationError(
            f"generated code must define exactly one function (and at most one {FORMULAS})"
        )
    helpers = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    tensor = TENSOR_HELPER in helpers
    _check_function(functions[0], set(trusted_helpers()), tensor)
    for node in formulas:
        _check_function(node, set(trusted_helpers()), tensor, internal_params=True)


def _check_function(
    func: ast.FunctionDef, helpers: set[str], tensor: bool = False, internal_params: bool = False
) -> None:
    args = func.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.posonlyargs or args.defaults:
        raise _refuse(func, "only plain parameters are allowed")
    if func.decorator_list or func.returns:
        raise _refuse(func, "no decorators or annotations")
    params = set()
    for arg in args.args:
        valid = (
            (_PARAM.match(arg.arg) and not keyword.iskeyword(arg.arg))
            or arg.arg == VECTOR
            or (
                internal_params
                and _INTERNAL.match(arg.arg)
                and arg.arg not in helpers
                and arg.arg not in _MODULE_NAMES
            )
        )
        if not valid or arg.annotation:
            raise _refuse(arg, f"bad parameter {arg.arg!r}")
        params.add(arg.arg)
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        if not isinstance(body[0].value.value, str):
            raise _refuse(body[0], "unexpected expression statement")
        body = body[1:]
    checker = _ExpressionChecker(params, helpers, tensor)
    for statement in body:
        if isinstance(statement, ast.Assign) and len(statement.targets) == 1:
            checker.target(statement.targets[0])
            checker.visit(statement.value)
        elif (
            tensor
            and isinstance(statement, ast.AugAssign)
            and isinstance(statement.op, ast.Add | ast.Sub)
            and isinstance(statement.target, ast.Subscript)
        ):
            checker.target(statement.target)  # ``_x_bar[1:] += ...``: a slice of a generated array
            checker.visit(statement.value)
        elif isinstance(statement, ast.Return) and statement.value is not None:
            checker.visit(statement.value)
        elif isinstance(statement, ast.Delete) and all(
            isinstance(t, ast.Name)
            and _INTERNAL.match(t.id)
            and t.id not in helpers
            and t.id not in _MODULE_NAMES
            and t.id not in params
            for t in statement.targets
        ):
            pass  # ``del _t3, _t7``: temporaries freed after their last read
        elif isinstance(statement, ast.If) and tensor and _converts(statement):
            _check_dtype_test(statement, checker)
        elif isinstance(statement, ast.If) and tensor:
            _check_shape_test(statement, checker)
        else:
            raise _refuse(statement, f"unexpected {type(statement).__name__} statement")


def _check_shape_test(statement: ast.If, checker: _ExpressionChecker) -> None:
    """The inline shape test of a tensor function, and nothing else::

        if X.ndim != 2 or w.shape != X.shape[1:] or X.shape[0] < 3:
            _check_shapes(...)

    The test is one comparison or an ``or`` of comparisons (``!=``, ``<``) between
    ``<param>.ndim``, ``<param>.shape``, ``<param>.shape[<int or slice of ints>]``, generated
    names and int constants or tuples of them; the body is one call of ``_check_shapes``
    (its arguments checked like any expression); there is no ``else``.
    """
    test = statement.test
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        comparisons = test.values
    else:
        comparisons = [test]
    for comparison in comparisons:
        if not isinstance(comparison, ast.Compare) or not all(
            isinstance(op, ast.NotEq | ast.Lt) for op in comparison.ops
        ):
            raise _refuse(statement, "unexpected test in if statement")
        for operand in (comparison.left, *comparison.comparators):
            if not _shape_operand(operand, checker):
                raise _refuse(statement, "unexpected operand in the shape test")
    body = statement.body
    call = body[0].value if len(body) == 1 and isinstance(body[0], ast.Expr) else None
    if statement.orelse or not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == TENSOR_HELPER
    ):
        raise _refuse(statement, f"an if statement may only call {TENSOR_HELPER}")
    checker.visit(call)


def _converts(statement: ast.If) -> bool:
    """Whether ``statement`` has the body of the dtype test (an assignment, not a call)."""
    return len(statement.body) == 1 and isinstance(statement.body[0], ast.Assign)


def _check_dtype_test(statement: ast.If, checker: _ExpressionChecker) -> None:
    """The argument prelude of a tensor function, and nothing else::

        if x.__class__ is not _np.ndarray or x.dtype is not _FLOAT64 or ...:
            x, y = _float_arrays(('x', 'y'), x, y)

    The test is an ``or`` of ``is not`` comparisons, each of ``<param>.__class__`` with
    ``_np.ndarray`` or of ``<param>.dtype`` with ``_FLOAT64``; the body assigns the
    parameters (a tuple of names) from one call of ``_float_arrays`` on the parameters' names
    (a tuple of strings) and the parameters; no ``else``.
    """
    test = statement.test
    comparisons = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) \
        else [test]
    for comparison in comparisons:
        if not (
            isinstance(comparison, ast.Compare)
            and len(comparison.ops) == 1
            and isinstance(comparison.ops[0], ast.IsNot)
            and _dtype_operands(comparison.left, comparison.comparators[0], checker.params)
        ):
            raise _refuse(statement, "unexpected test in the argument prelude")
    assign = statement.body[0]
    target, value = assign.targets, assign.value
    if statement.orelse or not (
        len(target) == 1
        and isinstance(target[0], ast.Tuple)
        and all(isinstance(t, ast.Name) and t.id in checker.params for t in target[0].elts)
        and isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "_float_arrays"
        and "_float_arrays" in checker.helpers
        and not value.keywords
        and value.args
        and _names_tuple(value.args[0], checker.params)
        and all(isinstance(a, ast.Name) and a.id in checker.params for a in value.args[1:])
    ):
        raise _refuse(statement, "an argument prelude may only call _float_arrays")


def _names_tuple(node: ast.AST, params: set[str]) -> bool:
    """``('x', 'y')``: the names of parameters, which a helper that checks the arguments (the
    first argument of those in :data:`NAMING_HELPERS`) uses in its messages."""
    return (
        isinstance(node, ast.Tuple)
        and bool(node.elts)
        and all(
            isinstance(item, ast.Constant) and type(item.value) is str and item.value in params
            for item in node.elts
        )
    )


def _dtype_operands(left: ast.AST, right: ast.AST, params: set[str]) -> bool:
    """``p.__class__`` with ``_np.ndarray``, or ``p.dtype`` with ``_FLOAT64``."""
    if not (
        isinstance(left, ast.Attribute)
        and isinstance(left.value, ast.Name)
        and left.value.id in params
    ):
        return False
    if left.attr == "__class__":
        return (
            isinstance(right, ast.Attribute)
            and isinstance(right.value, ast.Name)
            and right.value.id == "_np"
            and right.attr == "ndarray"
        )
    return left.attr == "dtype" and isinstance(right, ast.Name) and right.id == "_FLOAT64"


def _shape_operand(node: ast.AST, checker: _ExpressionChecker) -> bool:
    """``X.ndim``, ``X.shape``, ``X.shape[1]``, ``X.shape[1:]``, ``_n_dim``, ``3``, ``(3, 2)``."""
    if isinstance(node, ast.Subscript):
        item = node.slice
        plain = _literal_int(item) or (
            isinstance(item, ast.Slice)
            and all(p is None or _literal_int(p) for p in (item.lower, item.upper, item.step))
        )
        owner = node.value
        return (
            plain
            and isinstance(owner, ast.Attribute)
            and owner.attr == "shape"
            and _shape_operand(owner, checker)
        )
    if isinstance(node, ast.Attribute):
        return (
            node.attr in ("ndim", "shape")
            and isinstance(node.value, ast.Name)
            and node.value.id in checker.params
        )
    if isinstance(node, ast.Tuple):
        return all(_literal_int(item) for item in node.elts)
    if isinstance(node, ast.Name):
        return checker._is_internal(node) and node.id not in _MODULE_NAMES
    return _literal_int(node)


class _ExpressionChecker:
    """Walks one expression and refuses any node, name, attribute or call not on the lists.

    The walk keeps its own stack instead of recursing, so that a long generated sum (a chain of
    a thousand ``+``) is checked like a short one. Each ``visit_*`` method checks one node and
    returns the children still to be checked.
    """

    def __init__(self, params: set[str], helpers: set[str], tensor: bool = False):
        self.params = params
        self.helpers = helpers
        self.tensor = tensor

    def target(self, node: ast.AST) -> None:
        if isinstance(node, ast.Name) and (node.id in self.params or _INTERNAL.match(node.id)):
            return
        if isinstance(node, ast.Subscript) and self._is_out_index(node):
            return
        if not self.tensor:
            raise _refuse(node, "unexpected assignment target")
        if isinstance(node, ast.Subscript) and self._is_internal(node.value) and _plain_index(
            node.slice
        ):
            return  # a slice of a generated array, e.g. ``_t3[1:3] = _t2`` (tensor scatter)
        if isinstance(node, ast.Tuple) and node.elts and all(
            self._is_internal(e) for e in node.elts
        ):
            return  # ``_n_dim, _d_dim = X.shape`` (tensor dimensions)
        raise _refuse(node, "unexpected assignment target")

    def _is_internal(self, node: ast.AST) -> bool:
        return (
            isinstance(node, ast.Name)
            and bool(_INTERNAL.match(node.id))
            and node.id not in self.helpers
        )

    def _writable(self, node: ast.AST) -> bool:
        """A generated array that code may write into: an internal name, not a helper, not a
        module, not a parameter (the caller's arrays are never written)."""
        return (
            self._is_internal(node)
            and node.id not in _MODULE_NAMES  # type: ignore[attr-defined]
            and node.id not in self.params  # type: ignore[attr-defined]
        )

    def _is_out_index(self, node: ast.Subscript, owners: tuple[str, ...] = ("_out",)) -> bool:
        """``_out[i, j]`` (or, to read, ``_v[i]``) with constant integer indices."""
        index = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return (
            isinstance(node.value, ast.Name)
            and node.value.id in owners
            and all(isinstance(i, ast.Constant) and type(i.value) is int for i in index)
        )

    def visit(self, root: ast.AST) -> None:
        """Check ``root`` and everything below it."""
        pending = [root]
        while pending:
            node = pending.pop()
            method = getattr(self, f"visit_{type(node).__name__}", self.generic_visit)
            pending.extend(method(node))

    def generic_visit(self, node: ast.AST) -> list[ast.AST]:
        if not isinstance(node, _EXPRESSION_NODES):
            raise _refuse(node, f"unexpected {type(node).__name__}")
        if isinstance(node, ast.operator | ast.unaryop | ast.cmpop) and not (
            isinstance(node, _ALLOWED_OPERATORS) or (self.tensor and isinstance(node, ast.MatMult))
        ):
            raise _refuse(node, f"unexpected operator {type(node).__name__}")
        return list(ast.iter_child_nodes(node))

    def visit_Name(self, node: ast.Name) -> list[ast.AST]:
        name = node.id
        if name in self.params or (
            _INTERNAL.match(name) and name not in self.helpers and name not in _MODULE_NAMES
        ):
            return []  # (``_np`` itself is only ever the owner of an allowed attribute)
        raise _refuse(node, f"unexpected name {name!r}")

    def visit_Constant(self, node: ast.Constant) -> list[ast.AST]:
        if self.tensor and type(node.value) is str and (
            _PARAM.match(node.value) or node.value == VECTOR
        ):
            return []  # a parameter or dimension name, for the messages of ``_check_shapes``
        if type(node.value) not in (int, float, bool):
            raise _refuse(node, f"unexpected constant {node.value!r}")
        return []

    def visit_Attribute(self, node: ast.Attribute, callee: bool = False) -> list[ast.AST]:
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id == "_np" and node.attr in NUMPY_NAMES:
            return []
        if isinstance(owner, ast.Name) and node.attr in PARAM_METHODS and (
            owner.id in self.params or _INTERNAL.match(owner.id)
        ):
            return []
        if self.tensor and node.attr in TENSOR_ATTRIBUTES and (
            (isinstance(owner, ast.Name) and owner.id in self.params) or self._is_internal(owner)
        ):
            return []
        if (
            callee
            and self.tensor
            and node.attr == "reduce"
            and isinstance(owner, ast.Attribute)
            and owner.attr in REDUCING_UFUNCS
            and isinstance(owner.value, ast.Name)
            and owner.value.id == "_np"
        ):
            return []  # called: ``_np.add.reduce(x, axis=0)``
        if self.tensor and node.attr in TENSOR_PARAM_ATTRIBUTES and (
            isinstance(owner, ast.Name) and owner.id in self.params
        ):
            return []
        raise _refuse(node, f"unexpected attribute {node.attr!r}")

    def visit_Subscript(self, node: ast.Subscript) -> list[ast.AST]:
        if self._is_out_index(node, ("_out", VECTOR)):
            return []
        owner = node.value
        named = isinstance(owner, ast.Name) and (
            owner.id in self.params or self._is_internal(owner)
        )
        if not (self.tensor and named and _plain_index(node.slice)):  # ``x[1:3]``, ``_t[:, None]``
            raise _refuse(node, "unexpected subscript")
        return []

    def visit_Call(self, node: ast.Call) -> list[ast.AST]:
        func = node.func
        args = list(node.args)
        if isinstance(func, ast.Name) and func.id in self.helpers:
            if func.id in NAMING_HELPERS and args and _names_tuple(args[0], self.params):
                args = args[1:]  # the names of parameters, for the helper's messages
        elif isinstance(func, ast.Attribute):
            self.visit_Attribute(func, callee=True)
        else:
            raise _refuse(node, "unexpected call")
        for item in node.keywords:
            if item.arg == "out" and self.tensor and self._writable(item.value):
                continue  # ``_np.exp(_t1, out=_t1)``: in place, into a generated array
            if item.arg not in KEYWORDS:
                raise _refuse(item, f"unexpected keyword {item.arg!r}")
        return [*args, *(item.value for item in node.keywords if not _all_axes(item))]
