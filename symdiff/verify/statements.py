"""The check of a generated function: its parameters and each statement of its body, including
the two ``if`` forms of tensor functions (the argument prelude and the inline shape test)."""

from __future__ import annotations

import ast
import keyword

from .allowed import (
    BLOCK_SLICES,
    CONSTANT,
    FUSED_DECORATOR,
    INTERNAL,
    MODULE_NAMES,
    NAMESPACE,
    NAMESPACE_HELPER,
    PARAM,
    TENSOR_HELPER,
    THREADS_KEYWORDS,
    VECTOR,
)
from .errors import refuse
from .expressions import ExpressionChecker
from .literals import int_list, literal_int, names_tuple
from .loops import check_decorator
from .packed import check_packed_call


def check_function(
    func: ast.FunctionDef, helpers: set[str], tensor: bool = False, internal_params: bool = False,
    standard: bool = False, numba: bool = False,
) -> None:
    """Refuse ``func`` unless its parameters are plain names and every statement is one a
    template writes (``internal_params``: generated names as parameters, as ``_formulas`` has,
    whose ``_out`` may default to a tuple of None; ``standard``: a module of the Array API
    backend, whose namespace ``_xp`` is bound once, by the ``_xp_namespace`` helper, before
    anything reads it, or is the formulas' last parameter)."""
    args = func.args
    if args.vararg or args.kwarg or args.posonlyargs or not (
        _threads_keyword(args, internal_params) or not args.kwonlyargs
    ) or (args.defaults and not (internal_params and _no_outputs(args))):
        raise refuse(func, "only plain parameters are allowed")
    if func.decorator_list or func.returns:
        raise refuse(func, "no decorators or annotations")
    params = set()
    for arg in args.args:
        valid = (
            (PARAM.match(arg.arg) and not keyword.iskeyword(arg.arg))
            or arg.arg == VECTOR
            or (tensor and CONSTANT.match(arg.arg))
            or (
                internal_params
                and INTERNAL.match(arg.arg)
                and arg.arg not in helpers
                and arg.arg not in MODULE_NAMES
            )
        )
        if not valid or arg.annotation:
            raise refuse(arg, f"bad parameter {arg.arg!r}")
        params.add(arg.arg)
    params.update(arg.arg for arg in args.kwonlyargs)
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        if not isinstance(body[0].value.value, str):
            raise refuse(body[0], "unexpected expression statement")
        body = body[1:]
    checker = ExpressionChecker(params, helpers, tensor, standard, numba)
    for position, statement in enumerate(body):
        if standard and _binds_namespace(statement):
            if position != 0:
                raise refuse(statement, f"{NAMESPACE} is bound once, first")
            checker.visit(statement.value)  # type: ignore[attr-defined]
            continue
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
            and INTERNAL.match(t.id)
            and t.id not in helpers
            and t.id not in MODULE_NAMES
            and t.id not in params
            for t in statement.targets
        ):
            pass  # ``del _t3, _t7``: temporaries freed after their last read
        elif tensor and isinstance(statement, ast.Expr) and _adds_at(statement, checker):
            checker.visit(statement.value.args[2])  # type: ignore[attr-defined]
        elif tensor and isinstance(statement, ast.Expr) and _puts_along(statement, checker):
            checker.visit(statement.value.args[1])  # type: ignore[attr-defined]
            checker.visit(statement.value.args[2])  # type: ignore[attr-defined]
        elif isinstance(statement, ast.If) and _converts(statement) and tensor:
            _check_dtype_test(statement, checker)
        elif isinstance(statement, ast.If) and not tensor and not internal_params:
            _check_point_test(statement, params)
        elif isinstance(statement, ast.If) and tensor:
            _check_shape_test(statement, checker)
        else:
            raise refuse(statement, f"unexpected {type(statement).__name__} statement")


def _no_outputs(args: ast.arguments) -> bool:
    """``..., _out=(None, None)``: the one default of ``_formulas``, on its last parameter."""
    default = args.defaults[0] if len(args.defaults) == 1 else None
    return (
        isinstance(default, ast.Tuple)
        and bool(default.elts)
        and all(isinstance(e, ast.Constant) and e.value is None for e in default.elts)
        and args.args[-1].arg == BLOCK_SLICES
    )


def _threads_keyword(args: ast.arguments, internal_params: bool) -> bool:
    """``*, threads=None`` (or ``_threads``): the only keyword-only parameter, of a public
    elementwise function."""
    return (
        not internal_params
        and len(args.kwonlyargs) == 1
        and args.kwonlyargs[0].arg in THREADS_KEYWORDS
        and args.kwonlyargs[0].annotation is None
        and len(args.kw_defaults) == 1
        and isinstance(args.kw_defaults[0], ast.Constant)
        and args.kw_defaults[0].value is None
        and args.kwonlyargs[0].arg not in {a.arg for a in args.args}
    )


