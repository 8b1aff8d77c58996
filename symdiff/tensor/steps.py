"""Steps for tensor expressions: the backward walk, recorded rule by rule as it builds the code.

``sd.derive(expr, wrt="w", shapes={...})`` runs the *same* reverse-mode walk as ``sd.grad``
(:func:`symdiff.tensor.walk.backward`) with a recorder attached: each time a row of
:data:`~symdiff.tensor.vjp.TENSOR_VJPS` is applied, each time contributions of a value used more
than once are added up (``branch``) and each time a broadcast gradient is summed back
(``unbroadcast``), the nodes involved are kept. They are then printed as steps: intermediate
values are named ``z1, z2, ...`` (in the order they are computed; the output is ``f``) and the
gradient of the output with respect to a value ``z`` is written ``z_bar``, as in the generated
code. For ``sum(log(1 + exp(-y * (X @ w))))``::

    1. [sum (broadcast back)] f = sum(z2): z2_bar = full((n,), 1)
    2. [elementwise chain] z2 = softplus(-z1*y): z1_bar = -y*sigmoid(-z1*y)
      [chain] d/dz1 [softplus(-z1*y)] = ...   (the scalar rule table's steps)
    3. [matmul] z1 = X @ w: w_bar = X.T @ z1_bar

An elementwise step carries, as sub-steps, the scalar rule tree of each partial derivative it
used (:func:`symdiff.tensor.elementwise.partial_step`), so the chain rule inside ``softplus`` is
shown exactly as ``sd.derive`` shows it for scalars. The result is the very node ``sd.grad``
emits. Rendering follows :mod:`symdiff.engine.steps`: numbered plain text, and one KaTeX-safe
``aligned`` block.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import sympy as sp

from ..codegen import naming
from ..engine.lines import annotation, shown
from ..engine.steps import Derivation, Step, avoiding, latex_rows
from ..engine.texnames import latex_name
from ..errors import SymdiffError
from ..options import Options
from .elementwise import partial_step
from .formula import TensorFormula, latex, text
from .ir import LEAF_PARAMETERS, Node, arg_symbol, topological
from .oprow import call_latex
from .ops import Called
from .request import request_for
from .shapes import format_shape
from .vjp import VJPRule
from .walk import backward

_PLACEHOLDER = naming.ARGUMENT

@dataclass(frozen=True)
class TensorStep:
    """One rule applied by the backward walk.

    ``rule`` is the rule's name (``"matmul"``, ``"sum (broadcast back)"``, ``"unbroadcast"``,
    ``"branch"``, ...); ``expr`` defines the node it was applied at (``"z1 = X @ w"``, empty for
    ``unbroadcast`` and ``branch``); ``lines`` are the gradients it produced
    (``("w_bar", "=", "X.T @ z1_bar")``; ``"+="`` marks one contribution of several); ``note``
    is the rule's identity; ``substeps`` the scalar rule trees of an elementwise step.
    ``latex_expr`` and ``latex_lines`` hold the same in LaTeX.
    """

    rule: str
    expr: str
    lines: tuple[tuple[str, str, str], ...]
    note: str = ""
    substeps: tuple[Step, ...] = ()
    latex_expr: str = ""
    latex_lines: tuple[tuple[str, str, str], ...] = ()

    @property
    def result(self) -> str:
        """The gradients produced, as one text."""
        return "; ".join(" ".join(line) for line in self.lines)

    def walk(self, depth: int = 0) -> Iterator[tuple[int, Any]]:
        """This step and every step inside it, depth first, with their depth."""
        yield depth, self
        for sub in self.substeps:
            yield from sub.walk(depth + 1)

    def explanation(self) -> str:
        """The rule's identity, shown beside the step."""
        return self.note

    def text(self) -> str:
        """``z1 = X @ w: w_bar = X.T @ z1_bar`` in plain text."""
        if not self.lines:  # the heading of a layer's parts (max_pool2d)
            return self.expr
        return f"{self.expr}: {self.result}" if self.expr else self.result

    def latex_rows(self, depth: int = 0) -> list[str]:
        """Rows of an ``aligned`` block: the definition (with the rule), then each gradient."""
        rule = annotation(self.rule + " rule", depth)
        rows = []
        if self.latex_expr:
            rows.append(f"{self.latex_expr} && {rule}")
            rule = ""
        for i, (lhs, op, rhs) in enumerate(self.latex_lines):
            relation = "&=" if op == "=" else r"&\mathrel{+}="
            note = rule if i == 0 else ""
            rows.append(f"{lhs} {relation} {rhs} &&" + (f" {note}" if note else ""))
        return rows

    def latex(self) -> str:
        """The step as rows of an ``aligned`` block (no trailing ``\\\\``)."""
        return " \\\\\n".join(self.latex_rows())

    def __str__(self) -> str:
        from ..engine.steps import render_text

        return render_text([self])  # type: ignore[list-item]


