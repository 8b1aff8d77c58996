"""One function per plan shape: the derivatives a function computes and the steps that made them.

The scalar planners (:mod:`symdiff.build`) and ``explain()`` (:mod:`symdiff.teach.explain`)
call the same functions here, so the steps shown are always those of the engine that wrote the
code:

* forward mode: :func:`partials` (a gradient, a Jacobian's rows) and :func:`second_partials`
  (a Hessian's upper triangle), each derivative a :class:`~symdiff.engine.steps.Derivation` of
  the rule table (:func:`derivation`, which :func:`symdiff.derive` calls too);
* reverse mode: :func:`gradient_program`, the program of
  :func:`symdiff.engine.reverse.reverse_program` with the sweep it recorded;
* forward over reverse: :func:`hessian_program` (one tangent sweep of the gradient program per
  column) and :func:`hvp_program` (one sweep along ``_v``), by
  :func:`symdiff.engine.tangents.tangent_program`.

Each returns what it computed and a :class:`Recorded`. A freshly built function keeps its
:class:`Recorded` in memory (``CompiledFunction.recorded``); a function loaded from the disk
cache or unpickled has none, and :func:`recorded` derives it again from its recipe with the
same functions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import sympy as sp

from .. import progress
from ..codegen import naming
from ..simplify import simplify_for_people
from ..simplify.numeric import faithful_form
from .adjoints import ReverseSteps, TangentStep
from .forward import differentiate
from .reverse import inline_single_use, prune, reverse_program
from .steps import Derivation, Note, Step
from .tangents import tangent_program

Assignment = tuple[sp.Symbol, sp.Expr]


@dataclass
class Recorded:
    """What the engine recorded while deriving a function's outputs.

    ``derivations`` (forward mode): the :class:`~symdiff.engine.steps.Derivation` of each
    derivative, keyed ``(i, name)`` for d exprs[i] / d name and ``(0, name_i, name_j)`` for a
    Hessian's second derivatives. ``reverse`` (reverse mode, forward over reverse): the reverse
    sweep; ``tangents``: for second derivatives, the tangent sweeps over its gradient program
    (one list per sweep, titled by ``labels``). Names are the code names of the variables."""

    reverse: ReverseSteps | None = None
    tangents: list[list[TangentStep]] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    derivations: dict[tuple[object, ...], Derivation] = field(default_factory=dict)
    #: Forward mode: how many derivatives are computed unsimplified because their simplified
    #: form lost accuracy in float64 (:func:`code_derivation`).
    unsimplified: int = 0

    def output_tangents(self, sweep: int) -> list[sp.Expr]:
        """The tangents of the gradient outputs in tangent sweep ``sweep`` (a Hessian's
        column, or its product with ``_v``), written in the variables (and the direction's
        components, ``_x_dir``)."""
        env = self.reverse.names() if self.reverse is not None else {}
        result = []
        for step in self.tangents[sweep]:
            if step.symbol is None:
                result.append(step.dot.xreplace(env))
            elif isinstance(step.name, sp.Symbol):
                env[step.name] = step.dot.xreplace(env)
        return result

    def lines(self, outputs: Sequence[str] = (), verbose: str = "key") -> list[str]:
        """The forward and backward passes, then each tangent sweep, as text lines."""
        rows = self.reverse.lines(outputs) if self.reverse is not None else []
        for label, sweep in zip(self.labels, self.tangents, strict=True):
            rows.append(f"tangent sweep {label} (forward mode over the gradient program: each "
                        "assignment's tangent is the sum of local derivative times tangent):")
            for number, step in enumerate(sweep, 1):
                head, *rest = step.lines(verbose)
                rows.append(f"  {number}. {head}")
                rows += [f"    {line}" for line in rest]
        return rows


def symbols(names: Sequence[str]) -> list[sp.Symbol]:
    """The real symbols of variable names (as the build makes them)."""
    return [sp.Symbol(n, real=True) for n in names]


# -- forward mode -------------------------------------------------------------------------------
def derivation(
    expr: sp.Expr, var: sp.Symbol, simplify: bool = True, verbose: str = "all"
) -> Derivation:
    """d expr / d var by the rule table, with its steps (and a final ``simplify`` step when
    simplifying for reading changed the result)."""
    with progress.stage("derive"):
        root = differentiate(expr, var)
    with progress.stage("simplify"):
        result = simplify_for_people(root.result) if simplify else root.result
    steps = [root]
    if result != root.result:
        steps.append(Step("simplify", root.result, result, var))
    return Derivation(expr, var, result, root.result, steps, verbose)


def code_derivation(expr: sp.Expr, var: sp.Symbol, simplify: bool,
                    record: Recorded) -> Derivation:
    """:func:`derivation` for generated code: the simplified derivative only where it is about
    as accurate in float64 as the derivative as derived
    (:func:`symdiff.simplify.numeric.faithful_form`), else the unsimplified one (counted in
    ``record.unsimplified``)."""
    found = derivation(expr, var, simplify)
    if found.result == found.raw or faithful_form(found.raw, found.result) is not found.raw:
        return found
    record.unsimplified += 1
    return derivation(expr, var, False)


def partials(
    exprs: Sequence[sp.Expr], wrt: Sequence[str], simplify: bool
) -> tuple[list[list[sp.Expr]], Recorded]:
    """Forward mode: ``rows[i][k]`` = d exprs[i] / d wrt[k], each recorded as a derivation
    (simplified where that keeps the accuracy, :func:`code_derivation`)."""
    record = Recorded()
    rows = []
    for i, expr in enumerate(exprs):
        row = []
        for name in wrt:
            found = code_derivation(expr, sp.Symbol(name, real=True), simplify, record)
            record.derivations[(i, name)] = found
            row.append(found.result)
        rows.append(row)
    return rows, record


def second_partials(
    expr: sp.Expr, wrt: Sequence[str], simplify: bool
) -> tuple[dict[tuple[int, int], sp.Expr], Recorded]:
    """Forward over forward: the Hessian's upper triangle ``{(i, j): d2 expr / d wrt[i] d
    wrt[j]}`` for ``j >= i`` (row by row), each the derivative of the first one."""
    (first,), record = partials([expr], wrt, simplify)
    upper: dict[tuple[int, int], sp.Expr] = {}
    for i, gradient in enumerate(first):
        for j in range(i, len(wrt)):
            found = code_derivation(gradient, sp.Symbol(wrt[j], real=True), simplify, record)
            record.derivations[(0, wrt[i], wrt[j])] = found
            upper[(i, j)] = found.result
    return upper, record


# -- reverse mode and forward over reverse --------------------------------------------------------
def gradient_program(
    exprs: Sequence[sp.Expr], wrt: Sequence[str], keep_values: bool = False
) -> tuple[list[Assignment], list[sp.Expr], list[list[sp.Expr]], Recorded]:
    """Reverse mode: ``(assignments, values, gradients, recorded)`` of
    :func:`~symdiff.engine.reverse.reverse_program` for ``exprs`` (a Jacobian's rows)."""
    record = ReverseSteps()
    assignments, values, rows = reverse_program(
        list(exprs), symbols(wrt), keep_values=keep_values, record=record
    )
    return assignments, values, rows, Recorded(record)


def hessian_program(
    expr: sp.Expr, wrt: Sequence[str]
) -> tuple[list[Assignment], list[list[sp.Expr]], Recorded]:
    """Forward over reverse: the reverse sweep of ``expr``'s gradient, then one tangent sweep
    of its program per variable (column ``j`` seeded with ``wrt[j]``, tangents named by
    :func:`symdiff.codegen.naming.tangent`). Returns the assignments (pruned, single uses
    inlined), the columns (``columns[j][i]`` = d2 expr / d wrt[i] d wrt[j]) and what was
    recorded."""
    record = ReverseSteps()
    variables = symbols(wrt)
    gradient, _, (grads,) = reverse_program([expr], variables, inline=False, record=record)
    recorded = Recorded(record)
    program, shared = list(gradient), set(gradient)
    flat: list[sp.Expr] = []
    for j, var in enumerate(variables):
        steps: list[TangentStep] = []
        sweep, column = tangent_program(gradient, grads, {var: sp.S.One}, j, record=steps)
        program += [step for step in sweep if step not in shared]
        flat += column
        recorded.tangents.append(steps)
        recorded.labels.append(f"for column {j} (d/d{var})")
    assignments, flat = inline_single_use(prune(program, flat), flat)
    n = len(variables)
    return assignments, [flat[j * n : (j + 1) * n] for j in range(n)], recorded


def hvp_program(
    expr: sp.Expr, wrt: Sequence[str]
) -> tuple[list[Assignment], list[sp.Expr], Recorded]:
    """Forward over reverse along the direction ``_v`` (components ``_<name>_dir``): the
    assignments (pruned, single uses inlined), the products' components and what was
    recorded."""
    record = ReverseSteps()
    variables = symbols(wrt)
    gradient, _, (grads,) = reverse_program([expr], variables, inline=False, record=record)
    directions = dict(zip(variables, symbols([naming.direction(n) for n in wrt]), strict=True))
    steps: list[TangentStep] = []
    program, products = tangent_program(gradient, grads, directions, record=steps)
    assignments, products = inline_single_use(prune(program, products), products)
    label = f"along the direction {naming.DIRECTION}"
    return assignments, products, Recorded(record, [steps], [label])


# -- again, from a recipe -------------------------------------------------------------------------
Recorder = Callable[[Sequence[sp.Expr], Sequence[str], bool], Recorded]

#: What each mode records for each kind of function: the function of its plan shape.
RECORDERS: dict[tuple[str, str], Recorder] = {
    ("forward", "value"): lambda exprs, wrt, simplify: Recorded(),
    ("forward", "grad"): lambda exprs, wrt, simplify: partials(exprs, wrt, simplify)[1],
    ("forward", "value_and_grad"): lambda exprs, wrt, simplify: partials(exprs, wrt, simplify)[1],
    ("forward", "jacobian"): lambda exprs, wrt, simplify: partials(exprs, wrt, simplify)[1],
    ("forward", "hessian"): lambda exprs, wrt, simplify: second_partials(*exprs, wrt, simplify)[1],
    ("reverse", "grad"): lambda exprs, wrt, simplify: gradient_program(exprs, wrt)[3],
    ("reverse", "value_and_grad"): lambda exprs, wrt, simplify: gradient_program(
        exprs, wrt, keep_values=True)[3],
    ("reverse", "jacobian"): lambda exprs, wrt, simplify: gradient_program(exprs, wrt)[3],
    ("forward over reverse", "hessian"): lambda exprs, wrt, simplify: hessian_program(
        *exprs, wrt)[2],
    ("forward over reverse", "hvp"): lambda exprs, wrt, simplify: hvp_program(*exprs, wrt)[2],
}


def recorded(
    kind: str,
    exprs: Sequence[sp.Expr],
    wrt: Sequence[str],
    mode: str | None = None,
    simplify: bool = True,
) -> Recorded:
    """What the build of a function of ``kind`` in ``mode`` records (:data:`RECORDERS`), for
    ``exprs`` by ``wrt`` (code names): the steps a function loaded from the disk cache derives
    again. ``mode`` defaults to reverse mode (forward over reverse for ``hessian`` and
    ``hvp``)."""
    if mode is None:
        mode = "forward over reverse" if kind in ("hessian", "hvp") else "reverse"
    return RECORDERS[(mode, kind)](exprs, wrt, simplify)


def renamed(found: Derivation, swap: Mapping[sp.Symbol, sp.Symbol]) -> Derivation:
    """``found`` with its symbols renamed by ``swap`` (code names back to the caller's)."""
    if not swap:
        return found
    swap = dict(swap)

    def step(s: Step) -> Step:
        note = s.note
        if isinstance(note, Note):
            note = replace(note, exprs=tuple(e.xreplace(swap) for e in note.exprs))
        return replace(
            s, expr=s.expr.xreplace(swap), result=s.result.xreplace(swap),
            var=s.var.xreplace(swap), substeps=tuple(step(sub) for sub in s.substeps),
            note=note, defines=tuple((n, e.xreplace(swap)) for n, e in s.defines),
        )

    return replace(
        found, expr=found.expr.xreplace(swap), var=found.var.xreplace(swap),
        result=found.result.xreplace(swap), raw=found.raw.xreplace(swap),
        steps=[step(s) for s in found.steps],
    )
