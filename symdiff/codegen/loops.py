"""The ``backend="numba"`` dialect of elementwise modules: the formulas as one scalar function,
and a loop over the elements that Numba compiles.

A NumPy module computes each formula over whole arrays, one pass over memory per operation; a
Numba module computes every formula at one element before the next (:func:`loop_spec`):

* ``_formulas`` takes one number per argument and returns the outputs' numbers: the same
  CSE'd statements as the NumPy module's, printed by :class:`NumbaPrinter` (``_np.exp(x)`` of
  a float, ``a if c else b`` for a piecewise value, ``_math.erf`` for erf);
* ``_serial`` and ``_threaded`` run it at every element of the flattened, broadcast arguments
  (``range``, or ``_numba.prange`` on Numba's threads) and write ``_out[k][_i]`` (``_out``: a
  tuple of one array per output) or ``_out[i, j, _i]`` (an array result's entries);
* all three are ``@_numba.njit(cache=True, fastmath=False, error_model="numpy")``: compiled
  on first call, the machine code cached beside the module's file (so a second process loads
  it), IEEE arithmetic as NumPy's, and NumPy's nan/inf where Python would raise.

The public function hands them to the runtime (``_numba_elementwise``), which checks the
arguments as the NumPy backend does and allocates the outputs. A function that no Numba
formula exists for (``polygamma``, the shares of ``max`` ties, ...) is refused by name with an
:class:`~symdiff.errors.UnsupportedError` when the function is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import sympy as sp

from ..errors import UnsupportedError
from . import naming
from .printer import CodePrinter
from .spec import ModuleSpec

VECTOR = naming.DIRECTION

#: The runtime helper that runs a Numba module's loops.
NUMBA_ELEMENTWISE = "_numba_elementwise"
#: The decorators of the compiled functions (the verifier allows exactly these).
JIT = '@_numba.njit(cache=True, fastmath=False, error_model="numpy")'
PARALLEL_JIT = '@_numba.njit(cache=True, parallel=True, fastmath=False, error_model="numpy")'
#: The loops' names and their flat index.
SERIAL, THREADED, INDEX = "_serial", "_threaded", "_i"
#: Functions whose NumPy form is a runtime helper, printed for Numba from ``math`` (the
#: standard library's, which Numba compiles) or as an inline formula of NumPy's ufuncs.
_MATH = {"_erf": "_math.erf({0})", "_erfc": "_math.erfc({0})",
         "_loggamma": "(_math.lgamma({0}) if {0} > 0 else _np.nan)",
         # one exp; below -700, where exp(-u) would overflow, sigmoid(u) is exp(u) to rounding
         "_sigmoid": "(1.0/(1.0 + _np.exp(-{0})) if {0} > -700.0 else _np.exp({0}))",
         "_softplus": "(_np.log1p(_np.exp(-_np.abs({0}))) + _np.maximum({0}, 0.0))"}
#: What the user wrote, for the helpers that have no Numba formula (other helpers by name).
_UNSUPPORTED = {"_polygamma": "polygamma (the derivatives of loggamma)",
                "_argmax_share": "the gradient of max/min of more than two arguments",
                "_hypot_share": "the gradient of hypot",
                "_sinc_d": "the derivatives of sinc"}
#: The docstring line of a Numba module's public function.
THREADS_DOC = "{keyword}: threads for long arrays (None: one per free core; same results)."


class NumbaPrinter(CodePrinter):
    """Formulas of one element for Numba: NumPy's ufuncs on numbers (``_np.exp(x)``), Python's
    conditional and boolean operators where NumPy code calls ``where``/``logical_and``, and
    ``math``'s special functions where the NumPy module calls a runtime helper."""

    def __init__(self, settings=None):
        super().__init__(settings)
        self.math = False

    def helper_call(self, name: str, *args: str) -> str:
        template = _MATH.get(name)
        if template is None or len(args) != 1:
            what = _UNSUPPORTED.get(name, name.lstrip("_"))
            raise UnsupportedError(
                f"{what} has no formula for backend='numba' (its NumPy form is symdiff's "
                f"runtime helper {name}); use backend='numpy' for this function")
        self.math = self.math or "_math." in template
        arg = args[0] if args[0].isidentifier() else f"({args[0]})"
        return template.format(arg)

    def where(self, cond: str, value: str, otherwise: str) -> str:
        return f"({value} if {cond} else {otherwise})"

    def _print_And(self, expr: sp.And) -> str:
        return "(" + " and ".join(self._print(a) for a in expr.args) + ")"

    def _print_Or(self, expr: sp.Or) -> str:
        return "(" + " or ".join(self._print(a) for a in expr.args) + ")"

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
        return f"({float(at_zero)!r} if {arg} == 0 else _np.maximum(_np.sign({arg}), 0.0))"


