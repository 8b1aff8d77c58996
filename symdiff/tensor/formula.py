"""Tensor nodes as formulas people read: text in the input language and KaTeX-safe LaTeX.

:func:`text` prints a node the way expressions are written (``X.T @ (-y*sigmoid(-y*(X @ w)))``),
:func:`latex` the way a matrix-calculus text writes it (``X^{T} \\left(- y \\odot ...\\right)``:
juxtaposition for ``@``, ``\\odot`` for elementwise products, ``^{T}`` for ``.T``, other
operations as ``\\operatorname{sum}\\left(a, \\text{axis}=1\\right)``). Both take ``names``, a
mapping from node ids to what to print instead (the teaching view names intermediate values
``u1, u2, ...`` and gradients ``u1_bar``).

:class:`TensorFormula` is what ``CompiledFunction.exprs`` holds for a tensor function: the
formula of one output as text (a ``str``), with its ``shape`` and ``latex``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import sympy as sp

from ..engine.inputtext import input_text
from ..engine.texnames import latex_name
from . import families
from .ir import Node, arg_symbol, format_axes, format_index
from .shapes import Shape, format_dim, format_shape

#: Operations printed as a call or a postfix, which never need parentheses around them.
_ATOMIC = frozenset({
    "var", "const", "eye", "sum", "mean", "max", "min", "logsumexp", "prod", "prod_others",
    "softmax", "share", "reshape",
    "broadcast", "scatter", "repeat", "stack", "index", "expand", "transpose",
})
_NUMBER_ODOT = re.compile(r"(\d)\s*\\odot\s")
Names = Mapping[int, str]


class TensorFormula(str):
    """One output of a tensor function as a formula in the input language.

    It *is* the text (``str(f)``, comparisons and hashing are the text's), e.g.
    ``"X.T @ (-y*sigmoid(-(X @ w)*y))"``, and also has:

    * ``shape``: the output's static shape, as ``shapes=`` takes them (ints, and dimension names
      or expressions of them as strings: ``("d",)``, ``("n - 1", 3)``);
    * ``latex``: the formula in LaTeX (KaTeX-safe); Jupyter shows it through ``_repr_latex_``.
    """

    shape: tuple[int | str, ...]
    latex: str

    def __new__(
        cls, text: str, shape: tuple[int | str, ...] = (), latex: str = ""
    ) -> TensorFormula:
        formula = super().__new__(cls, text)
        formula.shape = tuple(shape)
        formula.latex = latex
        return formula

    @classmethod
    def of(cls, node: Node) -> TensorFormula:
        """The formula of ``node``."""
        shape = tuple(d if isinstance(d, int) else format_dim(d) for d in node.shape)
        return cls(text(node), shape, latex(node))

    def __repr__(self) -> str:
        return f"TensorFormula({str(self)!r}, shape={self.shape!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (TensorFormula, (str(self), self.shape, self.latex))

    def _repr_latex_(self) -> str:
        return f"${self.latex}$"


# -- shared --------------------------------------------------------------------------------------
def _atomic(node: Node, names: Names) -> bool:
    if id(node) in names or node.op in _ATOMIC:
        return True
    if node.op == "fill":
        return True
    if node.op == "map":
        (expr,) = node.attrs
        return bool(expr.is_Function or expr.is_Symbol)
    return False


#: Longest formula printed, in characters: a graph printed as a tree repeats every shared
#: node at each use, which grows exponentially with depth (the gradient of a residual network),
#: so a longer one is replaced by a note (the generated source shares those nodes).
MAX_FORMULA = 20_000
TOO_LONG = "(a formula of more than {} characters: see the generated source)"


def _walk(node: Node, names: Names, formats: Mapping[str, Callable[..., str]],
          wrap: Callable[[str], str], fallback: str = TOO_LONG.format(MAX_FORMULA)) -> str:
    """Print ``node`` bottom-up without recursion (deep graphs), ``names`` first; ``fallback``
    for a formula longer than :data:`MAX_FORMULA`."""
    memo: dict[int, str] = {}
    stack = [node]
    while stack:
        current = stack[-1]
        if id(current) in memo:
            stack.pop()
            continue
        if id(current) in names:
            memo[id(current)] = names[id(current)]
            stack.pop()
            continue
        pending = [a for a in current.args if id(a) not in memo]
        if pending:
            stack.extend(reversed(pending))
            continue
        stack.pop()
        args = [memo[id(a)] if _atomic(a, names) else wrap(memo[id(a)]) for a in current.args]
        raw = [memo[id(a)] for a in current.args]
        printed = formats[current.op](current, args, raw)
        if len(printed) > MAX_FORMULA:
            return fallback
        memo[id(current)] = printed
    return memo[id(node)]




def _expand_items(node: Node) -> str:
    (axes,) = node.attrs
    items = ["None" if i in axes else ":" for i in range(node.ndim)]
    while items[-1] == ":":
        items.pop()
    return ", ".join(items)


# -- text ----------------------------------------------------------------------------------------
def text(node: Node, names: Names | None = None) -> str:
    """``node`` as a formula in the input language (``names`` printed as given)."""
    return _walk(node, names or {}, _TEXT, lambda t: f"({t})")


def _reduction_text(node: Node, args: list[str], raw: list[str]) -> str:
    axes, keepdims = node.attrs
    every = len(axes) == node.args[0].ndim and not keepdims
    extra = "" if every else f", axis={format_axes(axes)}"
    return f"{node.op}({raw[0]}{extra}{', keepdims=True' if keepdims else ''})"


def _map_text(node: Node, args: list[str], raw: list[str]) -> str:
    (expr,) = node.attrs
    expr = expr.xreplace({arg_symbol(i): sp.Symbol(a) for i, a in enumerate(args)})
    return input_text(expr)


def _fill_text(node: Node, args: list[str], raw: list[str]) -> str:
    value = sp.sstr(node.attrs[0])
    return value if node.shape == () else f"full({format_shape(node.shape)}, {value})"


def _transpose_text(node: Node, args: list[str], raw: list[str]) -> str:
    (perm,) = node.attrs
    if perm == tuple(reversed(range(len(perm)))):
        return f"{args[0]}.T"
    return f"transpose({raw[0]}, {perm})"


_TEXT: dict[str, Callable[[Node, list[str], list[str]], str]] = {
    "var": lambda n, a, r: n.name,
    "const": lambda n, a, r: n.name,
    "fill": _fill_text,
    "eye": lambda n, a, r: f"eye({format_dim(n.shape[-1])})",
    "map": _map_text,
    "matmul": lambda n, a, r: f"{a[0]} @ {a[1]}",
    **dict.fromkeys(("sum", "mean", "max", "min", "logsumexp", "prod"), _reduction_text),
    "prod_others": lambda n, a, r: f"prod_others({r[0]}, axis={format_axes(n.attrs[0])})",
    "softmax": lambda n, a, r: f"softmax({r[0]}, axis={n.attrs[0]})",
    "share": lambda n, a, r: (
        f"ties_{n.attrs[0]}({r[0]}, {r[1]}, axis={format_axes(n.attrs[1])})"
    ),
    "transpose": _transpose_text,
    "reshape": lambda n, a, r: f"reshape({r[0]}, {format_shape(n.shape)})",
    "expand": lambda n, a, r: f"{a[0]}[{_expand_items(n)}]",
    "broadcast": lambda n, a, r: f"broadcast_to({r[0]}, {format_shape(n.shape)})",
    "index": lambda n, a, r: f"{a[0]}[{format_index(n.attrs[0])}]",
    "scatter": lambda n, a, r: (
        f"scatter({r[0]}, [{format_index(n.attrs[0])}], {format_shape(n.shape)})"
    ),
    "repeat": lambda n, a, r: f"repeat({r[0]}, {format_dim(n.attrs[0])}, axis={n.attrs[1]})",
    "stack": lambda n, a, r: f"stack({', '.join(r)})",
}
_TEXT.update({op: row.text for op, row in families.OPS.items()})


# -- LaTeX ---------------------------------------------------------------------------------------
def latex(node: Node, names: Names | None = None) -> str:
    """``node`` in LaTeX (KaTeX-safe; ``names`` are LaTeX printed as given)."""
    return _walk(node, names or {}, _LATEX, lambda t: rf"\left({t}\right)",
                 rf"\text{{{TOO_LONG.format(MAX_FORMULA)}}}")


def _dims_latex(shape: Shape) -> str:
    return r" \times ".join(sp.latex(sp.sympify(d)) for d in shape)


def _shape_latex(shape: Shape) -> str:
    return r"\left(" + ", ".join(sp.latex(sp.sympify(d)) for d in shape) + r"\right)"


def _call_latex(name: str, *parts: str) -> str:
    return rf"\operatorname{{{name}}}\left({', '.join(parts)}\right)"


def _reduction_latex(node: Node, args: list[str], raw: list[str]) -> str:
    axes, keepdims = node.attrs
    every = len(axes) == node.args[0].ndim and not keepdims
    parts = [raw[0]] if every else [raw[0], rf"\text{{axis}}={format_axes(axes)}"]
    if keepdims:
        parts.append(r"\text{keepdims}")
    return _call_latex(node.op, *parts)


def _map_latex(node: Node, args: list[str], raw: list[str]) -> str:
    (expr,) = node.attrs
    slots = {arg_symbol(i): sp.Symbol(f"slot{chr(97 + i % 26)}{i}") for i in range(len(args))}
    symbol_names = {slots[arg_symbol(i)]: a for i, a in enumerate(args)}
    printed = sp.latex(expr.xreplace(slots), symbol_names=symbol_names, mul_symbol=r" \odot ")
    return _NUMBER_ODOT.sub(r"\1 ", printed)  # 2 y, \frac{1}{n} y: a number scales


def _fill_latex(node: Node, args: list[str], raw: list[str]) -> str:
    value = node.attrs[0]
    if node.shape == ():
        return sp.latex(value)
    ones = rf"\mathbf{{{0 if value == 0 else 1}}}_{{{_dims_latex(node.shape)}}}"
    return ones if value in (0, 1) else rf"{sp.latex(value)} \, {ones}"


def _transpose_latex(node: Node, args: list[str], raw: list[str]) -> str:
    (perm,) = node.attrs
    if perm == tuple(reversed(range(len(perm)))):
        return f"{{{args[0]}}}^{{T}}"
    return _call_latex("transpose", raw[0], str(perm))


def _expand_latex(node: Node, arg: str) -> str:
    items = _expand_items(node).replace("None", r"\text{None}")
    return rf"{arg}\left[{items}\right]"


_LATEX: dict[str, Callable[[Node, list[str], list[str]], str]] = {
    "var": lambda n, a, r: latex_name(n.name),
    "const": lambda n, a, r: latex_name(n.name),
    "fill": _fill_latex,
    "eye": lambda n, a, r: rf"I_{{{sp.latex(sp.sympify(n.shape[-1]))}}}",
    "map": _map_latex,
    "matmul": lambda n, a, r: f"{a[0]} {a[1]}",
    **dict.fromkeys(("sum", "mean", "max", "min", "logsumexp", "prod"), _reduction_latex),
    "prod_others": lambda n, a, r: (
        rf"\operatorname{{prod}}_{{\text{{others}}}}\left({r[0]}, "
        rf"\text{{axis}}={format_axes(n.attrs[0])}\right)"
    ),
    "softmax": lambda n, a, r: _call_latex("softmax", r[0], rf"\text{{axis}}={n.attrs[0]}"),
    "share": lambda n, a, r: (
        rf"\operatorname{{ties}}_{{\text{{{n.attrs[0]}}}}}\left({r[0]}, {r[1]}\right)"
    ),
    "transpose": _transpose_latex,
    "reshape": lambda n, a, r: _call_latex("reshape", r[0], _shape_latex(n.shape)),
    "expand": lambda n, a, r: _expand_latex(n, a[0]),
    "broadcast": lambda n, a, r: _call_latex("broadcast", r[0], _shape_latex(n.shape)),
    "index": lambda n, a, r: rf"{a[0]}\left[{format_index(n.attrs[0])}\right]",
    "scatter": lambda n, a, r: _call_latex(
        "scatter", r[0], rf"\left[{format_index(n.attrs[0])}\right]", _shape_latex(n.shape)
    ),
    "repeat": lambda n, a, r: _call_latex(
        "repeat", r[0], sp.latex(sp.sympify(n.attrs[0])), rf"\text{{axis}}={n.attrs[1]}"
    ),
    "stack": lambda n, a, r: _call_latex("stack", *r),
}
_LATEX.update({op: row.latex for op, row in families.OPS.items()})


__all__ = ["TensorFormula", "latex", "text"]