@dataclass(frozen=True)
class TensorDerivation(Derivation):
    """A tensor gradient and the steps of the backward walk that produced it.

    ``expr`` and ``result`` are :class:`~symdiff.tensor.formula.TensorFormula` (text with a
    ``shape`` and ``latex``); ``raw`` is ``result`` (the peephole rewrites apply as the graph is
    built, there is no separate simplification step); ``steps`` are :class:`TensorStep`; ``var``
    is the ``wrt`` name as a symbol; ``output`` the name the steps give the expression's value.
    """

    output: str = "f"

    def header(self) -> str:
        """``d/dw [expr] = result`` in plain text, and the shapes."""
        return (f"d/d{self.var} [{self.expr}] = {self.result}   "
                f"(shape {format_shape(self.result.shape)})")

    def latex(self, verbose: str | None = None) -> str:
        """Every step as rows of one KaTeX-safe ``aligned`` block inside ``$$ ... $$``."""
        is_shown = shown(verbose or self.verbose)
        top, bottom = latex_name(self.output), latex_name(self.var.name)
        d = rf"\frac{{\partial {top}}}{{\partial {bottom}}}"
        rows = [rf"{d} &= {self.result.latex} && \text{{(result)}}"]
        for step in self.steps:
            rows += step.latex_rows(0)
            for sub in step.substeps:
                if is_shown(sub):
                    rows += [_indent(row, 1) for row in latex_rows([sub], verbose or self.verbose)]
        return "$$\\begin{aligned}\n" + " \\\\\n".join(rows) + "\n\\end{aligned}$$"


def _indent(row: str, depth: int) -> str:
    """A scalar step's row moved ``depth`` levels in (its annotation column)."""
    return row.replace("&& ", "&& " + r"\quad" * depth, 1)


# -- recording -----------------------------------------------------------------------------------
@dataclass
class _Events:
    """A :class:`~symdiff.tensor.walk.Recorder` that keeps every event in order."""

    items: list[tuple[str, tuple[Any, ...]]] = field(default_factory=list)

    def vjp(self, rule: VJPRule, node: Node, g: Node,
            contributions: list[tuple[Node, Node]]) -> None:
        self.items.append(("vjp", (rule, node, g, contributions)))

    def branch(self, node: Node, items: list[Node], total: Node) -> None:
        self.items.append(("branch", (node, items, total)))

    def unbroadcast(self, node: Node, summed: Node, reduced: Node) -> None:
        self.items.append(("unbroadcast", (node, summed, reduced)))


#: Nodes shown by their own text, never named as values: parameters and constants.
_NAMED = LEAF_PARAMETERS | {"fill"}


