"""The sparse tensor layer: a Jacobian or Hessian of tensor expressions (``shapes=``) as the
values of its structural nonzeros, block by block, and their ``_pattern``.

The tangents are those of the dense layer (:mod:`symdiff.tensor.build`): forward mode from a
seed for a Jacobian, forward over reverse for a Hessian, one seed per ``wrt`` variable (a node
of its own, so that an ``eye`` the expression itself makes, as ``diag`` does, is never taken
for it). :class:`~symdiff.sparse.structure.Structure` reads each tangent as terms; each term is
one block of values (a vector computed by the emitted code) and of the pattern (affine rows and
columns). Rows are the output entries (several outputs, then several ``wrt`` variables laid end
to end), columns the variable entries, each flattened in C order.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import sympy as sp

from ..codegen.spec import render_module
from ..errors import ShapeError
from ..layer import Built, Call
from ..tensor.build import copied, program_for
from ..tensor.formula import TensorFormula
from ..tensor.ir import Node
from ..tensor.module import module_spec
from ..tensor.ops import Builder
from ..tensor.request import TensorRequest, request_for
from ..tensor.shapes import as_dim, dims_of, format_shape
from ..tensor.walk import backward, forward
from .merge import merged
from .pattern import Block, Pattern
from .reshape import strides
from .rules import RULES
from .structure import Structure
from .terms import ZERO, Term, collapse, full, size

#: The ``# Mode:`` of each kind of sparse tensor module.
MODES = {
    "jacobian": "forward, structural nonzeros only",
    "hessian": "forward over reverse, structural nonzeros only",
}


class DenseFallbackWarning(UserWarning):
    """Part of a sparse Jacobian or Hessian is kept dense: an operation whose structure is not
    analysed (named in the message) reached the derivative."""


@dataclass(frozen=True)
class Report:
    """What the structural analysis kept dense: ``(op, reason)`` for each part (a fresh
    build's ``CompiledFunction.recorded``; the module's ``_pattern`` says it in a comment)."""

    dense: tuple[tuple[str, str], ...]


@dataclass
class _Found:
    blocks: list[tuple[Block, Node]]
    dense: list[tuple[str, str]]
    shape: tuple[sp.Expr, sp.Expr]


def _seed(b: Builder, var: Node) -> Node:
    """The identity seed of ``var``: an ``eye`` node of its own."""
    width = size(sp.Mul(*var.shape))
    return b.node("eye", (), ("seed", var.name), (*var.shape, as_dim(width)))


def _sizes(nodes: Sequence[Node]) -> list[sp.Expr]:
    return [size(sp.Mul(*n.shape)) for n in nodes]


def _offsets(sizes: Sequence[sp.Expr]) -> list[sp.Expr]:
    out, total = [], ZERO
    for s in sizes:
        out.append(total)
        total = size(total + s)
    return out


def _blocks(b: Builder, terms: Sequence[Term], rows: tuple, row_offset: sp.Expr,
            col_offset: sp.Expr) -> list[tuple[Block, Node]]:
    """Each term as a block of the pattern (rows flattened in C order) and its values as a
    vector."""
    out = []
    row_strides = strides(rows)
    for term in terms:
        row0 = size(row_offset + sum((s * a for s, a in zip(row_strides, term.row0,
                                                            strict=True)), ZERO))
        row_steps = tuple(size(sum((s * steps[local] for s, steps in
                                    zip(row_strides, term.row_steps, strict=True)), ZERO))
                          for local in range(len(term.counts)))
        block = Block(term.counts, row0, row_steps, size(col_offset + term.col0),
                      term.col_steps)
        length = size(sp.Mul(*term.counts)) if term.counts else sp.Integer(1)
        out.append((block, b.reshape(full(b, term), (as_dim(length),))))
    return out


def analyse(request: TensorRequest) -> _Found:
    """The blocks of the request's Jacobian or Hessian."""
    b, shapes = request.builder, request.shapes
    variables = [b.var(w, shapes[w]) for w in request.wrt]
    simplify = request.options.simplify
    if request.kind == "hessian":
        (root,) = request.roots
        if root.shape != ():
            raise ShapeError(f"hessian needs a scalar expression, but this one has shape "
                             f"{format_shape(root.shape)}; sum it, or use jacobian")
        outputs = backward(b, root, variables, simplify)
    else:
        outputs = list(request.roots)
    row_offsets = _offsets(_sizes(outputs))
    col_offsets = _offsets(_sizes(variables))
    blocks: list[tuple[Block, Node]] = []
    dense: list[tuple[str, str]] = []
    for var, col_offset in zip(variables, col_offsets, strict=True):
        seed = _seed(b, var)
        structure = Structure(b, seed, var.shape, RULES)
        tangents = forward(b, outputs, var, simplify, seed=seed)
        for output, tangent, row_offset in zip(outputs, tangents, row_offsets, strict=True):
            terms = merged(b, [collapse(b, t) for t in structure.terms(tangent)],
                           structure.sizes)
            blocks += _blocks(b, terms, output.shape, row_offset, col_offset)
        dense += structure.dense
    total_rows = size(sum(_sizes(outputs), ZERO))
    total_cols = size(sum(_sizes(variables), ZERO))
    return _Found(blocks, dense, (total_rows, total_cols))


