"""The tensor emitter's last pass: its lines as printed statements.

:mod:`symdiff.tensor.emit` walks the graph into lines ``(target, value)``, a value being code
already (a matmul, a reduction) or an elementwise SymPy expression. :func:`finish` prints them:
the elementwise expressions in their stable and tensor forms (:func:`tensor_forms`), common
factors of sums taken out and common subexpressions shared through SymPy's ``cse`` (each printed
just before its first use; a line that is itself shared gives its name), the parts of smaller
shapes computed first on their own (:mod:`symdiff.tensor.hoist`), a function of new
arithmetic applied in place (``_t1 = _np.exp(_t1, out=_t1)``), slices accumulated into a buffer
as ``+=`` / ``-=``, and temporaries renumbered ``_t0, _t1, ...`` in order of definition.
:func:`release` then frees the temporaries of a long program after their last read.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Collection, Mapping, Sequence

import sympy as sp

from .. import registry
from ..codegen import naming
from ..codegen.emit import INTERLEAVE_MIN
from ..codegen.printer import ArrayCodePrinter
from ..simplify import stable_forms
from .codetext import (
    PLACEHOLDER,
    closure,
    factored,
    inline_scalars,
    is_dim,
    renamer,
    renumber,
)
from .fused import Fuser
from .hoist import hoist
from .shapes import Shape

#: Elementwise functions applied in place to a new array (see :func:`in_place`), with the
#: ufunc each one prints as: the registry rows marked ``in_place``.
IN_PLACE_UFUNCS = registry.in_place_ufuncs()

#: ``sigmoid(u)`` is emitted as ``1/(1 + exp(min(-u, SIGMOID_CLIP)))``: one ``exp``, which never
#: overflows in float32 or float64 (``exp(88)`` < 3.4e38); below ``sigmoid(-88)`` = 6.1e-39 the
#: value stays at 6.1e-39 (an absolute error under 1e-38), elsewhere it is exact to a few ulp.
#: (The row's ``tensor_form`` writes it; the number is the registry's.)
SIGMOID_CLIP = registry.SIGMOID_CLIP
#: Functions tensor code writes in another exact form (the rows' ``tensor_form``): ``sigmoid``
#: as above costs four NumPy calls, where the helper ``_sigmoid`` takes eight (per-call overhead
#: that dominates small arrays).
TENSOR_FORMS = {
    registry.head_class(row): row.tensor_form for row in registry.ROWS if row.tensor_form
}

Line = tuple[str, "str | sp.Expr"]


def tensor_forms(expr: sp.Expr) -> sp.Expr:
    """``expr`` with each function of :data:`TENSOR_FORMS` in its tensor form."""
    for func, form in TENSOR_FORMS.items():
        expr = expr.replace(func, form)
    return expr


def finish(
    lines: Sequence[Line],
    *,
    accumulate: Collection[int],
    shapes: Mapping[str, Shape],
    counter: int,
    cse: bool,
    printer: ArrayCodePrinter,
    fuser: Fuser | None = None,
) -> list[tuple[str, str]]:
    """The printed statements ``(target, code)`` of the emitter's ``lines``.

    ``accumulate`` are the indices of lines added into their target (``target += value``);
    ``shapes`` the shapes of the targets; ``counter`` the next free placeholder number
    (``_s<counter>``, where the shared subexpressions' names start); ``cse`` whether to share
    common subexpressions; ``fuser`` (``backend="numba"``): each elementwise expression's
    functions computed by NumPy, its arithmetic by a Numba ufunc of its own
    (:mod:`symdiff.tensor.fused`), none applied in place."""

    # the names of new temporaries: the shared subexpressions', then the functions' that the
    # fuser computes apart (one sequence, so that none is given twice)
    names = (sp.Symbol(naming.slot(k)) for k in itertools.count(counter))
    fresh = (symbol.name for symbol in names)

    def text(value: sp.Expr) -> str:
        return printer.doprint(value) if fuser is None else fuser.code(value, printer.doprint)

    def statements(target: str, value: sp.Expr, add: bool = False) -> list[tuple[str, str]]:
        """The lines that compute ``value`` into ``target`` (``add``: added onto it); with a
        fuser, each function of it computed first by NumPy (:meth:`Fuser.split`)."""
        before: list[tuple[str, str]] = []
        if fuser is not None:  # (one parameter per array: an alias is what it stands for)
            found = {symbol: sp.Symbol(_resolve(symbol.name, aliases))
                     for symbol in value.free_symbols if symbol.name in aliases}
            before, value = fuser.split(value.xreplace(found), printer.doprint, fresh)
            if not add and before and before[-1][0] == str(value):  # the function's value
                return [*before[:-1], (target, before[-1][1])]
        return [*before, add_onto(target, value, text) if add else (target, text(value))]

    exprs = [(i, value) for i, (_, value) in enumerate(lines) if isinstance(value, sp.Basic)]
    forms = [factored(tensor_forms(stable_forms(value))) for _, value in exprs]
    shared: list[tuple[sp.Symbol, sp.Expr]] = []
    if cse and forms:
        shared, forms = sp.cse(forms, symbols=names, order="canonical")
        shared, forms = inline_scalars(shared, forms)
        shared, forms = hoist(shared, forms, shapes, names)
    reduced = dict(zip((i for i, _ in exprs), forms, strict=True))
    pending = dict(shared)
    printed: list[tuple[str, str]] = []
    aliases: dict[str, str] = {}
    for i, (target, value) in enumerate(lines):
        if i not in reduced:
            printed.append((target, value))  # type: ignore[arg-type]
            continue
        value = reduced[i]
        if value in pending and target.isidentifier():
            # the line is a shared subexpression: it takes the line's name
            expr = pending.pop(value)
            rename = {value: sp.Symbol(target)}
            pending = {k: e.xreplace(rename) for k, e in pending.items()}
            reduced = {k: e.xreplace(rename) for k, e in reduced.items()}
            value = expr
        elif value.is_Symbol and PLACEHOLDER.fullmatch(target):
            aliases[target] = value.name  # computed already: reuse it
            continue
        needed = closure(value.free_symbols, pending)
        for k, e in pending.items():
            if k in needed:
                printed += statements(k.name, e)
        pending = {k: e for k, e in pending.items() if k not in needed}
        if fuser is None and i not in accumulate and in_place(target, value, shapes):
            printed.append((target, printer.doprint(value.args[0])))
            ufunc = IN_PLACE_UFUNCS[value.func]
            printed.append((target, f"_np.{ufunc}({target}, out={target})"))
        else:
            printed += statements(target, value, add=i in accumulate)
    if fuser is not None:  # the ufuncs' parameters take the names of what they are given
        rename = renamer(printed, aliases)
        fuser.functions[:] = [rename(function) for function in fuser.functions]
    return renumber(printed, aliases)


def _resolve(name: str, aliases: Mapping[str, str]) -> str:
    """The line an alias stands for."""
    while name in aliases:
        name = aliases[name]
    return name


def add_onto(target: str, value: sp.Expr, text: Callable[[sp.Expr], str]) -> tuple[str, str]:
    """``target += value`` (or ``-=``) as a statement ``("target +=", code)``: NumPy adds
    into the slice in place, with no temporary and no copy back (``text`` prints a value)."""
    sign = "+"
    if not value.is_Add and value.could_extract_minus_sign():
        sign, value = "-", -value
    return f"{target} {sign}=", text(value)


def in_place(target: str, value: sp.Expr, shapes: Mapping[str, Shape]) -> bool:
    """Whether ``target = f(arithmetic)`` can apply the ufunc ``f`` in place: the arithmetic
    makes a new array of the target's (non-scalar) shape, which ``f`` then overwrites
    (``out=``) instead of allocating another: on long arrays, each new array costs a page
    fault per 4 KB."""
    if value.func not in IN_PLACE_UFUNCS or len(value.args) != 1:
        return False
    (arg,) = value.args
    shape = shapes.get(target)
    return (
        target.isidentifier()
        and shape is not None
        and len(shape) > 0
        and isinstance(arg, sp.Add | sp.Mul | sp.Pow)
        and any(not is_dim(s) for s in arg.free_symbols)
    )


#: A renumbered temporary in printed code (``_t12``; not ``_t0_bar``, the gradient of ``t0``).
_TEMPORARY = re.compile(rf"(?<![\w.]){re.escape(naming.TEMPORARY)}\d+(?!\w)")


def release(statements: Sequence[tuple[str, str]], result: str) -> list[tuple[str, str]]:
    """``statements`` with ``del`` of each temporary right after the statement that reads it
    last, when the program has more than :data:`~symdiff.codegen.emit.INTERLEAVE_MIN`
    temporaries (smaller ones are left as they are, as the scalar emitter does). Python frees a
    function's locals only when it returns, so a long gradient (a network's: every layer's
    activations, im2col matrices and their adjoints) otherwise holds all its temporaries at
    once, and every call takes that memory fresh from the system, page by page. Temporaries
    that ``result`` (the returned expression) reads, and those read last by the final
    statement, are left to the return."""
    last: dict[str, int] = {}
    for k, (target, code) in enumerate(statements):
        for name in _TEMPORARY.findall(f"{target} {code}"):
            last[name] = k
    if len(last) <= INTERLEAVE_MIN:
        return list(statements)
    returned = set(_TEMPORARY.findall(result))
    dead: dict[int, list[str]] = {}
    for name, k in last.items():
        if name not in returned and k < len(statements) - 1:
            dead.setdefault(k, []).append(name)
    released: list[tuple[str, str]] = []
    for k, statement in enumerate(statements):
        released.append(statement)
        if k in dead:
            names = sorted(dead[k], key=lambda name: int(name[len(naming.TEMPORARY):]))
            released.append(("", f"del {', '.join(names)}"))
    return released
