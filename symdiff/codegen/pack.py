"""The packed point path: a scalar program with many names evaluated as a few NumPy vector
operations at one point.

At one point given as floats, a program of thousands of scalar lines costs thousands of
Python float operations. Most of its lines are alike: the gradient of the extended Rosenbrock
function has ``200*(x_{i+1} - x_i**2)`` for every i, that of a log-sum-exp ``exp(x_i)*s``.
Lines whose trees are identical modulo their leaf symbols and numbers (one shape key,
:mod:`symdiff.codegen.shapes`) and that sit at one depth of the program (so that a group never
reads itself) form a *group*, computed once as one vector expression: the group's template is
the first line's tree with each leaf position replaced by a gather of that position's values,
and numbers that differ between lines by a constant array written into the module. A sum or
product of many alike arguments is the reduction of their vector (``_np.add.reduceat`` over each
line's run of arguments), so a dense quadratic form's gradient is one gather-multiply-sum.

Every value lives in one register vector ``_r``: the inputs first (in :func:`pack_order`), then
each group's results in a run of its own, which a group of several lines computes straight into
(its last operation a ufunc with ``out=``, :mod:`symdiff.codegen.store`). Their integers are
shared 0-d float64 module constants (``_cv0 = _np.array(200.0)``), which NumPy takes quicker
than Python ints. A gather is a slice of ``_r`` where its positions are
evenly spaced, else an index array; the outputs are one final gather. The runtime helper
``_at_packed`` fills the inputs in, calls the packed function and hands back each output as a
0-d float64 array, as ``_at_point`` does.

:func:`packed_point` decides per function, from counts of operations (never times), whether
this beats the plain path on Python floats: it does for many alike lines, not for a few.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import sympy as sp

from . import naming
from .grouping import Unpackable, group_lines
from .printer import EXACT_INT_LIMIT, CodePrinter
from .shapes import ATOM, NUMBER, OPAQUE, PRODUCT, SUM, SYMBOL, Shapes
from .store import store

#: The packed function's name, its register parameter and the runtime helper that calls it.
PACKED = "_packed"
REGISTER = "_r"
PACKED_HELPER = "_at_packed"
#: Module-level index arrays (``_ix0``) and constant arrays (``_cv0``) of a packed function.
INDEX_PREFIX = "_ix"
VALUES_PREFIX = "_cv"

#: The cost model, in units of one operation of the plain path on Python floats (about 0.1 us
#: on a quiet machine; each output there costs one more, its 0-d array): the packed path's fixed
#: cost (filling the register, the outputs' arrays), one NumPy call on a short vector (gather,
#: ufunc, store) and each element such calls touch. Calibrated on the n-name problems of
#: ``benchmarks/bench_many_names.py``: the packed path wins from 15-40 names on.
FIXED_COST = 60.0
CALL_COST = 5.0
ELEMENT_COST = 0.025
#: The plain path of a Hessian-vector product at a point (its arguments made 0-d arrays, its
#: formulas run on NumPy scalars) costs about this many units per operation: measured on the
#: hessp rows of ``benchmarks/bench_many_names.py`` (0.1-0.2 us per operation at 30 and 100
#: names), where the packed path of a product of n names (a linear recurrence per name, one
#: group per level) lost to it and those of the other problems won 10-150x.
HVP_PLAIN_COST = 2.0
#: Tests set this to force the packed path on (True) or off (False); None: the cost model.
FORCE: bool | None = None


def cheaper(packed: PackedPoint, elements: int, slower: float = 1) -> bool:
    """Whether the packed path costs less than the plain one, by the counts of the cost model
    (NumPy calls and the elements they touch against Python float operations, ``slower``
    times as costly where they run on NumPy scalars)."""
    cost = FIXED_COST + packed.calls * CALL_COST + elements * ELEMENT_COST
    return cost < packed.plain * slower + packed.outputs


@dataclass(frozen=True)
class PackedPoint:
    """The packed point path of one function: its public function calls
    ``_at_packed(_packed, (<order>), size, nest)``."""

    order: tuple[str, ...]
    size: int
    body: tuple[str, ...]
    constants: tuple[str, ...]
    calls: int
    plain: int
    outputs: int

    def source(self, title: str) -> str:
        """The text of the packed function."""
        lines = [f"def {PACKED}({REGISTER}):",
                 f'    """The formulas of {title} at one point: the inputs and every value in '
                 f'the vector {REGISTER}."""']
        lines += [f"    {line}" for line in self.body]
        return "\n".join(lines)


