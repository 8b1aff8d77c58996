"""Outputs -> one generated module: stable forms, CSE across all outputs, printing.

The structure of what a function returns is data (:data:`Result`): an output index, a tuple of
results, or an :class:`ArrayResult` filling one array. This module turns a :class:`Program`
into statement strings, a :class:`~symdiff.codegen.spec.ModuleSpec` (as the tensor emitter
does), which :func:`~symdiff.codegen.spec.render_module` renders; the templates only place them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import sympy as sp

from .. import progress
from ..simplify import stable_forms, zero_power_logs
from ..simplify.shallow import shallow_lines
from . import naming
from .exps import cheapest_program
from .forms import cheaper_program
from .into import out_statement, slot
from .loops import NumbaPrinter, loop_spec
from .pack import HVP_PLAIN_COST
from .point import floats_suffice, packed_path
from .printer import CodePrinter
from .spec import ModuleSpec, render_module
from .standard import NAMESPACE, check_helpers, inline_constants, printer_for, standard_code


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
#: The runtime helpers that run an elementwise module's formulas (NumPy; the Array API).
ELEMENTWISE = "_elementwise"
STANDARD_ELEMENTWISE = "_xp_elementwise"
#: The runtime helper that computes the formulas at a point given as floats.
POINT = "_at_point"
#: The docstring line of a function whose formulas run in blocks.
THREADS_DOC = "{keyword}: threads for long arrays (None: up to 8; same results bit for bit)."


def emit_source(program: Program, *, cse: bool = True, backend: str = "numpy") -> str:
    """The full text of the generated module for ``program`` (:func:`module_spec`, rendered)."""
    spec = module_spec(program, cse=cse, backend=backend)
    with progress.stage("print") as counts:
        source = render_module(spec)
        counts["lines"] = source.count("\n")
    return source


def module_spec(program: Program, *, cse: bool = True, backend: str = "numpy") -> ModuleSpec:
    """The generated module for ``program``, as statement strings: a public function that
    hands the formulas to the runtime, and ``_formulas``, the formulas themselves.

    Each output is one statement. With NumPy its last operation is written as the ufunc the
    operator stands for, with ``out=`` where the output goes (:mod:`.into`): ``_out[k]``, the
    rows of output ``k`` that a block of a long array computes into, None otherwise; the
    entries of an array result are written into ``_out`` itself (zeros first). A temporary
    that is an output takes the output's name. With ``backend="array_api"`` the statements
    use the standard's functions only (:mod:`symdiff.codegen.standard`) on the namespace of
    the arguments, and the formulas return an array result's entries as nested tuples.
    """
    printer = NumbaPrinter() if backend == "numba" else printer_for(backend)
    if program.assignments is not None:
        assignments, reduced = shallow_lines(program.assignments, program.outputs)
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
        if isinstance(printer, NumbaPrinter):
            assignments, reduced = _named_outputs(program, assignments, reduced)
            leaves = [] if isinstance(program.result, ArrayResult) else _leaves(program.result)
            return loop_spec(program, printer, assignments, reduced, leaves,
                             _positions(program.result, iter(range(len(leaves)))))
        return _printed_spec(program, printer, backend, assignments, reduced)


def _positions(result: Result, counter) -> str:
    """The nesting of ``result`` with each output replaced by its position among the leaves
    (depth first): how the runtime nests the rows of a Numba module's ``_out``."""
    if isinstance(result, ArrayResult):
        return ""
    if isinstance(result, int):
        return str(next(counter))
    inner = ", ".join(_positions(r, counter) for r in result)  # type: ignore[union-attr]
    return f"({inner},)" if len(result) == 1 else f"({inner})"  # type: ignore[arg-type]


