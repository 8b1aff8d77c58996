"""The public builders: ``derive``, ``compile``, ``grad``, ``value_and_grad``, ``jacobian``,
``hessian``, ``hvp`` and ``check_grad`` (``objective`` is :mod:`symdiff.objective`). Every
builder hands its call to the one build pipeline (:mod:`symdiff.pipeline`):

request index -> parse -> memo -> disk cache -> build (differentiate by the rule table,
simplify, emit) -> CompiledFunction (with its recipe)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Union

import numpy as np

from . import pipeline, request_index
from .cache import open_store
from .compiled import CompiledFunction
from .errors import SymdiffError, UnsupportedError
from .layer import Call
from .options import Options

if TYPE_CHECKING:
    import sympy as sp

    from .engine.steps import Derivation

Expression = Union[str, "sp.Basic", int, float, Callable[..., Any]]


class _Missing:
    """The default of a builder's expression: absent, so the builder is a decorator factory."""

    def __repr__(self) -> str:
        return "<no expression: decorator>"


_MISSING: Any = _Missing()


def _decorator(builder: Callable[..., CompiledFunction], **options: Any) -> Any:
    """``@builder(wrt=..., ...)``: the builder with these options, waiting for the function."""

    def decorate(fn: Callable[..., Any]) -> CompiledFunction:
        return builder(fn, **options)

    decorate.__name__ = decorate.__qualname__ = f"{builder.__name__}_decorator"
    decorate.__doc__ = f"Apply sd.{builder.__name__}(fn, **{options!r}) to the decorated fn."
    return decorate


# -- inputs ------------------------------------------------------------------------------------
def _python_function(exprs: Any) -> bool:
    """Whether a builder's expression is a Python function (a SymPy expression can be
    callable too)."""
    return callable(exprs) and not type(exprs).__module__.startswith("sympy")


def _ufunc_function(ufunc: np.ufunc) -> Callable[..., Any]:
    """A NumPy ufunc (``np.sqrt``, ``np.arctan2``) as a Python function of its inputs, named
    ``x`` (one input) or ``x1, x2`` as NumPy names them; its ``out=`` and the other keyword
    arguments are left out."""
    if ufunc.nout != 1 or ufunc.nin not in (1, 2):
        raise UnsupportedError(
            f"the ufunc {ufunc.__name__} has {ufunc.nin} inputs and {ufunc.nout} outputs; wrap "
            f"it in a function returning one value: lambda x: np.{ufunc.__name__}(x)[0]")
    if ufunc.nin == 1:
        def function(x: Any) -> Any:
            return ufunc(x)
    else:
        def function(x1: Any, x2: Any) -> Any:  # type: ignore[misc]
            return ufunc(x1, x2)
    function.__name__ = function.__qualname__ = ufunc.__name__
    return function


def _compiled(
    kind: str, exprs: Any, wrt: Any, options: Options, shapes: Any, threads: int | None = None,
    example: Any = None, static: Any = None, sparse: bool | str = False,
) -> Any:
    """The one path from a builder's arguments to its function; without expressions, the
    builder as a decorator with these options (``@sd.grad(wrt="x")``). ``threads`` (not part of
    the generated code) is the function's number of threads
    (:meth:`~symdiff.compiled.CompiledFunction.with_threads`). A Python function with
    parameter trees or static arguments (``example=``, ``static=``, a tree in ``shapes=``:
    :mod:`symdiff.structured`) is built by :func:`symdiff.structured_function` instead.
    ``sparse`` (a Jacobian's or a Hessian's) is True or a ``scipy.sparse`` format
    (:func:`_sparse_format`)."""
    if exprs is _MISSING:
        settings = {"simplify": options.simplify, "cse": options.cse, "mode": options.mode,
                    "cache": options.cache, "shapes": shapes, "threads": threads,
                    "backend": options.backend, "example": example, "static": static}
        if kind != "value":
            settings["wrt"] = wrt
        if kind in ("jacobian", "hessian"):
            settings["sparse"] = sparse
        return _decorator(_BUILDERS[kind], **settings)
    if kind != "jacobian" and isinstance(exprs, list | tuple):
        name = "compile" if kind == "value" else kind
        what = (
            "compile each expression on its own"
            if kind == "value"
            else "for the derivatives of several expressions use sd.jacobian([...])"
        )
        raise SymdiffError(f"{name} takes one expression, not a {type(exprs).__name__}; {what}")
    format = _sparse_format(sparse, options)
    if format is not None:
        options = replace(options, sparse=True)
    if isinstance(exprs, np.ufunc):  # sd.grad(np.sqrt): the ufunc of its inputs
        exprs = _ufunc_function(exprs)
    if isinstance(exprs, CompiledFunction):  # sd.grad(sd.grad(f)): traced symbolically
        from . import compose

        exprs = compose.proxy(exprs)
    if _python_function(exprs):
        from . import structured, structured_function

        if structured.wanted(exprs, shapes, example, static):
            if format is not None:
                raise UnsupportedError(
                    "sparse= with parameter trees or static arguments is not supported: give "
                    "the function flat array parameters (sd.flatten) for a sparse result")
            return structured_function.build(kind, exprs, wrt, options, shapes, example, static,
                                             threads)
    function = pipeline.compiled(Call(kind, exprs, wrt, options, shapes))
    if format is not None:
        function = function.with_format(format)  # type: ignore[attr-defined]
    return function if threads is None else function.with_threads(threads)