def _binds_namespace(statement: ast.stmt) -> bool:
    """Whether ``statement`` assigns ``_xp``; only ``_xp = _xp_namespace(...)`` may, and a
    module of the Array API backend binds it before anything else."""
    names = [n for n in ast.walk(statement) if isinstance(n, ast.Name) and n.id == NAMESPACE
             and isinstance(n.ctx, ast.Store)]
    if not names:
        return False
    value = statement.value if isinstance(statement, ast.Assign) else None
    if not (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == NAMESPACE_HELPER
        and not value.keywords
    ):
        raise refuse(statement, f"{NAMESPACE} may only be bound by {NAMESPACE_HELPER}(...)")
    return True


def _adds_at(statement: ast.Expr, checker: ExpressionChecker) -> bool:
    """``_np.add.at(_t0, [0, 2, 2], <expression>)`` (or ``_np.add.at(_t0, _c1, ...)``, the
    positions a bound constant): rows added into a generated array (the
    adjoint of a gather); the only expression statement of a tensor function besides the
    shape test's call. The third argument is checked by the caller like any expression."""
    call = statement.value
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "at"
        and isinstance(call.func.value, ast.Attribute)
        and call.func.value.attr == "add"
        and isinstance(call.func.value.value, ast.Name)
        and call.func.value.value.id == "_np"
        and len(call.args) == 3
        and not call.keywords
        and checker.writable(call.args[0])
        and (int_list(call.args[1]) or _bound_constant(call.args[1], checker))
    )


def _puts_along(statement: ast.Expr, checker: ExpressionChecker) -> bool:
    """``_np.put_along_axis(_t0, <permutation>, <expression>, axis=0)``: a generated array
    filled with the adjoint of a sort at the positions of a permutation. The second and third
    arguments are checked by the caller like any expression."""
    call = statement.value
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "put_along_axis"
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == "_np"
        and len(call.args) == 3
        and checker.writable(call.args[0])
        and len(call.keywords) == 1
        and call.keywords[0].arg == "axis"
        and literal_int(call.keywords[0].value)
    )


def _bound_constant(node: ast.AST, checker: ExpressionChecker) -> bool:
    """A bound constant parameter (``_c1``: the positions of a large index)."""
    return isinstance(node, ast.Name) and bool(CONSTANT.match(node.id)) \
        and node.id in checker.params


def _check_shape_test(statement: ast.If, checker: ExpressionChecker) -> None:
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
            raise refuse(statement, "unexpected test in if statement")
        for operand in (comparison.left, *comparison.comparators):
            if not _shape_operand(operand, checker):
                raise refuse(statement, "unexpected operand in the shape test")
    body = statement.body
    call = body[0].value if len(body) == 1 and isinstance(body[0], ast.Expr) else None
    if statement.orelse or not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == TENSOR_HELPER
    ):
        raise refuse(statement, f"an if statement may only call {TENSOR_HELPER}")
    checker.visit(call)


def _check_point_test(statement: ast.If, params: set[str]) -> None:
    """The packed point path of an elementwise function, and nothing else::

        if (x.__class__ is float or x.__class__ is _np.float64) and (y.__class__ is float
                or y.__class__ is _np.float64):
            return _at_packed(_packed, (x, y), 4, 2)

    The test is one class test or an ``and`` of them; a class test is one ``is`` comparison of
    ``<param>.__class__`` with the name ``float`` or ``_np.float64``, or an ``or`` of such
    comparisons on one parameter. The body returns one call of ``_at_packed`` on ``_packed``
    (:func:`symdiff.verify.packed.check_packed_call`); no ``else``. A Hessian-vector
    product's test also has the direction's (:func:`_direction_test`).
    """
    test = statement.test
    tests = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) \
        else [test]
    for clause in tests:
        if not (_class_test(clause, params) or (VECTOR in params and _direction_test(clause))):
            raise refuse(statement, "unexpected test in the point path")
    body = statement.body
    value = body[0].value if len(body) == 1 and isinstance(body[0], ast.Return) else None
    if statement.orelse or not check_packed_call(value, params - THREADS_KEYWORDS):
        raise refuse(statement, "the point path may only return _at_packed(...)")


