"""``CompiledFunction.explain``: which rule produced which generated line.

What a function is (its expression, kind, ``wrt``, shapes, mode and output names) comes from
its :attr:`~symdiff.CompiledFunction.recipe`, which a function loaded from the disk cache or
unpickled carries too. The steps are those the engine recorded while building the function
(:attr:`~symdiff.CompiledFunction.recorded`); a function loaded from the disk cache or unpickled
has none and derives them again from its recipe with the same functions
(:func:`symdiff.engine.sweeps.recorded`), so every function explains exactly like a fresh one.
The source is only shown: the line that assigns
each output and the temporaries it reads. Scalar functions pair ``_<name>_bar = ...`` with the
rule tree of ``d expr / d name``; tensor functions (built with ``shapes=``) pair
``_<name>_bar = ...`` and the temporaries it reads with the matrix-calculus rules of the
backward walk.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..codegen import naming
from ..codegen.naming import code_names
from ..errors import SymdiffError

#: :class:`symdiff.compiled.CompiledFunction`, which is not imported here: it imports this
#: module (its ``explain`` and ``origin`` methods), and imports must not go in a circle.
CompiledFunction = Any


def origin(function: CompiledFunction) -> list[Any]:
    """The expression(s) this function was built from: its recipe's, parsed by
    :func:`symdiff.parse` (never ``eval``) in their stable forms, under the names the caller
    gave; a tensor function's are the texts (the tensor parser needs the shapes). Raises
    :class:`~symdiff.SymdiffError` for a function without a recipe (made by hand from a
    source), or when a text cannot be read back (pass ``expr=`` then).
    """
    recipe = _recipe(function)
    if recipe.tensor:
        return list(recipe.exprs)
    from ..parsing import parse

    try:
        parsed = [parse(text) for text in recipe.exprs]
    except SymdiffError as error:
        raise SymdiffError(
            f"explain: cannot read back {'; '.join(recipe.exprs)!r}; pass expr="
        ) from error
    renamed = code_names(function.args)  # the recipe has code names for SymPy's "x_{1}"
    if renamed:
        import sympy as sp

        back = {sp.Symbol(c, real=True): sp.Symbol(o, real=True) for o, c in renamed.items()}
        parsed = [e.xreplace(back) for e in parsed]
    return parsed


def _recipe(function: CompiledFunction) -> Any:
    """The function's :class:`~symdiff.recipe.Recipe`; an error asking for ``expr=`` if none."""
    recipe = getattr(function, "recipe", None)
    if recipe is None:
        raise SymdiffError(
            "explain: this function has no recipe (it was not made by a builder), so its "
            "expression is unknown; pass expr="
        )
    return recipe


def _gradient_names(function: CompiledFunction, names: Sequence[str], scalar: bool) -> list[str]:
    """The generated names of the gradient outputs, one per ``wrt`` name: the recipe's (the
    last outputs of a ``grad`` or ``value_and_grad``), else
    :func:`~symdiff.codegen.naming.adjoint`'s."""
    recipe = getattr(function, "recipe", None)
    if recipe is not None and len(recipe.outputs) >= len(names):
        return list(recipe.outputs[len(recipe.outputs) - len(names) :])
    renamed = code_names(function.args)
    codes = [renamed.get(n, n) for n in names]
    return [naming.adjoint(c) for c in codes]


#: The width :func:`explain` breaks its lines to (at spaces): a notebook's output area or a
#: terminal shows whole words, never a word broken by the browser's own wrapping.
EXPLAIN_WIDTH = 100