def _sparse_format(sparse: bool | str, options: Options) -> str | None:
    """The ``scipy.sparse`` format ``sparse=`` asks for (True: ``"csr"``), or None (dense)."""
    if sparse is False:
        return None
    if sparse is not True and not isinstance(sparse, str):
        raise SymdiffError(f"sparse must be True, False or a format ('csr', 'csc', 'coo'), "
                           f"not {sparse!r}")
    if options.backend != "numpy":
        raise SymdiffError(f"sparse=True needs backend='numpy' (the values are NumPy arrays "
                           f"that scipy.sparse holds), not {options.backend!r}")
    from .sparse.assemble import check_format

    return check_format("csr" if sparse is True else sparse)


# -- derivations ---------------------------------------------------------------------------------
def derive(
    expr: Expression,
    wrt: str | None = None,
    *,
    simplify: bool = True,
    verbose: str = "all",
    order: str = "result-first",
    shapes: Mapping[str, Any] | None = None,
) -> Derivation:
    """Differentiate ``expr`` with respect to one variable, recording every rule applied.

    ``wrt`` may be omitted when the expression has exactly one variable (a Python function: one
    parameter). Unlike the builders, ``derive`` accepts a ``wrt`` that does not occur: the
    steps show why the derivative is 0 (the constant rule), nothing is silently wrong. The
    returned
    :class:`~symdiff.engine.steps.Derivation` has ``result`` (the final answer in the form a
    textbook prints, :mod:`symdiff.teach.textbook`), ``steps`` (the rule tree and, if the
    final form differs from the rules' result, a last ``simplify`` step), and renders as
    text, LaTeX and HTML. ``verbose`` chooses what the Jupyter display shows: ``"all"`` steps
    or the ``"key"`` steps (leaf constant / variable steps hidden); ``str()`` always lists
    every step. ``order="bottom-up"`` prints each rule's parts before its own line
    (``"result-first"``, the default, prints the rule's line first).

    With ``shapes=`` (a scalar tensor expression), the steps are those of the backward walk that
    ``grad`` emits, one matrix-calculus rule per node (:mod:`symdiff.tensor.steps`).
    """
    from .teach.derivation import derive as derive_steps

    steps = functools.partial(derive_steps, expr, wrt, simplify=simplify, verbose=verbose,
                              order=order, shapes=shapes)
    return pipeline.as_a_build(steps, depth=lambda: pipeline.depth_of(expr),
                               advice="split it into steps (a function of intermediate results)")


# -- compiled functions ----------------------------------------------------------------------------
def compile(
    expr: Expression = _MISSING,
    *,
    simplify: bool = True,
    cse: bool = True,
    mode: str = "auto",
    cache: bool = True,
    shapes: Mapping[str, Any] | None = None,
    threads: int | None = None,
    backend: str = "numpy",
    example: Any = None,
    static: str | Sequence[str] | None = None,
) -> CompiledFunction:
    """Compile the expression itself into a vectorized NumPy function of its variables.

    Without ``expr`` (``@sd.compile(cse=False)``) returns a decorator with these options.
    """
    options = Options(simplify, cse, mode, cache, backend)
    return _compiled("value", expr, None, options, shapes, threads, example, static)


