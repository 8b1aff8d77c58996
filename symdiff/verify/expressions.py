"""The check of one expression of a generated function: every node, name, attribute and call
must be on the allow-lists (:mod:`symdiff.verify.allowed`)."""

from __future__ import annotations

import ast

from .allowed import (
    ALLOWED_OPERATORS,
    BLOCK_SLICES,
    CONSTANT,
    EINSUM,
    ELEMENTWISE_HELPERS,
    ELEMENTWISE_KEYWORDS,
    EXPRESSION_NODES,
    FORMULAS,
    FUSED,
    INTERNAL,
    KEYWORDS,
    MODULE_NAMES,
    NAMESPACE,
    NAMING_HELPERS,
    NUMBA_MATH,
    NUMPY_NAMES,
    OPERATOR_UFUNCS,
    PARAM,
    PARAM_METHODS,
    REDUCING_UFUNCS,
    STANDARD_NAMES,
    STANDARD_NAMING_HELPERS,
    TENSOR_ATTRIBUTES,
    TENSOR_PARAM_ATTRIBUTES,
    VECTOR,
)
from .errors import refuse
from .literals import all_axes, names_tuple, plain_index
from .sizes import (
    ALLOCATING,
    ALLOCATING_HELPERS,
    check_allocation,
    check_binop,
    check_size,
    constant_elements,
)


def _dotted_path(node: ast.Attribute, namespace: str) -> str | None:
    """``linalg.det`` for ``_np.linalg.det`` (a chain of attributes of ``namespace``: ``_np``,
    or ``_xp`` in a module of the Array API backend), else None."""
    parts = [node.attr]
    owner = node.value
    while isinstance(owner, ast.Attribute):
        parts.append(owner.attr)
        owner = owner.value
    if not (isinstance(owner, ast.Name) and owner.id == namespace) or len(parts) < 2:
        return None
    return ".".join(reversed(parts))


