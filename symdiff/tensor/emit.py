"""Tensor graph -> the NumPy statements of a generated function (assembled by ``module.py``).

Which nodes get a line of their own:

* variables are the function's parameters; constants are printed where they are used;
* views (``.T``, ``x[:, None]``, slices, reshapes, ``broadcast_to``) are printed inline;
* an elementwise node used only by another elementwise node is composed into it, so a chain
  of elementwise operations is one NumPy expression (printed by
  :class:`~symdiff.codegen.printer.ArrayCodePrinter`, in stable forms such as ``logaddexp``); a
  function of such an expression is applied in place (``_t1 = x - _t0``, then
  ``_t1 = _np.exp(_t1, out=_t1)``);
* everything else (matmul, reductions as ``_np.add.reduce(...)``, softmax, ...) is a temporary
  ``_t0, _t1, ...``; common subexpressions of the elementwise lines are shared through SymPy's
  ``cse``, after common factors of sums are taken out.

Gradients are named ``_<name>_bar``, the value ``_value``. Temporaries are numbered in order of
definition, so the same request always gives byte-identical source.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import sympy as sp

from .. import registry
from ..codegen import naming
from ..codegen.printer import ArrayCodePrinter
from ..simplify import stable_forms
from .codetext import (
    PLACEHOLDER,
    closure,
    dim_code,
    dim_locals,
    factored,
    inline_code,
    inline_scalars,
    is_dim,
    reduce_code,
    renumber,
    shape_code,
)
from .ir import VIEWS, Node, arg_symbol, format_axes, format_index, topological
from .shapes import Shape, same_shape


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


class _Emitter:
    """Decides which nodes become lines and prints them."""

    def __init__(self, program: Program):
        self.program = program
        self.printer = ArrayCodePrinter()
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
        if node.op in ("var", "fill"):
            return True
        if node.op in VIEWS:
            return not any(u.op in VIEWS for u in self.users.get(id(node), []))
        if node.op == "map":
            users = self.users.get(id(node), [])
            return (
                id(node) not in self.outputs and len(users) == 1
                and (users[0].op == "map" or id(users[0]) in self.gathered)
            )
        return False

    def _target(self, node: Node) -> str:
        names = self.outputs.get(id(node), [])
        if len(names) == 1 and self.uses[id(node)] == 1:
            return names[0]
        name = naming.slot(self.counter)
        self.counter += 1
        return name

    # -- printing ----------------------------------------------------------------------------------
    def run(self) -> list[tuple[str, str]]:
        for node in self.order:
            self._visit(node)
        for name, node in self.program.outputs:
            if self.code[id(node)] != name:
                self.lines.append((name, self._fresh(node)))
        return self._finish()

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
        op = node.op
        if op == "map":
            self._accumulate(node, target, self._compose(node))
            return
        c = [self.code[id(a)] for a in node.args]
        if op in VIEWS or op == "fill":
            self.lines.append((target, self._inline_code(node)))
        elif op == "matmul":
            self.lines.append((target, f"{c[0]} @ {c[1]}"))
        elif op in ("sum", "mean", "max", "min", "prod"):
            self.lines.append((target, self._reduce(op, c[0], node)))
        elif op == "prod_others":
            self._prod_others(node, c[0], target)
        elif op == "logsumexp":
            self._logsumexp(node, c[0], target)
        elif op == "softmax":
            (axis,) = node.attrs
            peak = reduce_code("max", c[0], f"axis={axis}, keepdims=True")
            self.lines.append((target, f"_np.exp({c[0]} - {peak})"))
            total = reduce_code("sum", target, f"axis={axis}, keepdims=True")
            self.lines.append((target, f"{target} / {total}"))
        elif op == "share":
            _, axes = node.attrs
            self.lines.append((target, f"_np.asarray({c[0]} == {c[1]}, dtype=_dtype)"))
            total = reduce_code("sum", target, f"axis={format_axes(axes)}, keepdims=True")
            self.lines.append((target, f"{target} / {total}"))
        elif op == "scatter":
            self.lines.append((target, f"_np.zeros({shape_code(node.shape)}, dtype=_dtype)"))
            self.lines.append((f"{target}[{format_index(node.attrs[0])}]",
                               self._operand(node.args[0])))
        elif op == "repeat":
            repeats, axis = node.attrs
            self.lines.append((target, f"_np.repeat({c[0]}, {dim_code(repeats)}, axis={axis})"))
        elif op == "eye":
            eye = f"_np.eye({dim_code(node.shape[-1])}, dtype=_dtype)"
            if node.ndim != 2:
                eye = f"_np.reshape({eye}, {shape_code(node.shape)})"
            self.lines.append((target, eye))
        elif op == "stack":
            self.lines.append((target, f"_np.stack(({', '.join(c)},))"))
        else:  # pragma: no cover
            raise AssertionError(op)

    def _accumulate(self, node: Node, target: str, expr: sp.Expr) -> None:
        """The line of an elementwise ``node``; scatters it adds (``c*_z0`` terms of ``expr``,
        each used nowhere else) go into one buffer, slice by slice::

            _x_bar = 2*x                       # the other terms (or zeros)
            _x_bar[:-1] -= x[1:]               # in place: no temporary, no copy back
            _x_bar[1:] -= x[:-1]

        A scatter used any other way is built on its own first (zeros, then the slice set)."""
        found = sorted((s.name for s in expr.free_symbols if s.name in self.deferred),
                       key=lambda name: int(name[2:]))
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
            where = f"{target}[{format_index(scatter.attrs[0])}]"
            slices[where] = slices.get(where, 0) + coeff * self._operand(scatter.args[0])
        for i, (where, value) in enumerate(slices.items()):
            if i or dense != 0:
                self.accumulate.add(len(self.lines))
            self.lines.append((where, value))

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
        code = self.printer.doprint(_tensor_forms(stable_forms(dense)))
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

    def _prod_others(self, node: Node, code: str, target: str) -> None:
        """The product of the other elements along the axes, without dividing by zero: the
        runtime helper ``_prod_others`` (``prod(x) / x`` when ``x`` has no zero, else zeros
        counted; see :mod:`symdiff.codegen.helpers`)."""
        (axes,) = node.attrs
        self.printer.helpers.add("_prod_others")
        self.lines.append((target, f"_prod_others({code}, {format_axes(axes)})"))

    def _logsumexp(self, node: Node, code: str, target: str) -> None:
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

    def _add_onto(self, target: str, value: sp.Expr) -> tuple[str, str]:
        """``target += value`` (or ``-=``) as a statement ``("target +=", code)``: NumPy adds
        into the slice in place, with no temporary and no copy back."""
        sign = "+"
        if not value.is_Add and value.could_extract_minus_sign():
            sign, value = "-", -value
        return f"{target} {sign}=", self.printer.doprint(value)

    def _lse_parts(self, node: Node) -> tuple[Node, Node, Node] | None:
        """The nodes ``max(A)``, ``e = exp(A - max(A))`` and ``sum(e)`` of the logsumexp
        ``node`` (built by its VJP, :func:`~symdiff.tensor.vjp.lse_parts`), if the program has
        them all."""
        (a,) = node.args
        axes, keepdims = node.attrs
        keep = keepdims or len(axes) < a.ndim
        peak = self.nodes.get(("max", (id(a),), (axes, keep)))
        if peak is None:
            return None
        e = self.nodes.get(("map", (id(a), id(peak)), (sp.exp(arg_symbol(0) - arg_symbol(1)),)))
        total = e and self.nodes.get(("sum", (id(e),), (axes, keep)))
        return None if total is None else (peak, e, total)

    # -- shared subexpressions and names ---------------------------------------------------------
    def _finish(self) -> list[tuple[str, str]]:
        exprs = [(i, value) for i, (_, value) in enumerate(self.lines)
                 if isinstance(value, sp.Basic)]
        forms = [factored(_tensor_forms(stable_forms(value))) for _, value in exprs]
        shared: list[tuple[sp.Symbol, sp.Expr]] = []
        if self.program.cse and forms:
            names = (sp.Symbol(naming.slot(k)) for k in range(self.counter, self.counter + 10**6))
            shared, forms = sp.cse(forms, symbols=names, order="canonical")
            shared, forms = inline_scalars(shared, forms)
        reduced = dict(zip((i for i, _ in exprs), forms, strict=True))
        pending = dict(shared)
        printed: list[tuple[str, str]] = []
        aliases: dict[str, str] = {}
        for i, (target, value) in enumerate(self.lines):
            if i not in reduced:
                printed.append((target, value))
                continue
            value = reduced[i]
            if value in pending and target.isidentifier():
                # the line is a shared subexpression: it takes the line's name
                expr = pending.pop(value)
                rename = {value: sp.Symbol(target)}
                pending = {k: e.xreplace(rename) for k, e in pending.items()}
                reduced = {k: e.xreplace(rename) for k, e in reduced.items()}
                value = expr
            elif value.is_Symbol and PLACEHOLDER.fullmatch(target):
                aliases[target] = value.name  # computed already: reuse it
                continue
            needed = closure(value.free_symbols, pending)
            printed += [
                (k.name, self.printer.doprint(e)) for k, e in pending.items() if k in needed
            ]
            pending = {k: e for k, e in pending.items() if k not in needed}
            if i in self.accumulate:
                printed.append(self._add_onto(target, value))
            elif self._in_place(target, value):
                printed.append((target, self.printer.doprint(value.args[0])))
                ufunc = IN_PLACE_UFUNCS[value.func]
                printed.append((target, f"_np.{ufunc}({target}, out={target})"))
            else:
                printed.append((target, self.printer.doprint(value)))
        return renumber(printed, aliases)

    def _in_place(self, target: str, value: sp.Expr) -> bool:
        """Whether ``target = f(arithmetic)`` can apply the ufunc ``f`` in place: the
        arithmetic makes a new array of the target's (non-scalar) shape, which ``f`` then
        overwrites (``out=``) instead of allocating another: on long arrays, each new array
        costs a page fault per 4 KB."""
        if value.func not in IN_PLACE_UFUNCS or len(value.args) != 1:
            return False
        (arg,) = value.args
        shape = self.shapes.get(target)
        return (
            target.isidentifier()
            and shape is not None
            and len(shape) > 0
            and isinstance(arg, sp.Add | sp.Mul | sp.Pow)
            and any(not is_dim(s) for s in arg.free_symbols)
        )


#: Elementwise functions applied in place to a new array (see ``_Emitter._in_place``), with the
#: ufunc each one prints as: the registry rows marked ``in_place``.
IN_PLACE_UFUNCS = registry.in_place_ufuncs()


#: ``sigmoid(u)`` is emitted as ``1/(1 + exp(min(-u, SIGMOID_CLIP)))``: one ``exp``, which never
#: overflows in float32 or float64 (``exp(88)`` < 3.4e38); below ``sigmoid(-88)`` = 6.1e-39 the
#: value stays at 6.1e-39 (an absolute error under 1e-38), elsewhere it is exact to a few ulp.
#: (The row's ``tensor_form`` writes it; the number is the registry's.)
SIGMOID_CLIP = registry.SIGMOID_CLIP
#: Functions tensor code writes in another exact form (the rows' ``tensor_form``): ``sigmoid``
#: as above costs four NumPy calls, where the helper ``_sigmoid`` takes eight (per-call overhead
#: that dominates small arrays).
_TENSOR_FORMS = {
    registry.head_class(row): row.tensor_form for row in registry.ROWS if row.tensor_form
}


def _tensor_forms(expr: sp.Expr) -> sp.Expr:
    """``expr`` with each function of :data:`_TENSOR_FORMS` in its tensor form."""
    for func, form in _TENSOR_FORMS.items():
        expr = expr.replace(func, form)
    return expr


def emit_statements(program: Program) -> tuple[list[tuple[str, str]], set[str]]:
    """The function body's statements ``(target, code)`` and the runtime helpers they call."""
    emitter = _Emitter(program)
    statements = emitter.run()
    return statements, set(emitter.printer.helpers)