def grad(
    expr: Expression = _MISSING,
    wrt: str | Sequence[str] | None = None,
    *,
    simplify: bool = True,
    cse: bool = True,
    mode: str = "auto",
    cache: bool = True,
    shapes: Mapping[str, Any] | None = None,
    threads: int | None = None,
    backend: str = "numpy",
    example: Any = None,
    static: str | Sequence[str] | None = None,
) -> CompiledFunction:
    """The gradient of ``expr`` as a compiled function.

    ``wrt=None`` differentiates with respect to every variable (sorted by name; for a Python
    function, every parameter in the ``def``'s order) and the call returns a tuple; a list
    returns a tuple in that order; a single name returns one array. A ``wrt`` name that is not
    a variable of ``expr`` is a :class:`~symdiff.errors.ParseError`. A Python function keeps its
    signature (parameter order, defaults, keyword-only markers). Without ``expr``
    (``@sd.grad(wrt="x")``) returns a decorator with these options.
    ``mode="forward"`` emits simplified symbolic partials sharing subexpressions;
    ``mode="reverse"`` emits a forward sweep and one backward sweep of adjoints (cost within a
    small factor of the function's, however many variables); ``"auto"`` picks by size.
    ``threads`` (every builder) is the number of threads elementwise work on long arrays runs
    on (None: one per free core, up to 8; the results are the same bit for bit whatever the
    number; see :meth:`~symdiff.compiled.CompiledFunction.with_threads`); a call can also pass
    ``threads=``.
    """
    options = Options(simplify, cse, mode, cache, backend)
    return _compiled("grad", expr, wrt, options, shapes, threads, example, static)


def value_and_grad(
    expr: Expression = _MISSING,
    wrt: str | Sequence[str] | None = None,
    *,
    simplify: bool = True,
    cse: bool = True,
    mode: str = "auto",
    cache: bool = True,
    shapes: Mapping[str, Any] | None = None,
    threads: int | None = None,
    backend: str = "numpy",
    example: Any = None,
    static: str | Sequence[str] | None = None,
) -> CompiledFunction:
    """Value and gradient together, sharing every common subexpression: ``(value, grads)``.

    Arguments and ``wrt`` as for :func:`grad`; without ``expr``, a decorator."""
    options = Options(simplify, cse, mode, cache, backend)
    return _compiled("value_and_grad", expr, wrt, options, shapes, threads, example, static)


def jacobian(
    exprs: Sequence[Expression] | Callable[..., Any] = _MISSING,
    wrt: str | Sequence[str] | None = None,
    *,
    simplify: bool = True,
    cse: bool = True,
    mode: str = "auto",
    cache: bool = True,
    shapes: Mapping[str, Any] | None = None,
    threads: int | None = None,
    backend: str = "numpy",
    sparse: bool | str = False,
    example: Any = None,
    static: str | Sequence[str] | None = None,
) -> CompiledFunction:
    """The Jacobian of a list of expressions: the call returns an array ``(m, n) + shape``.

    With a single ``wrt`` name the ``n`` axis is dropped: ``(m,) + shape``. ``exprs`` may also be
    a Python function returning a tuple or list of values (the ``m`` rows; a single value is
    one row), which keeps its signature as for :func:`grad`. Without ``exprs``, a decorator.

    ``sparse=True`` (or a format, ``"csr"``, ``"csc"``, ``"coo"``): the call returns a
    ``scipy.sparse`` array of the structural nonzeros, derived from the expressions, and the
    generated code computes only those (:class:`~symdiff.sparse.function.SparseFunction`: one
    row per output entry and one column per variable entry, each flattened and laid end to end).
    """
    options = Options(simplify, cse, mode, cache, backend)
    return _compiled("jacobian", exprs, wrt, options, shapes, threads, example, static,
                     sparse)


def hessian(
    expr: Expression = _MISSING,
    wrt: str | Sequence[str] | None = None,
    *,
    simplify: bool = True,
    cse: bool = True,
    mode: str = "auto",
    cache: bool = True,
    shapes: Mapping[str, Any] | None = None,
    threads: int | None = None,
    backend: str = "numpy",
    sparse: bool | str = False,
    example: Any = None,
    static: str | Sequence[str] | None = None,
) -> CompiledFunction:
    """The Hessian of ``expr``: the call returns an array ``(n, n) + shape`` (symmetric).

    With a single ``wrt`` name the call returns the second derivative itself. Forward mode
    derives it symbolically (forward over forward); reverse mode (which ``auto`` picks from
    four variables) differentiates the reverse-mode gradient program forward (forward over
    reverse). Arguments and ``wrt`` as for
    :func:`grad`; without ``expr``, a decorator.

    ``sparse=True`` (or a format, ``"csr"``, ``"csc"``, ``"coo"``): the call returns a
    ``scipy.sparse`` array of the structural nonzeros and the code computes only those (see
    :func:`jacobian`); ``.tril()`` gives the lower triangle.
    """
    options = Options(simplify, cse, mode, cache, backend)
    return _compiled("hessian", expr, wrt, options, shapes, threads, example, static, sparse)