def _values(b: Builder, blocks: Sequence[tuple[Block, Node]]) -> Node:
    """One vector of every block's values, in order."""
    parts = [node for _, node in blocks]
    if not parts:
        return b.fill(0, (0,))
    if len(parts) == 1:
        return parts[0]
    total = size(sum((size(p.shape[0]) for p in parts), ZERO))
    return b.node("concatenate", parts, (0,), (as_dim(total),))


def build(request: TensorRequest) -> Built:
    """Analyse ``request`` and emit its values kernel and ``_pattern`` (no caching)."""
    found = analyse(request)
    notes = tuple(f"{op}: {why}" for op, why in dict.fromkeys(found.dense))
    if notes:
        parts = "; ".join(notes)
        warnings.warn(DenseFallbackWarning(
            f"sparse {request.kind}: part of it is kept dense ({parts}); the pattern holds "
            "every entry those parts reach"), stacklevel=6)
    b = request.builder
    values = _values(b, found.blocks)
    mode = MODES[request.kind]
    recipe = replace(request.recipe, mode=mode, outputs=("_values",))
    what = "Hessian" if request.kind == "hessian" else "Jacobian"
    names = ", ".join(request.wrt)
    dims = tuple(sorted({d.name for p in request.params for d in dims_of(request.shapes[p])}))
    rows, cols = (sp.sstr(s) for s in found.shape)
    program = program_for(
        request, recipe, [("_values", values)], "_values",
        f"Sparse {what} with respect to ({names})",
        f"the values of the {what} structural nonzeros, a vector; _pattern({', '.join(dims)}) "
        f"gives their rows and columns in the {rows} x {cols} matrix (entries reached twice "
        "add up)")
    pattern = Pattern(tuple(block for block, _ in found.blocks), found.shape, dims, notes)
    spec = module_spec(program)
    spec = replace(spec, functions=(*spec.functions, pattern.function(recipe.name)),
                   helpers=tuple(sorted({*spec.helpers, "_affine_grid"})))
    report = Report(tuple(dict.fromkeys(found.dense)))
    return Built(render_module(spec), recipe,
                 [TensorFormula.of(node) for _, node in found.blocks], report)


def sparse_exprs(kind, roots, many, wrt, single, options, shapes, params,
                 needs) -> list[TensorFormula]:
    """The ``.exprs`` of a sparse tensor function loaded from the disk cache: its graph copied
    into a fresh builder and analysed there (the formulas of its blocks of values)."""
    request = copied(kind, roots, many, wrt, single, options, shapes, params)
    request.builder.needs.update(needs)
    return [TensorFormula.of(node) for _, node in analyse(request).blocks]


class SparseTensorLayer:
    """Tensor expressions with ``sparse=True``, as the build pipeline sees them
    (:class:`symdiff.layer.Layer`)."""

    def request(self, call: Call) -> TensorRequest:
        """Parse and validate a builder call, as the tensor layer does."""
        return request_for(call.kind, call.exprs, call.wrt, call.options, call.shapes)

    def build(self, request: TensorRequest) -> Built:
        """Analyse and emit ``request``."""
        return build(request)

    def exprs(self, request: TensorRequest) -> Callable[[], list]:
        """The formulas of the blocks of values, derived when first called."""
        r = request
        return functools.partial(sparse_exprs, r.kind, r.roots, r.many, r.wrt, r.single,
                                 r.options, r.shapes, r.params, tuple(r.builder.needs.items()))


#: The sparse tensor layer (see :data:`symdiff.pipeline.LAYERS`).
LAYER = SparseTensorLayer()