def _class_test(clause: ast.AST, params: set[str]) -> bool:
    """``p.__class__ is float``, ``p.__class__ is _np.float64``, or an ``or`` of those on one
    parameter ``p``."""
    comparisons = clause.values if isinstance(clause, ast.BoolOp) and isinstance(
        clause.op, ast.Or) else [clause]
    names = set()
    for comparison in comparisons:
        if not (
            isinstance(comparison, ast.Compare)
            and len(comparison.ops) == 1
            and isinstance(comparison.ops[0], ast.Is)
            and isinstance(comparison.left, ast.Attribute)
            and comparison.left.attr == "__class__"
            and isinstance(comparison.left.value, ast.Name)
            and comparison.left.value.id in params
            and _float_class(comparison.comparators[0])
        ):
            return False
        names.add(comparison.left.value.id)
    return len(names) == 1


def _direction_test(clause: ast.AST) -> bool:
    """``_v.__class__ is _np.ndarray``, ``_v.shape == (<int>,)`` or ``_v.dtype == _np.float64``:
    the direction of a Hessian-vector product at a point, a float64 vector."""
    if not (
        isinstance(clause, ast.Compare)
        and len(clause.ops) == 1
        and isinstance(clause.left, ast.Attribute)
        and isinstance(clause.left.value, ast.Name)
        and clause.left.value.id == VECTOR
    ):
        return False
    attr, op, right = clause.left.attr, clause.ops[0], clause.comparators[0]
    numpy_name = (isinstance(right, ast.Attribute) and isinstance(right.value, ast.Name)
                  and right.value.id == "_np")
    if attr == "__class__":
        return isinstance(op, ast.Is) and numpy_name and right.attr == "ndarray"
    if attr == "dtype":
        return isinstance(op, ast.Eq) and numpy_name and right.attr == "float64"
    return (attr == "shape" and isinstance(op, ast.Eq) and isinstance(right, ast.Tuple)
            and len(right.elts) == 1 and literal_int(right.elts[0]))


def _float_class(node: ast.AST) -> bool:
    """The name ``float`` or ``_np.float64``."""
    if isinstance(node, ast.Name):
        return node.id == "float"
    return (isinstance(node, ast.Attribute) and node.attr == "float64"
            and isinstance(node.value, ast.Name) and node.value.id == "_np")


def _converts(statement: ast.If) -> bool:
    """Whether ``statement`` has the body of the dtype test (an assignment, not a call)."""
    return len(statement.body) == 1 and isinstance(statement.body[0], ast.Assign)


def _check_dtype_test(statement: ast.If, checker: ExpressionChecker) -> None:
    """The argument prelude of a tensor function, and nothing else::

        if x.__class__ is not _np.ndarray or x.dtype is not _FLOAT64 or ...:
            x, y = _float_arrays(('x', 'y'), x, y)

    The test is an ``or`` of ``is not`` comparisons, each of ``<param>.__class__`` with
    ``_np.ndarray`` or of ``<param>.dtype`` with ``_FLOAT64``; the body assigns the parameters
    (a tuple of names) from one call of the helper on the parameters' names (a tuple of
    strings) and the parameters; no ``else``.
    """
    helper = "_float_arrays"
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
            raise refuse(statement, "unexpected test in the argument prelude")
    assign = statement.body[0]
    target, value = assign.targets, assign.value
    if statement.orelse or not (
        len(target) == 1
        and isinstance(target[0], ast.Tuple)
        and all(isinstance(t, ast.Name) and t.id in checker.params for t in target[0].elts)
        and isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == helper
        and helper in checker.helpers
        and not value.keywords
        and value.args
        and names_tuple(value.args[0], checker.params)
        and all(isinstance(a, ast.Name) and a.id in checker.params for a in value.args[1:])
    ):
        raise refuse(statement, f"an argument prelude may only call {helper}")


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


def _shape_operand(node: ast.AST, checker: ExpressionChecker) -> bool:
    """``X.ndim``, ``X.shape``, ``X.shape[1]``, ``X.shape[1:]``, ``_n_dim``, ``3``, ``(3, 2)``."""
    if isinstance(node, ast.Subscript):
        item = node.slice
        plain = literal_int(item) or (
            isinstance(item, ast.Slice)
            and all(p is None or literal_int(p) for p in (item.lower, item.upper, item.step))
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
        return all(literal_int(item) for item in node.elts)
    if isinstance(node, ast.Name):
        return checker.is_internal(node) and node.id not in MODULE_NAMES
    return literal_int(node)


def check_fused(func: ast.FunctionDef, helpers: set[str]) -> None:
    """Refuse a fused statement's ufunc (``_fused0``) unless it is ``@_numba.vectorize(...)``
    over plain parameters, its body a docstring and the return of one formula of numbers."""
    check_decorator(func, FUSED_DECORATOR)
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], ast.Return):
        raise refuse(func, f"{func.name} returns one formula")
    plain = ast.FunctionDef(**{**func.__dict__, "decorator_list": []})
    check_function(plain, helpers, internal_params=True, numba=True)