def pack_order(params: Sequence[str]) -> tuple[str, ...]:
    """The parameters in natural order (``x2`` before ``x10``): the order of their packed
    vector, in which numbered names read as slices."""
    def natural(name: str) -> tuple:
        return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))

    return tuple(sorted(params, key=natural))


def packed_point(
    assignments: Sequence[tuple[sp.Symbol, sp.Expr]],
    outputs: Sequence[sp.Expr],
    leaves: Sequence[int],
    params: Sequence[str],
    printer_factory: Callable[[], CodePrinter],
    slower: float = 1,
    last: Sequence[str] = (),
) -> tuple[PackedPoint, CodePrinter] | None:
    """The packed point path of the program, or None where the plain one costs less (or the
    program has something this path does not pack). ``leaves``: the output numbers in the
    order the result hands them out (depth first); ``last``: inputs that follow ``params`` in
    the register, in this order (a direction's components)."""
    printer = printer_factory()
    try:
        packer = _Packer(assignments, outputs, params, printer, last)
        packed = packer.pack([packer.output_locations[k] for k in leaves])
    except Unpackable:
        return None
    chosen = FORCE if FORCE is not None else cheaper(packed, packer.elements, slower)
    if not chosen:
        return None
    return packed, printer


class _Packer:
    def __init__(self, assignments, outputs, params, printer, last=()) -> None:
        self.printer = printer
        self.shapes = Shapes()
        self.order = (*pack_order(params), *last)
        self.elements = 0
        self.calls = 0
        self.plain = 0
        self.constants: list[str] = []
        self._index_names: dict[tuple[int, ...], str] = {}
        self._scalar_names: dict[float, str] = {}
        names = {p: i for i, p in enumerate(self.order)}
        lines: list[tuple[sp.Symbol | None, sp.Expr]] = list(assignments)
        self.output_locations: list[int] = []
        pending_outputs: list[tuple[int, int]] = []  # (output, its line; -1: a name)
        for k, expr in enumerate(outputs):
            if expr.is_Symbol:
                pending_outputs.append((k, -1))
            else:
                pending_outputs.append((k, len(lines)))
                lines.append((None, expr))
        self.plain = sum(self.shapes.of(value).operations for _, value in lines)
        groups = group_lines(lines, self.shapes, set(names))
        size = len(self.order)
        self._by_name = dict(names)
        self.body: list[str] = []
        line_location: dict[int, int] = {}
        for group in groups:
            members = list(group.members)
            start = size
            if group.scan:  # a chain: its first leaf, then each line's value
                size += len(members) + 1
                ufunc = "add" if group.kind == SUM else "multiply"
                leaves = self.vector_gather([self._find(s) for s in group.scan])
                code = f"_np.{ufunc}.accumulate({leaves})"
                start += 1
            else:
                if len(members) > 1:  # in the order of their first leaves: gathers are slices
                    members.sort(key=lambda i: self._first_leaf(lines[i][1]))
                size += len(members)
                code = self.vector([lines[i][1] for i in members])
            target = f"{REGISTER}[{start - bool(group.scan)}:{size}]"
            # a vector computes straight into its run; a single value (NumPy scalars) is stored
            self.body.append(store(target, code) if size - start > 1
                             else f"{target} = {code}")
            self.calls += 1
            for offset, i in enumerate(members):
                line_location[i] = start + offset
                symbol = lines[i][0]
                if symbol is not None:
                    self._by_name[symbol.name] = start + offset
        for k, line in pending_outputs:
            if line < 0:
                self.output_locations.append(self._find(outputs[k]))
            else:
                self.output_locations.append(line_location[line])
        self.size = size

    def pack(self, out: list[int]) -> PackedPoint:
        self.body.append(f"return {self.vector_gather(out)}")
        return PackedPoint(self.order, self.size, tuple(self.body), tuple(self.constants),
                           self.calls, self.plain, len(out))

    def _first_leaf(self, expr: sp.Expr) -> int:
        """Where the first symbol of ``expr`` in its shape's order is (-1: none)."""
        if expr.is_Symbol:
            return self._by_name.get(expr.name, -1)
        node = expr
        while True:
            shape = self.shapes.of(node)
            if shape.kind == SYMBOL:
                return self._by_name.get(node.name, -1)
            children = shape.singles
            if shape.kind in (SUM, PRODUCT) and len(children) > 1:
                children = self._aligned(children)  # as the template takes them
            children = children or tuple(a for _, run in shape.many for a in run[:1])
            if not children:
                return -1
            node = next((c for c in children if self.shapes.of(c).kind not in (NUMBER, ATOM)),
                        children[0])

    # -- codes -------------------------------------------------------------------------------
    def _find(self, symbol: sp.Symbol) -> int:
        found = self._by_name.get(symbol.name)
        if found is None:
            raise Unpackable(symbol)
        return found

    def vector_gather(self, places: Sequence[int]) -> str:
        """:meth:`gather`, always a vector of ``len(places)`` (never one element broadcast)."""
        if len(places) == 1:
            return f"{REGISTER}[{places[0]}:{places[0] + 1}]"
        if all(p == places[0] for p in places):
            self.calls += 1
            return f"{REGISTER}[{self.index(places)}]"
        return self.gather(places)

    def gather(self, places: Sequence[int]) -> str:
        """``_r`` at ``places``: one element, a slice where they are evenly spaced, else an
        index array."""
        self.elements += len(places)
        first = places[0]
        if len(places) == 1 or all(p == first for p in places):
            return f"{REGISTER}[{first}]"
        self.calls += 1
        step = places[1] - first
        if step and all(b - a == step for a, b in itertools.pairwise(places)):
            stop = first + step * len(places)
            if step == 1:
                return f"{REGISTER}[{first}:{stop}]"
            return f"{REGISTER}[{first}:{'' if stop < 0 else stop}:{step}]"
        return f"{REGISTER}[{self.index(places)}]"

    def index(self, values: Sequence[int]) -> str:
        key = tuple(values)
        name = self._index_names.get(key)
        if name is None:
            name = self._index_names[key] = f"{INDEX_PREFIX}{len(self._index_names)}"
            self.constants.append(f"{name} = _np.array([{', '.join(map(str, values))}])")
        return name

    def numbers(self, nodes: Sequence[sp.Expr], factor: bool = False) -> str | sp.Expr:
        """The number of every line in ``nodes`` (one per line): the number itself where it
        is the same in every line, else a module constant array of them. In a vector of lines
        an integer other than a product's sign (``factor``: +-1 there print as a sign) is a
        0-d float64 module constant: a ufunc takes an array operand quicker than a Python
        number, and the integer is exactly that float, so the values are the same."""
        values = [float(n) for n in nodes]
        if all(v == values[0] for v in values) and all(n == nodes[0] for n in nodes):
            number = nodes[0]
            if (len(nodes) == 1 or not number.is_Integer or abs(number) >= EXACT_INT_LIMIT
                    or (factor and abs(number) == 1)):
                return number
            name = self._scalar_names.get(values[0])
            if name is None:
                name = self._scalar_names[values[0]] = f"{VALUES_PREFIX}{len(self.constants)}"
                self.constants.append(f"{name} = _np.array({values[0]!r})")
            return name
        name = f"{VALUES_PREFIX}{len(self.constants)}"
        self.constants.append(f"{name} = _np.array([{', '.join(map(repr, values))}])")
        return name

    def vector(self, nodes: Sequence[sp.Expr]) -> str:
        """The code of the vector of the values of ``nodes`` (one shape key)."""
        slots: dict[str, str] = {}
        template = self._template(list(nodes), slots)
        code = self.printer.doprint(template)
        self.calls += _operations(template)
        self.elements += len(nodes) * max(1, _operations(template))
        if not slots:
            return code
        return naming.PACKED_SLOT.sub(lambda m: slots[m.group(0)], code)

    def _slot(self, slots: dict[str, str], code: str) -> sp.Symbol:
        name = naming.packed_slot(len(slots))
        slots[name] = code
        return sp.Symbol(name)

    def _template(self, column: list[sp.Expr], slots: dict[str, str],
                  factor: bool = False) -> sp.Expr:
        """The template of the alike nodes ``column`` (``factor``: they are factors of a
        product)."""
        shape = self.shapes.of(column[0])
        kind = shape.kind
        if kind == SYMBOL:
            return self._slot(slots, self.gather([self._find(s) for s in column]))
        if kind == NUMBER:
            code = self.numbers(column, factor)
            return code if isinstance(code, sp.Expr) else self._slot(slots, code)
        if kind == ATOM:
            return column[0]
        if kind == OPAQUE:  # one expression (the same node in every line): read its symbols
            node = column[0]
            return node.xreplace({s: self._slot(slots, self.gather([self._find(s)]))
                                  for s in node.free_symbols})
        parts = [self.shapes.of(n) for n in column]
        commutes = kind in (SUM, PRODUCT)
        rows = [self._aligned(p.singles) if commutes else p.singles for p in parts]
        children = [
            rows[0][j] if not commutes and rows[0][j].is_Number  # part of the shape
            else self._template([row[j] for row in rows], slots, kind == PRODUCT)
            for j in range(len(shape.singles))]
        if commutes:
            for c, (_, _) in enumerate(shape.many):
                runs = [tuple(sorted(p.many[c][1], key=self._first_leaf)) for p in parts]
                children.append(self._slot(slots, self._reduce(kind, runs)))
            # numbers lead a product and end a sum, as the printer expects (``-x``, ``x - 1``)
            numbers = [c for c in children if c.is_Number]
            others = [c for c in children if not c.is_Number]
            if kind == SUM:
                return sp.Add(*others, *numbers, evaluate=False)
            return sp.Mul(*numbers, *others, evaluate=False)
        node = column[0]
        if isinstance(node, sp.Pow):
            return sp.Pow(children[0], node.exp, evaluate=False)
        # a number argument of a function is part of the shape: the same in every line
        children = [a if a.is_Number else c for a, c in zip(node.args, children, strict=True)]
        try:
            return node.func(*children, evaluate=False)
        except TypeError:  # a function that takes no ``evaluate``
            return node.func(*children)

    def _aligned(self, args: tuple[sp.Expr, ...]) -> tuple[sp.Expr, ...]:
        """The arguments of a sum or product with those of one shape key in the order of their
        first leaves: in alike lines the same roles then fall in the same positions
        (``t_i*s`` and ``s*t_j`` both as ``t*s``), and the gathers are slices."""
        keys = [self.shapes.of(a).key for a in args]
        if len(set(keys)) == len(keys):
            return args
        out = list(args)
        start = 0
        while start < len(args):
            stop = start
            while stop < len(args) and keys[stop] == keys[start]:
                stop += 1
            if stop - start > 1:
                out[start:stop] = sorted(args[start:stop], key=self._first_leaf)
            start = stop
        return tuple(out)

    def _reduce(self, kind: int, runs: list[tuple[sp.Expr, ...]]) -> str:
        """The sum (or product) of each line's run of alike arguments."""
        flat = [a for run in runs for a in run]
        inner = self.vector(flat)
        ufunc = "add" if kind == SUM else "multiply"
        self.calls += 1
        if len(runs) == 1:
            return f"_np.{ufunc}.reduce({inner})"
        starts, at = [], 0
        for run in runs:
            starts.append(at)
            at += len(run)
        return f"_np.{ufunc}.reduceat({inner}, {self.index(starts)})"




def _operations(expr: sp.Basic) -> int:
    """Arithmetic operations and calls in ``expr`` (an n-ary sum counts n - 1)."""
    count = 0
    stack = [expr]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if node.is_Atom or id(node) in seen:
            continue
        seen.add(id(node))
        count += max(1, len(node.args) - 1) if isinstance(node, sp.Add | sp.Mul) else 1
        stack.extend(node.args)
    return count
