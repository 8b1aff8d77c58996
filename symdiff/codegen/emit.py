"""Outputs -> one generated module: stable forms, CSE across all outputs, printing.

The structure of what a function returns is data (:data:`Result`): an output index, a tuple of
results, or an :class:`ArrayResult` filling one array. This module turns a :class:`Program`
into statement strings, a :class:`~symdiff.codegen.spec.ModuleSpec` (as the tensor emitter
does), which :func:`~symdiff.codegen.spec.render_module` renders; the templates only place them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import sympy as sp

from .. import progress
from ..simplify import stable_forms, zero_power_logs
from . import naming
from .exps import cheapest_program
from .forms import cheaper_program
from .into import blocked_statement, fresh_names, slot, statement, when_blocked
from .pack import HVP_PLAIN_COST
from .point import floats_suffice, packed_path, point_path
from .printer import CodePrinter
from .spec import ModuleSpec, names_tuple, render_module
from .standard import check_helpers, inline_constants, printer_for, standard_code


@dataclass(frozen=True)
class ArrayResult:
    """Outputs placed in one array of shape ``dims + broadcast shape``.

    ``entries`` maps an index tuple to an output number; an index listed in ``mirrors`` copies
    another index instead (the symmetric half of a Hessian).
    """

    dims: tuple[int, ...]
    entries: dict[tuple[int, ...], int]
    mirrors: dict[tuple[int, ...], tuple[int, ...]] = field(default_factory=dict)


Result = int | tuple["Result", ...] | ArrayResult


@dataclass(frozen=True)
class Program:
    """Everything needed to emit one function."""

    name: str
    title: str
    expression: str
    params: tuple[str, ...]
    outputs: Sequence[sp.Expr]
    output_names: Sequence[str]
    result: Result
    doc: Sequence[str] = ()
    mode: str = "forward"
    key: str = ""
    #: Precomputed assignments (reverse mode): used as they are, instead of CSE over outputs.
    assignments: Sequence[tuple[sp.Symbol, sp.Expr]] | None = None
    #: A direction-vector parameter ``_v`` (Hessian-vector products): its component names, in
    #: order; one name means ``_v`` itself (no leading axis).
    vector: Sequence[str] = ()


#: The name of the direction-vector parameter of Hessian-vector products.
VECTOR = naming.DIRECTION
#: The runtime helper that evaluates the formulas over long arrays in cache-sized blocks.
BLOCKS_HELPER = "_in_blocks"
#: The Array API backend's block loop (NumPy arrays in blocks, other namespaces in one call).
STANDARD_BLOCKS_HELPER = "_xp_in_blocks"


def _prelude(params: Sequence[str], vector: Sequence[str], printer: CodePrinter,
             indexed: bool) -> list[str]:
    """Inputs as arrays of one float dtype, the broadcast shape, and the direction components
    (``indexed``: on the first axis of ``_v``; else ``_v`` is the single component).

    ndarrays, the usual call, are recognised by one identity test each and used as they are;
    anything else goes through ``_as_arrays`` (``asarray``, after refusing Dask collections and
    other libraries' arrays, which converting would compute or copy into this process).
    ``_float_dtype`` refuses (with the argument's name) anything that is not real numbers and
    ``_common_shape`` arguments that do not broadcast together; both are one call whatever
    the arguments, so the usual call pays only for those two calls.
    """
    arrays = [p for p in params if p != VECTOR]
    plain = [*arrays, VECTOR] if vector and not indexed else arrays
    lines = []
    if plain:
        test = " or ".join(f"{p}.__class__ is not _np.ndarray" for p in plain)
        targets = f"({plain[0]},)" if len(plain) == 1 else ", ".join(plain)
        call = printer.helper_call("_as_arrays", names_tuple(plain), *plain)
        lines += [f"if {test}:", f"    {targets} = {call}"]
    if indexed:
        lines.append(f"{VECTOR} = {printer.helper_call('_as_vector', VECTOR, str(len(vector)))}")
    inputs = [*arrays, VECTOR] if vector else arrays
    if inputs:
        dtype = printer.helper_call("_float_dtype", names_tuple(inputs), *inputs)
        lines.append(f"_dtype = {dtype}")
    else:
        lines.append("_dtype = _np.result_type(1.0)")
    lines += [f"{p} = {p}.astype(_dtype, copy=False)" for p in inputs]
    if indexed:
        lines += [f"{name} = {VECTOR}[{i}]" for i, name in enumerate(vector)]
    elif vector:
        lines.append(f"{vector[0]} = {VECTOR}")
    shapes = [*arrays, *vector]
    if len(shapes) == 1:
        lines.append(f"_shape = {shapes[0]}.shape")
    elif shapes:
        names = names_tuple([*arrays, *(VECTOR for _ in vector)])
        lines.append(f"_shape = {printer.helper_call('_common_shape', names, *shapes)}")
    else:
        lines.append("_shape = ()")
    return lines


def _standard_prelude(params: Sequence[str], vector: Sequence[str],
                      printer: CodePrinter, indexed: bool) -> list[str]:
    """The Array API backend's prelude: the namespace of the arguments (``_xp``), the arguments
    as its arrays of one real floating dtype, the broadcast shape, the direction components."""
    inputs = list(params)
    lines = [f"_xp = {printer.helper_call('_xp_namespace', *inputs)}"]
    if not inputs:
        return [*lines, "_dtype = _xp.float64", "_shape = ()"]
    targets = f"({inputs[0]},)" if len(inputs) == 1 else ", ".join(inputs)
    converted = printer.helper_call("_xp_float_arrays", "_xp", names_tuple(inputs), *inputs)
    lines += [f"{targets} = {converted}", f"_dtype = {inputs[0]}.dtype"]
    if indexed:  # the standard has no flat indexing of the first axis: `_v[0, ...]`
        lines.append(f"{VECTOR} = {printer.helper_call('_xp_vector', VECTOR, str(len(vector)))}")
        lines += [f"{name} = {VECTOR}[{i}, ...]" for i, name in enumerate(vector)]
    elif vector:
        lines.append(f"{vector[0]} = {VECTOR}")
    shapes = [p for p in params if p != VECTOR] + list(vector)
    names = names_tuple([p for p in params if p != VECTOR] + [VECTOR for _ in vector])
    lines.append(f"_shape = {printer.helper_call('_xp_common_shape', names, *shapes)}")
    return lines


def emit_source(program: Program, *, cse: bool = True, backend: str = "numpy") -> str:
    """The full text of the generated module for ``program`` (:func:`module_spec`, rendered)."""
    spec = module_spec(program, cse=cse, backend=backend)
    with progress.stage("print") as counts:
        source = render_module(spec)
        counts["lines"] = source.count("\n")
    return source


def module_spec(program: Program, *, cse: bool = True, backend: str = "numpy") -> ModuleSpec:
    """The generated module for ``program``, as statement strings.

    The module carries only the runtime helpers its code calls. The block splitter
    ``_in_blocks`` is one of them only when the function has array arguments: without any, the
    broadcast shape is always ``()`` and there is nothing to split, so the formulas stay in the
    public function. With ``backend="array_api"`` the statements use the standard's functions
    only (:mod:`symdiff.codegen.standard`) on the namespace of the arguments; its formulas run
    through ``_xp_in_blocks``, in blocks on NumPy arrays and in one call on the others (a Dask
    array is already cut into chunks, a GPU array wants whole passes).
    """
    printer = printer_for(backend)
    if program.assignments is not None:
        assignments, reduced = list(program.assignments), list(program.outputs)
        if cse:
            with progress.stage("CSE") as counts:
                assignments, reduced = cheaper_program(assignments, reduced)
                counts["temporaries"] = len(assignments)
    else:
        with progress.stage("stable forms"):
            outputs = [zero_power_logs(stable_forms(sp.sympify(e))) for e in program.outputs]
        with progress.stage("CSE") as counts:
            assignments, reduced = cheapest_program(outputs, cse)
            counts["temporaries"] = len(assignments)
    with progress.stage("print"):
        return _printed_spec(program, printer, backend, assignments, reduced)


def _printed_spec(program: Program, printer: CodePrinter, backend: str,
                  assignments: list[tuple[sp.Symbol, sp.Expr]], reduced: list[sp.Expr]
                  ) -> ModuleSpec:
    """The module spec of ``program`` from its program after CSE: every statement printed."""
    standard = backend == "array_api"
    if standard:  # a shared constant (``_t1 = tanh(3)``) folds into its users' literals
        assignments, reduced = inline_constants(assignments, reduced)
    printed_assignments = [(str(name), printer.doprint(value)) for name, value in assignments]
    block_inputs = [p for p in program.params if p != VECTOR] + list(program.vector)
    # ``wrt=["x"]`` (not ``"x"``): one component, still on the first axis of ``_v`` and the result
    indexed = len(program.vector) > 1 or (
        bool(program.vector) and isinstance(program.result, ArrayResult))

    lines: list[str] = []
    reads: list[sp.Expr | None] = []
    into: dict[str, int] = {}
    blocked = None if standard or not block_inputs else into
    taken = {str(s) for s, _ in assignments} | {
        str(s) for e in reduced for s in sp.sympify(e).free_symbols}
    fresh = fresh_names(taken, program.params)
    result_text = _result_lines(program, reduced, printer, lines, reads, blocked, standard,
                                fresh)
    printed_assignments = _temporaries_into(printed_assignments, into, fresh)
    if len(assignments) > INTERLEAVE_MIN:
        lines = _interleave(assignments, printed_assignments, lines, reads)
        printed_assignments = []
    if standard:
        prelude = _standard_prelude(program.params, program.vector, printer, indexed)
        check_helpers(printer.helpers, program.name)
        printed_assignments = [
            (target, standard_code(code, target, program.name))
            for target, code in printed_assignments
        ]
        lines = [standard_code(line, None, program.name) for line in lines]
        if block_inputs:
            printer.helpers.add(STANDARD_BLOCKS_HELPER)
        return ModuleSpec.of(program, helpers=printer.helpers, prelude=prelude,
                             assignments=printed_assignments, outputs=lines,
                             result=result_text, backend=backend,
                             block_inputs=block_inputs or None)
    prelude = _prelude(program.params, program.vector, printer, indexed)
    packed = None
    if block_inputs:
        printer.helpers.add(BLOCKS_HELPER)
        floats = floats_suffice([*(v for _, v in assignments), *reduced])
        if not program.vector:  # (without floats the plain point is NumPy scalars', 4x dearer)
            packed = packed_path(program, assignments, reduced, printer, 1 if floats else 4)
            point = packed[0] if packed else point_path(block_inputs, printer) if floats else []
            prelude = [*point, *prelude]
        elif indexed:  # a Hessian-vector product: at a point, otherwise on NumPy scalars
            packed = packed_path(program, assignments, reduced, printer, HVP_PLAIN_COST)
            prelude = [*(packed[0] if packed else ()), *prelude]
    spec = ModuleSpec.of(
        program,
        helpers=printer.helpers,
        prelude=prelude,
        assignments=printed_assignments,
        outputs=lines,
        result=result_text,
        block_inputs=block_inputs or None,
        threads=naming.threads_keyword(program.params) if block_inputs else None,
        **({"constants": packed[1], "functions": (packed[2],)} if packed else {}),
    )
    if not block_inputs:
        return spec
    return replace(spec, doc=(*spec.doc, THREADS_DOC.format(keyword=spec.threads)))


#: The docstring line of a function whose formulas run in blocks.
THREADS_DOC = "{keyword}: threads for long arrays (None: up to 8; same results bit for bit)."


def _temporaries_into(
    printed: list[tuple[str, str]], into: dict[str, int], fresh: Callable[[], str]
) -> list[tuple[str, str]]:
    """The assignments with each temporary that an output hands out as it is (``into``: its
    name -> the output's slot) computed straight into that output's slice, where its last
    operation is a ufunc and it is assigned once (a slice is never written twice); such an
    assignment becomes a whole statement (an empty target, :func:`.into.statement`)."""
    if not into:
        return printed
    counts: dict[str, int] = {}
    for target, _ in printed:
        counts[target] = counts.get(target, 0) + 1
    lines = []
    for target, code in printed:
        written = blocked_statement(target, code, slot(into[target]), fresh) if counts.get(
            target) == 1 and target in into else None
        lines.append((target, code) if written is None else ("", written))
    return lines


def _result_lines(
    program: Program,
    reduced: Sequence[sp.Expr],
    printer: CodePrinter,
    lines: list[str],
    reads: list[sp.Expr | None],
    into: dict[str, int] | None,
    standard: bool = False,
    fresh: Callable[[], str] | None = None,
) -> str:
    """Append the statements that build the outputs, and to ``reads`` the expression each one
    reads (zero for ``_out``'s allocation, which reads nothing; None for a mirrored entry, which
    must follow every other); return the ``return`` text.

    With ``into`` (a function whose formulas run in blocks, :mod:`.into`), each output's last
    operation writes into its slice of the full array when ``_in_blocks`` gives one, and
    ``into`` receives the temporaries that outputs hand out as they are (name -> slot), whose
    own lines should write into the slice instead. (``standard``: the Array API backend's
    outputs, made by ``_xp_as_output``; an array result is stacked, not written into, since
    arrays of some namespaces cannot be written.)
    """
    result = program.result
    shaped = "_xp_as_output" if standard else "_as_output"
    lead = ("_xp",) if standard else ()
    if isinstance(result, ArrayResult) and standard:
        names: dict[tuple[int, ...], str] = {}
        for index, k in result.entries.items():
            names[index] = naming.output_entry(index)
            value = printer.helper_call(shaped, *lead, printer.doprint(reduced[k]), "_shape",
                                        "_dtype")
            lines.append(f"{names[index]} = {value}")
            reads.append(reduced[k])
        lines.append(f"_out = {_stacked(result, names, ())}")
        reads.append(None)
        return "_out"
    if isinstance(result, ArrayResult):
        # Zeros first: an entry that is 0 is not written (a Hessian of n names is mostly zeros,
        # and each assignment costs about 0.1 us at a point: 1 ms for 100 names); the blocks'
        # full arrays of an array result are zeros too (``_in_blocks``).
        zeros = f"_np.zeros({_tuple(result.dims)} + _shape, dtype=_dtype)"
        lines.append(f"_out = {zeros if into is None else when_blocked(zeros, slot(0))}")
        reads.append(sp.S.Zero)
        zero = {index for index, k in result.entries.items() if reduced[k] == 0}
        for index, k in result.entries.items():
            if index in zero:
                continue
            entry, code = f"_out[{_index(index)}]", printer.doprint(reduced[k])
            written = None if into is None or fresh is None else blocked_statement(
                entry, code, entry, fresh)
            # NumPy skips assigning a slice to itself: the entry is written once
            lines.append(f"{entry} = {code}" if written is None else written)
            reads.append(reduced[k])
        for index, source in result.mirrors.items():
            if source not in zero:
                lines.append(f"_out[{_index(index)}] = _out[{_index(source)}]")
                reads.append(None)
        return "_out"
    seen: set[sp.Expr] = set()
    params = set(program.params) | set(program.vector)
    leaves: dict[int, int] = {}
    for position, k in enumerate(_leaves(result)):
        leaves.setdefault(k, position)  # an output returned twice is written into its first
    for k, (name, expr) in enumerate(zip(program.output_names, reduced, strict=True)):
        code = printer.doprint(expr)
        # a temporary is a fresh array: handed out as it is, unless another output is it too
        copied = (expr.is_Symbol and expr.name in params) or expr in seen
        if copied:
            code = f"_np.copy({code})"  # never hand out an input array or the same array twice
        seen.add(expr)
        if standard:
            lines.append(f"{name} = {printer.helper_call(shaped, *lead, code, '_shape', '_dtype')}")
            reads.append(expr)
            continue
        made = printer.helper_call(shaped, code, "_shape", "_dtype")
        written = None if into is None or fresh is None or copied or k not in leaves else (
            blocked_statement(name, code, slot(leaves[k]), fresh,
                              printer.helper_call(shaped, "{}", "_shape", "_dtype")))
        if written is None and into is not None and not copied and k in leaves and (
            expr.is_Symbol
        ):
            into[expr.name] = leaves[k]  # a temporary: its own line writes the slice
        lines.append(f"{name} = {made}" if written is None else written)
        reads.append(expr)
    return _structure(result, program.output_names)


def _leaves(result: Result) -> list[int]:
    """The output numbers in ``result`` depth first: the order of ``_in_blocks``' slices."""
    if isinstance(result, int):
        return [result]
    return [k for item in result for k in _leaves(item)]  # type: ignore[union-attr]


#: Programs with more temporaries than this are emitted in an order that bounds memory
#: (:func:`_interleave`); smaller ones keep the plain layout: temporaries, then outputs.
INTERLEAVE_MIN = 64


def _interleave(
    assignments: Sequence[tuple[sp.Symbol, sp.Expr]],
    printed: Sequence[tuple[str, str]],
    outputs: Sequence[str],
    reads: Sequence[sp.Expr | None],
) -> list[str]:
    """Assignments and output statements in one list that keeps few arrays alive: each output
    right after the last temporary it reads, and ``del`` of each temporary after its last read.

    The gradient of a product of 1,000 variables has 2,000 temporaries; computed all before the
    outputs, they are all alive at once (16 MB for 1,000 points) and the code is memory-bound.
    """
    position = {symbol: i for i, (symbol, _) in enumerate(assignments)}
    head: list[str] = []
    tail: list[str] = []
    placed: dict[int, list[tuple[str, set[sp.Symbol]]]] = {}
    for line, expr in zip(outputs, reads, strict=True):
        if expr is None:
            tail.append(line)
            continue
        used = {s for s in expr.free_symbols if s in position}
        where = max((position[s] for s in used), default=-1)
        if where < 0:
            head.append(line)
        else:
            placed.setdefault(where, []).append((line, used))
    statements: list[tuple[str, set[sp.Symbol]]] = [(line, set()) for line in head]
    for i, ((_, value), (target, code)) in enumerate(zip(assignments, printed, strict=True)):
        statements.append((statement(target, code),
                           {s for s in value.free_symbols if s in position}))
        statements.extend(placed.get(i, []))
    last_read: dict[sp.Symbol, int] = {}
    for k, (_, used) in enumerate(statements):
        for symbol in used:
            last_read[symbol] = k
    dead_after: dict[int, list[str]] = {}
    for symbol, k in last_read.items():
        dead_after.setdefault(k, []).append(symbol.name)
    lines: list[str] = []
    for k, (line, _) in enumerate(statements):
        lines.append(line)
        if k in dead_after:
            lines.append("del " + ", ".join(sorted(dead_after[k])))
    return lines + tail


def _stacked(result: ArrayResult, names: dict[tuple[int, ...], str],
             prefix: tuple[int, ...]) -> str:
    """``_np.stack([...])`` nested over the leading ``dims`` of ``result``: each entry's array
    by its name, a mirrored entry by its source's."""
    if len(prefix) == len(result.dims):
        return names[result.mirrors.get(prefix, prefix)]
    size = result.dims[len(prefix)]
    inner = ", ".join(_stacked(result, names, (*prefix, i)) for i in range(size))
    return f"_np.stack(({inner},))"


def _index(index: tuple[int, ...]) -> str:
    return ", ".join(str(i) for i in index)


def _tuple(items: tuple[int, ...]) -> str:
    return f"({items[0]},)" if len(items) == 1 else f"({_index(items)})"


def _structure(result: Result, names: Sequence[str]) -> str:
    if isinstance(result, int):
        return names[result]
    inner = ", ".join(_structure(r, names) for r in result)  # type: ignore[union-attr]
    return f"({inner},)" if len(result) == 1 else f"({inner})"  # type: ignore[arg-type]