class ExpressionChecker:
    """Walks one expression and refuses any node, name, attribute or call not on the lists.

    The walk keeps its own stack instead of recursing, so that a long generated sum (a chain of
    a thousand ``+``) is checked like a short one. Each ``visit_*`` method checks one node and
    returns the children still to be checked.
    """

    def __init__(self, params: set[str], helpers: set[str], tensor: bool = False,
                 standard: bool = False, numba: bool = False):
        self.params = params
        #: A Numba module's formulas: numbers, so ``&``/``|``/``not`` of booleans and
        #: ``_math.<NUMBA_MATH>`` too (a choice is the runtime's ``_select``).
        self.numba = numba
        self.helpers = helpers
        self.tensor = tensor
        #: An Array API module: ``_xp.<standard name>`` instead of ``_np.<name>``, no
        #: ``out=``, no ufunc ``reduce``, no ``astype`` method.
        self.standard = standard
        self.owner = NAMESPACE if standard else "_np"
        self.names = STANDARD_NAMES if standard else NUMPY_NAMES

    def target(self, node: ast.AST) -> None:
        if isinstance(node, ast.Name) and node.id == BLOCK_SLICES:
            raise refuse(node, f"{BLOCK_SLICES} is only written through")
        if isinstance(node, ast.Name) and (node.id in self.params or INTERNAL.match(node.id)):
            return
        if isinstance(node, ast.Subscript) and self._is_out_index(node):
            return
        if self.standard and isinstance(node, ast.Tuple) and node.elts and all(
            isinstance(e, ast.Name) and e.id in self.params for e in node.elts
        ):
            return  # ``x, y = _xp_float_arrays(_xp, ('x', 'y'), x, y)``
        if not self.tensor:
            raise refuse(node, "unexpected assignment target")
        if isinstance(node, ast.Subscript) and self.is_internal(node.value) and plain_index(
            node.slice
        ):
            return  # a slice of a generated array, e.g. ``_t3[1:3] = _t2`` (tensor scatter)
        if isinstance(node, ast.Tuple) and node.elts and all(
            self.is_internal(e) for e in node.elts
        ):
            return  # ``_n_dim, _d_dim = X.shape`` (tensor dimensions)

        raise refuse(node, "unexpected assignment target")

    def is_internal(self, node: ast.AST) -> bool:
        """A generated name (``_t0``, ``_x_bar``) that is not a helper's."""
        return (
            isinstance(node, ast.Name)
            and bool(INTERNAL.match(node.id))
            and node.id not in self.helpers
        )

    def writable(self, node: ast.AST) -> bool:
        """A generated array that code may write into: an internal name, not a helper, not a
        module, not a parameter (the caller's arrays are never written)."""
        return (
            self.is_internal(node)
            and node.id not in MODULE_NAMES  # type: ignore[attr-defined]
            and node.id not in self.params  # type: ignore[attr-defined]
        )

    def _is_out_index(self, node: ast.Subscript, owners: tuple[str, ...] = ("_out",)) -> bool:
        """``_out[i, j]`` (or, to read, ``_v[i]``) with constant integer indices, perhaps ending
        in ``...`` (``_v[0, ...]``: the Array API standard has no flat indexing of an axis)."""
        index = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        last = index[-1]
        if len(index) > 1 and isinstance(last, ast.Constant) and last.value is Ellipsis:
            index = index[:-1]
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
        if self.numba and isinstance(node, ast.Not):  # (``not`` of a boolean)
            return list(ast.iter_child_nodes(node))
        if not isinstance(node, EXPRESSION_NODES):
            raise refuse(node, f"unexpected {type(node).__name__}")
        if isinstance(node, ast.operator | ast.unaryop | ast.cmpop) and not (
            isinstance(node, ALLOWED_OPERATORS) or (self.tensor and isinstance(node, ast.MatMult))
            or (self.numba and isinstance(node, ast.BitAnd | ast.BitOr))  # (of booleans)
        ):
            raise refuse(node, f"unexpected operator {type(node).__name__}")
        return list(ast.iter_child_nodes(node))

    def visit_Name(self, node: ast.Name) -> list[ast.AST]:
        name = node.id
        if name in self.params or (
            INTERNAL.match(name) and name not in self.helpers and name not in MODULE_NAMES
        ):
            return []  # (``_np`` itself is only ever the owner of an allowed attribute)
        if self.standard and name == NAMESPACE:
            return []  # the namespace, passed to the ``_xp_`` helpers
        raise refuse(node, f"unexpected name {name!r}")

    def visit_BinOp(self, node: ast.BinOp) -> list[ast.AST]:
        check_binop(node)
        return self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> list[ast.AST]:
        if self.tensor and type(node.value) is str and (
            PARAM.match(node.value) or node.value == VECTOR or CONSTANT.match(node.value)
        ):
            return []  # a parameter or dimension name, for the messages of ``_check_shapes``
        if self.tensor and type(node.value) is str and EINSUM.match(node.value):
            return []  # the subscripts of ``_np.einsum``
        if type(node.value) not in (int, float, bool):
            raise refuse(node, f"unexpected constant {node.value!r}")
        return []

    def visit_Attribute(self, node: ast.Attribute, callee: bool = False) -> list[ast.AST]:
        owner = node.value
        if isinstance(owner, ast.Name) and owner.id == self.owner and node.attr in self.names:
            return []
        if self.numba and isinstance(owner, ast.Name) and owner.id == "_math" \
                and node.attr in NUMBA_MATH:
            return []
        if _dotted_path(node, self.owner) in self.names:
            return []  # ``_np.linalg.det``, ``_np.add.at``, ``_np.lib.stride_tricks.<name>``
        if (callee and node.attr == "astype" and isinstance(owner, ast.Call)
                and isinstance(owner.func, ast.Name) and FUSED.match(owner.func.id)
                and owner.func.id in self.helpers):
            return [owner]  # ``_fused0(y, _t0).astype(_dtype, copy=False)``: the ufunc's call
        methods = PARAM_METHODS - {"astype"} if self.standard else PARAM_METHODS
        if isinstance(owner, ast.Name) and node.attr in methods and (
            owner.id in self.params or INTERNAL.match(owner.id)
        ):
            return []
        if self.tensor and node.attr in TENSOR_ATTRIBUTES and (
            (isinstance(owner, ast.Name) and owner.id in self.params) or self.is_internal(owner)
        ):
            return []
        if (
            callee
            and self.tensor
            and not self.standard
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
        raise refuse(node, f"unexpected attribute {node.attr!r}")

    def block_slice(self, node: ast.AST) -> bool:
        """``_out[3]``: where output 3 goes, in ``_formulas`` (whose parameter it is)."""
        return (
            BLOCK_SLICES in self.params
            and isinstance(node, ast.Subscript)
            and self._is_out_index(node, (BLOCK_SLICES,))
            and not isinstance(node.slice, ast.Tuple)
        )

    def _output_slice(self, node: ast.AST) -> bool:
        """``_out[0]`` or ``_out[1, 0]`` in ``_formulas``: where an output's last operation
        may write (``out=``)."""
        return self.block_slice(node) or (
            BLOCK_SLICES in self.params
            and isinstance(node, ast.Subscript)
            and self._is_out_index(node)
        )

    def _into_call(self, node: ast.Call) -> bool:
        """``_np.<operator's ufunc>(..., out=<an output's slice>)``: the only use of those
        ufuncs (:data:`~symdiff.verify.allowed.OPERATOR_UFUNCS`)."""
        func = node.func
        return (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "_np"
            and func.attr in OPERATOR_UFUNCS
            and len(node.keywords) == 1
            and node.keywords[0].arg == "out"
            and self._output_slice(node.keywords[0].value)
        )

    def visit_Subscript(self, node: ast.Subscript) -> list[ast.AST]:
        if self._is_out_index(node, ("_out", VECTOR)) or self.block_slice(node):
            return []
        owner = node.value
        named = isinstance(owner, ast.Name) and (
            owner.id in self.params or self.is_internal(owner)
        )
        if not (self.tensor and named and plain_index(node.slice)):  # ``x[1:3]``, ``_t[:, None]``
            raise refuse(node, "unexpected subscript")
        return []

    def visit_Call(self, node: ast.Call) -> list[ast.AST]:
        func = node.func
        args = list(node.args)
        keywords = KEYWORDS
        if isinstance(func, ast.Name) and func.id in self.helpers:
            if func.id in ELEMENTWISE_HELPERS:  # ``(_formulas, (x, y), threads=threads)``
                if not (len(args) == 2 and isinstance(args[0], ast.Name)
                        and args[0].id == FORMULAS and isinstance(args[1], ast.Tuple)
                        and all(isinstance(a, ast.Name) and a.id in self.params
                                for a in args[1].elts)):
                    raise refuse(node, f"{func.id} runs {FORMULAS} on parameters")
                keywords = ELEMENTWISE_KEYWORDS
                for item in node.keywords:  # ``leading=(n, n)``: the shape of an array result
                    if item.arg == "leading":
                        check_size(item, constant_elements(item.value))
            if func.id in ALLOCATING_HELPERS:
                check_allocation(node, func.id)
            if func.id in NAMING_HELPERS and args and names_tuple(args[0], self.params):
                args = args[1:]  # the names of parameters, for the helper's messages
            elif (
                func.id in STANDARD_NAMING_HELPERS
                and len(args) > 1
                and names_tuple(args[1], self.params)
            ):
                args = [args[0], *args[2:]]  # ``_xp_float_arrays(_xp, ('x', 'y'), x, y)``
        elif isinstance(func, ast.Attribute) and not self._into_call(node):
            args += self.visit_Attribute(func, callee=True)  # (the ufunc call it converts)
            owner = func.value
            if (isinstance(owner, ast.Name) and owner.id in ("_np", "_xp")
                    and func.attr in ALLOCATING):
                check_allocation(node, func.attr)
        elif not isinstance(func, ast.Attribute):
            raise refuse(node, "unexpected call")
        for item in node.keywords:
            if item.arg == "out" and self.tensor and not self.standard and self.writable(
                item.value
            ):
                continue  # ``_np.exp(_t1, out=_t1)``: in place, into a generated array
            if item.arg == "out" and isinstance(func, ast.Attribute) and self._output_slice(
                item.value
            ):
                continue  # ``_np.multiply(_t0, x, out=_out[0])``: where an output goes
            if item.arg not in keywords:
                raise refuse(item, f"unexpected keyword {item.arg!r}")
        return [*args, *(item.value for item in node.keywords if not all_axes(item))]
