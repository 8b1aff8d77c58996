"""The elementwise statements of a tensor function as Numba ufuncs (``backend="numba"``).

A tensor module's elementwise statement is one NumPy expression (``_t3 = (_t1/_t2 -
Y)/_n_dim``): each operation a pass over memory and a new array. With ``backend="numba"`` a
statement of two operations or more in arithmetic (comparisons, ``where``, ``maximum``,
``sqrt``: what compiles to instructions) is computed by a ufunc of its own, which Numba
compiles from the same formula at one element (printed by
:class:`~symdiff.codegen.loops.NumbaPrinter`: ``_select`` for a piecewise value)::

    @_numba.vectorize(cache=True)
    def _fused0(Y, _n_dim, _t1, _t2):
        \"\"\"The formula of an elementwise statement, at one element.\"\"\"
        return (_t1/_t2 - Y)/_n_dim

and the statement calls it, ``_t3 = _fused0(Y, _n_dim, _t1, _t2).astype(_dtype,
copy=False)``: NumPy's
ufunc machinery broadcasts the operands as the expression did (a ``(16, 1, 1)`` scale against
a ``(n, 16, 8, 8)`` batch), the formula runs in one pass, and the result keeps the arguments'
dtype (float32 stays float32; the formula computes in float64). Matrix products, reductions
and the other statements stay NumPy (BLAS) calls, and so does an elementwise statement that
calls a function (``exp``, ``tanh``: NumPy's SIMD loops over an array are quicker than the
same function in a ufunc's loop, which Numba compiles one element at a time). The ufuncs
compile when the function is built (for float64) and are cached on disk beside the module's
file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import sympy as sp

from ..codegen import naming
from ..codegen.loops import NumbaPrinter
from ..codegen.operations import INSTRUCTIONS, instructions_only, operation
from ..simplify import count_ops

#: The decorator of a fused statement's ufunc (the verifier allows exactly this).
VECTORIZE = "@_numba.vectorize(cache=True)"
#: The prefix of their names, and their docstring.
PREFIX = "_fused"
DOC = "The formula of an elementwise statement, at one element."
#: Fewer operations than this stay a NumPy expression (one ufunc call either way).
LEAST_OPERATIONS = 2


class Fuser:
    """Makes the ufuncs of a module's elementwise statements: :meth:`code` is the call that
    replaces a statement's expression; :attr:`functions` the ufuncs' text, :attr:`helpers`
    the runtime's scalar functions they call."""

    def __init__(self) -> None:
        self.functions: list[str] = []
        self.helpers: set[str] = set()

    def code(self, value: sp.Expr, numpy_code: Callable[[sp.Expr], str]) -> str:
        """The code of an elementwise statement's ``value``: a call of a new ufunc, or what
        the NumPy printer ``numpy_code`` prints for it (a single operation, a number, or a
        formula of more than instructions: :func:`~symdiff.codegen.operations.operation`)."""
        if count_ops(value) < LEAST_OPERATIONS or not value.free_symbols:
            return numpy_code(value)
        if not instructions_only(value):
            return numpy_code(value)  # NumPy's own (SIMD) exp, tanh, ... in a pass of their own
        printer = NumbaPrinter()
        body = printer.doprint(value)
        operands = sorted((s.name for s in value.free_symbols), key=_order)
        # an operand that is a view (``x[:, None]``, ``_t1.T``) is a parameter ``_a0``, ...
        views = iter(naming.operand(k) for k in range(len(operands)))
        params = [o if o.isidentifier() else next(views) for o in operands]
        if params != operands:
            value = value.xreplace({sp.Symbol(o): sp.Symbol(p) for o, p in
                                    zip(operands, params, strict=True) if o != p})
            body = printer.doprint(value)
        name = f"{PREFIX}{len(self.functions)}"
        self.functions.append("\n".join([
            VECTORIZE, f"def {name}({', '.join(params)}):", f'    """{DOC}"""',
            f"    return {body}"]))
        self.helpers |= printer.helpers
        call = f"{name}({', '.join(operands)})"
        if isinstance(value, sp.logic.boolalg.Boolean):  # a condition: booleans, as NumPy's
            return call
        return f"{call}.astype(_dtype, copy=False)"


    def split(self, value: sp.Expr, numpy_code: Callable[[sp.Expr], str],
              fresh: Iterator[str]) -> tuple[list[tuple[str, str]], sp.Expr]:
        """``value`` with each function it applies (``exp``, ``tanh``: what the NumPy module
        computes with a SIMD loop, and a ufunc would compute one element at a time) computed
        first, into a temporary of its own named from ``fresh``: its argument's arithmetic
        by :meth:`code`, the function by NumPy (``numpy_code``). Returns those statements and
        ``value`` reading the temporaries, arithmetic only."""
        lines: list[tuple[str, str]] = []

        def operand(expr: sp.Expr) -> sp.Expr:  # an argument of a function: an atom
            expr = walk(expr)
            if expr.is_Atom:
                return expr
            name = sp.Symbol(next(fresh))
            lines.append((name.name, self.code(expr, numpy_code)))
            return name

        def walk(expr: sp.Expr) -> sp.Expr:
            if expr.is_Atom or not isinstance(expr, sp.Basic) or not expr.args:
                return expr
            if _calls(expr):
                node = expr.func(*(operand(a) for a in expr.args))
                name = sp.Symbol(next(fresh))
                lines.append((name.name, numpy_code(node)))
                return name
            args = [walk(a) if isinstance(a, sp.Expr) else _walk_pair(a, walk)
                    for a in expr.args]
            if all(new is old for new, old in zip(args, expr.args, strict=True)):
                return expr  # nothing computed apart below: not built again
            return expr.func(*args, evaluate=False) if isinstance(expr, sp.Add | sp.Mul) \
                else expr.func(*args)

        return lines, walk(value)


def _walk_pair(pair: sp.Basic, walk: Callable[[sp.Expr], sp.Expr]) -> sp.Basic:
    """A piecewise branch ``(value, condition)`` with both walked."""
    return pair.func(*(walk(a) for a in pair.args))


def _calls(expr: sp.Expr) -> bool:
    """Whether ``expr``'s own operation (not its arguments') is more than instructions in
    compiled code: a call of the C library (``sin``, a fractional power) or of one of the
    runtime's scalar functions (``exp``: inside a ufunc's loop, which Numba does not
    vectorise, it costs 10 to 20 times NumPy's SIMD loop), or a function with no Numba
    formula."""
    return operation(expr) != INSTRUCTIONS


def _order(name: str) -> tuple[int, str]:
    """Parameters first, then temporaries and sizes, then views (``x``, ``_t0``, ``_n_dim``,
    ``x[:, None]``)."""
    return (2 if not name.isidentifier() else name.startswith("_"), name)
