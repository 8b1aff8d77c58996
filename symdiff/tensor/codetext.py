"""Pieces of tensor code as text, for the emitter (:mod:`symdiff.tensor.emit`).

Dimensions and shapes (``_n_dim``, ``(_n_dim, 3)``), the nodes printed inline (variables,
constants and views: ``.T``, ``x[:, None]``, slices, reshapes, ``broadcast_to``), reductions as
the ufunc's own ``reduce``, and the last pass over the emitted lines: shared subexpressions of
dimensions put back, temporaries named ``_t0, _t1, ...`` in order of definition.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp

from ..codegen import naming
from ..codegen.printer import ArrayCodePrinter, CodePrinter
from ..simplify.literals import common_factors
from .ir import Node, format_index
from .shapes import Dim, Shape

#: A temporary's name before renumbering (``_s0``, ``_s1``, ...).
PLACEHOLDER = naming.SLOT


def dim_code(dim: Dim) -> str:
    """A dimension as code: ``3``, ``_n_dim``, ``_d_dim*_n_dim``."""
    if isinstance(dim, int):
        return str(dim)
    return CodePrinter().doprint(dim.xreplace(dim_locals(dim)))


def dim_locals(expr: sp.Basic) -> dict[sp.Basic, sp.Basic]:
    """The named dimensions of ``expr`` -> the local variables holding their sizes."""
    return {s: sp.Symbol(naming.dimension(s.name)) for s in expr.free_symbols if s.is_integer}


def is_dim(symbol: sp.Basic) -> bool:
    """Whether ``symbol`` is a dimension's local variable (``_n_dim``)."""
    return naming.is_dimension(symbol.name)


def shape_code(shape: Shape) -> str:
    """A shape as a tuple literal of dimension codes."""
    items = [dim_code(d) for d in shape]
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def index_text(index: tuple, printer: ArrayCodePrinter) -> str:
    """The text of a basic index; for the Array API backend (a printer with ``full_index``)
    closed by ``...``, since the standard wants every axis indexed (NumPy's ``x[1:]`` of a
    matrix is the standard's ``x[1:, ...]``)."""
    text = format_index(index)
    if getattr(printer, "full_index", False) and "..." not in text:
        return f"{text}, ..."
    return text


def expand_code(code: str, node: Node, printer: ArrayCodePrinter | None = None) -> str:
    """``code[:, None]`` (or ``code[..., None]``): new axes of size 1 for an ``expand`` node."""
    (axes,) = node.attrs
    if axes == (node.ndim - 1,) and node.ndim > 2:
        return f"{code}[..., None]"
    items = ["None" if i in axes else ":" for i in range(node.ndim)]
    while items[-1] == ":":
        items.pop()
    if getattr(printer, "full_index", False) and len(items) < node.ndim:
        items.append("...")
    return f"{code}[{', '.join(items)}]"


def inline_code(node: Node, args: list[str], printer: ArrayCodePrinter) -> str:
    """Code of a node printed where it is used (a variable, a constant, a view), given the code
    of its arguments (:data:`INLINE_CODE`, by op)."""
    return INLINE_CODE[node.op](node, args, printer)


def _fill_code(node: Node, c: list[str], printer: ArrayCodePrinter) -> str:
    value = printer.doprint(node.attrs[0].xreplace(dim_locals(node.attrs[0])))
    if node.shape == ():
        return f"_np.asarray({value}, dtype=_dtype)"
    return f"_np.full({shape_code(node.shape)}, {value}, dtype=_dtype)"


def _transpose_code(node: Node, c: list[str], printer: ArrayCodePrinter) -> str:
    (perm,) = node.attrs
    if perm == (1, 0):  # ``.T`` of a matrix (the standard's ``.T`` is for two axes only)
        return f"{c[0]}.T"
    if perm == (0,):
        return c[0]
    return f"_np.transpose({c[0]}, {perm})"


