"""Tensor graph -> the NumPy statements of a generated function (assembled by ``module.py``).

Which nodes get a line of their own:

* variables and bound constants are the function's parameters; constants are printed where
  they are used;
* views (``.T``, ``x[:, None]``, slices, reshapes, ``broadcast_to``) are printed inline;
* an elementwise node used only by another elementwise node is composed into it, so a chain
  of elementwise operations is one NumPy expression (printed by
  :class:`~symdiff.codegen.printer.ArrayCodePrinter`, in stable forms such as ``logaddexp``); a
  function of such an expression is applied in place (``_t1 = x - _t0``, then
  ``_t1 = _np.exp(_t1, out=_t1)``);
* everything else (matmul, reductions as ``_np.add.reduce(...)``, softmax, ...) is a temporary
  ``_t0, _t1, ...``, written by the statement of its op (:data:`_STATEMENTS`, a table by op);
  common subexpressions of the elementwise lines are shared through SymPy's ``cse``, after
  common factors of sums are taken out, by the last pass (:mod:`symdiff.tensor.finish`).

Gradients are named ``_<name>_bar``, the value ``_value``. Temporaries are numbered in order of
definition, so the same request always gives byte-identical source.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import sympy as sp

from ..codegen import naming
from ..codegen.printer import ArrayCodePrinter
from ..codegen.standard import printer_for
from ..simplify import stable_forms
from . import families
from .codetext import (
    dim_code,
    dim_locals,
    index_text,
    inline_code,
    is_dim,
    reduce_code,
    shape_code,
)
from .finish import finish, tensor_forms
from .fused import Fuser
from .ir import VIEWS, Node, arg_symbol, format_axes, topological
from .shapes import Shape, same_shape
from .values import composes


@dataclass(frozen=True)
class Program:
    """Everything needed to emit one tensor function."""

    name: str
    title: str
    expression: str
    params: tuple[str, ...]
    shapes: dict[str, Shape]
    outputs: Sequence[tuple[str, Node]]
    result: str
    doc: Sequence[str] = ()
    mode: str = "reverse"
    key: str = ""
    needs: dict[sp.Symbol, int] = field(default_factory=dict)
    cse: bool = True
    #: The parameters that are index bound constants (int64 positions): not converted to floats.
    indices: tuple[str, ...] = ()
    #: ``"numpy"``, ``"array_api"`` (:mod:`symdiff.codegen.standard`) or ``"numba"`` (``.fused``)
    backend: str = "numpy"


class _Emitter:
    """Decides which nodes become lines and prints them."""

    def __init__(self, program: Program):
        self.program = program
        self.printer: ArrayCodePrinter = printer_for(program.backend, array=True)  # type: ignore[assignment]
        self.fuser = Fuser() if program.backend == "numba" else None
        self.roots = [node for _, node in program.outputs]
        self.order = topological(self.roots)
        self.uses: dict[int, int] = {}
        self.users: dict[int, list[Node]] = {}
        for node in self.order:
            for arg in node.args:
                self.uses[id(arg)] = self.uses.get(id(arg), 0) + 1
                self.users.setdefault(id(arg), []).append(node)
        self.outputs: dict[int, list[str]] = {}
        for name, node in program.outputs:
            self.uses[id(node)] = self.uses.get(id(node), 0) + 1
            self.outputs.setdefault(id(node), []).append(name)
        self.code: dict[int, str] = {}
        self.composed: dict[int, sp.Expr] = {}
        self.lines: list[tuple[str, str | sp.Expr]] = []
        self.counter = 0
        self.shapes: dict[str, Shape] = {}  # code of a non-composed node -> its shape
        # lines printed as ``target + value`` (scatters accumulated into a buffer)
        self.accumulate: set[int] = set()
        self.nodes = {(n.op, tuple(id(a) for a in n.args), n.attrs): n for n in self.order}
        self.deferred: dict[str, Node] = {}  # placeholder -> scatter not yet placed
        self.gathered = {
            id(n) for n in self.order
            if n.op == "scatter" and id(n) not in self.outputs and self.uses[id(n)] == 1
            and self.users[id(n)][0].op == "map"
        }

    # -- decisions ---------------------------------------------------------------------------------
    def _inline(self, node: Node) -> bool:
        """Whether ``node`` is printed where it is used (:data:`_INLINE`), not as a line."""
        rule = _INLINE.get(node.op)
        return rule is not None and rule(self, node)

    def _inline_view(self, node: Node) -> bool:
        """A view is inline unless another view uses it (views of views get a name), or it is a
        reshape used more than once (a reshape of a transposed array copies: once, then)."""
        users = self.users.get(id(node), [])
        if node.op == "reshape" and len(users) > 1:
            return False
        return not any(u.op in VIEWS for u in users)

    def _inline_map(self, node: Node) -> bool:
        """An elementwise node is composed into its one elementwise (or gathering) user, unless
        that user reads it more than once and it is not small (:func:`.values.composes`): a
        chain of steps that each read the last twice (``x - h*(x**2 - a)``) would compose into
        one expression exponentially large in the number of steps."""
        users = self.users.get(id(node), [])
        return (
            id(node) not in self.outputs and len(users) == 1
            and (users[0].op == "map" or id(users[0]) in self.gathered)
            and composes(node, users[0])
        )

    def _target(self, node: Node) -> str:
        names = self.outputs.get(id(node), [])
        if len(names) == 1 and self.uses[id(node)] == 1:
            return names[0]
        name = naming.slot(self.counter)
        self.counter += 1
        return name

    # -- printing ----------------------------------------------------------------------------------
    def run(self) -> list[tuple[str, str]]:
        """The printed statements: every node visited, then the last pass (:func:`finish`)."""
        for node in self.order:
            self._visit(node)
        for name, node in self.program.outputs:
            if self.code[id(node)] != name:
                self.lines.append((name, self._fresh(node)))
        return finish(self.lines, accumulate=self.accumulate, shapes=self.shapes,
                      counter=self.counter, cse=self.program.cse, printer=self.printer,
                      fuser=self.fuser)

    def _visit(self, node: Node) -> None:
        if id(node) in self.code or id(node) in self.composed:
            return  # emitted ahead (the parts of a logsumexp)
        if self._inline(node):
            if node.op == "map":
                self.composed[id(node)] = self._compose(node)
            else:
                self.code[id(node)] = self._inline_code(node)
                self.shapes[self.code[id(node)]] = node.shape
            return
        if id(node) in self.gathered:  # placed by the sum that uses it (``_accumulate``)
            name = naming.deferred(len(self.deferred))
            self.code[id(node)] = name
            self.deferred[name] = node
            return
        target = self._target(node)
        self.code[id(node)] = target
        self.shapes[target] = node.shape
        self._statement(node, target)

    def _fresh(self, node: Node) -> str:
        """A new array for an output that is a parameter, a view or shared."""
        if node.op == "fill":
            return self.code[id(node)]
        return f"_np.copy({self.code[id(node)]})"

    def _compose(self, node: Node) -> sp.Expr:
        (expr,) = node.attrs
        values = {arg_symbol(i): self._operand(arg) for i, arg in enumerate(node.args)}
        expr = expr.xreplace(values)
        return expr.xreplace(dim_locals(expr))

    def _operand(self, node: Node) -> sp.Expr:
        """A node as a term of an elementwise expression."""
        inner = self.composed.get(id(node))
        if inner is not None:
            return inner
        if node.op == "fill":
            return node.attrs[0].xreplace(dim_locals(node.attrs[0]))
        return sp.Symbol(self.code[id(node)])

    def _inline_code(self, node: Node) -> str:
        """Code of an inline (non-elementwise) node: a variable, a constant or a view."""
        return inline_code(node, [self.code[id(a)] for a in node.args], self.printer)

    def _statement(self, node: Node, target: str) -> None:
        """The line(s) that compute ``node`` into ``target``, by its op (:data:`_STATEMENTS`)."""
        statement = _STATEMENTS.get(node.op)
        if statement is None:  # pragma: no cover
            raise AssertionError(node.op)
        statement(self, node, target)

    def _args(self, node: Node) -> list[str]:
        """The code of ``node``'s arguments (each a line or printed inline already)."""
        return [self.code[id(a)] for a in node.args]

    # -- one statement per op (the table :data:`_STATEMENTS`) -------------------------------------
    def _map(self, node: Node, target: str) -> None:
        self._accumulate(node, target, self._compose(node))

    def _view(self, node: Node, target: str) -> None:
        self.lines.append((target, self._inline_code(node)))

    def _matmul(self, node: Node, target: str) -> None:
        c = self._args(node)
        self.lines.append((target, f"{c[0]} @ {c[1]}"))

    def _reduction(self, node: Node, target: str) -> None:
        c = self._args(node)
        self.lines.append((target, self._reduce(node.op, c[0], node)))

    def _softmax(self, node: Node, target: str) -> None:
        c = self._args(node)
        (axis,) = node.attrs
        peak = reduce_code("max", c[0], f"axis={axis}, keepdims=True")
        self.lines.append((target, f"_np.exp({c[0]} - {peak})"))
        total = reduce_code("sum", target, f"axis={axis}, keepdims=True")
        self.lines.append((target, f"{target} / {total}"))

    def _share(self, node: Node, target: str) -> None:
        c = self._args(node)
        _, axes = node.attrs
        self.lines.append((target, f"_np.asarray({c[0]} == {c[1]}, dtype=_dtype)"))
        total = reduce_code("sum", target, f"axis={format_axes(axes)}, keepdims=True")
        self.lines.append((target, f"{target} / {total}"))

    def _scatter(self, node: Node, target: str) -> None:
        self.lines.append((target, f"_np.zeros({shape_code(node.shape)}, dtype=_dtype)"))
        self.lines.append((f"{target}[{index_text(node.attrs[0], self.printer)}]",
                           self._placed(self._operand(node.args[0]))))

    def _repeat(self, node: Node, target: str) -> None:
        c = self._args(node)
        repeats, axis = node.attrs
        self.lines.append((target, f"_np.repeat({c[0]}, {dim_code(repeats)}, axis={axis})"))

    def _eye(self, node: Node, target: str) -> None:
        eye = f"_np.eye({dim_code(node.shape[-1])}, dtype=_dtype)"
        if node.ndim != 2:
            eye = f"_np.reshape({eye}, {shape_code(node.shape)})"
        self.lines.append((target, eye))

    def _stack(self, node: Node, target: str) -> None:
        c = self._args(node)
        self.lines.append((target, f"_np.stack(({', '.join(c)},))"))

    def _accumulate(self, node: Node, target: str, expr: sp.Expr) -> None:
        """The line of an elementwise ``node``; scatters it adds (``c*_z0`` terms of ``expr``,
        each used nowhere else) go into one buffer, slice by slice::

            _x_bar = 2*x                       # the other terms (or zeros)
            _x_bar[:-1] -= x[1:]               # in place: no temporary, no copy back
            _x_bar[1:] -= x[:-1]

        A scatter used any other way is built on its own first (zeros, then the slice set)."""
        found = self._deferred_in(expr)
        if not found:
            self.lines.append((target, expr))
            return
        terms = sp.Add.make_args(expr)
        placed: dict[str, sp.Expr] = {}
        for name in found:
            symbol = sp.Symbol(name)
            mine = [t for t in terms if t.has(symbol)]
            coeff, rest = mine[0].as_coeff_Mul()
            if (len(mine) == 1 and rest == symbol and coeff.is_Number
                    and self.deferred[name].shape == node.shape):
                placed[name] = coeff
            else:
                expr = expr.xreplace({symbol: sp.Symbol(self._materialize(name))})
        if not placed:
            self.lines.append((target, expr))
            return
        dense = sp.Add(*(t for t in sp.Add.make_args(expr)
                         if not (t.free_symbols & {sp.Symbol(n) for n in placed})))
        self.lines.append((target, self._buffer(dense, node.shape)))
        slices: dict[str, sp.Expr] = {}
        for name, coeff in placed.items():
            scatter = self.deferred.pop(name)
            where = f"{target}[{index_text(scatter.attrs[0], self.printer)}]"
            value = self._placed(self._operand(scatter.args[0]))
            slices[where] = slices.get(where, 0) + coeff * value
        for i, (where, value) in enumerate(slices.items()):
            if i or dense != 0:
                self.accumulate.add(len(self.lines))
            self.lines.append((where, value))

    def _deferred_in(self, expr: sp.Expr) -> list[str]:
        """The placeholders of scatters not yet placed that ``expr`` reads, in the order made."""
        return sorted((s.name for s in expr.free_symbols if s.name in self.deferred),
                      key=lambda name: int(name[2:]))

    def _placed(self, value: sp.Expr) -> sp.Expr:
        """``value`` (a scatter's) with the scatters it reads built first, each as its own
        array: the gradient of a slice of a slice (``w[2:][1:]``), or ``np.cross`` of two
        slices."""
        inner = self._deferred_in(value)
        return value.xreplace({sp.Symbol(n): sp.Symbol(self._materialize(n)) for n in inner})

    def _materialize(self, name: str) -> str:
        """Build a deferred scatter as its own array (zeros, then the slice set)."""
        scatter = self.deferred.pop(name)
        target = naming.slot(self.counter)
        self.counter += 1
        self.shapes[target] = scatter.shape
        self._statement(scatter, target)
        return target

    def _buffer(self, dense: sp.Expr, shape: Shape) -> str:
        """A new array of ``shape`` holding ``dense`` (written as text, so no shared
        subexpression is ever taken from the buffer, which is updated in place)."""
        if dense == 0:
            return f"_np.zeros({shape_code(shape)}, dtype=_dtype)"
        if all(is_dim(s) for s in dense.free_symbols):
            value = self.printer.doprint(dense)
            return f"_np.full({shape_code(shape)}, {value}, dtype=_dtype)"
        code = self.printer.doprint(tensor_forms(stable_forms(dense)))
        if dense.is_Symbol:
            return f"_np.copy({code})" if self._full(dense, shape) else (
                f"_np.zeros({shape_code(shape)}, dtype=_dtype) + {code}")
        if any(self._full(s, shape) for s in dense.free_symbols):
            return code  # arithmetic on a full-shape array: a new array
        return f"_np.zeros({shape_code(shape)}, dtype=_dtype) + {code}"

    def _full(self, symbol: sp.Symbol, shape: Shape) -> bool:
        known = self.shapes.get(symbol.name)
        return known is not None and same_shape(known, shape)

    def _reduce(self, op: str, code: str, node: Node) -> str:
        axes, keepdims = node.attrs
        if not keepdims and len(axes) == node.args[0].ndim:
            arguments = ""
        else:
            arguments = f"axis={format_axes(axes)}{', keepdims=True' if keepdims else ''}"
        ndim = node.args[0].ndim
        if op != "mean":
            return reduce_code(op, code, arguments, ndim)
        # the sum over the count, as NumPy's mean computes it (its Python wrapper costs ~1 us)
        shape = node.args[0].shape
        count = sp.Mul(*(sp.sympify(shape[a]) for a in axes))
        text = dim_code(count)
        if not (count.is_Integer or count.is_Symbol):
            text = f"({text})"
        return f"{reduce_code('sum', code, arguments, ndim)}/{text}"

    def _prod_others(self, node: Node, target: str) -> None:
        """The product of the other elements along the axes, without dividing by zero: the
        runtime helper ``_prod_others`` (``prod(x) / x`` when ``x`` has no zero, else zeros
        counted; see :mod:`symdiff.runtime`)."""
        (axes,) = node.attrs
        (code,) = self._args(node)
        self.printer.helpers.add("_prod_others")
        self.lines.append((target, f"_prod_others({code}, {format_axes(axes)})"))

    def _logsumexp(self, node: Node, target: str) -> None:
        (code,) = self._args(node)
        axes, keepdims = node.attrs
        parts = self._lse_parts(node)
        if parts is not None:  # the gradient's nodes are there: log(sum(e)) + max
            for part in parts:
                self._visit(part)
            peak, total = (self.code[id(p)] for p in (parts[0], parts[2]))
            value = f"_np.log({total}) + {peak}"
            if not keepdims and len(axes) < node.args[0].ndim:
                value = f"_np.squeeze({value}, axis={format_axes(axes)})"
            self.lines.append((target, value))
            return
        peak = naming.slot(self.counter)
        self.counter += 1
        full = len(axes) == node.args[0].ndim and not keepdims
        axis = "" if full else f", axis={format_axes(axes)}"
        keep = ", keepdims=True" if keepdims else ""
        ndim = node.args[0].ndim
        self.lines.append((peak, reduce_code("max", code, "" if full else
                                             f"{axis[2:]}, keepdims=True", ndim)))
        back = peak if full or keepdims else f"_np.squeeze({peak}{axis})"
        total = reduce_code("sum", f"_np.exp({code} - {peak})", f"{axis[2:]}{keep}", ndim)
        self.lines.append((target, f"_np.log({total}) + {back}"))

    def _lse_parts(self, node: Node) -> tuple[Node, Node, Node] | None:
        """The nodes ``max(A)`` (a ``shift``), ``e = exp(A - max(A))`` and ``sum(e)`` of the
        logsumexp ``node`` (built by its VJP, :func:`~symdiff.tensor.vjp.lse_parts`), if the
        program has them all."""
        (a,) = node.args
        axes, keepdims = node.attrs
        keep = keepdims or len(axes) < a.ndim
        peak = self.nodes.get(("shift", (id(a),), (axes, keep)))
        if peak is None:
            return None
        e = self.nodes.get(("map", (id(a), id(peak)), (sp.exp(arg_symbol(0) - arg_symbol(1)),)))
        total = e and self.nodes.get(("sum", (id(e),), (axes, keep)))
        return None if total is None else (peak, e, total)

