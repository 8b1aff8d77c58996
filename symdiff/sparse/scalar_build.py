"""The scalar layer's sparse build: the nonzeros of :mod:`symdiff.sparse.scalar`, emitted as an
elementwise module whose function returns the vector of their values, plus its ``_pattern``.
The build pipeline's layer for scalar calls with ``sparse=True`` (:data:`LAYER`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace

import sympy as sp

from ..codegen.emit import ArrayResult, Program, module_spec
from ..codegen.printer import brief_text
from ..codegen.spec import render_module
from ..layer import Built, Call
from ..request import Request, make_request, restored
from .pattern import PATTERN
from .scalar import ENTRIES, Entries

#: The ``# Mode:`` of a sparse scalar module.
MODE = "forward, structural nonzeros only"


def entries_of(request: Request) -> Entries:
    """The nonzeros of ``request`` (a ``jacobian`` or ``hessian``)."""
    return ENTRIES[request.kind](request.exprs, request.wrt, request.options.simplify)


def sparse_exprs(request: Request) -> list[sp.Expr]:
    """``.exprs`` of a sparse function: the values it computes, in order (a Hessian's lower
    triangle)."""
    return restored(request, list(entries_of(request).exprs))


def _doc(request: Request, found: Entries) -> list[str]:
    names = ", ".join(request.params) or "none"
    count = len(found.entries) + len(found.mirrors)
    what = "Hessian" if request.kind == "hessian" else "Jacobian"
    lines = [
        f"Arguments (in this order, or by name): {names}; numbers (one point).",
        f"Returns the {count} values of the structural nonzeros of the {what}, a vector; "
        f"{PATTERN}() gives their rows and columns and the shape "
        f"{found.shape[0]} x {found.shape[1]} (scipy.sparse.coo_array((values, (rows, cols)), "
        "shape) is the matrix).",
    ]
    if found.mirrors:
        lines.append("The first values are the lower triangle (row >= column); the upper one "
                     "repeats them.")
    return lines


def build(request: Request) -> Built:
    """Derive the nonzeros of ``request`` and emit their module (no caching)."""
    found = entries_of(request)
    computed = len(found.entries)
    count = computed + len(found.mirrors)
    what = "Hessian" if request.kind == "hessian" else "Jacobian"
    source_text = "; ".join(brief_text(e) for e in request.exprs)
    title = (f"Sparse {what} of {brief_text(request.exprs[0])}" if request.kind == "hessian"
             else f"Sparse {what}") + f" with respect to ({', '.join(request.wrt)})"
    result = ArrayResult(
        (count,), {(k,): k for k in range(computed)},
        {(computed + m,): (k,) for m, k in enumerate(found.mirrors)},
    )
    recipe = replace(request.recipe, mode=MODE, outputs=())
    program = Program(
        name=recipe.name, title=title, expression=source_text, params=request.params,
        outputs=list(found.exprs), output_names=[], result=result,
        doc=_doc(request, found), mode=MODE, key=request.key(),
    )
    spec = module_spec(program, cse=request.options.cse)
    spec = replace(spec, functions=(*spec.functions, found.pattern().function(recipe.name)),
                   helpers=tuple(sorted({*spec.helpers, "_affine_grid"})))
    return Built(render_module(spec), recipe, functools.partial(sparse_exprs, request))


class SparseScalarLayer:
    """Scalar expressions with ``sparse=True``, as the build pipeline sees them
    (:class:`symdiff.layer.Layer`)."""

    def request(self, call: Call) -> Request:
        """Parse and validate a builder call, as the scalar layer does."""
        return make_request(call.kind, call.exprs, call.wrt, call.options)

    def build(self, request: Request) -> Built:
        """Derive the nonzeros of ``request`` and emit their module."""
        return build(request)

    def exprs(self, request: Request) -> Callable[[], list[sp.Expr]]:
        """The values' expressions, derived when first called."""
        return functools.partial(sparse_exprs, request)


#: The sparse scalar layer (see :data:`symdiff.pipeline.LAYERS`).
LAYER = SparseScalarLayer()
