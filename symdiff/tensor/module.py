"""A tensor program -> one generated module: a :class:`~symdiff.codegen.spec.ModuleSpec`, as
the scalar emitter makes, rendered by :func:`~symdiff.codegen.spec.render_module`.

The module has the scalar layer's shape: a header naming what it was generated from, ``import
numpy as _np``, one function whose docstring lists the arguments with their shapes, and after
it the runtime helpers it calls (with arguments, always ``_check_shapes``, which checks them
against their declared shapes, and ``_float_arrays``, which converts them when they are not
float64 arrays already).

The function checks its arguments with an inline test of their ``ndim`` and ``shape`` (a few
tuple comparisons, much cheaper than a call) and calls ``_check_shapes`` only when that test
fails, so that a wrong shape still raises its clear ``ShapeError`` (a ``ValueError``)::

    if X.ndim != 2 or w.shape != X.shape[1:] or y.shape != X.shape[:1]:
        _check_shapes(('X', 'w', 'y'), (X, w, y), (('n', 'd'), ('d',), ('n',)), ())

Then it binds the named dimensions its statements use, from the shapes of the arguments where
they first appear (``_n_dim, _d_dim = X.shape``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import sympy as sp

from ..codegen import naming
from ..codegen.loops import READY, READY_LINE
from ..codegen.spec import ModuleSpec, names_tuple, render_module
from ..codegen.standard import check_helpers, standard_code
from .emit import Program, emit_statements
from .finish import release
from .ir import Node, topological
from .shapes import dims_of


def _check_call(program: Program) -> str:
    """The call of ``_check_shapes`` that checks every argument and raises the clear error."""
    specs = []
    for p in program.params:
        spec = [str(d) if isinstance(d, int) else repr(d.name) for d in program.shapes[p]]
        specs.append(f"({spec[0]},)" if len(spec) == 1 else f"({', '.join(spec)})")
    names = ", ".join(repr(p) for p in program.params)
    arrays = ", ".join(program.params)
    needs = ", ".join(f"({d.name!r}, {n})" for d, n in sorted(program.needs.items(), key=str))
    one = "," if len(program.params) == 1 else ""
    return (
        f"_check_shapes(({names}{one}), ({arrays}{one}), ({', '.join(specs)}{one}), "
        f"({needs}{',' if len(program.needs) == 1 else ''}))"
    )


def _shape_slice(param: str, start: int, stop: int, rank: int) -> str:
    """``X.shape``, ``X.shape[1:]``, ``X.shape[:1]`` or ``X.shape[1:3]``."""
    if start == 0 and stop == rank:
        return f"{param}.shape"
    if stop == rank:
        return f"{param}.shape[{start}:]"
    return f"{param}.shape[:{stop}]" if start == 0 else f"{param}.shape[{start}:{stop}]"


def _fast_test(program: Program) -> tuple[list[str], dict[str, tuple[str, int]]]:
    """The inline test that is true when some argument does not have its declared shape.

    Returns the test, as groups of comparisons to join by ``or`` (one group per parameter, then
    the least sizes), and, for every named dimension, the argument and axis where it first
    appears. Comparisons are ordered so that every ``P.shape[i]`` is read only after the rank
    of ``P`` has been checked (``or`` short-circuits): a parameter is checked whole against a
    run of the shape of an earlier, checked one (``w.shape != X.shape[1:]``) or against a
    tuple of fixed sizes, else by its ``ndim`` and then axis by axis against where each named
    dimension first appeared. The least sizes that literal indices need come last. The test
    is false exactly when ``_check_shapes`` would accept the arguments.
    """
    first: dict[str, tuple[str, int]] = {}
    checked: list[str] = []
    groups: list[str] = []
    for p in program.params:
        tests: list[str] = []
        shape = program.shapes[p]
        rank = len(shape)
        run = _matching_run(program, checked, shape) if shape else None
        if run is not None:
            tests.append(f"{p}.shape != {run}")
        elif shape and all(isinstance(d, int) for d in shape):
            items = ", ".join(str(d) for d in shape)
            tests.append(f"{p}.shape != ({items}{',' if rank == 1 else ''})")
        else:
            tests.append(f"{p}.ndim != {rank}")
            for axis, dim in enumerate(shape):
                if isinstance(dim, int):
                    tests.append(f"{p}.shape[{axis}] != {dim}")
                elif dim.name in first:
                    owner, where = first[dim.name]
                    tests.append(f"{p}.shape[{axis}] != {owner}.shape[{where}]")
                else:
                    first[dim.name] = (p, axis)
        for axis, dim in enumerate(shape):  # after a whole match: where its dimensions appear
            if not isinstance(dim, int):
                first.setdefault(dim.name, (p, axis))
        checked.append(p)
        groups.append(" or ".join(tests))
    least = [
        f"{first[dim.name][0]}.shape[{first[dim.name][1]}] < {n}"
        for dim, n in sorted(program.needs.items(), key=str)
    ]
    return groups + ([" or ".join(least)] if least else []), first


def _if_check(program: Program, groups: list[str]) -> str:
    """The ``if`` statement (one prelude line, or several when long) that calls
    ``_check_shapes`` when the inline test fails."""
    call = f"\n        {_check_call(program)}"
    line = f"if {' or '.join(groups)}:"
    if len(line) <= 95:
        return line + call
    inner = "\n        or ".join(groups)
    return f"if (\n        {inner}\n    ):" + call


def _matching_run(program: Program, checked: list[str], shape: tuple) -> str | None:
    """``Q.shape[a:b]`` for an already checked parameter ``Q`` whose axes ``a:b`` are declared
    as ``shape`` (the same named dimensions and fixed sizes, in order), or None."""
    for q in checked:
        declared = program.shapes[q]
        for start in range(len(declared) - len(shape) + 1):
            if all(_same(a, b) for a, b in zip(declared[start:], shape, strict=False)):
                return _shape_slice(q, start, start + len(shape), len(declared))
    return None


def _same(a: object, b: object) -> bool:
    if isinstance(a, int) or isinstance(b, int):
        return isinstance(a, int) and isinstance(b, int) and a == b
    return a.name == b.name  # type: ignore[attr-defined]


def _bind_dims(
    program: Program, first: dict[str, tuple[str, int]], used: str
) -> list[tuple[str, str]]:
    """Assignments of the named dimensions that ``used`` (the function's code) refers to, each
    read from the argument where it first appears (whose shape the test has checked)."""
    wanted = [
        d for d in first if re.search(rf"(?<!\w){re.escape(naming.dimension(d))}(?!\w)", used)
    ]
    lines: list[tuple[str, str]] = []
    for p in program.params:
        mine = [d for d in wanted if first[d][0] == p]
        if not mine:
            continue
        shape = program.shapes[p]
        names = [None if isinstance(d, int) else d.name for d in shape]
        if None not in names and len(set(names)) == len(names):  # (n, d): unpack the shape
            targets = [naming.dimension(name) for name in names]
            lines.append(
                (f"({targets[0]},)" if len(targets) == 1 else ", ".join(targets), f"{p}.shape")
            )
        else:  # fixed sizes or a repeated dimension: index the shape
            lines.append((naming.shape_of(p), f"{p}.shape"))
            lines += [(naming.dimension(d), f"{naming.shape_of(p)}[{first[d][1]}]") for d in mine]
    return lines


#: The module-level constant the argument prelude compares dtypes with (``is``: one test).
FLOAT64 = '_FLOAT64 = _np.dtype("float64")'


def _prelude(program: Program) -> list[str]:
    """Arguments as arrays of one float dtype. Float64 ndarrays, the usual call, are recognised
    by two identity tests per argument and used as they are; anything else goes through the
    ``_float_arrays`` helper (``asarray``, ``result_type`` with ``1.0``, ``astype``, and a
    clear error naming an argument that is not real numbers), which costs about 0.3 us more
    per call. A body that makes arrays reads ``_dtype`` (bound after
    the shape test, from the first argument). Index bound constants (int64 positions, passed
    by the compiled function) are not converted."""
    params = tuple(p for p in program.params if p not in program.indices)
    if not params:
        return ["_dtype = _np.result_type(1.0)"]
    tests = [f"{p}.__class__ is not _np.ndarray or {p}.dtype is not _FLOAT64" for p in params]
    targets = f"({params[0]},)" if len(params) == 1 else ", ".join(params)
    convert = f"\n        {targets} = _float_arrays({names_tuple(params)}, {', '.join(params)})"
    line = f"if {' or '.join(tests)}:"
    if len(line) > 95:
        line = "if (\n        " + "\n        or ".join(tests) + "\n    ):"
    return [line + convert]


def emit_module(program: Program) -> str:
    """The full text of the generated module for ``program`` (:func:`module_spec`, rendered)."""
    return render_module(module_spec(program))


def _standard_prelude(program: Program) -> list[str]:
    """The Array API backend's argument prelude: the namespace of the arguments (``_xp``), and
    the arguments as its arrays of one real floating dtype (``_xp_float_arrays``)."""
    params = program.params
    lines = [f"_xp = _xp_namespace({', '.join(params)})"]
    if not params:
        return [*lines, "_dtype = _xp.float64"]
    targets = f"({params[0]},)" if len(params) == 1 else ", ".join(params)
    converted = f"_xp_float_arrays(_xp, {names_tuple(params)}, {', '.join(params)})"
    return [*lines, f"{targets} = {converted}"]


def module_spec(program: Program) -> ModuleSpec:
    """The generated module for ``program``, as statement strings (with
    ``backend="array_api"``, the standard's functions only: :func:`standard_code`)."""
    statements, used, fuser = emit_statements(program)
    standard = program.backend == "array_api"
    if standard:
        check_helpers(used, program.name)
        statements = [(t, standard_code(c, t or None, program.name)) for t, c in statements]
    statements = release(statements, program.result)
    prelude = _standard_prelude(program) if standard else _prelude(program)
    binds: list[tuple[str, str]] = []
    if program.params:
        groups, first = _fast_test(program)
        prelude.append(_if_check(program, groups))
        code = "\n".join([*(f"{t} = {c}" for t, c in statements), program.result])
        binds = _bind_dims(program, first, code)
        if re.search(r"(?<!\w)_dtype(?!\w)", code):  # the body makes arrays of the arguments' dtype
            binds.insert(0, ("_dtype", f"{program.params[0]}.dtype"))
    if program.params:
        used = used | {"_check_shapes", "_xp_float_arrays" if standard else "_float_arrays"}
    constants = [FLOAT64] if program.params and not standard else []
    if fuser is not None and fuser.functions:
        used = used | {READY}
        constants = [READY_LINE, *constants]
    if standard:
        used = used | {"_xp_namespace"}
    return ModuleSpec.of(
        program,
        helpers=used,
        constants=constants,
        prelude=prelude,
        assignments=[*binds, *statements],
        outputs=[],
        result=standard_code(program.result, None, program.name) if standard else program.result,
        # (a Numba module with no statement fused is a NumPy module)
        backend="numpy" if fuser is not None and not fuser.functions else program.backend,
        functions=fuser.functions if fuser is not None else (),
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


__all__ = ["emit_module", "module_spec", "used_dims"]