class _Printer:
    """Names the values of the walk and prints nodes with them (text and LaTeX)."""

    def __init__(self, root: Node, events: _Events, totals: Mapping[int, Node]):
        self.nodes: dict[int, Node] = {id(n): n for n in topological([root])}
        variables = {n.name for n in self.nodes.values() if n.op in LEAF_PARAMETERS}
        self.output = naming.output_label(variables)
        named: list[Node] = [root]
        for kind, data in events.items:
            if kind == "vjp":
                named += [arg for arg in data[1].args if arg.op not in _NAMED]
        order = {id(n): i for i, n in enumerate(topological([root]))}
        values = sorted({id(n): n for n in named if n is not root}.values(),
                        key=lambda n: order[id(n)])
        labels = naming.value_labels(variables, len(values))
        self.text: dict[int, str] = {id(root): self.output}
        self.text.update({id(n): label for n, label in zip(values, labels, strict=True)})
        self.value_names = dict(self.text)
        self.latex: dict[int, str] = {k: latex_name(v) for k, v in self.text.items()}
        self.totals = totals
        for node_id, total in totals.items():
            if total.op in _NAMED or id(total) in self.text:
                continue
            name = self.name_of(node_id)
            self.text[id(total)] = naming.adjoint_label(name)
            self.latex[id(total)] = rf"\overline{{{latex_name(name)}}}"

    def name_of(self, node_id: int) -> str:
        """A value's name: a variable's own, or ``z1``, ..."""
        if node_id in self.value_names:
            return self.value_names[node_id]
        return self.nodes[node_id].name

    def bar(self, node: Node) -> tuple[str, str]:
        """``(text, LaTeX)`` of the gradient of ``node``'s name: ``z1_bar``."""
        name = self.value_names.get(id(node), node.name if node.op in LEAF_PARAMETERS else "?")
        return naming.adjoint_label(name), rf"\overline{{{latex_name(name)}}}"

    def show(self, node: Node) -> tuple[str, str]:
        """``(text, LaTeX)`` of ``node`` itself, its operands by name."""
        names = {k: v for k, v in self.text.items() if k != id(node)}
        latex_names = {k: v for k, v in self.latex.items() if k != id(node)}
        return text(node, names), latex(node, latex_names)

    def line(self, target: Node, value: Node) -> tuple[tuple[str, str, str], tuple[str, str, str]]:
        """``target_bar = value`` (``+=`` unless ``value`` is the whole gradient of target)."""
        op = "=" if self.totals.get(id(target)) is value else "+="
        (name, name_latex), (body, body_latex) = self.bar(target), self.show(value)
        return (name, op, body), (name_latex, op, body_latex)

    def definition(self, node: Node) -> tuple[str, str]:
        body, body_latex = self.show(node)
        return f"{self.text[id(node)]} = {body}", f"{self.latex[id(node)]} &= {body_latex}"


def _tex(text: str) -> str:
    """A name or constant inside ``\\operatorname`` or ``\\text``: underscores escaped."""
    return text.replace("_", r"\_").replace("'", "")


def _heading(called: Called, printer: _Printer) -> TensorStep:
    """The step that heads the rules of a layer's parts (``max_pool2d``, ``batch_norm``): the
    call as written, and its spelling's backward rule in words."""
    shown = [printer.show(o) if id(o) not in printer.text else (printer.text[id(o)],
                                                                  printer.latex[id(o)])
             for o in called.operands]
    given = [rf"\text{{{_tex(k)}}}={_tex(repr(v))}" for k, v in called.constants]
    body = call_latex(_tex(called.name), *(x for _, x in shown), *given)
    node = called.node
    return TensorStep(
        called.name, f"{printer.text[id(node)]} = {called.text([t for t, _ in shown])}", (),
        f"{called.identity}; the steps below are its parts' rules",
        latex_expr=f"{printer.latex[id(node)]} &= {body}",
    )


def _steps(events: _Events, printer: _Printer,
           called: Mapping[int, Called] | None = None) -> list[TensorStep]:
    steps = []
    for kind, data in events.items:
        if kind == "vjp":
            rule, node, _, contributions = data
            layer = (called or {}).get(id(node))
            if layer is not None and layer.identity:
                steps.append(_heading(layer, printer))
            lines = [printer.line(arg, c) for arg, c in contributions]
            expr, expr_latex = printer.definition(node)
            steps.append(TensorStep(
                rule.name, expr, tuple(t for t, _ in lines), rule.identity,
                _elementwise_substeps(node, contributions, printer), expr_latex,
                tuple(x for _, x in lines),
            ))
        elif kind == "unbroadcast":
            node, summed, reduced = data
            t, x = printer.line(node, reduced)
            steps.append(TensorStep(
                "unbroadcast", "", (t,),
                f"sum the gradient of shape {format_shape(summed.shape)} back to the shape "
                f"{format_shape(node.shape)} it was broadcast from", latex_lines=(x,),
            ))
        else:
            node, items, total = data
            t, x = printer.line(node, total)
            steps.append(TensorStep(
                "branch", "", (t,),
                f"a value used {len(items)} times: add up the gradients of its uses",
                latex_lines=(x,),
            ))
    return steps