def hvp(
    expr: Expression = _MISSING,
    wrt: str | Sequence[str] | None = None,
    *,
    simplify: bool = True,
    cse: bool = True,
    mode: str = "auto",
    cache: bool = True,
    shapes: Mapping[str, Any] | None = None,
    threads: int | None = None,
    backend: str = "numpy",
    example: Any = None,
    static: str | Sequence[str] | None = None,
) -> CompiledFunction:
    """Hessian-vector product: the call takes the variables and then a direction ``_v`` with one
    component per ``wrt`` name on its first axis, and returns ``H @ _v`` of that shape.

    Emitted as forward mode over the reverse-mode gradient, so it costs a small multiple of the
    gradient for any number of variables (no n-by-n Hessian is formed). With a single ``wrt``
    name, ``_v`` and the result have no leading axis. With ``shapes=``, ``wrt`` is one array
    variable and ``_v`` (the last argument) and the result have its shape; the tensor layer
    emits it as the gradient of ``sum(grad * _v)`` (reverse over reverse). For a Python
    function with defaults or keyword-only parameters, ``_v`` is keyword-only (it follows them).
    Without ``expr``, a decorator.
    """
    options = Options(simplify, cse, mode, cache, backend)
    return _compiled("hvp", expr, wrt, options, shapes, threads, example, static)


_BUILDERS: dict[str, Callable[..., CompiledFunction]] = {
    "value": compile,
    "grad": grad,
    "value_and_grad": value_and_grad,
    "jacobian": jacobian,
    "hessian": hessian,
    "hvp": hvp,
}


# -- checks and optimisation -----------------------------------------------------------------------
def check_grad(
    expr: Expression,
    wrt: str | Sequence[str] | None = None,
    at: Mapping[str, Any] | None = None,
    *,
    step: float | None = None,
) -> float:
    """Largest relative error between the generated gradient and central differences.

    ``at`` maps every variable to a value or array (points are evaluated elementwise). The error
    of one partial is ``|g - fd| / max(1, |g|, |fd|)``: relative for large gradients, absolute
    below 1. The default step is ``eps**(1/3) * max(1, |x|)``, the optimum for central
    differences. For a Python function, a parameter with a default may be left out of ``at``.
    """
    g = grad(expr, wrt)
    f = compile(expr)
    names = [g.wrt] if isinstance(g.wrt, str) else list(g.wrt)
    at = dict(at or {})
    import inspect

    empty = inspect.Parameter.empty
    missing = [
        a for a in g.args if a not in at and g.__signature__.parameters[a].default is empty
    ]
    if missing:
        raise SymdiffError(
            f"check_grad needs a value for every variable; missing: {', '.join(missing)}"
        )
    point = {k: np.asarray(v, dtype=float) for k, v in at.items() if k in g.args}
    # defaults filled in
    values = (np.asarray(v, dtype=float) for v in g.positional_arguments(point))
    point = dict(zip(g.args, values, strict=True))
    grads = g.call_by_name(point)
    grads = [grads] if isinstance(g.wrt, str) else list(grads)
    worst = 0.0
    for name, analytic in zip(names, grads, strict=True):
        x = point[name]
        h = (step if step is not None else np.finfo(float).eps ** (1 / 3)) * np.maximum(
            1.0, np.abs(x)
        )
        plus = f.call_by_name({**point, name: x + h})
        minus = f.call_by_name({**point, name: x - h})
        numeric = (plus - minus) / (2 * h)
        scale = np.maximum(1.0, np.maximum(np.abs(analytic), np.abs(numeric)))
        worst = max(worst, float(np.nanmax(np.abs(analytic - numeric) / scale)))
    return worst


# -- cache -----------------------------------------------------------------------------------------
def cache_info() -> dict[str, Any]:
    """Where the cache is and what it holds: ``path`` (None when memory only), ``entries``,
    ``bytes``, ``cap`` (bytes), ``kind`` (``"disk"`` or ``"memory"``), ``reason`` (why memory)."""
    return dict(open_store().info())


def clear_cache() -> int:
    """Remove every cached module (disk and memory) and the copies of generated sources that
    tracebacks read (:mod:`symdiff.codegen.sources`); returns how many cache entries were
    removed."""
    from .codegen import sources

    pipeline.clear_memo()
    request_index.forget()
    sources.clear_copies()
    return open_store().clear()
