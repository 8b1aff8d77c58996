"""Every name symdiff writes into generated code, in one scheme for the scalar and tensor layers,
and the one place that maps a SymPy symbol name which is not a Python identifier (``x_{1}``,
``\\alpha``, ``lambda``, or anything hostile) to a safe one.

The scheme. A user's names start with an ASCII letter; every generated name starts with ``_``.
A name derived from a variable ``x`` is ``_x_<role>``: its gradient (adjoint) :func:`adjoint`
``_x_bar``, its Hessian-vector product :func:`hvp` ``_x_hvp``, the direction's component
:func:`direction` ``_x_dir``, a tensor's :func:`jacobian` ``_x_jac`` and :func:`hessian`
``_x_hess``, a dimension's size :func:`dimension` ``_n_dim``, an argument's shape :func:`shape_of`
``_X_shape``. Temporaries are numbered (:func:`temporary` ``_t0``; reverse mode's
:func:`temporaries` skip ``_tN`` when a variable is named ``tN``, so the adjoint ``_t0_bar`` of a
temporary is never the gradient ``_t0_bar`` of a variable ``t0``); the names derived from a
generated name add the role to it (``_t0_bar``, the tangent ``_t0_dot`` or ``_t0_bar_dot1``).
A traced function's bound constants are the parameters :func:`constant` ``_c0, _c1, ...``.
Fixed names: :data:`VALUE` ``_value``, :data:`SECOND` ``_d2``, :data:`DIRECTION` ``_v``; the
templates and the runtime (:mod:`symdiff.runtime`) spell the few names they share with the emitters
themselves (``_np``, ``_shape``, ``_dtype``, ``_formulas``); :data:`OUT` ``_out`` is where
the formulas' outputs go. The one generated name that is not
``_``-prefixed is the keyword-only :data:`THREADS` ``threads`` (``_threads`` when a variable
has that name, :func:`threads_keyword`).
Since the roles are distinct suffixes, no two of these names are equal for distinct variables
(``x`` and ``x_bar`` give ``_x_bar`` and ``_x_bar_bar``). A test checks that no other symdiff
module formats such a name itself (tests/test_naming.py).

SymPy code that prints LaTeX names its symbols ``Symbol("x_{1}")``; symdiff accepts them and
generates code under :func:`code_names`'s identifiers, while ``g.args``, ``g.wrt``, ``g.exprs``
and keyword calls keep the original names (:func:`rename_keywords`). The original text never
reaches the generated source, not even in a comment. Standard library only: the loader of cached
modules uses this without SymPy.
"""

from __future__ import annotations

import functools
import keyword
import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

#: The value of a ``value`` or ``value_and_grad`` function.
VALUE = "_value"
#: The one output of a scalar Hessian by a single variable.
SECOND = "_d2"
#: The direction parameter of Hessian-vector products (and of traced ``hvp`` functions).
DIRECTION = "_v"
#: The last parameter of ``_formulas``: where its outputs go (a tuple, one per output, of the
#: block's rows of each, or None; or the array of an array result).
OUT = "_out"
#: The keyword-only parameter of an elementwise function that sets its number of threads
#: (:func:`threads_keyword`).
THREADS = "threads"
#: Prefix of numbered temporaries: reverse mode's, CSE's and the tensor code's (``_t0``).
TEMPORARY = "_t"
#: The teaching views' names of a tensor expression's output and intermediate values: the first
#: of :data:`OUTPUT_LABELS` no variable has (else ``_f``), and ``z1, z2, ...`` with the first
#: base of :data:`VALUE_LABELS` no variable name starts with (else ``u``).
OUTPUT_LABELS = ("f", "F", "out", "output")
VALUE_LABELS = ("z", "t", "q", "h")


def _derived(name: str, role: str) -> str:
    """``_x_<role>`` for a variable ``x``; ``_t0_<role>`` for a generated name ``_t0``."""
    return f"{name}_{role}" if name.startswith("_") else f"_{name}_{role}"


def inner_variable(serial: int, name: str) -> str:
    """The variable standing for parameter ``name`` of a compiled function composed into a
    traced one (:mod:`symdiff.compose`), the ``serial``-th in that trace: ``_inner3_x``; it is
    replaced by the argument before any code is emitted."""
    return f"_inner{serial}_{name}"


def adjoint_placeholder(serial: int) -> str:
    """The variable standing for the adjoint ``G`` while a function's own derivative rule is
    traced (:mod:`symdiff.custom`): ``_adjoint7``; replaced by the actual adjoint before any
    code is emitted."""
    return f"_adjoint{serial}"