def _elementwise_substeps(node: Node, contributions: list[tuple[Node, Node]],
                          printer: _Printer) -> tuple[Step, ...]:
    """For an elementwise node: the scalar rule tree of each partial used, in names."""
    if node.op != "map":
        return ()
    (expr,) = node.attrs
    symbols = {}
    for i, arg in enumerate(node.args):
        name = printer.value_names.get(id(arg))
        if name is None:
            name = arg.name if arg.op in LEAF_PARAMETERS else text(arg, printer.text)
        symbols[arg_symbol(i)] = sp.Symbol(name, real=True)
    used = [i for i, arg in enumerate(node.args) if any(a is arg for a, _ in contributions)]
    # the chain rule's inner function must not take the name of a value shown elsewhere (u)
    shown = ({n.name for n in printer.nodes.values() if n.op in LEAF_PARAMETERS}
             | set(printer.text.values()))
    return tuple(avoiding(_renamed(partial_step(expr, i), symbols), shown) for i in used)


def _renamed(step: Step, symbols: Mapping[sp.Basic, sp.Basic]) -> Step:
    """A scalar step tree with the placeholders ``_a0, _a1, ...`` renamed (its note and the
    chain rule's definitions of inner functions too)."""
    note = step.note
    if isinstance(note, str):
        names = {k.name: v.name for k, v in symbols.items()}
        note = _PLACEHOLDER.sub(lambda m: names.get(m.group(0), m.group(0)), note)
    elif hasattr(note, "exprs"):  # a Note: text with expressions printed when shown
        note = replace(note, exprs=tuple(e.xreplace(symbols) for e in note.exprs))
    return replace(
        step,
        note=note,
        expr=step.expr.xreplace(symbols),
        result=step.result.xreplace(symbols),
        var=symbols.get(step.var, step.var),
        substeps=tuple(_renamed(s, symbols) for s in step.substeps),
        defines=tuple((name, e.xreplace(symbols)) for name, e in step.defines),
    )


# -- the entry point -------------------------------------------------------------------------------
def derive_tensor(expr: object, wrt: str | None, shapes: object, simplify: bool = True,
                  verbose: str = "all") -> TensorDerivation:
    """The gradient of a scalar tensor expression with respect to one variable, with the steps
    of the backward walk (see the module docstring)."""
    if wrt is not None and not isinstance(wrt, str):
        raise SymdiffError("derive differentiates with respect to one name; give wrt='name'")
    request = request_for("grad", expr, wrt, Options(simplify=simplify), shapes, occurs=False)
    if len(request.wrt) != 1:
        raise SymdiffError(
            f"the expression has {len(request.wrt)} variables ({', '.join(request.wrt)}); "
            "say which one with wrt="
        )
    (root,) = request.roots
    (name,) = request.wrt
    b = request.builder
    var = b.var(name, request.shapes[name])
    events = _Events()
    (gradient,) = backward(b, root, [var], simplify, record=events)
    totals = {id(data[1]): data[2] for kind, data in events.items if kind == "vjp"}
    totals[id(var)] = gradient
    printer = _Printer(root, events, totals)
    result = TensorFormula.of(gradient)
    return TensorDerivation(as_called(root, b.called), sp.Symbol(name), result, result,
                            _steps(events, printer, b.called), verbose, printer.output)


def as_called(root: Node, called: Mapping[int, Called]) -> TensorFormula:
    """The formula of ``root`` with each layer the user called printed as the call
    (``sum(max_pool2d(x, kernel_size=2)**2)``, not the windows and reductions it is built
    from): the header of a derivation reads as the expression was written."""
    names: dict[int, str] = {}
    latex_names: dict[int, str] = {}
    for node in topological([root]):
        layer = called.get(id(node))
        if layer is None:
            continue
        names[id(node)] = layer.text([text(o, names) for o in layer.operands])
        given = [rf"\text{{{_tex(k)}}}={_tex(repr(v))}" for k, v in layer.constants]
        latex_names[id(node)] = call_latex(
            _tex(layer.name), *(latex(o, latex_names) for o in layer.operands), *given)
    plain = TensorFormula.of(root)
    return TensorFormula(text(root, names), plain.shape, latex(root, latex_names))


__all__ = ["TensorDerivation", "TensorStep", "as_called", "derive_tensor"]