def _printed_spec(program: Program, printer: CodePrinter, backend: str,
                  assignments: list[tuple[sp.Symbol, sp.Expr]], reduced: list[sp.Expr]
                  ) -> ModuleSpec:
    """The module spec of ``program`` from its program after CSE: every statement printed."""
    standard = backend == "array_api"
    if standard:  # a shared constant (``_t1 = tanh(3)``) folds into its users' literals
        assignments, reduced = inline_constants(assignments, reduced)
    assignments, reduced = _named_outputs(program, assignments, reduced)
    inputs = [p for p in program.params if p != VECTOR] + list(program.vector)
    array = isinstance(program.result, ArrayResult)
    printed = [(str(name), printer.doprint(value)) for name, value in assignments]
    lines: list[str] = []
    reads: list[sp.Expr | None] = []
    result_text = _result_lines(program, reduced, printer, lines, reads, standard)
    if not standard and not array:
        printed = _outputs_into(printed, program, reduced)
    if len(assignments) > INTERLEAVE_MIN:
        lines = _interleave(assignments, printed, lines, reads, set(program.output_names))
        printed = []
    leading = f", leading={_tuple(program.result.dims)}" if array else ""  # type: ignore[union-attr]
    direction = f", direction={VECTOR}" if program.vector else ""
    arguments = _names(inputs[: len(inputs) - len(program.vector)])
    if standard:
        check_helpers(printer.helpers, program.name)
        printed = [(t, standard_code(c, t or None, program.name)) for t, c in printed]
        lines = [standard_code(line, None, program.name) for line in lines]
        printer.helpers.add(STANDARD_ELEMENTWISE)
        call = f"return {STANDARD_ELEMENTWISE}(_formulas, {arguments}{leading}{direction})"
        return ModuleSpec.of(
            program, helpers=printer.helpers, prelude=[call], assignments=printed,
            outputs=lines, result=result_text, backend=backend,
            formulas=[*inputs, NAMESPACE], formulas_doc=_formulas_doc(program, True))
    floats = floats_suffice([*(v for _, v in assignments), *reduced]) and not program.vector
    out = naming.OUT if array else f"{naming.OUT}={_nones(_leaves(program.result))}"
    spec = dict(helpers=printer.helpers, assignments=printed, outputs=lines, result=result_text,
                formulas=[*inputs, out], formulas_doc=_formulas_doc(program, False))
    if not inputs:  # no arguments: one point, whose coordinates are no floats
        printer.helpers.add(POINT if floats else ELEMENTWISE)
        call = (f"return {POINT}(_formulas, (){leading})" if floats
                else f"return {ELEMENTWISE}(_formulas, (){leading})")
        return ModuleSpec.of(program, prelude=[call], **spec)
    keyword = naming.threads_keyword(program.params)
    # (a Hessian-vector product's plain point runs on NumPy scalars; without floats another
    # function's does too, 4x dearer than on floats)
    packed = packed_path(program, assignments, reduced, printer,
                         HVP_PLAIN_COST if program.vector else 1 if floats else 4)
    point = packed[0] if packed else []
    printer.helpers.add(ELEMENTWISE)
    call = (f"return {ELEMENTWISE}(_formulas, {arguments}, {naming.THREADS}={keyword}"
            f"{leading}{direction}{'' if floats and not packed else ', floats=False'})")
    made = ModuleSpec.of(
        program,
        prelude=[*point, call],
        threads=keyword,
        **spec,
        **({"constants": packed[1], "functions": (packed[2],)} if packed else {}),
    )
    return replace(made, doc=(*made.doc, THREADS_DOC.format(keyword=keyword)))


def _formulas_doc(program: Program, standard: bool) -> str:
    """The docstring of ``_formulas``: what its last parameter is."""
    if standard:
        return f"The formulas of {program.name}, on arrays of the namespace _xp."
    if isinstance(program.result, ArrayResult):
        return f"The formulas of {program.name}: they fill the entries of _out (zeros) not 0."
    return f"The formulas of {program.name}; output k is written into _out[k] if that is given."


def _names(items: Sequence[str]) -> str:
    """``(a, b)`` (``(a,)`` for one, ``()`` for none): a tuple of names, as code."""
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"


def _nones(leaves: Sequence[int]) -> str:
    """``(None, None)``: the default of ``_formulas``' ``_out``, one None per output."""
    return _names(["None"] * len(leaves))


def _named_outputs(
    program: Program,
    assignments: Sequence[tuple[sp.Symbol, sp.Expr]],
    outputs: Sequence[sp.Expr],
) -> tuple[list[tuple[sp.Symbol, sp.Expr]], list[sp.Expr]]:
    """Each temporary that is an output (the first that is) renamed to the output's name, in
    the assignments and the outputs, so that it is computed under the name it is returned by
    (``_y_bar = _t5`` would add a line and a name to follow). Not for an array result's
    entries, nor where the output's name is taken."""
    if isinstance(program.result, ArrayResult):
        return list(assignments), list(outputs)
    targets = {name for name, _ in assignments}
    taken = {str(name) for name in targets} | {
        str(s) for _, value in assignments for s in value.free_symbols}
    rename: dict[sp.Symbol, sp.Symbol] = {}
    for name, expr in zip(program.output_names, outputs, strict=True):
        if (isinstance(expr, sp.Symbol) and expr in targets and expr not in rename
                and name not in taken):
            rename[expr] = sp.Symbol(name)
    if not rename:
        return list(assignments), list(outputs)
    return ([(rename.get(name, name), value.xreplace(rename)) for name, value in assignments],
            [sp.sympify(e).xreplace(rename) for e in outputs])


def _outputs_into(printed: list[tuple[str, str]], program: Program,
                  outputs: Sequence[sp.Expr]) -> list[tuple[str, str]]:
    """The assignments, with each temporary renamed to an output (:func:`_named_outputs`)
    computing its last operation straight into where the output goes (``out=_out[k]``)
    where that operation is a ufunc and it is assigned once (an output is written once); such
    an assignment becomes a whole statement (an empty target)."""
    slots: dict[str, int] = {}
    positions = _first_positions(program.result)
    for k, (name, expr) in enumerate(zip(program.output_names, outputs, strict=True)):
        if isinstance(expr, sp.Symbol) and expr.name == name and k in positions:
            slots[name] = positions[k]
    if not slots:
        return printed
    counts: dict[str, int] = {}
    for target, _ in printed:
        counts[target] = counts.get(target, 0) + 1
    lines = []
    for target, code in printed:
        written = out_statement(target, code, slot(slots[target])) if counts.get(
            target) == 1 and target in slots else None
        lines.append((target, code) if written is None else ("", written))
    return lines


