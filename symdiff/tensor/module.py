"""A tensor program -> the text of one generated module (rendered by ``module.py.jinja``).

The module has the scalar layer's shape: a header naming what it was generated from, ``import
numpy as _np``, the runtime helpers it calls (always ``_check_shapes``, which checks the
arguments against their declared shapes and binds the named dimensions), and one function whose
docstring lists the arguments with their shapes.
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy as sp

from ..emit import render_module
from ..runtime import helper_source
from .emit import Program, emit_statements
from .ir import Node, topological
from .shapes import dims_of


def _check_line(program: Program) -> tuple[str, str]:
    """The call of ``_check_shapes`` binding every named dimension of the arguments."""
    dims: list[str] = []
    specs = []
    for p in program.params:
        spec = []
        for d in program.shapes[p]:
            if isinstance(d, int):
                spec.append(str(d))
            else:
                spec.append(repr(d.name))
                if d.name not in dims:
                    dims.append(d.name)
        specs.append(f"({spec[0]},)" if len(spec) == 1 else f"({', '.join(spec)})")
    names = ", ".join(repr(p) for p in program.params)
    arrays = ", ".join(program.params)
    needs = ", ".join(f"({d.name!r}, {n})" for d, n in sorted(program.needs.items(), key=str))
    one = "," if len(program.params) == 1 else ""
    call = (
        f"_check_shapes(({names}{one}), ({arrays}{one}), ({', '.join(specs)}{one}), "
        f"({needs}{',' if len(program.needs) == 1 else ''}))"
    )
    if not dims:
        return "_sizes", call
    targets = ", ".join(f"_{d}_dim" for d in dims)
    return (f"({targets},)" if len(dims) == 1 else targets), call


def _prelude(program: Program) -> list[str]:
    params = program.params
    lines = [f"{p} = _np.asarray({p})" for p in params]
    lines.append(f"_dtype = _np.result_type({', '.join([*params, '1.0'])})")
    lines += [f"{p} = {p}.astype(_dtype, copy=False)" for p in params]
    return lines


def emit_module(program: Program) -> str:
    """The full text of the generated module for ``program``."""
    statements, used = emit_statements(program)
    check = [_check_line(program)] if program.params else []
    helpers = helper_source(sorted(used | {"_check_shapes"} if program.params else used))
    return render_module(
        program,
        helpers=helpers,
        prelude=_prelude(program),
        assignments=[*check, *statements],
        outputs=[],
        result=program.result,
    )


def used_dims(program_roots: Sequence[Node]) -> set[sp.Symbol]:
    """Every named dimension the nodes under ``program_roots`` refer to."""
    found: set[sp.Symbol] = set()
    for node in topological(program_roots):
        found |= dims_of(node.shape)
        for attr in node.attrs:
            if isinstance(attr, sp.Basic):
                found |= {s for s in attr.free_symbols if s.is_integer}
    return found


__all__ = ["emit_module", "used_dims"]