def adjoint(name: str, output: int | None = None) -> str:
    """The gradient (adjoint) of ``name`` in generated code: ``_x_bar`` for a variable ``x``
    (the gradient outputs, scalar and tensor), ``_t0_bar`` for reverse mode's temporary ``_t0``;
    in the backward sweep of output ``k`` of several, ``_t0_bar_k``."""
    base = _derived(name, "bar")
    return base if output is None else f"{base}_{output}"


def adjoint_label(name: str) -> str:
    """The teaching views' label of the adjoint of a value they name (``z1_bar``, ``w_bar``:
    written over the steps, not in code)."""
    return f"{name}_bar"


def hvp(name: str) -> str:
    """The Hessian-vector product's component for variable ``name``: ``_x_hvp``."""
    return _derived(name, "hvp")


def jacobian(name: str) -> str:
    """A tensor Jacobian's block for variable ``name``: ``_x_jac``."""
    return _derived(name, "jac")


def hessian(name: str) -> str:
    """A tensor Hessian by the single variable ``name``: ``_x_hess``."""
    return _derived(name, "hess")


def hessian_block(i: int, j: int) -> str:
    """Block ``(i, j)`` of a tensor Hessian by several variables: ``_hess_0_1``."""
    return f"_hess_{i}_{j}"


def direction(name: str) -> str:
    """The component of the direction :data:`DIRECTION` for variable ``name``: ``_x_dir`` (a
    suffix like every role: ``_v_x`` would be ``_v_x_hvp`` for ``x_hvp``, the product's name for
    a variable ``v_x``)."""
    return _derived(name, "dir")


def tangent(name: str, column: int | None = None) -> str:
    """The tangent of generated name ``name`` in forward mode over a program: ``_t0_dot`` (along
    the direction), ``_t0_bar_dot1`` (a Hessian's column 1)."""
    return _derived(name, "dot" if column is None else f"dot{column}")


def threads_keyword(params: Iterable[str]) -> str:
    """The keyword of an elementwise function's number of threads: :data:`THREADS`, or
    ``_threads`` (a generated name) when one of its parameters is named ``threads``."""
    return f"_{THREADS}" if THREADS in set(params) else THREADS


def temporary(index: int) -> str:
    """Numbered temporary ``index``: ``_t0``."""
    return f"{TEMPORARY}{index}"


def temporaries(variables: Iterable[str] = ()) -> Iterator[str]:
    """``_t0, _t1, ...`` without ``_tN`` for a variable named ``tN``: names derived from these
    temporaries (``_t0_bar``) are then never the names derived from a variable (the gradient
    ``_t0_bar`` of ``t0``)."""
    taken = {f"_{v}" for v in variables}
    index = 0
    while True:
        name = temporary(index)
        if name not in taken:
            yield name
        index += 1


def dimension(name: str) -> str:
    """The local variable holding the size of named dimension ``name``: ``_n_dim``."""
    return _derived(name, "dim")


def is_dimension(name: str) -> bool:
    """Whether ``name`` is a :func:`dimension`'s local variable."""
    return name.startswith("_") and name.endswith("_dim")


def shape_of(name: str) -> str:
    """The local variable holding argument ``name``'s shape, when it is indexed: ``_X_shape``."""
    return _derived(name, "shape")


def operand(index: int) -> str:
    """Parameter ``index`` of a Numba ufunc of a tensor statement that stands for an operand
    printed as a view (``x[:, None]``): ``_a0``."""
    return f"_a{index}"


def slot(index: int) -> str:
    """The tensor emitter's temporary ``index`` before renumbering (:data:`SLOT`): ``_s0``."""
    return f"_s{index}"


#: A :func:`slot` in emitted text.
SLOT = re.compile(r"\b_s(\d+)\b")


def output_entry(index: Iterable[int]) -> str:
    """``_out_0_1``: entry ``(0, 1)`` of an array result, computed apart before the entries are
    stacked (the Array API backend, whose arrays cannot all be written into)."""
    return "_out_" + "_".join(map(str, index))


def exp_base(index: int, minus_one: bool = False) -> str:
    """The shared exponential ``index`` of :mod:`symdiff.codegen.exps` (``exp(c*u)``, or its
    ``expm1`` when ``minus_one``): ``_exp_base0``, ``_expm1_base0``."""
    return f"_{'expm1' if minus_one else 'exp'}_base{index}"


def deferred(index: int) -> str:
    """The tensor emitter's name of a value a later sum gathers in place: ``_z0``."""
    return f"_z{index}"