#: The code of each op printed inline: ``(node, code of its args, printer) -> code``.
INLINE_CODE: dict[str, Callable[[Node, list[str], ArrayCodePrinter], str]] = {
    "var": lambda node, c, printer: node.name,
    "const": lambda node, c, printer: node.name,
    "fill": _fill_code,
    "transpose": _transpose_code,
    "expand": lambda node, c, printer: expand_code(c[0], node, printer),
    "index": lambda node, c, printer: f"{c[0]}[{index_text(node.attrs[0], printer)}]",
    "reshape": lambda node, c, printer: f"_np.reshape({c[0]}, {shape_code(node.shape)})",
    "broadcast": lambda node, c, printer: f"_np.broadcast_to({c[0]}, {shape_code(node.shape)})",
}


#: The ufunc whose ``reduce`` each reduction is.
REDUCING_UFUNCS = {"sum": "add", "max": "maximum", "min": "minimum", "prod": "multiply"}


def reduce_code(op: str, code: str, arguments: str, ndim: int | None = None) -> str:
    """A reduction of ``code`` as the ufunc's own ``reduce`` (``_np.add.reduce(x, axis=0)``):
    ``_np.sum`` and ``x.sum()`` are Python wrappers around exactly this call, which cost
    0.06-1 us each, most of a reduction's time on small arrays. ``arguments`` are passed on;
    "" means all axes, which ``reduce`` must be told (``axis=None``: its default is
    ``axis=0``) unless ``code`` is known to have one axis (``ndim == 1``)."""
    if not arguments and ndim != 1:
        arguments = "axis=None"
    return f"_np.{REDUCING_UFUNCS[op]}.reduce({code}{', ' if arguments else ''}{arguments})"


def factored(expr: sp.Expr) -> sp.Expr:
    """``expr`` with common factors of sums taken out (``200*a - 200*b`` -> ``200*(a - b)``), so
    that the sums left are found again elsewhere by CSE and each costs one pass; where that
    would grow the numbers (nested denominators cleared), ``expr`` itself
    (:func:`symdiff.simplify.literals.common_factors`)."""
    return common_factors(expr) if isinstance(expr, sp.Expr) else expr


def inline_scalars(
    shared: list[tuple[sp.Symbol, sp.Expr]], forms: list[sp.Expr]
) -> tuple[list[tuple[sp.Symbol, sp.Expr]], list[sp.Expr]]:
    """Put shared subexpressions of dimensions only (``1/_n_dim``) back where they are used."""
    kept: list[tuple[sp.Symbol, sp.Expr]] = []
    for symbol, expr in shared:
        if all(naming.is_dimension(s.name) for s in expr.free_symbols):
            kept = [(k, e.xreplace({symbol: expr})) for k, e in kept]
            shared = [(k, e.xreplace({symbol: expr})) for k, e in shared]
            forms = [f.xreplace({symbol: expr}) for f in forms]
        else:
            kept.append((symbol, expr))
    return [(k, dict(shared)[k]) for k, _ in kept], forms


def closure(needed: set[sp.Basic], pending: dict[sp.Symbol, sp.Expr]) -> set[sp.Basic]:
    """``needed`` plus the symbols the pending shared subexpressions it uses need in turn."""
    result = set(needed)
    for symbol, expr in reversed(pending.items()):  # cse lists a subexpression after its parts
        if symbol in result:
            result |= expr.free_symbols
    return result


def renumber(lines: list[tuple[str, str]], aliases: dict[str, str]) -> list[tuple[str, str]]:
    """Temporaries named ``_t0, _t1, ...`` in order of definition (an alias shares a name)."""
    rename = renamer(lines, aliases)
    return [(rename(t), rename(v)) for t, v in lines]


def renamer(lines: list[tuple[str, str]], aliases: dict[str, str]) -> Callable[[str], str]:
    """What :func:`renumber` does to a text of ``lines`` (or of another text that reads their
    temporaries)."""
    names: dict[str, str] = {}
    for target, _ in lines:
        for match in PLACEHOLDER.finditer(target):
            names.setdefault(match.group(0), naming.temporary(len(names)))

    def resolve(name: str) -> str:
        while name in aliases:
            name = aliases[name]
        return names.get(name, name)

    def rename(text: str) -> str:
        return PLACEHOLDER.sub(lambda m: resolve(m.group(0)), text)

    return rename
