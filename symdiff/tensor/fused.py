"""The elementwise statements of a tensor function as Numba ufuncs (``backend="numba"``).

A tensor module's elementwise statement is one NumPy expression (``_t1 = -y/(_np.exp(...) +
1.0)``): each operation a pass over memory and a new array. With ``backend="numba"`` a
statement of two operations or more is computed by a ufunc of its own, which Numba compiles
from the same formula at one element (printed by
:class:`~symdiff.codegen.loops.NumbaPrinter`: the runtime's scalar ``_exp``, ``_select`` for a
piecewise value)::

    @_numba.vectorize(cache=True)
    def _fused0(_t0, y):
        \"\"\"The formula of an elementwise statement, at one element.\"\"\"
        return -y/(_exp(_select(88.0 < _t0*y, 88.0, _t0*y)) + 1.0)

and the statement calls it, ``_t1 = _fused0(_t0, y).astype(_dtype, copy=False)``: NumPy's
ufunc machinery broadcasts the operands as the expression did (a ``(16, 1, 1)`` scale against
a ``(n, 16, 8, 8)`` batch), the formula runs in one pass, and the result keeps the arguments'
dtype (float32 stays float32; the formula computes in float64). Matrix products, reductions
and the other statements stay NumPy (BLAS) calls. A statement whose formula has no Numba form
(a function of the runtime with none) stays a NumPy expression. The ufuncs compile when the
function is built (for float64) and are cached on disk beside the module's file.
"""

from __future__ import annotations

import sympy as sp

from ..codegen.loops import NumbaPrinter
from ..errors import UnsupportedError

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
        self.math = False

    def code(self, value: sp.Expr, numpy_code: str) -> str:
        """The code of an elementwise statement's ``value`` (printed ``numpy_code`` by the
        NumPy printer): a call of a new ufunc, or ``numpy_code`` itself (a single operation,
        a number, or a formula with no Numba form)."""
        if sp.count_ops(value) < LEAST_OPERATIONS or not value.free_symbols:
            return numpy_code
        printer = NumbaPrinter()
        try:
            body = printer.doprint(value)
        except UnsupportedError:
            return numpy_code
        operands = sorted((s.name for s in value.free_symbols), key=_order)
        # an operand that is a view (``x[:, None]``, ``_t1.T``) is a parameter ``_a0``, ...
        views = iter(f"_a{k}" for k in range(len(operands)))
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
        self.math = self.math or printer.math
        return f"{name}({', '.join(operands)}).astype(_dtype, copy=False)"


def _order(name: str) -> tuple[int, str]:
    """Parameters first, then temporaries and sizes, then views (``x``, ``_t0``, ``_n_dim``,
    ``x[:, None]``)."""
    return (2 if not name.isidentifier() else name.startswith("_"), name)