def argument(index: int) -> str:
    """The placeholder of argument ``index`` inside a tensor ``map`` expression: ``_a0``."""
    return f"_a{index}"


#: An :func:`argument` in a printed ``map`` expression.
ARGUMENT = re.compile(r"\b_a\d+\b")


def constant(index: int) -> str:
    """The parameter of a traced function's bound constant ``index`` (a NumPy array it closed
    over or built, passed by the compiled function on every call): ``_c0``."""
    return f"_c{index}"


#: A :func:`constant` (the whole name).
CONSTANT = re.compile(r"_c\d+\Z")


def packed_slot(index: int) -> str:
    """A gather's place in a packed group's template, replaced by its code when printed:
    ``_q0`` (:mod:`symdiff.codegen.pack`)."""
    return f"_q{index}"


PACKED_SLOT = re.compile(r"\b_q\d+\b")


def placeholder(index: int) -> str:
    """The placeholder of a traced or parsed tensor value inside an elementwise one: ``_p0``."""
    return f"_p{index}"


def output_label(variables: Iterable[str]) -> str:
    """The teaching views' name of a tensor expression's output (:data:`OUTPUT_LABELS`)."""
    taken = set(variables)
    return next((n for n in OUTPUT_LABELS if n not in taken), "_f")


def value_labels(variables: Iterable[str], count: int) -> list[str]:
    """The teaching views' names of ``count`` intermediate values: ``z1, z2, ...``
    (:data:`VALUE_LABELS`)."""
    names = list(variables)
    base = next((b for b in VALUE_LABELS if not any(v.startswith(b) for v in names)), "u")
    return [f"{base}{i}" for i in range(1, count + 1)]

_CODE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")
_OTHER = re.compile(r"[^A-Za-z0-9]+")
_LONGEST = 40


def is_code_name(name: str) -> bool:
    """Whether ``name`` is used in generated code as it is: a symdiff variable name (an ASCII
    identifier that is not a keyword) or a generated name (``_v``, starting with ``_``)."""
    return (bool(_CODE_NAME.match(name)) and not keyword.iskeyword(name)) or name.startswith("_")


def code_names(names: Iterable[str]) -> dict[str, str]:
    """``{original: identifier}`` for every name in ``names`` that is not a code name.

    The identifier keeps the ASCII letters and digits of the original, every other run of
    characters becomes ``_`` (``x_{1}`` -> ``x_1``, ``\\alpha`` -> ``alpha``, ``lambda`` ->
    ``lambda_``), and a suffix ``_2``, ``_3``, ... keeps it apart from every other name of the
    set and every identifier already given. Deterministic: it depends only on the set.
    """
    names = set(names)
    taken = {n for n in names if is_code_name(n)}
    mapping: dict[str, str] = {}
    for name in sorted(names - taken):
        base = _OTHER.sub("_", name).strip("_")[:_LONGEST].rstrip("_") or "v"
        if not base[0].isalpha():
            base = f"v{base}"
        if keyword.iskeyword(base):
            base += "_"
        candidate, count = base, 1
        while candidate in taken:
            count += 1
            candidate = f"{base}_{count}"
        taken.add(candidate)
        mapping[name] = candidate
    return mapping


def rename_keywords(function: Callable[..., Any], args: Iterable[str]) -> Callable[..., Any]:
    """``function`` (whose parameters are the code names of ``args``) called by the original
    names too: ``g(**{"x_{1}": 1.0})``. Messages that name a parameter name it as the caller
    knows it. Without renamed arguments, ``function`` itself (no wrapper, no cost)."""
    renamed = code_names(args)
    if not renamed:
        return function
    back = {code: original for original, code in renamed.items()}

    @functools.wraps(function)
    def call(*positional: Any, **keywords: Any) -> Any:
        given = {renamed.get(key, key): value for key, value in keywords.items()}
        if len(given) != len(keywords):
            twice = sorted(k for k in keywords if k in renamed and renamed[k] in keywords)
            raise TypeError(f"{function.__name__}() got multiple values for argument {twice[0]!r}")
        try:
            return function(*positional, **given)
        except (TypeError, ValueError) as error:  # Argument-, ShapeError; a missing argument
            raise _renamed(error, back).with_traceback(error.__traceback__) from None

    return call


def _renamed(error: Exception, back: dict[str, str]) -> Exception:
    """``error`` with every quoted code name replaced by the original name (same class)."""
    text = str(error)
    for code, original in back.items():
        text = text.replace(repr(code), repr(original))
    if text == str(error):
        return error
    try:
        return type(error)(text)
    except Exception:  # an exception class that needs other arguments: keep it as it was
        return error
