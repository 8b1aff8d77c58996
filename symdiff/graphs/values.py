"""The numbers of a tensor graph at a point: every node's value and adjoint, computed by one
generated NumPy function.

The nodes asked for (the forward values and the adjoints the backward walk built, as nodes of
the request's builder) become the outputs of one :class:`~symdiff.tensor.emit.Program`, emitted,
verified and loaded as ``sd.grad``'s code is (:mod:`symdiff.tensor.module`,
:func:`symdiff.codegen.load.load_function`): the numbers are those of the same rules and the
same emitter, never of a second interpreter of the operations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..codegen import naming
from ..codegen.load import load_function
from ..constants import arguments
from ..recipe import function_name
from ..tensor.emit import Program
from ..tensor.ir import Node
from ..tensor.module import emit_module
from ..tensor.request import TensorRequest
from ..tensor.shapes import dims_of


def evaluate(request: TensorRequest, nodes: Sequence[Node], at: Mapping[str, Any]
             ) -> list[np.ndarray]:
    """The value of each of ``nodes`` (of ``request``'s builder) with the variables set to
    ``at`` (one array per parameter of the request; shapes checked by the generated code, a
    :class:`~symdiff.errors.ShapeError` naming the argument otherwise)."""
    params, constants, shapes = request.params, request.passed, request.shapes
    outputs = [(naming.output_entry((i,)), node) for i, node in enumerate(nodes)]
    bound = {d for p in params for d in dims_of(shapes[p])}
    program = Program(
        name=function_name("value"),
        title="Values and adjoints of the graph's nodes",
        expression=request.expression,
        params=params + tuple(c.name for c in constants),
        shapes={**{p: shapes[p] for p in params}, **{c.name: c.shape for c in constants}},
        outputs=outputs,
        result="(" + ", ".join(name for name, _ in outputs) + ",)",
        mode="value",
        needs={d: n for d, n in request.builder.needs.items() if d in bound},
        cse=False,  # quicker to build; equal to grad's up to the order of a rounding
        indices=tuple(c.name for c in constants if c.is_index),
    )
    function = load_function(emit_module(program), program.name, "<symdiff graph values>",
                             copy=False)
    values = function(**{p: at[p] for p in params}, **arguments(constants, fresh=False))
    return [np.asarray(v, dtype=float) for v in values]


__all__ = ["evaluate"]