def explain(
    function: CompiledFunction,
    expr: Any = None,
    verbose: str = "key",
    shapes: Mapping[str, Any] | None = None,
    width: int | None = EXPLAIN_WIDTH,
) -> str:
    """Pair each generated output line with the rule tree of the derivative it computes.

    Lines longer than ``width`` characters are broken at spaces, the rest of a line indented
    further (``width=None``: whole lines).

    For every output ``_<name>_bar`` (one per :attr:`wrt` name; ``grad`` and
    ``value_and_grad``), or ``d(expr_i)/d(name)`` for a ``jacobian``, the text shows the line
    of :attr:`source` that assigns it and then :func:`symdiff.derive`'s numbered steps for
    ``d expr / d name``, so a student sees which rule produced which code. ``expr`` is the
    expression the function was built from (default: :meth:`origin`). ``verbose="key"``
    hides the leaf constant / variable steps, ``"all"`` shows every step. Other kinds
    (``value``, a forward-mode ``hessian``) list their expressions and say there is no rule
    tree. Note that the generated line may be written with shared temporaries (``_t0``) and in
    a different but equal form: CSE and simplification run after the rules.

    The steps are always those of the engine that wrote the code (:func:`engine_mode`): a
    function emitted in reverse mode (``mode="reverse"``, or ``"auto"`` from four variables)
    shows the sweep :mod:`symdiff.engine.reverse` recorded as it wrote it (each temporary's
    definition, then each node's adjoint, a fan-out's contributions summed, and what the
    node's rule sends each operand); a ``hessian`` or ``hvp`` emitted forward over reverse
    adds the tangent sweeps of :mod:`symdiff.engine.tangents` (:mod:`symdiff.engine.sweeps`).

    A tensor function (built with ``shapes=``) pairs each gradient output ``_<name>_bar``
    of a ``grad`` or ``value_and_grad`` with the steps of
    ``sd.derive(expr, wrt=name, shapes=...)``: the matrix-calculus rules of the backward
    walk that produced it; the generated temporaries the line uses are listed under it.
    The shapes and the expression are the function's recipe's (so a function loaded from the
    disk cache explains the same way); ``shapes=`` and ``expr=`` override them (a function
    without a recipe needs ``expr=``). Other tensor kinds say there is no rule tree and list
    what they compute, with the shapes.
    """
    from ..engine.lines import wrapped  # sympy: not imported to load a cached function

    return wrapped(_explained(function, expr, verbose, shapes), width)


def _explained(
    function: CompiledFunction, expr: Any, verbose: str, shapes: Mapping[str, Any] | None
) -> str:
    tensor_shapes = dict(shapes) if shapes is not None else declared_shapes(function)
    if tensor_shapes is not None:
        return _explain_tensor(function, expr, verbose, tensor_shapes)
    lines = [_explain_header(function)]
    mode = engine_mode(function)
    swept = mode in SWEPT_MODES and function.kind in SWEPT_MODES[mode]
    if function.kind not in ("grad", "value_and_grad", "jacobian") and not swept:
        lines.append(f"no rule tree for kind {function.kind!r}; it computes:")
        lines.extend(f"  {e}" for e in function.exprs)
        return "\n".join(lines)
    names = [function.wrt] if isinstance(function.wrt, str) else list(function.wrt or ())
    record = recorded_steps(function, expr, mode if swept else "forward")
    if swept:
        return "\n".join(lines + _explain_sweeps(function, record, names, mode, verbose))
    import sympy as sp

    from ..engine.sweeps import renamed

    generated = dict(zip(names, _gradient_names(function, names, scalar=True), strict=True))
    renames = code_names(function.args)
    back = {sp.Symbol(c, real=True): sp.Symbol(o, real=True) for o, c in renames.items()}
    count = len({key[0] for key in record.derivations})
    for i in range(count):
        for name in names:
            output = generated[name] if function.kind != "jacobian" else f"d(expr {i})/d({name})"
            assigned = (
                _assignment(function.source, output) if function.kind != "jacobian" else None
            )
            lines.append("")
            lines.append(f"{assigned or output}    <- rule tree:")
            derivation = renamed(record.derivations[(i, renames.get(name, name))], back)
            lines.extend("  " + ln for ln in derivation.text(verbose).splitlines())
    return "\n".join(lines)


def recorded_steps(function: CompiledFunction, expr: Any = None, mode: str | None = None) -> Any:
    """The steps the engine recorded while deriving ``function``
    (:class:`~symdiff.engine.sweeps.Recorded`, in code names): its own, kept by the build,
    else derived again by the functions the build calls (:func:`symdiff.engine.sweeps.recorded`)
    from its recipe (and then kept on the function) or from ``expr`` (an expression, or a
    Jacobian's list; not kept). ``mode`` defaults to the mode that wrote the code."""
    import sympy as sp

    from ..engine.sweeps import recorded
    from ..parsing import parse
    from ..simplify import stable_forms
    from ..trace import trace

    own = getattr(function, "recorded", None)
    if expr is None and own is not None:
        return own

    def read(e: Any) -> sp.Expr:  # as the build reads it: traced if a function, stable forms
        traced = trace(e)[0] if callable(e) and not isinstance(e, sp.Basic) else e
        return stable_forms(parse(traced))

    sources = [expr] if expr is not None and function.kind != "jacobian" else expr
    exprs = list(sources) if sources is not None else origin(function)
    renames = code_names(function.args)
    swap = {sp.Symbol(o, real=True): sp.Symbol(c, real=True) for o, c in renames.items()}
    names = [function.wrt] if isinstance(function.wrt, str) else list(function.wrt or ())
    recipe = getattr(function, "recipe", None)
    simplify = recipe.options.simplify if recipe is not None else True
    record = recorded(
        function.kind, [read(e).xreplace(swap) for e in exprs],
        [renames.get(name, name) for name in names], mode or engine_mode(function) or "forward",
        simplify,
    )
    if expr is None:
        function.recorded = record
    return record