Statement = Callable[[_Emitter, Node, str], None]

#: How each op is emitted as a line of its own: ``(emitter, node, target)``.
_STATEMENTS: dict[str, Statement] = {
    "map": _Emitter._map,
    "fill": _Emitter._view,
    **dict.fromkeys(VIEWS, _Emitter._view),
    "matmul": _Emitter._matmul,
    **dict.fromkeys(("sum", "mean", "max", "min", "prod"), _Emitter._reduction),
    "prod_others": _Emitter._prod_others,
    "logsumexp": _Emitter._logsumexp,
    "softmax": _Emitter._softmax,
    "share": _Emitter._share,
    "scatter": _Emitter._scatter,
    "repeat": _Emitter._repeat,
    "eye": _Emitter._eye,
    "stack": _Emitter._stack,
}


def _family_statement(emitter: _Emitter, node: Node, target: str) -> None:
    """The statements of a family op (:mod:`symdiff.tensor.families`), from its row."""
    row = families.OPS[node.op]
    emitter.printer.helpers.update(row.helpers)
    emitter.lines.extend(row.emit(node, emitter._args(node), target))


_STATEMENTS.update(dict.fromkeys(families.OPS, _family_statement))

#: Which ops may be printed where they are used instead of as a line (variables and constants
#: always; views and elementwise nodes as decided for each node).
_INLINE: dict[str, Callable[[_Emitter, Node], bool]] = {
    "var": lambda emitter, node: True,
    "const": lambda emitter, node: True,
    "fill": lambda emitter, node: True,
    **dict.fromkeys(VIEWS, _Emitter._inline_view),
    "map": _Emitter._inline_map,
}


def emit_statements(program: Program) -> tuple[list[tuple[str, str]], set[str], Fuser | None]:
    """The function body's statements ``(target, code)``, the runtime helpers they call, and
    with ``backend="numba"`` the :class:`~.fused.Fuser` holding the ufuncs they call."""
    emitter = _Emitter(program)
    fuser, statements = emitter.fuser, emitter.run()
    return statements, emitter.printer.helpers | (fuser.helpers if fuser else set()), fuser