def loop_spec(program: Any, printer: NumbaPrinter,
              assignments: Sequence[tuple[sp.Symbol, sp.Expr]],
              outputs: Sequence[sp.Expr], leaves: Sequence[int], structure: str) -> ModuleSpec:
    """The Numba module of an elementwise ``program`` (:class:`~symdiff.codegen.emit.Program`)
    after CSE: ``_formulas`` (the
    ``assignments`` and the ``outputs``, returned as the numbers of ``leaves``, or of an array
    result's entries), the two loops, and the public function that hands them to the
    runtime (``structure``: how the leaves nest in what it returns; empty for an array
    result, ``program.result`` an :class:`~symdiff.codegen.emit.ArrayResult`)."""
    inputs = [p for p in program.params if p != VECTOR] + list(program.vector)
    printed = [(str(name), printer.doprint(value)) for name, value in assignments]
    lines: list[str] = []
    result = program.result
    if not structure:  # an array result
        slots = [(index, k) for index, k in result.entries.items() if outputs[k] != 0]
        if not slots:  # a Hessian of a linear function: one entry written, 0
            slots = [next(iter(result.entries.items()))]
        names = []
        for index, k in slots:
            names.append(naming.output_entry(index))
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
                lines.append(f"{name} = {printer.doprint(expr)}")
            names.append(name)
        targets = [f"{naming.OUT}[{row}][{INDEX}]" for row in range(len(leaves))]
        mirrors = []
        leading = (len(leaves),)
    returned = names[0] if len(names) == 1 else f"({', '.join(names)})"
    call = f"_formulas({', '.join(f'{p}[{INDEX}]' for p in inputs)})"
    body = [f"{', '.join(targets)} = {call}", *mirrors]
    keyword = naming.threads_keyword(program.params)
    arguments = [p for p in program.params if p != VECTOR]
    pieces = [f"_formulas, {_tuple(arguments)}",
              *([f"{naming.THREADS}={keyword}"] if inputs else []),
              f"loops=({SERIAL}, {THREADED})",
              f"leading={_tuple(leading)}"]
    if structure:
        pieces.append(f"structure={structure}")
    if program.vector:
        pieces.append(f"direction={VECTOR}")
    length = f"{naming.OUT}.shape[-1]" if not structure else f"{naming.OUT}[0].shape[-1]"
    loops = [_loop(SERIAL, JIT, inputs, f"range({length})", body,
                   f"The formulas of {program.name} at every element, one after another."),
             _loop(THREADED, PARALLEL_JIT, inputs, f"_numba.prange({length})", body,
                   f"The formulas of {program.name} at every element, on Numba's threads.")]
    made = ModuleSpec.of(
        program, prelude=[f"return {NUMBA_ELEMENTWISE}({', '.join(pieces)})"],
        assignments=printed, outputs=lines, result=returned,
        helpers=[NUMBA_ELEMENTWISE], formulas=inputs,
        formulas_doc=f"The formulas of {program.name} at one element (numbers in, numbers out).",
        threads=keyword if inputs else None, backend="numba", functions=loops,
        decorator=JIT, math=printer.math)
    if not inputs:  # one point: no threads
        return made
    return replace(made, doc=(*made.doc, THREADS_DOC.format(keyword=keyword)))


def _loop(name: str, decorator: str, inputs: Sequence[str], over: str, body: Sequence[str],
          doc: str) -> str:
    """One loop function's text: ``for _i in <over>:`` and ``body``."""
    lines = [decorator, f"def {name}({', '.join([*inputs, naming.OUT])}):", f'    """{doc}"""',
             f"    for {INDEX} in {over}:"]
    lines += [f"        {line}" for line in body]
    return "\n".join(lines)


def _tuple(items: Sequence[object]) -> str:
    """``(a, b)``, ``(a,)`` or ``()``, as code."""
    return f"({items[0]},)" if len(items) == 1 else f"({', '.join(map(str, items))})"