#: The kinds whose code a mode writes by sweeps (:mod:`symdiff.engine.sweeps`), by mode.
SWEPT_MODES = {
    "reverse": ("grad", "value_and_grad", "jacobian"),
    "forward over reverse": ("hessian", "hvp"),
}

#: What the sweep calls each output of a kind's generated code (``{code}``: the code name).
_SWEPT_OUTPUTS = {
    "grad": (naming.adjoint, lambda code: "the sum the backward pass leaves for " + code),
    "value_and_grad": (naming.adjoint, lambda code: "the sum the backward pass leaves for " + code),
    "hvp": (naming.hvp, lambda code: f"tangent of {naming.adjoint(code)} along {naming.DIRECTION}"),
}


def engine_mode(function: CompiledFunction) -> str | None:
    """The mode that wrote the function's code (``"forward"``, ``"reverse"``, ``"forward over
    reverse"``), from its recipe; ``None`` for a function without one."""
    recipe = getattr(function, "recipe", None)
    return recipe.mode or None if recipe is not None else None


def _explain_sweeps(
    function: CompiledFunction, sweeps: Any, names: list[str], mode: str, verbose: str
) -> list[str]:
    """The recorded sweeps of the engine that wrote a reverse-mode (or forward over reverse)
    function, after the generated line of each output and the adjoint it is."""
    renamed = code_names(function.args)
    codes = [renamed.get(name, name) for name in names]
    lines = [
        "",
        f"(emitted in {mode} mode: the steps below are the sweep that wrote the code; in the "
        "code, temporaries used once are substituted into their one use)",
    ]
    pattern = _SWEPT_OUTPUTS.get(function.kind)
    for code in codes if pattern is not None else ():
        output, adjoint = (p(code) for p in pattern)
        assigned = _assignment(function.source, output)
        lines.append(f"{assigned or output}    <- {adjoint}")
    count = len(sweeps.reverse.sweeps) if sweeps.reverse is not None else 0
    titles = ["f"] if function.kind != "jacobian" else [f"expr {i}" for i in range(count)]
    lines.append("")
    lines += sweeps.lines(titles, verbose)
    return lines


def _explain_header(
    function: CompiledFunction, shapes: Mapping[str, Sequence[Any]] | None = None
) -> str:
    header = f"{function.signature}: {function.kind}" + (
        "" if function.wrt is None else f" with respect to {names(function.wrt)}"
    )
    if shapes is not None:
        declared = ", ".join(
            f"{name} {_format_shape(shapes[name])}" for name in function.args if name in shapes
        )
        header += f"; shapes {declared or 'none'}"
    return header


def declared_shapes(function: CompiledFunction) -> dict[str, tuple[int | str, ...]] | None:
    """The ``shapes=`` of a tensor function, from its recipe, else None (a scalar function, or
    one without a recipe). Generated arguments (``_v``) are left out; bound constants
    (``_c0``, which the recipe's formula names) are kept."""
    recipe = getattr(function, "recipe", None)
    shapes = None if recipe is None else recipe.shape_map
    if shapes is None:
        return None
    return {name: shape for name, shape in shapes.items()
            if not name.startswith("_") or name in recipe.constants}


