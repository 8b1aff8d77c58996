"""The ``backend="numba"`` dialect of elementwise modules: the formulas as one scalar function,
and a loop over the elements that Numba compiles.

A NumPy module computes each formula over whole arrays, one pass over memory per operation; a
Numba module computes every formula at one element before the next (:func:`loop_spec`):

* ``_formulas`` takes one number per argument and returns the outputs' numbers: the same
  CSE'd statements as the NumPy module's, printed by :class:`NumbaPrinter`: ``exp``, ``log``,
  ``expm1``, ``log1p``, ``tanh``, ``cosh``, ``sinh``, sigmoid and softplus as the runtime's
  scalar functions (``_exp(x)``, which the compiler vectorises;
  :mod:`symdiff.runtime.scalar`), other functions as NumPy's ufuncs on a number
  (``_np.sin(x)``), ``_select(c, a, b)`` for a piecewise value, ``_math.erf`` for erf; it is
  compiled inline into the loop (``inline="always"``) unless it calls the C library more than
  :data:`INLINE_CALLS` times;
* ``_loop`` runs it at the elements ``_start`` to ``_stop - 1`` of the flattened, broadcast
  arguments (each read with ``_at``: an array at the element, or a number) and writes
  ``_out[k][_i]`` (``_out``: a tuple of one array per output) or ``_out[i, j, _i]`` (an array
  result's entries); it releases the GIL, so that the runtime runs blocks of a long call on
  several threads; ``cache=True``: its machine code is cached beside the module's file (so a
  second process loads it);
* both are ``fastmath=False, error_model="numpy"``: IEEE arithmetic as NumPy's, and NumPy's
  nan/inf where Python would raise.

The public function hands them to the runtime (``_numba_elementwise``), which checks the
arguments as the NumPy backend does and allocates the outputs; the module calls
``_numba_ready()`` once, after its imports. A function that no Numba formula exists for
(``polygamma``, the shares of ``max`` ties, ...) is refused by name with an
:class:`~symdiff.errors.UnsupportedError` when the function is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import sympy as sp

from .. import registry
from ..errors import UnsupportedError
from . import naming
from .operations import MATH_FORMS, library_calls
from .printer import CodePrinter
from .spec import ModuleSpec

VECTOR = naming.DIRECTION

#: The runtime helper that runs a Numba module's loops.
NUMBA_ELEMENTWISE = "_numba_elementwise"
#: The decorators of the compiled functions (the verifier allows exactly these): the formulas
#: inline in the loop (which the compiler then vectorises), or, when they call the C library
#: more than :data:`INLINE_CALLS` times (:func:`~symdiff.codegen.operations.library_calls`:
#: ``sin``, ``math.erf``, a power ``x**y`` or ``x**(1/3)``), apart (a vectorised loop would
#: make each call element by element, saving and restoring its vector registers around it:
#: 2x slower over 50 calls of ``cos``).
JIT = '@_numba.njit(inline="always", fastmath=False, error_model="numpy")'
APART_JIT = '@_numba.njit(fastmath=False, error_model="numpy")'
INLINE_CALLS = 4
LOOP_JIT = '@_numba.njit(cache=True, nogil=True, fastmath=False, error_model="numpy")'
#: The loop's name, its flat index and the bounds of the elements it computes.
LOOP, INDEX, START, STOP = "_loop", "_i", "_start", "_stop"
#: The runtime's reader of an argument at an element (an array's element, or a number), and
#: its select of one of two values.
AT, SELECT = "_at", "_select"
#: The module-level line of every Numba module, after its imports: the runtime's scalar
#: functions made callable from compiled code (``_numba_ready``: once per process).
READY = "_numba_ready"
READY_LINE = f"{READY}()"
#: What the user wrote, for the helpers that have no Numba formula (other helpers by name).
_UNSUPPORTED = {"_polygamma": "polygamma (the derivatives of loggamma)",
                "_argmax_share": "the gradient of max/min of more than two arguments",
                "_hypot_share": "the gradient of hypot",
                "_sinc_d": "the derivatives of sinc"}
#: The docstring line of a Numba module's public function.
THREADS_DOC = "{keyword}: threads for long arrays (None: one per free core; same results)."


class NumbaPrinter(CodePrinter):
    """Formulas of one element for Numba: the runtime's scalar functions (``_exp(x)``) and
    select (``_select(c, a, b)``) where NumPy code calls ``_np.exp`` and ``_np.where``, NumPy's
    other ufuncs on numbers (``_np.sin(x)``), ``&``, ``|`` and ``not`` of booleans (no jump)
    where it calls ``logical_and``, and ``math``'s special functions where it calls a runtime
    helper."""

    def __init__(self, settings=None):
        super().__init__(settings)
        self.math = False

    def function_call(self, row: registry.Fn, printed: list[str]) -> str:
        """The runtime's scalar function of a row that has one (its ``numba`` field:
        ``_exp(x)``, sigmoid's ``_logistic(x)``), ``math``'s form of a runtime helper
        (:data:`~symdiff.codegen.operations.MATH_FORMS`), or the NumPy printer's call; a
        runtime helper with no Numba formula is refused by name."""
        if row.numba is not None and len(printed) == registry.arity(row)[0]:
            return self.helper_call(row.numba, *printed)  # (``log(x, base)``: NumPy's form)
        if not row.helper:
            return super().function_call(row, printed)
        template = MATH_FORMS.get(row.helper)
        if template is None or len(printed) != 1:
            what = _UNSUPPORTED.get(row.helper, row.helper.lstrip("_"))
            raise UnsupportedError(
                f"{what} has no formula for backend='numba' (its NumPy form is symdiff's "
                f"runtime helper {row.helper}); use backend='numpy' for this function")
        self.math = self.math or "_math." in template
        if f"{SELECT}(" in template:
            self.helpers.add(SELECT)
        arg = printed[0] if printed[0].isidentifier() else f"({printed[0]})"
        return template.format(arg)

    def where(self, cond: str, value: str, otherwise: str) -> str:
        """``_select(cond, value, otherwise)``: both computed, one selected, with no jump (as
        ``_np.where`` over arrays), which keeps the loop vectorisable."""
        return self.helper_call(SELECT, cond, value, otherwise)

    def _print_And(self, expr: sp.And) -> str:
        return "(" + " & ".join(self._print(a) for a in expr.args) + ")"

    def _print_Or(self, expr: sp.Or) -> str:
        return "(" + " | ".join(self._print(a) for a in expr.args) + ")"

    def _print_Not(self, expr: sp.Not) -> str:
        return f"(not {self._print(expr.args[0])})"

    def _print_BooleanTrue(self, expr) -> str:
        return "True"

    def _print_BooleanFalse(self, expr) -> str:
        return "False"

    def _heaviside(self, expr: sp.Heaviside) -> str:
        arg = self._print(expr.args[0])
        at_zero = expr.args[1] if len(expr.args) > 1 else sp.S.Half
        if at_zero in (0, sp.S.Half):
            return super()._heaviside(expr)
        return self.where(f"{arg} == 0", repr(float(at_zero)), f"_np.maximum(_np.sign({arg}), 0.0)")


def loop_spec(program: Any, printer: NumbaPrinter,
              assignments: Sequence[tuple[sp.Symbol, sp.Expr]],
              outputs: Sequence[sp.Expr], leaves: Sequence[int], structure: str) -> ModuleSpec:
    """The Numba module of an elementwise ``program`` (:class:`~symdiff.codegen.emit.Program`)
    after CSE: ``_formulas`` (the
    ``assignments`` and the ``outputs``, returned as the numbers of ``leaves``, or of an array
    result's entries), the loop, and the public function that hands them to the
    runtime (``structure``: how the leaves nest in what it returns; empty for an array
    result, ``program.result`` an :class:`~symdiff.codegen.emit.ArrayResult`)."""
    inputs = [p for p in program.params if p != VECTOR] + list(program.vector)
    printed = [(str(name), printer.doprint(value)) for name, value in assignments]
    lines: list[str] = []
    computed = [value for _, value in assignments]  # (what the formulas compute)
    result = program.result
    if not structure:  # an array result
        slots = [(index, k) for index, k in result.entries.items() if outputs[k] != 0]
        if not slots:  # a Hessian of a linear function: one entry written, 0
            slots = [next(iter(result.entries.items()))]
        names = []
        for index, k in slots:
            names.append(naming.output_entry(index))
            computed.append(outputs[k])
            lines.append(f"{names[-1]} = {printer.doprint(outputs[k])}")
        targets = [f"{naming.OUT}[{', '.join(map(str, index))}, {INDEX}]" for index, _ in slots]
        written = {index for index, _ in slots}
        mirrors = [f"{naming.OUT}[{', '.join(map(str, i))}, {INDEX}] = "
                   f"{naming.OUT}[{', '.join(map(str, s))}, {INDEX}]"
                   for i, s in result.mirrors.items() if s in written]
        leading = tuple(result.dims)
    else:
        names = []
        for k in leaves:
            name = program.output_names[k]
            expr = outputs[k]
            if not (isinstance(expr, sp.Symbol) and expr.name == name) and name not in names:
                computed.append(expr)
                lines.append(f"{name} = {printer.doprint(expr)}")
            names.append(name)
        targets = [f"{naming.OUT}[{row}][{INDEX}]" for row in range(len(leaves))]
        mirrors = []
        leading = (len(leaves),)
    returned = names[0] if len(names) == 1 else f"({', '.join(names)})"
    call = f"_formulas({', '.join(f'{AT}({p}, {INDEX})' for p in inputs)})"
    body = [f"{', '.join(targets)} = {call}", *mirrors]
    keyword = naming.threads_keyword(program.params)
    arguments = [p for p in program.params if p != VECTOR]
    pieces = [f"_formulas, {_tuple(arguments)}",
              *([f"{naming.THREADS}={keyword}"] if inputs else []),
              f"loop={LOOP}",
              f"leading={_tuple(leading)}"]
    if structure:
        pieces.append(f"structure={structure}")
    if program.vector:
        pieces.append(f"direction={VECTOR}")
    loop = _loop(inputs, body, f"The formulas of {program.name} at the elements {START} to "
                 f"{STOP} - 1 of the flat arguments.")
    made = ModuleSpec.of(
        program, prelude=[f"return {NUMBA_ELEMENTWISE}({', '.join(pieces)})"],
        assignments=printed, outputs=lines, result=returned,
        helpers=[NUMBA_ELEMENTWISE, READY, *printer.helpers, *([AT] if inputs else [])],
        constants=[READY_LINE],
        formulas=inputs,
        formulas_doc=f"The formulas of {program.name} at one element (numbers in, numbers out).",
        threads=keyword if inputs else None, backend="numba", functions=[loop],
        decorator=JIT if library_calls(computed) <= INLINE_CALLS else APART_JIT,
        math=printer.math)
    if not inputs:  # one point: no threads
        return made
    return replace(made, doc=(*made.doc, THREADS_DOC.format(keyword=keyword)))


def _loop(inputs: Sequence[str], body: Sequence[str], doc: str) -> str:
    """The loop function's text: ``for _i in range(_start, _stop):`` and ``body``."""
    lines = [LOOP_JIT, f"def {LOOP}({', '.join([*inputs, naming.OUT, START, STOP])}):",
             f'    """{doc}"""', f"    for {INDEX} in range({START}, {STOP}):"]
    lines += [f"        {line}" for line in body]
    return "\n".join(lines)


def _tuple(items: Sequence[object]) -> str:
    """``(a, b)``, ``(a,)`` or ``()``, as code."""
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(map(str, items))})"
