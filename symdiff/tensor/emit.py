"""Tensor graph -> the NumPy statements of a generated function (assembled by ``module.py``).

Which nodes get a line of their own:

* variables are the function's parameters; constants are printed where they are used;
* views (``.T``, ``x[:, None]``, slices, reshapes, ``broadcast_to``) are printed inline;
* an elementwise node used only by another elementwise node is composed into it, so a chain
  of elementwise operations is one NumPy expression (printed by the scalar layer's
  :class:`~symdiff.printer.CodePrinter`, in stable forms such as ``logaddexp``);
* everything else (matmul, reductions, softmax, ...) is a temporary ``_t0, _t1, ...``;
  common subexpressions of the elementwise lines are shared through SymPy's ``cse``.

Gradients are named ``_<name>_bar``, the value ``_value``. Temporaries are numbered in order of
definition, so the same request always gives byte-identical source.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import sympy as sp

from ..functions import sigmoid
from ..printer import CodePrinter
from ..simplify import stable_forms
from .ir import VIEWS, Node, arg_symbol, format_axes, format_index, topological
from .shapes import Dim, Shape

_PLACEHOLDER = re.compile(r"\b_s(\d+)\b")

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


def dim_code(dim: Dim) -> str:
    """A dimension as code: ``3``, ``_n_dim``, ``_d_dim*_n_dim``."""
    if isinstance(dim, int):
        return str(dim)
    return CodePrinter().doprint(dim.xreplace(_dim_locals(dim)))


def _dim_locals(expr: sp.Basic) -> dict[sp.Basic, sp.Basic]:
    return {s: sp.Symbol(f"_{s.name}_dim") for s in expr.free_symbols if s.is_integer}


def shape_code(shape: Shape) -> str:
    """A shape as a tuple literal of dimension codes."""
    items = [dim_code(d) for d in shape]
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"




def _expand_code(code: str, node: Node) -> str:
    (axes,) = node.attrs
    if axes == (node.ndim - 1,) and node.ndim > 2:
        return f"{code}[..., None]"
    items = ["None" if i in axes else ":" for i in range(node.ndim)]
    while items[-1] == ":":
        items.pop()
    return f"{code}[{', '.join(items)}]"


class _Emitter:
    """Decides which nodes become lines and prints them."""

    def __init__(self, program: Program):
        self.program = program
        self.printer = CodePrinter()
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

    # -- decisions ---------------------------------------------------------------------------------
    def _inline(self, node: Node) -> bool:
        if node.op in ("var", "fill"):
            return True
        if node.op in VIEWS:
            return not any(u.op in VIEWS for u in self.users.get(id(node), []))
        if node.op == "map":
            users = self.users.get(id(node), [])
            return (
                id(node) not in self.outputs and len(users) == 1 and users[0].op == "map"
            )
        return False

    def _target(self, node: Node) -> str:
        names = self.outputs.get(id(node), [])
        if len(names) == 1 and self.uses[id(node)] == 1:
            return names[0]
        name = f"_s{self.counter}"
        self.counter += 1
        return name

    # -- printing ----------------------------------------------------------------------------------
    def run(self) -> list[tuple[str, str]]:
        for node in self.order:
            if self._inline(node):
                if node.op == "map":
                    self.composed[id(node)] = self._compose(node)
                else:
                    self.code[id(node)] = self._expression(node)
                continue
            target = self._target(node)
            self.code[id(node)] = target
            self._statement(node, target)
        for name, node in self.program.outputs:
            if self.code[id(node)] != name:
                self.lines.append((name, self._fresh(node)))
        return self._finish()

    def _fresh(self, node: Node) -> str:
        """A new array for an output that is a parameter, a view or shared."""
        if node.op == "fill":
            return self.code[id(node)]
        return f"_np.copy({self.code[id(node)]})"

    def _compose(self, node: Node) -> sp.Expr:
        (expr,) = node.attrs
        values = {}
        for i, arg in enumerate(node.args):
            inner = self.composed.get(id(arg))
            values[arg_symbol(i)] = inner if inner is not None else sp.Symbol(self.code[id(arg)])
        expr = expr.xreplace(values)
        return expr.xreplace(_dim_locals(expr))

    def _expression(self, node: Node) -> str:
        """Code of an inline (non-elementwise) node."""
        c = [self.code[id(a)] for a in node.args]
        op = node.op
        if op == "var":
            return node.name
        if op == "fill":
            value = self.printer.doprint(node.attrs[0].xreplace(_dim_locals(node.attrs[0])))
            if node.shape == ():
                return f"_np.asarray({value}, dtype=_dtype)"
            return f"_np.full({shape_code(node.shape)}, {value}, dtype=_dtype)"
        if op == "transpose":
            (perm,) = node.attrs
            if perm == tuple(reversed(range(len(perm)))):
                return f"{c[0]}.T"
            return f"_np.transpose({c[0]}, {perm})"
        if op == "expand":
            return _expand_code(c[0], node)
        if op == "index":
            return f"{c[0]}[{format_index(node.attrs[0])}]"
        if op == "reshape":
            return f"_np.reshape({c[0]}, {shape_code(node.shape)})"
        if op == "broadcast":
            return f"_np.broadcast_to({c[0]}, {shape_code(node.shape)})"
        raise AssertionError(op)  # pragma: no cover

    def _statement(self, node: Node, target: str) -> None:
        op = node.op
        if op == "map":
            self.lines.append((target, self._compose(node)))
            return
        c = [self.code[id(a)] for a in node.args]
        if op in VIEWS or op == "fill":
            self.lines.append((target, self._expression(node)))
        elif op == "matmul":
            self.lines.append((target, f"{c[0]} @ {c[1]}"))
        elif op in ("sum", "mean", "max", "min"):
            self.lines.append((target, self._reduce(op, c[0], node)))
        elif op == "logsumexp":
            self._logsumexp(node, c[0], target)
        elif op == "softmax":
            (axis,) = node.attrs
            self.lines.append((target, f"_np.exp({c[0]} - _np.max({c[0]}, axis={axis}, "
                                       "keepdims=True))"))
            self.lines.append((target, f"{target} / _np.sum({target}, axis={axis}, "
                                       "keepdims=True)"))
        elif op == "share":
            _, axes = node.attrs
            self.lines.append((target, f"_np.asarray({c[0]} == {c[1]}, dtype=_dtype)"))
            self.lines.append((target, f"{target} / _np.sum({target}, axis={format_axes(axes)}, "
                                       "keepdims=True)"))
        elif op == "scatter":
            self.lines.append((target, f"_np.zeros({shape_code(node.shape)}, dtype=_dtype)"))
            (g,) = node.args
            value = self._expression(g)[len("_np.full("):] if g.op == "fill" else c[0]
            if g.op == "fill":
                value = self.printer.doprint(g.attrs[0].xreplace(_dim_locals(g.attrs[0])))
            self.lines.append((f"{target}[{format_index(node.attrs[0])}]", value))
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

    def _reduce(self, op: str, code: str, node: Node) -> str:
        axes, keepdims = node.attrs
        if not keepdims and len(axes) == node.args[0].ndim:
            return f"_np.{op}({code})"
        keep = ", keepdims=True" if keepdims else ""
        return f"_np.{op}({code}, axis={format_axes(axes)}{keep})"

    def _logsumexp(self, node: Node, code: str, target: str) -> None:
        axes, keepdims = node.attrs
        peak = f"_s{self.counter}"
        self.counter += 1
        full = len(axes) == node.args[0].ndim and not keepdims
        axis = "" if full else f", axis={format_axes(axes)}"
        keep = ", keepdims=True" if keepdims else ""
        self.lines.append((peak, f"_np.max({code}" + ("" if full else f"{axis}, keepdims=True")
                           + ")"))
        back = peak if full or keepdims else f"_np.squeeze({peak}{axis})"
        self.lines.append(
            (target, f"_np.log(_np.sum(_np.exp({code} - {peak}){axis}{keep})) + {back}")
        )

    # -- shared subexpressions and names ---------------------------------------------------------
    def _finish(self) -> list[tuple[str, str]]:
        exprs = [(i, value) for i, (_, value) in enumerate(self.lines)
                 if isinstance(value, sp.Basic)]
        forms = [_cheap_sigmoid(stable_forms(value)) for _, value in exprs]
        shared: list[tuple[sp.Symbol, sp.Expr]] = []
        if self.program.cse and forms:
            names = (sp.Symbol(f"_s{k}") for k in range(self.counter, self.counter + 10**6))
            shared, forms = sp.cse(forms, symbols=names, order="canonical")
            shared, forms = _inline_scalars(shared, forms)
        reduced = dict(zip((i for i, _ in exprs), forms, strict=True))
        pending = dict(shared)
        printed: list[tuple[str, str]] = []
        aliases: dict[str, str] = {}
        for i, (target, value) in enumerate(self.lines):
            if i not in reduced:
                printed.append((target, value))
                continue
            value = reduced[i]
            if value in pending:  # the line is a shared subexpression: it takes the line's name
                expr = pending.pop(value)
                rename = {value: sp.Symbol(target)}
                pending = {k: e.xreplace(rename) for k, e in pending.items()}
                reduced = {k: e.xreplace(rename) for k, e in reduced.items()}
                value = expr
            elif value.is_Symbol and _PLACEHOLDER.fullmatch(target):
                aliases[target] = value.name  # computed already: reuse it
                continue
            needed = _closure(value.free_symbols, pending)
            printed += [
                (k.name, self.printer.doprint(e)) for k, e in pending.items() if k in needed
            ]
            pending = {k: e for k, e in pending.items() if k not in needed}
            printed.append((target, self.printer.doprint(value)))
        return _renumber(printed, aliases)


#: ``sigmoid(u)`` is emitted as ``1/(1 + exp(min(-u, SIGMOID_CLIP)))``: one ``exp``, which never
#: overflows in float32 or float64 (``exp(88)`` < 3.4e38); below ``sigmoid(-88)`` = 6.1e-39 the
#: value stays at 6.1e-39 (an absolute error under 1e-38), elsewhere it is exact to a few ulp.
SIGMOID_CLIP = 88


def _cheap_sigmoid(expr: sp.Expr) -> sp.Expr:
    """``sigmoid`` in the form that costs four NumPy calls (the helper ``_sigmoid`` takes eight:
    per-call overhead that dominates small arrays)."""
    return expr.replace(sigmoid, lambda u: 1 / (1 + sp.exp(sp.Min(-u, SIGMOID_CLIP))))


def _inline_scalars(
    shared: list[tuple[sp.Symbol, sp.Expr]], forms: list[sp.Expr]
) -> tuple[list[tuple[sp.Symbol, sp.Expr]], list[sp.Expr]]:
    """Put shared subexpressions of dimensions only (``1/_n_dim``) back where they are used."""
    kept: list[tuple[sp.Symbol, sp.Expr]] = []
    for symbol, expr in shared:
        if all(s.name.startswith("_") and s.name.endswith("_dim") for s in expr.free_symbols):
            kept = [(k, e.xreplace({symbol: expr})) for k, e in kept]
            shared = [(k, e.xreplace({symbol: expr})) for k, e in shared]
            forms = [f.xreplace({symbol: expr}) for f in forms]
        else:
            kept.append((symbol, expr))
    return [(k, dict(shared)[k]) for k, _ in kept], forms


def _closure(needed: set[sp.Basic], pending: dict[sp.Symbol, sp.Expr]) -> set[sp.Basic]:
    """``needed`` plus the symbols the pending shared subexpressions it uses need in turn."""
    result = set(needed)
    for symbol, expr in reversed(pending.items()):  # cse lists a subexpression after its parts
        if symbol in result:
            result |= expr.free_symbols
    return result


def _renumber(lines: list[tuple[str, str]], aliases: dict[str, str]) -> list[tuple[str, str]]:
    """Temporaries named ``_t0, _t1, ...`` in order of definition (an alias shares a name)."""
    names: dict[str, str] = {}
    for target, _ in lines:
        for match in _PLACEHOLDER.finditer(target):
            names.setdefault(match.group(0), f"_t{len(names)}")

    def resolve(name: str) -> str:
        while name in aliases:
            name = aliases[name]
        return names.get(name, name)

    def rename(text: str) -> str:
        return _PLACEHOLDER.sub(lambda m: resolve(m.group(0)), text)

    return [(rename(t), rename(v)) for t, v in lines]


def emit_statements(program: Program) -> tuple[list[tuple[str, str]], set[str]]:
    """The function body's statements ``(target, code)`` and the runtime helpers they call."""
    emitter = _Emitter(program)
    statements = emitter.run()
    return statements, set(emitter.printer.helpers)