def _first_positions(result: Result) -> dict[int, int]:
    """Output number -> its first position among the returned arrays, depth first."""
    positions: dict[int, int] = {}
    for position, k in enumerate(_leaves(result)):
        positions.setdefault(k, position)
    return positions


def _result_lines(
    program: Program,
    reduced: Sequence[sp.Expr],
    printer: CodePrinter,
    lines: list[str],
    reads: list[sp.Expr | None],
    standard: bool = False,
) -> str:
    """Append the statements that build the outputs, and to ``reads`` the expression each one
    reads (None for a mirrored entry, which must follow every other); return the ``return``
    text.

    NumPy: each output's last operation writes where it goes (:func:`.into.out_statement`),
    an output that is a temporary renamed to it needs no line, and an array result's entries
    that are not 0 are written into ``_out``. The runtime gives outputs their shape and dtype
    and copies an argument or an array returned twice. The Array API: each entry of an array
    result is a named array, returned in nested tuples that the runtime stacks.
    """
    result = program.result
    if isinstance(result, ArrayResult) and standard:
        names: dict[tuple[int, ...], str] = {}
        for index, k in result.entries.items():
            names[index] = naming.output_entry(index)
            lines.append(f"{names[index]} = {printer.doprint(reduced[k])}")
            reads.append(reduced[k])
        return _entries(result, names, ())
    if isinstance(result, ArrayResult):
        # An entry that is 0 is not written (a Hessian of n names is mostly zeros, and each
        # assignment costs about 0.1 us at a point): ``_out`` starts as zeros.
        zero = {index for index, k in result.entries.items() if reduced[k] == 0}
        for index, k in result.entries.items():
            if index in zero:
                continue
            entry, code = f"{naming.OUT}[{_index(index)}]", printer.doprint(reduced[k])
            # (NumPy skips assigning an entry to itself: it is written once)
            lines.append(out_statement(entry, code, entry, operators=True)
                         or f"{entry} = {code}")
            reads.append(reduced[k])
        for index, source in result.mirrors.items():
            if source not in zero:
                lines.append(f"{naming.OUT}[{_index(index)}] = {naming.OUT}[{_index(source)}]")
                reads.append(None)
        return naming.OUT
    positions = _first_positions(result)
    for k, (name, expr) in enumerate(zip(program.output_names, reduced, strict=True)):
        if isinstance(expr, sp.Symbol) and expr.name == name:
            continue  # a temporary computed under the output's name
        code = printer.doprint(expr)
        written = None if standard or k not in positions or isinstance(expr, sp.Symbol) else (
            out_statement(name, code, slot(positions[k])))
        lines.append(written or f"{name} = {code}")
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
    returned: set[str],
) -> list[str]:
    """Assignments and output statements in one list that keeps few arrays alive: each output
    right after the last temporary it reads, and ``del`` of each temporary after its last read
    (not of the ``returned`` names: the temporaries that are outputs).

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
        statements.append((f"{target} = {code}" if target else code,
                           {s for s in value.free_symbols if s in position}))
        statements.extend(placed.get(i, []))
    last_read: dict[sp.Symbol, int] = {}
    for k, (_, used) in enumerate(statements):
        for symbol in used:
            last_read[symbol] = k
    dead_after: dict[int, list[str]] = {}
    for symbol, k in last_read.items():
        if symbol.name not in returned:
            dead_after.setdefault(k, []).append(symbol.name)
    lines: list[str] = []
    for k, (line, _) in enumerate(statements):
        lines.append(line)
        if k in dead_after:
            lines.append("del " + ", ".join(sorted(dead_after[k])))
    return lines + tail


def _entries(result: ArrayResult, names: dict[tuple[int, ...], str],
             prefix: tuple[int, ...]) -> str:
    """The entries of an array result in nested tuples over its leading ``dims``: each
    entry's array by its name, a mirrored entry by its source's."""
    if len(prefix) == len(result.dims):
        return names[result.mirrors.get(prefix, prefix)]
    size = result.dims[len(prefix)]
    inner = ", ".join(_entries(result, names, (*prefix, i)) for i in range(size))
    return f"({inner},)" if size == 1 else f"({inner})"


def _index(index: tuple[int, ...]) -> str:
    return ", ".join(str(i) for i in index)


def _tuple(items: tuple[int, ...]) -> str:
    return f"({items[0]},)" if len(items) == 1 else f"({_index(items)})"


def _structure(result: Result, names: Sequence[str]) -> str:
    if isinstance(result, int):
        return names[result]
    inner = ", ".join(_structure(r, names) for r in result)  # type: ignore[union-attr]
    return f"({inner},)" if len(result) == 1 else f"({inner})"  # type: ignore[arg-type]