def _explain_tensor(
    function: CompiledFunction, expr: Any, verbose: str, shapes: Mapping[str, Any]
) -> str:
    from .derivation import derive

    lines = [_explain_header(function, shapes)]
    if function.kind not in ("grad", "value_and_grad"):
        lines.append(
            f"no rule tree for kind {function.kind!r} of a tensor function (rule trees are "
            "shown for grad and value_and_grad); it computes:"
        )
        for formula in function.exprs:
            shape = getattr(formula, "shape", None)
            lines.append(
                f"  {formula}" + ("" if shape is None else f"   (shape {_format_shape(shape)})")
            )
        return "\n".join(lines)
    source_expr = expr if expr is not None else (function.traced_from()
                                                 or _tensor_origin(function))
    names = [function.wrt] if isinstance(function.wrt, str) else list(function.wrt or ())
    recipe = getattr(function, "recipe", None)
    if recipe is not None and recipe.mode == "forward":
        lines.append(
            "(emitted in forward mode; the steps are the reverse-mode rules of the same gradient)"
        )
    for name, output in zip(names, _gradient_names(function, names, scalar=False), strict=True):
        assigned = _assignment(function.source, output)
        lines.append("")
        lines.append(f"{assigned or output}    <- rule tree:")
        if assigned is not None:
            lines.extend(_temporaries(function.source, assigned))
        try:
            derivation = derive(source_expr, wrt=name, shapes=dict(shapes))
        except SymdiffError as error:
            if expr is not None:
                raise
            raise SymdiffError(
                f"explain: cannot derive {source_expr!r} again ({error}); pass expr="
            ) from error
        lines.extend("  " + ln for ln in derivation.text(verbose).splitlines())
    return "\n".join(lines)


def _tensor_origin(function: CompiledFunction) -> str:
    """The expression text of a tensor function's recipe (not parsed here: ``derive`` parses
    it with the shapes)."""
    (text,) = _recipe(function).exprs  # grad and value_and_grad take one expression
    return text


def names(wrt: str | Sequence[str]) -> str:
    """``x`` or ``(x, y)``: the differentiation variables as the displays show them."""
    return wrt if isinstance(wrt, str) else "(" + ", ".join(wrt) + ")"


def _assignment(source: str, name: str) -> str | None:
    """The stripped line of ``source`` that assigns ``name`` (``_x_bar = ...``) last, if any (an
    array computed in place, ``_x_bar = _np.exp(_x_bar, out=_x_bar)``, is assigned twice)."""
    prefix = f"{name} = "
    lines = [ln.strip() for ln in source.splitlines() if ln.strip().startswith(prefix)]
    return lines[-1] if lines else None


def _format_shape(shape: Sequence[Any]) -> str:
    inner = ", ".join(str(d) for d in shape)
    return f"({inner},)" if len(shape) == 1 else f"({inner})"


_TEMP = re.compile(r"\b(_[A-Za-z]\w*)\b")
_NOT_SHOWN = frozenset({"_dtype", "_shape", "_np"})


#: A statement that writes a generated name: ``_t0 = ...``, an element assignment into it
#: (``_t0[:, 0] = 1.0``, part of its value) or an augmented one (``_t0 += ...``); group 2 is
#: what the statement reads besides the name (the index and the value).
_WRITE = re.compile(r"(_[A-Za-z]\w*)((?:\[.*?\])?\s*[-+*/@]?= .*)")


def _temporaries(source: str, line: str) -> list[str]:
    """The statements writing generated temporaries that ``line`` uses, directly or not, in the
    order of the source, as ``  where _t0 = ...`` lines (empty if it uses none): assignments,
    and the element and augmented assignments that complete a value (``_t0[:, 0] = 1.0``
    after ``_t0 = _np.zeros(...)``)."""
    written: dict[str, list[tuple[int, str, str]]] = {}  # name -> (line, text, what it reads)
    for i, text in enumerate(source.splitlines()):
        stripped = text.strip()
        match = _WRITE.fullmatch(stripped)
        if match and text.startswith("    ") and match.group(1) not in _NOT_SHOWN:
            reads = match.group(2).split("=", 1)
            written.setdefault(match.group(1), []).append((i, stripped, reads[0] + reads[1]))
    rhs = line.split(" = ", 1)[1] if " = " in line else line
    needed: dict[str, list[tuple[int, str]]] = {}
    todo = [n for n in _TEMP.findall(rhs) if n in written]
    while todo:
        name = todo.pop()
        if name in needed:
            continue
        needed[name] = [(i, text) for i, text, _ in written[name] if text != line]
        for _, text, reads in written[name]:
            if text != line:
                todo += [n for n in _TEMP.findall(reads) if n in written]
    ordered = [text for _, text in sorted(pair for pairs in needed.values() for pair in pairs)]
    return [("  where " if i == 0 else "        ") + text for i, text in enumerate(ordered)]
